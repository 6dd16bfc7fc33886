#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "spool_merge.h"

#define NAME "merge"

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede merge SPOOL... --into DIR [--allow-invalid] [--http-phases]\n"
        "  SPOOL...       spool files of the run's workers (stampede-RUNID-NAME.spool, written\n"
        "                 where their --spool says while the controller was unreachable)\n"
        "  --into DIR     the run's results directory: its journal.spool (every batch the\n"
        "                 controller acknowledged) is read when present, and results.json,\n"
        "                 config.yaml and the reports are written there, marked partial\n"
        "  --allow-invalid  exit 0 for a run judged invalid (else 3, as a run)\n"
        "  --http-phases  the table also shows the HTTP phases\n"
        "  A batch found in several files (a resend) counts once. A missing, corrupt or\n"
        "  truncated spool, or spools of different runs, are refused (exit 1) naming the\n"
        "  file and the offset (docs/protocol.md, \"Spools\").\n");
}

int spool_merge_main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"into", required_argument, NULL, 'i'},
        {"allow-invalid", no_argument, NULL, 'I'},
        {"http-phases", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = NULL;
    spool_merge_options_t options = {0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "i:IPh", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            dir = optarg;
            break;
        case 'I':
            options.allow_invalid = true;
            break;
        case 'P':
            options.http_phases = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!dir) {
        fprintf(stderr, NAME ": --into DIR is required (the run's results directory)\n");
        usage(stderr);
        return 2;
    }
    return spool_merge_run(dir, &argv[optind], argc - optind, &options);
}
