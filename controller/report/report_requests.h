/* The per-request points of report.html's single-run charts, read from DIR/requests.jsonl (a run
 * with --trace): TTFT, ITL and E2E at the instant each was observed, TTFT against the prompt's
 * length and ITL against the token's position. Only ok, measured (not warm-up) requests count.
 * Each set keeps at most REPORT_REQUESTS_MAX_POINTS points: past that every other one is dropped
 * and only every 2nd, 4th, ... point read after is kept, so a long trace is evenly thinned. */
#ifndef STAMPEDE_REPORT_REQUESTS_H
#define STAMPEDE_REPORT_REQUESTS_H

#include <stddef.h>

#define REPORT_REQUESTS_MAX_POINTS 65536
#define REPORT_REQUESTS_BIN_S 0.1

/* n points (x[i], y[i]); seen counts every point offered, kept or not. */
typedef struct {
    double *x, *y;
    size_t n, cap, stride, seen;
} report_points_t;

typedef struct {
    report_points_t ttft;         /* x: first token (s from the run's start), y: TTFT ms */
    report_points_t itl;          /* x: the chunk's arrival (s), y: ms per token of the gap */
    report_points_t e2e;          /* x: the request's end (s), y: E2E ms */
    report_points_t ttft_prompt;  /* x: prompt tokens, y: TTFT ms */
    report_points_t itl_position; /* x: the token's position in the output (2 = second), y: ms */
    double *busy_s; /* per REPORT_REQUESTS_BIN_S bin from the run's start: request-seconds in
                       flight (every request sent, warm-up and failed ones too) */
    size_t n_bins, bins_cap;
    size_t requests; /* ok, measured requests read */
} report_requests_t;

/* Reads dir/requests.jsonl into self (zeroed by the caller). 1 read; 0 when there is no trace
 * (or it is not a regular file: a FIFO --trace wrote into);
 * -1 with the file, line and key in err. The caller clears self either way. */
int report_requests_load(report_requests_t *self, const char *dir, char *err, size_t err_len);
/* Frees the points; self is then empty. */
void report_requests_clear(report_requests_t *self);

/* The quantiles qs[0..n_q) (each in [0, 1]) of points' y over the trailing window_s seconds of
 * x, at n_at instants evenly from the first x to the last: at_x[i], and at_y[k * n_at + i] for
 * qs[k] (NAN where the window is empty). Sorts points by x. 0, or -1 when memory is short. */
int report_requests_rolling(report_points_t *points, double window_s, const double *qs, size_t n_q,
                            size_t n_at, double *at_x, double *at_y);

#endif
