/* `stampede read-metrics FILE...`: its arguments; the reading is
 * controller/telemetry/read_metrics.c. */
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "read_metrics.h"

static void read_metrics_cli_usage(FILE *out) {
    fprintf(out,
            "usage: stampede read-metrics [--json] FILE...\n\n"
            "Reads each FILE as a saved Prometheus /metrics page (vLLM, SGLang, Dynamo frontend,\n"
            "NVIDIA DCGM exporter) the way a run reads a scraped one (docs/metrics.md section 13)\n"
            "and prints what stampede recognises: the dialect, the metric each figure comes from\n"
            "and its value on the page (counters and gauges as the page has them, histograms as\n"
            "count and mean); absent figures are left out. A page holds totals since the server\n"
            "started: a run's figures are the differences between two pages.\n\n"
            "--json  one JSON object per file and line: file, dialect, samples, lines_skipped,\n"
            "        first_error, and counters, gauges, histograms by stampede's names\n");
}

int read_metrics_main(int argc, char **argv) {
    bool as_json = false;
    int first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
        if (!strcmp(argv[first], "--json")) {
            as_json = true;
        } else if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
            read_metrics_cli_usage(stdout);
            return 0;
        } else if (!strcmp(argv[first], "--")) {
            first++;
            break;
        } else {
            fprintf(stderr, "stampede read-metrics: unknown option '%s'\n\n", argv[first]);
            read_metrics_cli_usage(stderr);
            return 2;
        }
    }
    if (first >= argc) {
        read_metrics_cli_usage(stderr);
        return 2;
    }
    int rc = 0;
    for (int i = first; i < argc; i++)
        if (read_metrics_file(argv[i], as_json) != 0)
            rc = 1;
    fflush(stdout);
    return rc;
}
