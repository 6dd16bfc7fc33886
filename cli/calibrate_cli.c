/* `stampede calibrate RESULTS... --out profile.yaml [--base PROFILE]`: the flags; the fits are
 * sim/calibrate*.c (docs/simulate.md "Calibrate"). */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

#include "calibrate.h"

static void calibrate_cli_usage(FILE *out) {
    fprintf(out,
            "usage: stampede calibrate RESULTS... --out profile.yaml [--base PROFILE]\n\n"
            "Fits the simulated engine's parameters (TPOT base and exponent, prefill tokens/s,\n"
            "the TTFT overhead, max_num_seqs, the KV pool, the prefix cache, max_model_len)\n"
            "from sweeps' results.json (or their directories), concurrency or request-rate\n"
            "levels (the requests in flight by Little's law), prints each with its fit\n"
            "quality and levels and the fitted model against every level, and writes a\n"
            "profile file for stampede mock --profile-file and stampede simulate --profile.\n"
            "Levels with server figures (level.server) give every parameter; levels with the\n"
            "client's figures only (TTFT, TPOT, E2E: a run without /metrics, or a report's\n"
            "table) give the TPOT curve, max_num_seqs from the TTFT knee, and TTFT's overhead\n"
            "and prefill rate when the prompts' sizes vary; max_model_len comes from the\n"
            "requests refused for context length, their sizes read from the levels' traces\n"
            "(--trace). What the data cannot say is said per parameter and comes from --base\n"
            "(default: default). Details: docs/simulate.md \"Calibrate\".\n\n"
            "Exit status: 0 ok, 1 when the input cannot be fitted (said), 2 on a usage error.\n");
}

int calibrate_main(int argc, char **argv) {
    static const struct option longopts[] = {{"out", required_argument, NULL, 'o'},
                                             {"base", required_argument, NULL, 'b'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    calibrate_options_t o = {.base = "default"};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out = optarg;
            break;
        case 'b':
            o.base = optarg;
            break;
        case 'h':
            calibrate_cli_usage(stdout);
            return 0;
        default:
            calibrate_cli_usage(stderr);
            return 2;
        }
    }
    if (optind >= argc || !o.out) {
        fprintf(stderr, "calibrate: %s\n\n",
                optind >= argc ? "at least one RESULTS file is needed" : "--out FILE is needed");
        calibrate_cli_usage(stderr);
        return 2;
    }
    o.results = (const char *const *)argv + optind;
    o.n_results = (size_t)(argc - optind);
    return calibrate_run(&o, stdout);
}
