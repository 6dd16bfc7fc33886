/* What the benches of workload files share (bench_dataset, bench_trace): a monotonic clock, and a
 * workload file loaded as `stampede run` does on the controller, then encoded into one worker's
 * part. Header-only (static functions) because each bench/bench_*.c is a program of its own. */
#ifndef STAMPEDE_BENCH_LOAD_H
#define STAMPEDE_BENCH_LOAD_H

#include <stdio.h>
#include <time.h>

#include "buffer.h"
#include "config.h"
#include "plan.h"
#include "trace_wire.h"

/* Seconds on the monotonic clock. */
static inline double bench_load_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes yaml to path and loads it into *cfg; the seconds the load took, or -1 with the error on
 * stderr (after "name: " when name is not NULL). */
static inline double bench_load_config(const char *name, const char *path, const char *yaml,
                                       config_t *cfg) {
    FILE *f = fopen(path, "w");
    fputs(yaml, f);
    fclose(f);
    config_error_t err;
    double t0 = bench_load_now_s();
    if (config_load_file(cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s%s%s\n", name ? name : "", name ? ": " : "", msg);
        return -1;
    }
    return bench_load_now_s() - t0;
}

/* Encodes worker 1's part of four of cfg's replay into part (initialised here; the caller clears
 * it); the seconds the encoding took. */
static inline double bench_load_encode(const config_t *cfg, buffer_t *part) {
    double t0 = bench_load_now_s();
    plan_share_t share;
    plan_share_for(cfg, 4, 1, &share);
    buffer_init(part);
    trace_wire_encode(cfg, &share, part);
    return bench_load_now_s() - t0;
}

#endif
