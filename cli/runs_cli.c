#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "rig_cli.h"

#define NAME "runs"

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede runs list [--user U] [--group G] [--model M] [--state S] [--limit N]\n"
        "                          [--json]\n"
        "       stampede runs show ID [--json]\n"
        "       stampede runs follow ID\n"
        "       stampede runs fetch ID --into DIR\n"
        "       stampede runs cancel ID\n"
        "       stampede runs pin ID | unpin ID\n"
        "       stampede runs priority ID N\n"
        "       stampede runs compare ID ID... [--into DIR] [--format md|csv|json] [--out FILE]\n"
        "  The runs of a shared rig (stampede serve, docs/rig.md): its queue and archive.\n"
        "  list ends with the runs in progress (\"running now: 7, 9\": one a group);\n"
        "  a sweep is one run, each of its levels a row of show's \"levels\".\n"
        "  cancel and pin are for the run's owner or an admin; priority (moving a queued\n"
        "  run in its group's queue) for an admin; fetch brings the run's directory back\n"
        "  (results.json, the reports, the trace when there is one);\n"
        "  compare fetches each run (into DIR/ID, default a new directory under /tmp) and\n"
        "  runs `stampede compare` on them.\n" RIG_CLI_USAGE);
}

/* "2026-11-29 08:01" of a unix time (a row's field), "-" when there is none. */
static const char *when(json_t *t, char *buf, size_t len) {
    if (!json_is_integer(t))
        return "-";
    time_t s = (time_t)json_integer_value(t);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", localtime(&s));
    return buf;
}

static void figure(json_t *row, const char *key, const char *fmt) {
    json_t *v = json_object_get(row, key);
    if (json_is_number(v))
        printf(fmt, json_number_value(v));
    else
        printf("%10s", "-");
}

static void print_list(json_t *runs) {
    printf("%5s  %-12s %-12s %-11s %4s  %-19s  %-24s %10s %10s %10s\n", "ID", "USER", "GROUP",
           "STATE", "PRIO", "SUBMITTED", "WORKLOAD", "REQ/S", "TTFT p50", "TTFT p99");
    size_t i;
    json_t *row;
    json_array_foreach(runs, i, row) {
        char submitted[32];
        printf("%5lld  %-12s %-12s %-11s %4lld  %-19s  %-24.24s ",
               (long long)json_integer_value(json_object_get(row, "id")),
               json_string_value(json_object_get(row, "user")) ?: "?",
               json_string_value(json_object_get(row, "target_group")) ?: "?",
               json_string_value(json_object_get(row, "state")) ?: "?",
               (long long)json_integer_value(json_object_get(row, "priority")),
               when(json_object_get(row, "submitted_at"), submitted, sizeof submitted),
               json_string_value(json_object_get(row, "workload_name")) ?: "?");
        figure(row, "requests_per_s", "%10.2f");
        figure(row, "ttft_p50_ms", " %10.1f");
        figure(row, "ttft_p99_ms", " %10.1f");
        printf("\n");
    }
}

/* Under the table: every run in progress on the rig, oldest first (whatever the filters). */
static void print_running(json_t *running) {
    if (!json_array_size(running))
        return;
    printf("running now:");
    size_t i;
    json_t *id;
    json_array_foreach(running, i, id) {
        printf("%s %lld", i ? "," : "", (long long)json_integer_value(id));
    }
    printf("\n");
}

static int list(rig_client_t *client, json_t *filters, bool as_json) {
    json_t *reply = rig_client_call(client, filters);
    if (!reply || !rig_cli_ok(reply, NAME)) {
        json_decref(reply);
        return 1;
    }
    if (as_json) {
        json_dumpf(json_object_get(reply, "runs"), stdout, JSON_INDENT(2));
        printf("\n");
    } else {
        print_list(json_object_get(reply, "runs"));
        print_running(json_object_get(reply, "running"));
    }
    json_decref(reply);
    return 0;
}

/* Follows run id: its events until it ends, or its row when it is over already. */
static int follow(rig_client_t *client, long long id) {
    json_t *reply =
        rig_client_call(client, json_pack("{s:s, s:I}", "op", "follow", "id", (json_int_t)id));
    if (!reply || !rig_cli_ok(reply, NAME)) {
        json_decref(reply);
        return 1;
    }
    const char *state = json_string_value(json_object_get(reply, "state")) ?: "?";
    bool live = !strcmp(state, "queued") || !strcmp(state, "running");
    if (!live)
        fprintf(stderr, NAME ": run %lld is %s already (stampede runs show %lld)\n", id, state, id);
    json_decref(reply);
    return live ? rig_cli_follow(client, id, NAME) : 0;
}

/* Parses a run id: > 0, or -1 after saying why. */
static long long parse_id(const char *text) {
    char *end;
    long long id = text ? strtoll(text, &end, 10) : 0;
    if (!text || *end || id <= 0) {
        fprintf(stderr, NAME ": expected a run id (a number > 0), got '%s'\n", text ? text : "");
        return -1;
    }
    return id;
}

/* Sends {"op": op, "id": id} and prints the reply: indented JSON, or just say it was done. */
static int simple(rig_client_t *client, const char *op, long long id, json_t *extra, bool print) {
    json_t *req = json_pack("{s:s, s:I}", "op", op, "id", (json_int_t)id);
    if (extra)
        json_object_update(req, extra);
    json_t *reply = rig_client_call(client, req);
    int rc = 1;
    if (reply && rig_cli_ok(reply, NAME)) {
        rc = 0;
        json_object_del(reply, "ok");
        if (print) {
            json_dumpf(reply, stdout, JSON_INDENT(2));
            printf("\n");
        } else {
            fprintf(stderr, NAME ": run %lld: %s %s\n", id, op,
                    json_string_value(json_object_get(reply, "state")) ?: "done");
        }
    }
    json_decref(reply);
    return rc;
}

static int compare(rig_client_t *client, int argc, char **argv, const char *into,
                   const char *format, const char *out) {
    char dir[4096] = "";
    if (into)
        snprintf(dir, sizeof dir, "%s", into);
    else {
        snprintf(dir, sizeof dir, "%s/stampede-runs-XXXXXX", getenv("TMPDIR") ?: "/tmp");
        if (!mkdtemp(dir)) {
            perror(NAME ": cannot create a directory under /tmp");
            return 1;
        }
    }
    char **args = calloc((size_t)argc + 6, sizeof *args);
    char(*paths)[4200] = calloc((size_t)argc + 1, sizeof *paths);
    int n = 0, rc = 0;
    args[n++] = "compare";
    if (format) {
        args[n++] = "--format";
        args[n++] = (char *)format;
    }
    if (out) {
        args[n++] = "--out";
        args[n++] = (char *)out;
    }
    for (int i = 0; i < argc && rc == 0; i++) {
        long long id = parse_id(argv[i]);
        snprintf(paths[i], sizeof paths[i], "%s/%lld", dir, id);
        if (id < 0 || rig_client_fetch(client, id, paths[i]) != 0)
            rc = 1;
        args[n++] = paths[i];
    }
    if (rc == 0)
        rc = compare_main(n, args);
    free(args);
    free(paths);
    return rc;
}

int runs_main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"user", required_argument, NULL, 'u'},
        {"group", required_argument, NULL, 'g'},
        {"model", required_argument, NULL, 'm'},
        {"state", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        {"into", required_argument, NULL, 'i'},
        {"format", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        RIG_CLI_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    rig_client_options_t options;
    rig_cli_defaults(&options, NAME);
    json_t *filters = json_pack("{s:s}", "op", "list");
    const char *into = NULL, *format = NULL, *out = NULL;
    bool as_json = false;
    optind = 1;
    int c, applied;
    while ((c = getopt_long(argc, argv, "u:g:m:s:n:ji:f:o:h", longopts, NULL)) != -1) {
        const char *keys[] = {['u'] = "user", ['g'] = "group", ['m'] = "model", ['s'] = "state"};
        switch (c) {
        case 'u':
        case 'g':
        case 'm':
        case 's':
            json_object_set_new(filters, keys[c], json_string(optarg));
            break;
        case 'n':
            json_object_set_new(filters, "limit", json_integer(atoi(optarg)));
            break;
        case 'j':
            as_json = true;
            break;
        case 'i':
            into = optarg;
            break;
        case 'f': /* compare's own */
            format = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            usage(stdout);
            json_decref(filters);
            return 0;
        default:
            if ((applied = rig_cli_apply(&options, c, optarg)) <= 0) {
                if (!applied)
                    usage(stderr);
                json_decref(filters);
                return 2;
            }
        }
    }
    if (optind >= argc) {
        fprintf(stderr,
                NAME ": which? list, show, follow, fetch, cancel, pin, unpin, priority, compare\n");
        usage(stderr);
        json_decref(filters);
        return 2;
    }
    const char *what = argv[optind++];
    int rest_argc = argc - optind;
    char **rest = argv + optind;
    bool known = !strcmp(what, "list") || !strcmp(what, "show") || !strcmp(what, "follow") ||
                 !strcmp(what, "fetch") || !strcmp(what, "cancel") || !strcmp(what, "pin") ||
                 !strcmp(what, "unpin") || !strcmp(what, "priority") || !strcmp(what, "compare");
    if (!known) {
        fprintf(
            stderr,
            NAME
            ": unknown '%s': list, show, follow, fetch, cancel, pin, unpin, priority, compare\n",
            what);
        json_decref(filters);
        return 2;
    }
    long long id = 0, priority = 0;
    int want_args = !strcmp(what, "priority") ? 2 : 1;
    char *end = NULL;
    if (strcmp(what, "list") && strcmp(what, "compare") &&
        (rest_argc != want_args || (id = parse_id(rest[0])) < 0)) {
        if (rest_argc != want_args)
            fprintf(stderr, NAME ": %s takes %s\n", what,
                    want_args == 2 ? "a run id and a priority" : "one run id");
        json_decref(filters);
        return 2;
    }
    if (want_args == 2 && ((priority = strtoll(rest[1], &end, 10)), *end || !*rest[1])) {
        fprintf(stderr, NAME ": priority wants a whole number, got '%s'\n", rest[1]);
        json_decref(filters);
        return 2;
    }
    if (!strcmp(what, "fetch") && !into) {
        fprintf(stderr, NAME ": fetch wants --into DIR\n");
        json_decref(filters);
        return 2;
    }
    if (!strcmp(what, "compare") && rest_argc < 2) {
        fprintf(stderr, NAME ": compare wants two run ids or more\n");
        json_decref(filters);
        return 2;
    }
    rig_client_t *client = rig_client_new(&options);
    if (!client) {
        json_decref(filters);
        return 1;
    }
    int rc;
    if (!strcmp(what, "list")) {
        rc = list(client, json_incref(filters), as_json);
    } else if (!strcmp(what, "show"))
        rc = simple(client, "show", id, NULL, true);
    else if (!strcmp(what, "cancel"))
        rc = simple(client, "cancel", id, NULL, false);
    else if (!strcmp(what, "pin") || !strcmp(what, "unpin")) {
        json_t *pin = json_pack("{s:b}", "pin", !strcmp(what, "pin"));
        rc = simple(client, "pin", id, pin, false);
        json_decref(pin);
    } else if (!strcmp(what, "priority")) {
        json_t *p = json_pack("{s:I}", "priority", (json_int_t)priority);
        rc = simple(client, "priority", id, p, false);
        json_decref(p);
    } else if (!strcmp(what, "fetch"))
        rc = rig_client_fetch(client, id, into) == 0 ? 0 : 1;
    else if (!strcmp(what, "follow"))
        rc = follow(client, id);
    else
        rc = compare(client, rest_argc, rest, into, format, out);
    json_decref(filters);
    rig_client_destroy(&client);
    return rc;
}
