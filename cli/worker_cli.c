/* `stampede worker`: its flags, checked (the keys read, plain TCP refused to another machine
 * unless --insecure, the spool directory writable), the environment's JOB_COMPLETION_INDEX and test
 * hooks, then worker_serve. */
#include "worker_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envelope.h"
#include "keys.h"
#include "units.h"
#include "worker.h"

static void worker_cli_usage(FILE *out) {
    fprintf(out,
            "usage: stampede worker --connect tcp://HOST:PORT [--threads T] [--once] "
            "[--id NAME]\n"
            "                       [--index N] [--idle-exit DURATION]\n"
            "                       [--key FILE --server-key FILE | --insecure] [--spool DIR]\n"
            "  --connect EP   the controller's control endpoint\n"
            "  --threads T    T independent loops, each registering as its own worker "
            "(default 1)\n"
            "  --once         exit after one run (a Job of one run; for a sweep or several\n"
            "                 runs, --idle-exit)\n"
            "  --id NAME      logical name shown by the controller (default HOST-PID)\n"
            "  --index N      this worker's index in a Kubernetes Indexed Job, sent at\n"
            "                 registration so the controller names missing indexes\n"
            "                 (default: $JOB_COMPLETION_INDEX when set)\n"
            "  --idle-exit DURATION  exit 0 once idle with the controller gone for\n"
            "                 DURATION (30s): long-lived workers of a Kubernetes Job end\n"
            "                 when the controller's runs or sweep are over\n"
            "  Until the controller is up, the connection is retried with backoff\n"
            "  (0.1 s doubling to 2 s), logged every 10 s.\n"
            "  --key FILE     this worker's CURVE secret key (stampede keygen NAME writes\n"
            "                 NAME.key; the controller's --authorized-keys holds NAME.pub)\n"
            "  --server-key FILE  the controller's public key (its NAME.pub): a controller\n"
            "                 without the matching secret key is never joined\n"
            "  --insecure     allow plain TCP to a controller on another machine\n"
            "  --max-message-size SIZE  largest message taken from the controller (the\n"
            "                 Assign with its workload; default 64MiB). Said in the Hello:\n"
            "                 the controller refuses to send a larger Assign, naming both\n"
            "  --spool DIR    where the batches the controller has not acknowledged are\n"
            "                 written while it is unreachable, and at exit, as\n"
            "                 DIR/stampede-RUNID-NAME.spool for `stampede merge` (default\n"
            "                 $TMPDIR, else /tmp)\n"
            "  SIGTERM/SIGINT: stop the load, send the last batches, wait up to 5 s for\n"
            "  their acknowledgement (spooling the rest), say goodbye, exit 0; a second\n"
            "  signal quits at once\n"
            "  (docs/security.md)\n");
}

/* Reads --key and --server-key, or checks that plain TCP is allowed to the endpoint. */
static int worker_cli_keys(worker_options_t *s) {
    char err[1024];
    if (!s->key_file != !s->server_key_file) {
        fprintf(stderr, "stampede worker: --key FILE and --server-key FILE go together: this "
                        "worker's secret key and the controller's public key "
                        "(docs/security.md)\n");
        return 1;
    }
    if (s->key_file) {
        if (keys_read_secret(s->key_file, s->secret_key, s->public_key, err, sizeof err) != 0 ||
            keys_read_public(s->server_key_file, s->server_key, err, sizeof err) != 0) {
            fprintf(stderr, "stampede worker: %s\n", err);
            return 1;
        }
        return 0;
    }
    if (keys_endpoint_is_local(s->endpoint) || s->insecure)
        return 0;
    fprintf(stderr,
            "stampede worker: --connect %s: a controller on another machine is joined with CURVE "
            "keys, so that no one else can pose as it or read the workload. Pass --key "
            "worker.key --server-key controller.pub (made by `stampede keygen worker` and "
            "`stampede keygen controller`; worker.pub goes in the controller's --authorized-keys "
            "directory), or accept the risk with --insecure (docs/security.md)\n",
            s->endpoint);
    return 1;
}

/* An Indexed Job's completion index from text (--index or JOB_COMPLETION_INDEX) into s. */
static int worker_cli_index(const char *text, const char *what, worker_options_t *s) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || end == text || *end || *text == '-' || v > UINT32_MAX) {
        fprintf(stderr, "stampede worker: %s wants an index 0, 1, 2...; got '%s'\n", what, text);
        return 1;
    }
    s->has_job_index = true;
    s->job_index = (uint32_t)v;
    return 0;
}

static int worker_cli_parse(int argc, char **argv, worker_options_t *s, char *name_buf,
                            size_t name_len) {
    static const struct option longopts[] = {
        {"connect", required_argument, NULL, 'c'},
        {"threads", required_argument, NULL, 't'},
        {"once", no_argument, NULL, 'o'},
        {"id", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {"key", required_argument, NULL, 'K'},
        {"server-key", required_argument, NULL, 'S'},
        {"insecure", no_argument, NULL, 'N'},
        {"max-message-size", required_argument, NULL, 'M'},
        {"spool", required_argument, NULL, 'D'},
        {"index", required_argument, NULL, 'X'},
        {"idle-exit", required_argument, NULL, 'E'},
        {NULL, 0, NULL, 0},
    };
    memset(s, 0, sizeof *s);
    s->threads = 1;
    s->proto_version = PROTOCOL_VERSION;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "c:t:oi:hK:S:NM:D:X:E:", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            s->endpoint = optarg;
            break;
        case 't': {
            char *end;
            long t = strtol(optarg, &end, 10);
            if (*end || t < 1 || t > 256) {
                fprintf(stderr,
                        "stampede worker: --threads wants a number from 1 to 256, got "
                        "'%s'\n",
                        optarg);
                return 1;
            }
            s->threads = (uint32_t)t;
            break;
        }
        case 'o':
            s->once = true;
            break;
        case 'i':
            s->name = optarg;
            break;
        case 'K':
            s->key_file = optarg;
            break;
        case 'S':
            s->server_key_file = optarg;
            break;
        case 'N':
            s->insecure = true;
            break;
        case 'M': {
            uint64_t bytes;
            if (units_parse_size(optarg, &bytes) != 0 || bytes < 4096 || bytes > (1ULL << 40)) {
                fprintf(stderr,
                        "stampede worker: --max-message-size wants a size from 4KiB to 1TiB, "
                        "such as 64MiB; got '%s'\n",
                        optarg);
                return 1;
            }
            s->max_control_bytes = (int64_t)bytes;
            break;
        }
        case 'D':
            s->spool_dir = optarg;
            break;
        case 'X':
            if (worker_cli_index(optarg, "--index", s) != 0)
                return 1;
            break;
        case 'E':
            if (units_parse_duration(optarg, &s->idle_exit_ns) != 0 || s->idle_exit_ns <= 0) {
                fprintf(stderr,
                        "stampede worker: --idle-exit wants a duration > 0 (%s), got '%s'\n",
                        units_duration_help(), optarg);
                return 1;
            }
            break;
        case 'h':
            worker_cli_usage(stdout);
            return -1;
        default:
            worker_cli_usage(stderr);
            return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "stampede worker: unexpected argument '%s'\n", argv[optind]);
        return 1;
    }
    if (!s->endpoint) {
        fprintf(stderr, "stampede worker: --connect tcp://HOST:PORT is required\n");
        worker_cli_usage(stderr);
        return 1;
    }
    if (strncmp(s->endpoint, "tcp://", 6) != 0 || !strrchr(s->endpoint + 6, ':')) {
        fprintf(stderr, "stampede worker: --connect %s: expected tcp://HOST:PORT\n", s->endpoint);
        return 1;
    }
    const char *job_index = getenv("JOB_COMPLETION_INDEX");
    if (!s->has_job_index && job_index && *job_index &&
        worker_cli_index(job_index, "JOB_COMPLETION_INDEX", s) != 0)
        return 1;
    if (worker_cli_keys(s) != 0)
        return 1;
    if (!s->spool_dir) {
        const char *tmp = getenv("TMPDIR");
        s->spool_dir = tmp && *tmp ? tmp : "/tmp";
    }
    if (access(s->spool_dir, W_OK | X_OK) != 0) {
        fprintf(stderr,
                "stampede worker: --spool %s: cannot write there (%s): the batches a lost "
                "controller did not acknowledge are spooled there\n",
                s->spool_dir, strerror(errno));
        return 1;
    }
    if (!s->name) {
        char host[200] = "worker";
        gethostname(host, sizeof host - 1);
        snprintf(name_buf, name_len, "%s-%d", host, (int)getpid());
        s->name = name_buf;
    }
    const char *shift = getenv("STAMPEDE_TEST_CLOCK_OFFSET_NS");
    if (shift && *shift)
        s->clock_shift_ns = strtoll(shift, NULL, 10);
    const char *version = getenv("STAMPEDE_TEST_PROTO_VERSION");
    if (version && *version)
        s->proto_version = (uint32_t)strtoul(version, NULL, 10);
    return 0;
}

int worker_main(int argc, char **argv) {
    worker_options_t options;
    char name_buf[256];
    int rc = worker_cli_parse(argc, argv, &options, name_buf, sizeof name_buf);
    if (rc)
        return rc < 0 ? 0 : rc;
    return worker_serve(&options);
}
