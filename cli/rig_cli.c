#include "rig_cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

void rig_cli_defaults(rig_client_options_t *options, const char *name) {
    *options = (rig_client_options_t){.name = name,
                                      .to = getenv("STAMPEDE_RIG"),
                                      .key_file = getenv("STAMPEDE_RIG_KEY"),
                                      .server_key_file = getenv("STAMPEDE_RIG_SERVER_KEY")};
}

int rig_cli_apply(rig_client_options_t *options, int flag, const char *arg) {
    switch (flag) {
    case RIG_CLI_OPT_TO:
        options->to = arg;
        return 1;
    case RIG_CLI_OPT_KEY:
        options->key_file = arg;
        return 1;
    case RIG_CLI_OPT_SERVER_KEY:
        options->server_key_file = arg;
        return 1;
    case RIG_CLI_OPT_TIMEOUT:
        if (units_parse_duration(arg, &options->timeout_ns) != 0 || options->timeout_ns <= 0) {
            fprintf(stderr, "%s: --timeout wants a duration such as 10s, got '%s'\n", options->name,
                    arg);
            return -1;
        }
        return 1;
    default:
        return 0;
    }
}

bool rig_cli_ok(const json_t *reply, const char *name) {
    if (json_is_true(json_object_get(reply, "ok")))
        return true;
    fprintf(stderr, "%s: %s\n", name, json_string_value(json_object_get(reply, "error")) ?: "?");
    return false;
}

static volatile sig_atomic_t detached;

static void on_interrupt(int sig) {
    (void)sig;
    detached = 1;
}

/* The exit status a finished run gives its follower. */
static int end_status(json_t *event, int64_t id, const char *name) {
    json_t *run = json_object_get(event, "run");
    const char *state = json_string_value(json_object_get(run, "state")) ?: "?";
    const char *table = json_string_value(json_object_get(event, "table"));
    if (table && *table)
        fputs(table, stdout);
    const char *note = json_string_value(json_object_get(run, "note"));
    fprintf(stderr, "%s: run %lld %s%s%s\n", name, (long long)id, state, note ? ": " : "",
            note ? note : "");
    if (strcmp(state, "done") != 0)
        return 1;
    return (int)json_integer_value(json_object_get(run, "exit_status"));
}

/* After the rig came back (serve restarted): follows id again. 0 following, else the run ended
 * while the rig was away (its end said; *rc its status) or the rig did not answer (*rc 1). */
static int follow_again(rig_client_t *client, int64_t id, const char *name, int *rc) {
    json_t *reply =
        rig_client_call(client, json_pack("{s:s, s:I}", "op", "follow", "id", (json_int_t)id));
    const char *state = json_string_value(json_object_get(reply, "state"));
    if (state && (!strcmp(state, "queued") || !strcmp(state, "running"))) {
        fprintf(stderr, "%s: following run %lld again (%s)\n", name, (long long)id, state);
        json_decref(reply);
        return 0;
    }
    *rc = 1;
    if (reply && !rig_cli_ok(reply, name)) {
        json_decref(reply);
        return -1;
    }
    json_decref(reply);
    if (!state)
        return -1;
    json_t *shown =
        rig_client_call(client, json_pack("{s:s, s:I}", "op", "show", "id", (json_int_t)id));
    if (shown && rig_cli_ok(shown, name)) {
        json_t *event = json_pack("{s:O}", "run", json_object_get(shown, "run"));
        *rc = end_status(event, id, name);
        json_decref(event);
    }
    json_decref(shown);
    return -1;
}

int rig_cli_follow(rig_client_t *client, int64_t id, const char *name) {
    struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = 0;
    for (;;) {
        int failed;
        json_t *event = rig_client_next(client, 1000, &failed);
        if (detached) {
            json_decref(event);
            fprintf(stderr, "\n%s: detached; run %lld goes on (stampede runs show %lld)\n", name,
                    (long long)id, (long long)id);
            break;
        }
        if (failed) {
            rc = 1;
            break;
        }
        if (rig_client_reconnected(client) && follow_again(client, id, name, &rc) != 0) {
            json_decref(event);
            break;
        }
        if (!event)
            continue;
        const char *kind = json_string_value(json_object_get(event, "event")) ?: "";
        if (!strcmp(kind, "live"))
            fprintf(stderr, "run %lld: %s\n", (long long)id,
                    json_string_value(json_object_get(event, "line")) ?: "");
        else if (!strcmp(kind, "started"))
            fprintf(stderr, "%s: run %lld started on %s\n", name, (long long)id,
                    json_string_value(json_object_get(event, "group")) ?: "?");
        else if (!strcmp(kind, "end")) {
            rc = end_status(event, id, name);
            json_decref(event);
            break;
        }
        json_decref(event);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}
