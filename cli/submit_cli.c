#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"
#include "rig_cli.h"

#define NAME "submit"

static void usage(FILE *out) {
    fprintf(out,
            "usage: stampede submit FILE --to tcp://HOST:PORT --key my.key --server-key rig.pub\n"
            "                       [--group G] [--priority N] [--follow]\n"
            "  Queues a workload file on a shared rig (stampede serve, docs/rig.md) and prints\n"
            "  its run id and its place in the queue. A sweep (a file with `sweep:`) is one\n"
            "  run: all its levels on the group, which it holds until the last ends.\n"
            "  --group G           the rig's group of endpoints to load (needed when it has\n"
            "                      several)\n"
            "  --priority N        ahead of the group's queue (admins only; default 0)\n"
            "  --follow            stream the live line (a sweep's names its level), then\n"
            "                      print the end table; Ctrl-C detaches (the run goes on)\n"
            "%s",
            RIG_CLI_USAGE);
}

/* The whole file, malloc'd and NUL-terminated, or NULL after saying why. */
static char *read_workload(const char *path) {
    size_t len;
    char *text = outfile_read_all(path, &len);
    if (!text)
        fprintf(stderr, NAME ": %s: %s\n", path, strerror(errno));
    else if (memchr(text, '\0', len)) {
        fprintf(stderr, NAME ": %s: not a text file (it holds a NUL byte)\n", path);
        free(text);
        return NULL;
    }
    return text;
}

int submit_main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"group", required_argument, NULL, 'g'},
        {"priority", required_argument, NULL, 'p'},
        {"follow", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        RIG_CLI_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    rig_client_options_t options;
    rig_cli_defaults(&options, NAME);
    const char *group = NULL;
    long priority = 0;
    bool follow = false;
    optind = 1;
    int c, applied;
    char *end;
    while ((c = getopt_long(argc, argv, "g:p:fh", longopts, NULL)) != -1) {
        switch (c) {
        case 'g':
            group = optarg;
            break;
        case 'p':
            priority = strtol(optarg, &end, 10);
            if (*end || !*optarg || priority < -1000 || priority > 1000) {
                fprintf(stderr, NAME ": --priority wants a whole number in -1000..1000, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'f':
            follow = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if ((applied = rig_cli_apply(&options, c, optarg)) < 0)
                return 2;
            if (!applied) {
                usage(stderr);
                return 2;
            }
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, NAME ": %s\n",
                optind < argc ? "one workload file at a time" : "no workload file");
        usage(stderr);
        return 2;
    }
    const char *path = argv[optind];
    char *text = read_workload(path);
    if (!text)
        return 1;
    rig_client_t *client = rig_client_new(&options);
    if (!client) {
        free(text);
        return 1;
    }
    char base[4096];
    snprintf(base, sizeof base, "%s", path);
    json_t *req = json_pack("{s:s, s:s, s:s, s:I, s:b}", "op", "submit", "workload", text, "name",
                            basename(base), "priority", (json_int_t)priority, "follow", follow);
    free(text);
    if (group)
        json_object_set_new(req, "group", json_string(group));
    json_t *reply = rig_client_call(client, req);
    int rc = 1;
    if (reply && rig_cli_ok(reply, NAME)) {
        int64_t id = json_integer_value(json_object_get(reply, "id"));
        int place = (int)json_integer_value(json_object_get(reply, "place"));
        printf("run %lld queued on %s as %s: place %d in the queue%s\n", (long long)id,
               json_string_value(json_object_get(reply, "group")),
               json_string_value(json_object_get(reply, "user")), place,
               json_is_true(json_object_get(reply, "busy")) ? " (the group is busy)" : "");
        fflush(stdout);
        rc = follow ? rig_cli_follow(client, id, NAME) : 0;
    }
    json_decref(reply);
    rig_client_destroy(&client);
    return rc;
}
