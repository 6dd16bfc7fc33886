#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_documents.h"
#include "units.h"
/* Long-only flags of the security section (docs/security.md), then of the results' delivery. */
enum {
    CONTROLLER_OPT_KEY = 0x5301,
    CONTROLLER_OPT_AUTHORIZED_KEYS,
    CONTROLLER_OPT_INSECURE,
    CONTROLLER_OPT_LINGER,
    CONTROLLER_OPT_PRINT_REPORT
};

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede controller FILE [FILE]... --bind tcp://*:PORT --expect-workers N\n"
        "                           [--target URL]... [--out DIR] [--trace] [--http-phases]\n"
        "                           [--data-port P] [--register-timeout SECONDS]\n"
        "                           [--allow-invalid] [--grace DURATION] [--print-report]\n"
        "                           [--progress-interval DURATION]\n"
        "                           [--linger DURATION]\n"
        "                           [--key FILE --authorized-keys DIR | --insecure]\n"
        "                           [--metrics-listen HOST:PORT [--metrics-prefix P]\n"
        "                            [--metrics-compat loadgen]\n"
        "                            [--metrics-token-file FILE | --metrics-insecure]]\n"
        "  FILE...                workload files, run one after another over the same\n"
        "                         connected workers (clocks probed again before each); with\n"
        "                         several, run N writes its results to OUT/run-N; a file of\n"
        "                         several YAML documents (---) is one run per document; a\n"
        "                         file with a sweep: section runs each level in turn (the\n"
        "                         workers must be long-lived, not --once; docs/sweeps.md)\n"
        "  --bind EP              control endpoint; the data socket binds PORT+1 (or\n"
        "                         --data-port); workers connect with --connect tcp://HOST:PORT\n"
        "  --expect-workers N     logical workers to wait for before the first run (worker\n"
        "                         --threads T counts T); later runs and levels go on with\n"
        "                         the workers still registered\n"
        "  --target URL           endpoint base URL or whole request URL\n"
        "                         (.../v1/chat/completions), repeatable; overrides the file\n"
        "  --out DIR              results directory (default: the file's output.dir)\n"
        "  --trace                also write DIR/requests.jsonl with every chunk time\n"
        "  --http-phases          the table also shows the HTTP phases (blocked, dns,\n"
        "                         connecting, tls, sending, waiting, receiving); --verbose too\n"
        "  --no-preflight         skip the one request to each endpoint before the start\n"
        "                         (target.preflight: false; docs/config.md)\n"
        "  --register-timeout S   give up when the workers are not all there (default 60)\n"
        "  --allow-invalid        exit 0 for a run judged invalid (client saturated, schedule\n"
        "                         lag, a worker lost...); without it such a run exits 3\n"
        "  --grace DURATION       on SIGINT/SIGTERM: the workers start nothing new and the\n"
        "                         requests in flight have this long to finish before they are\n"
        "                         cancelled (default 5s; 0 cancels at once). The results are\n"
        "                         written marked partial, exit 130. A second signal quits at\n"
        "                         once and tells every worker to abandon the run\n"
        "  --progress-interval DURATION  how often the live line is written when stderr is\n"
        "                         not a terminal, e.g. a pod's log (default 10s; a terminal's\n"
        "                         is redrawn every second; also STAMPEDE_PROGRESS_INTERVAL)\n"
        "  --key FILE             this controller's CURVE secret key (stampede keygen NAME\n"
        "                         writes NAME.key and NAME.pub; workers get NAME.pub)\n"
        "  --authorized-keys DIR  admit only workers whose public key is a *.pub in DIR;\n"
        "                         each refusal is logged with the worker's address\n"
        "  --insecure             allow plain TCP on an address other machines can reach\n"
        "                         (without keys, only loopback binds are accepted)\n"
        "  (docs/security.md: key set-up, Kubernetes Secrets)\n"
        "  --metrics-listen HOST:PORT  serve live Prometheus metrics at /metrics (port 0\n"
        "                         picks one; the address is printed on stderr)\n"
        "  --metrics-prefix P     prefix of the metric names (default stampede_)\n"
        "  --metrics-compat loadgen  also the reference names (loadgen_ttft_all_seconds...)\n"
        "  --metrics-token-file FILE  every request to the port (scrapes, --linger's files)\n"
        "                         must send Authorization: Bearer T, T the file's first\n"
        "                         line; 401 otherwise\n"
        "  --metrics-insecure     allow --metrics-listen beyond loopback without a token\n"
        "                         (without either, only a loopback address is accepted)\n"
        "  (docs/metrics.md, \"Live metrics\")\n"
        "  --print-report         also print each report.md (the Markdown summary) on stdout,\n"
        "                         e.g. into a Kubernetes pod's log\n"
        "  --linger DURATION      after the last run, close the worker sockets and serve the\n"
        "                         results directory read-only for DURATION (30s, 10m) on the\n"
        "                         --metrics-listen port: GET /results/results.json,\n"
        "                         /results/ lists it; SIGTERM ends it early "
        "(docs/kubernetes.md)\n"
        "Worker loss (the workload file's fleet: section, docs/config.md): heartbeats both\n"
        "ways every fleet.heartbeat (1s); a worker silent for fleet.liveness (3) heartbeats is\n"
        "lost and its share goes to the others (the run is marked degraded, its unfinished\n"
        "sessions counted lost); fleet.abort_on_worker_loss_pct ends the run instead (exit 4);\n"
        "fleet.rebalance_on_join gives a worker joining mid-run a share.\n");
}

bool controller_options_apply(controller_options_t *options, const char **targets, int flag,
                              const char *arg) {
    switch (flag) {
    case 't':
        targets[options->n_targets++] = arg;
        return true;
    case 'o':
        options->out_dir = arg;
        return true;
    case 'T':
        options->trace = true;
        return true;
    case 'P':
    case 'v':
        options->http_phases = true;
        return true;
    case 'I':
        options->allow_invalid = true;
        return true;
    case CONTROLLER_OPT_METRICS_LISTEN:
        options->metrics_listen = arg;
        return true;
    case CONTROLLER_OPT_METRICS_PREFIX:
        options->metrics_prefix = arg;
        return true;
    case CONTROLLER_OPT_METRICS_COMPAT:
        options->metrics_compat = arg;
        return true;
    case CONTROLLER_OPT_METRICS_TOKEN_FILE:
        options->metrics_access.token_file = arg;
        return true;
    case CONTROLLER_OPT_METRICS_INSECURE:
        options->metrics_access.insecure = true;
        return true;
    case CONTROLLER_OPT_PROGRESS_INTERVAL:
        options->progress_interval = arg;
        return true;
    case CONTROLLER_OPT_GRACE:
        options->grace = arg;
        return true;
    case CONTROLLER_OPT_NO_PREFLIGHT:
        options->no_preflight = true;
        return true;
    default:
        return false;
    }
}

int controller_main(int argc, char **argv) {
    return controller_main_source(argc, argv, NULL);
}

int controller_main_source(int argc, char **argv, const struct sweep_source *source) {
    return controller_main_after(argc, argv, source, NULL, NULL);
}

int controller_main_after(int argc, char **argv, const struct sweep_source *source,
                          int (*after)(void *arg, int rc), void *arg) {
    static const struct option longopts[] = {
        {"bind", required_argument, NULL, 'b'},
        {"expect-workers", required_argument, NULL, 'n'},
        CONTROLLER_SHARED_LONGOPTS,
        {"data-port", required_argument, NULL, 'd'},
        {"register-timeout", required_argument, NULL, 'r'},
        {"key", required_argument, NULL, CONTROLLER_OPT_KEY},
        {"authorized-keys", required_argument, NULL, CONTROLLER_OPT_AUTHORIZED_KEYS},
        {"insecure", no_argument, NULL, CONTROLLER_OPT_INSECURE},
        {"linger", required_argument, NULL, CONTROLLER_OPT_LINGER},
        {"print-report", no_argument, NULL, CONTROLLER_OPT_PRINT_REPORT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char **runs = NULL; /* the files, a file of several YAML documents as several runs */
    controller_options_t o = {.name = "controller", .security.log_closes = true};
    const char **targets = calloc((size_t)argc + 1, sizeof *targets);
    if (!targets)
        return 1;
    optind = 1;
    int c, rc = 1;
    while ((c = getopt_long(argc, argv, "b:n:t:o:TPvd:r:h", longopts, NULL)) != -1) {
        char *end = NULL;
        if (controller_options_apply(&o, targets, c, optarg))
            continue;
        switch (c) {
        case 'b':
            o.bind = optarg;
            break;
        case 'n':
            o.expect_workers = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || o.expect_workers == 0) {
                fprintf(stderr, "controller: --expect-workers wants a number >= 1, got '%s'\n",
                        optarg);
                goto out;
            }
            break;
        case 'd':
            o.data_port = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || o.data_port == 0 || o.data_port > 65535) {
                fprintf(stderr, "controller: --data-port wants a port number, got '%s'\n", optarg);
                goto out;
            }
            break;
        case 'r': {
            double s = strtod(optarg, &end);
            if (*end || s <= 0) {
                fprintf(stderr, "controller: --register-timeout wants seconds > 0, got '%s'\n",
                        optarg);
                goto out;
            }
            o.register_timeout_ns = (int64_t)(s * 1e9);
            break;
        }
        case CONTROLLER_OPT_KEY:
            o.security.key_file = optarg;
            break;
        case CONTROLLER_OPT_AUTHORIZED_KEYS:
            o.security.authorized_keys = optarg;
            break;
        case CONTROLLER_OPT_INSECURE:
            o.security.insecure = true;
            break;
        case CONTROLLER_OPT_LINGER:
            if (units_parse_duration(optarg, &o.linger_ns) != 0 || o.linger_ns <= 0) {
                fprintf(stderr, "controller: --linger wants a duration > 0 (%s), got '%s'\n",
                        units_duration_help(), optarg);
                goto out;
            }
            break;
        case CONTROLLER_OPT_PRINT_REPORT:
            o.print_report = true;
            break;
        case 'h':
            usage(stdout);
            rc = 0;
            goto out;
        default:
            usage(stderr);
            goto out;
        }
    }
    if (o.linger_ns && !o.metrics_listen) {
        fprintf(stderr, "controller: --linger serves the results on the --metrics-listen port: "
                        "pass --metrics-listen HOST:PORT too\n");
        goto out;
    }
    if (optind >= argc || !o.bind || !o.expect_workers) {
        fprintf(stderr, "controller: %s\n",
                optind >= argc ? "a workload FILE is required"
                : !o.bind      ? "--bind tcp://*:PORT is required"
                               : "--expect-workers N is required");
        usage(stderr);
        goto out;
    }
    /* a file of several YAML documents is several runs */
    runs = config_expand_documents(&argv[optind], (size_t)(argc - optind), &o.n_configs);
    if (!runs)
        goto out;
    o.config_path = runs[0];
    o.config_paths = (const char *const *)runs;
    o.targets = targets;
    o.source = source;
    controller_t *ctl = controller_new(&o);
    if (!ctl)
        goto out;
    rc = controller_run(ctl);
    if (after) {
        int after_rc = after(arg, rc);
        if (!rc)
            rc = after_rc;
    }
    controller_linger(ctl);
    controller_destroy(&ctl);
out:
    config_documents_free(runs);
    free(targets);
    return rc;
}
