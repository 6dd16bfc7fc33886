/* What the benches of workload files share (bench_dataset, bench_trace): a monotonic clock, and a
 * workload file loaded as `stampede run` does on the controller, then encoded into one worker's
 * part, each timed. Header-only (static functions) because each bench/bench_*.c is a program of its
 * own. */
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

/* One workload file, loaded and encoded. */
typedef struct {
    config_t cfg;
    buffer_t part;   /* worker 1's part of four of the replay */
    double load_s;   /* seconds config_load_file took */
    double encode_s; /* seconds the part's encoding took */
} bench_load_t;

/* Writes yaml to path, loads it as `stampede run` does on the controller and encodes worker 1's
 * part of four; 0 (the caller calls bench_load_free), or -1 with the error on stderr (after
 * "name: " when name is not NULL). */
static inline int bench_load_run(bench_load_t *self, const char *name, const char *path,
                                 const char *yaml) {
    FILE *f = fopen(path, "w");
    fputs(yaml, f);
    fclose(f);
    config_error_t err;
    double t0 = bench_load_now_s();
    if (config_load_file(&self->cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s%s%s\n", name ? name : "", name ? ": " : "", msg);
        return -1;
    }
    double t1 = bench_load_now_s();
    plan_share_t share;
    plan_share_for(&self->cfg, 4, 1, &share);
    buffer_init(&self->part);
    trace_wire_encode(&self->cfg, &share, &self->part);
    self->load_s = t1 - t0;
    self->encode_s = bench_load_now_s() - t1;
    return 0;
}

static inline void bench_load_free(bench_load_t *self) {
    buffer_clear(&self->part);
    config_free(&self->cfg);
}

#endif
