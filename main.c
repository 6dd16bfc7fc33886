/* stampede: one binary, subcommands. This file only dispatches. */
#include <stdio.h>
#include <string.h>

/* Each library's entry point parses its own arguments (argv[0] is the subcommand). */
#include "cli.h"
#include "controller.h"
#include "keygen_cli.h"
#include "mock_cli.h"
#include "tokenize_cli.h"
#include "version.h"
#include "worker_cli.h"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command_t;

static void usage(FILE *out, const command_t *commands) {
    fprintf(out, "usage: stampede COMMAND [ARGS]   (stampede COMMAND --help for details)\n\n");
    for (const command_t *c = commands; c->name; c++)
        fprintf(out, "  %-12s %s\n", c->name, c->summary);
}

int main(int argc, char **argv) {
    const command_t commands[] = {
        {"run", run_main, "run a workload file on this machine (controller, N workers, mock)"},
        {"controller", controller_main, "bind, wait for workers, run the plan, write results"},
        {"worker", worker_main, "connect to a controller and serve runs"},
        {"mock", mock_main, "the simulated OpenAI-compatible inference server"},
        {"keygen", keygen_main, "write a CURVE key pair NAME.key / NAME.pub (docs/security.md)"},
        {"capacity", capacity_main,
         "the highest rate, concurrency or rho that meets the file's SLOs"},
        {"simulate", simulate_main,
         "run a workload file through the engine model in virtual time (seconds, no sockets)"},
        {"calibrate", calibrate_main,
         "fit the engine model from sweeps' results.json into a profile file"},
        {"compare", compare_main, "compare runs level by level: change %, winners, saturation"},
        {"report", report_cmd_main,
         "re-render DIR's report.md, report.html, results.csv and .hgrm files"},
        {"plan", plan_main,
         "KV-cache arithmetic: sequences per GPU, 2R-4R guidance (docs/plan.md)"},
        {"read-metrics", read_metrics_main,
         "read saved /metrics pages offline and print what stampede recognises"},
        {"merge", spool_merge_main,
         "fold workers' spools and DIR's journal into the results of a run whose controller died"},
        {"serve", serve_main,
         "a shared rig: queue users' runs on a long-lived fleet, archive them"},
        {"submit", submit_main, "queue a workload file on a rig (stampede serve) and follow it"},
        {"runs", runs_main, "a rig's queue and archive: list, show, fetch, cancel, compare"},
        {"tokenize", tokenize_main,
         "count or list a text's tokens in a tokenizer.json, as runs do (docs/workloads.md)"},
        {NULL, NULL, NULL},
    };
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout, commands);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("stampede %s\n", STAMPEDE_VERSION);
        return 0;
    }
    for (const command_t *c = commands; c->name; c++) {
        if (strcmp(argv[1], c->name) != 0)
            continue;
        return c->fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "stampede: unknown command '%s'\n\n", argv[1]);
    usage(stderr, commands);
    return 2;
}
