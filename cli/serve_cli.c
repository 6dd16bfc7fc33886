#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "rig.h"
#include "units.h"

#define NAME "serve"

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede serve --bind tcp://HOST:PORT --key rig.key --authorized-keys DIR\n"
        "                      --archive DIR --config rig.yaml [--worker-bind tcp://HOST:PORT]\n"
        "                      [--worker-keys DIR] [--expect-workers N] [--register-timeout D]\n"
        "                      [--page HOST:PORT [--page-token-file F | --page-insecure]]\n"
        "  A shared benchmark rig (docs/rig.md): a long-lived fleet that queues runs from\n"
        "  many users, one group of endpoints at a time, and archives every result.\n"
        "  --bind EP           where users' `stampede submit` and `stampede runs` connect\n"
        "  --key FILE          the rig's secret key (stampede keygen rig); users pass rig.pub\n"
        "  --authorized-keys DIR  the users: NAME.pub each, NAME is the user's name\n"
        "  --archive DIR       rig.db (SQLite), runs/ID/ and the queue; kept across restarts\n"
        "  --config FILE       the rig's groups (each its endpoints, and optionally the\n"
        "                      workers a run on it takes: {endpoints: [URL...], workers: N};\n"
        "                      else a run takes its share, ceil(workers / groups)), admins\n"
        "                      and retention\n"
        "  --worker-bind EP    the workers' control socket (default: --bind's port + 1;\n"
        "                      data on the next port)\n"
        "  --worker-keys DIR   the workers' public keys (default: --authorized-keys)\n"
        "  --expect-workers N  no run starts before this many workers have registered (default\n"
        "                      1); after that, a lost worker is not waited for again: runs go on\n"
        "                      with the workers left; one that registers later joins at the next\n"
        "                      run or level\n"
        "  --register-timeout D  how long a starting run waits for them (default 60s)\n"
        "  --page HOST:PORT    a read-only page: the queue, the running run, the archive\n"
        "                      (loopback only unless --page-token-file or --page-insecure)\n"
        "  --page-token-file F every page request carries \"Authorization: Bearer T\",\n"
        "                      T the file's first line\n");
}

int serve_main(int argc, char **argv) {
    enum {
        OPT_WORKER_BIND = 0x5390,
        OPT_WORKER_KEYS,
        OPT_REGISTER_TIMEOUT,
        OPT_PAGE,
        OPT_PAGE_TOKEN_FILE,
        OPT_PAGE_INSECURE
    };
    static const struct option longopts[] = {
        {"bind", required_argument, NULL, 'b'},
        {"key", required_argument, NULL, 'k'},
        {"authorized-keys", required_argument, NULL, 'a'},
        {"archive", required_argument, NULL, 'A'},
        {"config", required_argument, NULL, 'c'},
        {"expect-workers", required_argument, NULL, 'w'},
        {"worker-bind", required_argument, NULL, OPT_WORKER_BIND},
        {"worker-keys", required_argument, NULL, OPT_WORKER_KEYS},
        {"register-timeout", required_argument, NULL, OPT_REGISTER_TIMEOUT},
        {"page", required_argument, NULL, OPT_PAGE},
        {"page-token-file", required_argument, NULL, OPT_PAGE_TOKEN_FILE},
        {"page-insecure", no_argument, NULL, OPT_PAGE_INSECURE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    rig_options_t options = {.name = NAME, .expect_workers = 1};
    optind = 1;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "b:k:a:A:c:w:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            options.bind = optarg;
            break;
        case 'k':
            options.key_file = optarg;
            break;
        case 'a':
            options.authorized_keys = optarg;
            break;
        case 'A':
            options.archive = optarg;
            break;
        case 'c':
            options.config_path = optarg;
            break;
        case 'w':
            options.expect_workers = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || !*optarg || options.expect_workers == 0 || *optarg == '-') {
                fprintf(stderr, NAME ": --expect-workers wants a count > 0, got '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_WORKER_BIND:
            options.worker_bind = optarg;
            break;
        case OPT_WORKER_KEYS:
            options.worker_keys = optarg;
            break;
        case OPT_REGISTER_TIMEOUT:
            if (units_parse_duration(optarg, &options.register_timeout_ns) != 0 ||
                options.register_timeout_ns <= 0) {
                fprintf(stderr,
                        NAME ": --register-timeout wants a duration such as 60s, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_PAGE:
            options.page = optarg;
            break;
        case OPT_PAGE_TOKEN_FILE:
            options.page_access.token_file = optarg;
            break;
        case OPT_PAGE_INSECURE:
            options.page_access.insecure = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!options.bind || optind < argc) {
        fprintf(stderr, NAME ": %s\n",
                optind < argc ? "takes no file: users submit theirs (stampede submit)"
                              : "--bind tcp://HOST:PORT is required");
        usage(stderr);
        return 2;
    }
    rig_t *rig = rig_new(&options);
    if (!rig)
        return 1;
    int rc = rig_serve(rig);
    rig_destroy(&rig);
    return rc;
}
