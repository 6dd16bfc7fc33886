/* `stampede report DIR...`: its arguments; the rendering is controller/report/report_cmd.c. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "definitions.h"
#include "report.h"
#include "report_cmd.h"

static void report_cli_usage(FILE *out) {
    fprintf(out,
            "usage: stampede report DIR [DIR...] [--definitions vllm,aiperf,guidellm,sglang]\n\n"
            "Reads DIR/results.json (a run's or a sweep's, schema_version %d) and writes\n"
            "DIR/report.md, DIR/report.html (charts: inline SVG, no network reference; a single\n"
            "run's per-request charts from DIR/requests.jsonl, written with --trace),\n"
            "DIR/results.csv and DIR/hgrm/NN-LEVEL-METRIC.hgrm (docs/reports.md). A run and a\n"
            "sweep write them at their end too; this re-renders them, byte for byte the same\n"
            "from the same results.json.\n\n"
            "--definitions LIST  also prints TTFT, TPOT, ITL and output tok/s as each tool of\n"
            "                    LIST defines them, recomputed from DIR/requests.jsonl (a run\n"
            "                    with --trace): docs/metrics.md section 15\n",
            REPORT_SCHEMA_VERSION);
}

/* Takes `--definitions LIST` out of argv (it may follow the directories); NULL when absent, ""
 * when LIST is missing. */
static const char *report_cli_take_definitions(int *argc, char **argv) {
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--definitions") != 0)
            continue;
        const char *list = i + 1 < *argc ? argv[i + 1] : "";
        int taken = i + 1 < *argc ? 2 : 1;
        memmove(&argv[i], &argv[i + taken], (size_t)(*argc - i - taken + 1) * sizeof *argv);
        *argc -= taken;
        return list;
    }
    return NULL;
}

int report_cmd_main(int argc, char **argv) {
    const char *definitions = report_cli_take_definitions(&argc, argv);
    char why[256];
    if (definitions && definitions_check(definitions, why, sizeof why) != 0) {
        fprintf(stderr, "report: %s\n", why);
        return 2;
    }
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
            report_cli_usage(stdout);
            return 0;
        }
        fprintf(stderr, "report: unknown option '%s'\n\n", argv[first]);
        report_cli_usage(stderr);
        return 2;
    }
    if (first >= argc) {
        report_cli_usage(stderr);
        return 2;
    }
    int rc = 0;
    for (int i = first; i < argc; i++) {
        char err[4400];
        if (report_cmd_render(argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "report: %s\n", err);
            rc = 1;
            continue;
        }
        printf("report: %s/report.md\n", argv[i]);
        if (definitions && definitions_report(argv[i], definitions, stdout, err, sizeof err) != 0) {
            fprintf(stderr, "report: %s\n", err);
            rc = 1;
        }
    }
    return rc;
}
