/* `stampede compare RUN...`: its flags and output; the comparison is controller/report/compare.c.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "outfile.h"

static void compare_usage(FILE *out) {
    fprintf(out,
            "usage: stampede compare RUN RUN... [--format md|csv|json] [--out FILE]\n"
            "  RUN is a results directory (OUT of `stampede run`, a sweep or capacity) or a\n"
            "  results.json (schema_version 2); plain runs and sweeps mix. Per level and metric\n"
            "  (TPOT, TTFT, E2E p50/p95, server TPOT and TTFT p50 when scraped, error rate,\n"
            "  actual RPS, requests/s, output tokens/s, KV hit rate, wall clock): two runs give "
            "each value, the second's change against\n"
            "  the first with better/worse (lower is better for latencies and errors, higher\n"
            "  for throughput) and the saturation points; three or more give one column per\n"
            "  run with the winners in bold and a winner per level table. Levels missing from a\n"
            "  run show as —. Markdown by default; docs/compare.md.\n");
}

int compare_main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = "md", *out_path = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'h':
            compare_usage(stdout);
            return 0;
        default:
            fprintf(stderr, "compare: unknown or incomplete option '%s'\n", argv[optind - 1]);
            compare_usage(stderr);
            return 2;
        }
    }
    if (strcmp(format, "md") && strcmp(format, "markdown") && strcmp(format, "csv") &&
        strcmp(format, "json")) {
        fprintf(stderr, "compare: --format %s: expected md, csv or json\n", format);
        return 2;
    }
    if (argc - optind < 2) {
        fprintf(stderr, "compare: at least two runs are needed\n");
        compare_usage(stderr);
        return 2;
    }
    compare_t *cmp = compare_new();
    if (!cmp) {
        fprintf(stderr, "compare: out of memory\n");
        return 1;
    }
    char err[COMPARE_PATH_MAX + 256];
    for (int i = optind; i < argc; i++) {
        err[0] = '\0';
        if (compare_add(cmp, argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "compare: %s\n", err);
            compare_destroy(&cmp);
            return 1;
        }
    }
    FILE *out = out_path ? outfile_fopen(out_path) : stdout;
    if (!out) {
        fprintf(stderr, "compare: cannot write %s: %s\n", out_path, strerror(errno));
        compare_destroy(&cmp);
        return 1;
    }
    int rc = 0;
    if (!strcmp(format, "json")) {
        json_t *root = compare_json(cmp);
        rc = root ? json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
        fputc('\n', out);
        json_decref(root);
    } else if (!strcmp(format, "csv")) {
        compare_print_csv(cmp, out);
    } else {
        compare_print_markdown(cmp, out);
    }
    if (out != stdout ? fclose(out) != 0 : fflush(out) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "compare: cannot write %s\n", out_path ? out_path : "stdout");
    compare_destroy(&cmp);
    return rc ? 1 : 0;
}
