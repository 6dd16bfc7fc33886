/* `stampede calibrate`'s library: the engine model's parameters fitted from sweeps' results.json
 * (concurrency or rate levels; a real server's with its server figures, a simulation's, or the
 * client's figures alone, as the reference reports' tables give), each with its fit quality and
 * the levels it came from, or why it was not fitted; a profile file that `stampede mock
 * --profile-file` and `stampede simulate --profile` load; and a table of the fitted model against
 * every level. Input it cannot fit (one level, no figures) is refused, saying what is missing
 * (docs/simulate.md "Calibrate"). */
#ifndef STAMPEDE_CALIBRATE_H
#define STAMPEDE_CALIBRATE_H

#include <stddef.h>
#include <stdio.h>

typedef struct calibrate_options {
    const char *const *results; /* results.json files, or directories holding one */
    size_t n_results;
    const char *out;  /* the profile file to write */
    const char *base; /* the built-in profile for what the data cannot say (default "default") */
} calibrate_options_t;

/* Fits, writes the profile file and prints the parameters and the table to out. 0 ok; 1 with
 * the reason on stderr (a file unreadable or not results.json, nothing to fit, the profile not
 * writable). */
int calibrate_run(const calibrate_options_t *options, FILE *out);

#endif
