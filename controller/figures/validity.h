/* Whether a run measured the server rather than the client: a pure verdict over the merged totals
 * and what each worker reported of its loop (docs/metrics.md "Run validity"). An invalid run still
 * writes everything; `stampede run` and `stampede controller` then exit 3 unless --allow-invalid.
 */
#ifndef STAMPEDE_VALIDITY_H
#define STAMPEDE_VALIDITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define VALIDITY_MAX_REASONS 16
#define VALIDITY_REASON_LEN 320
/* A loop busier than this share of one core could not keep up with its streams. */
#define VALIDITY_LOOP_CPU_MAX 0.90
/* Token events per body read above this, from a busy loop: reads found several tokens waiting, the
 * client fell behind (a server that writes one token per send gives 1). Token events, not all SSE
 * events: the closing ones (finish, usage, [DONE]) come in the read of the last token, so a
 * 1-token reply reads 4 events at once from a client that is not behind at all. */
#define VALIDITY_TOKEN_EVENTS_PER_READ_MAX 1.5
/* ...and the loop busy (on a CPU, or runnable and waiting for one) above this share of the run:
 * several tokens per read from an idle loop mean the server wrote them together (a coalescing
 * server or proxy), not that the client fell behind. */
#define VALIDITY_LOOP_BUSY_FOR_READS 0.5
/* A loop measured over a shorter span than this is not judged for saturation: a worker that had
 * nothing to send ends its run microseconds after the start, and the start and end work alone
 * then fill its span (a 26 us span with 25 us of CPU is "97 % of a core" of nothing). */
#define VALIDITY_LOOP_MIN_WALL_NS 1000000000LL
/* Share of requests that asked for an exact length and received another. */
#define VALIDITY_OUTPUT_MISMATCH_MAX 0.05

/* One worker of the run, as its Done and the controller's registry said. */
typedef struct validity_worker {
    const char *name;
    bool lost;      /* lost and its share not taken over: its load is missing from the run */
    bool has_stats; /* it reported the figures below */
    uint64_t write_callbacks;
    uint64_t sse_events;
    uint64_t token_events;
    int64_t loop_cpu_ns;
    int64_t loop_wall_ns;
    int64_t loop_wait_ns; /* runnable but waiting for a CPU; negative when unknown */
    uint64_t cap_waits;
    uint64_t refused;          /* its numbers outside the plan's bounds, refused (bounds.h) */
    const char *refused_first; /* why the first was ("" or NULL: none) */
} validity_worker_t;

/* What the verdict looks at: the merged totals (warm-up excluded) and every worker. */
typedef struct validity_input {
    uint64_t requests_ok;
    uint64_t requests_failed;
    bool rate_mode;
    double schedule_lag_p99_ms; /* rate mode; negative when nothing was measured */
    double lag_threshold_ms;    /* schedule lag p99 above this is a reason (unless the cap) */
    bool exact_lengths;         /* validity_exact_lengths(cfg) */
    uint64_t requested_checked; /* ok requests that asked for a number of output tokens */
    uint64_t output_mismatched; /* those that received another number */
    uint64_t stopped_early;     /* of those, the ones the server ended with `stop` short of it */
    const validity_worker_t *workers;
    size_t n_workers;
    const char *breaker;       /* why limits.max_error_pct stopped the run; NULL when it did not */
    uint64_t client_fd_limit;  /* requests that found no descriptor for a socket: the client's */
    uint64_t retried_requests; /* requests that waited out a 429's Retry-After before their send */
    double retry_wait_s;       /* those waits, summed */
} validity_input_t;

typedef struct validity {
    bool valid;
    size_t n_reasons;
    char reasons[VALIDITY_MAX_REASONS][VALIDITY_REASON_LEN];
} validity_t;

/* Fills *out: valid, or every reason the run is not (each one sentence naming the figures). */
void validity_judge(const validity_input_t *in, validity_t *out);
/* Whether the workload asked the server for exact output lengths, so that a length mismatch
 * says the server did not do what was asked (target.ignore_eos or target.min_tokens). */
bool validity_exact_lengths(const config_t *cfg);
/* SSE events per body read of w (0 when it read nothing). */
double validity_events_per_read(const validity_worker_t *w);
/* Token events per body read of w (0 when it read nothing): what the saturation verdict reads. */
double validity_token_events_per_read(const validity_worker_t *w);
/* w's loop CPU time over its wall time, as a share of one core (0 when not measured). */
double validity_loop_cpu_share(const validity_worker_t *w);
/* w's loop CPU time plus its wait for a CPU, over its wall time (0 when not measured): how much of
 * the run the loop wanted a core. */
double validity_loop_busy_share(const validity_worker_t *w);

/* Why a rate-mode run started fewer sessions than its schedule asked, checked in this order. */
typedef enum {
    VALIDITY_RATE_CAP,         /* the concurrency cap held arrivals back */
    VALIDITY_RATE_RETRY_AFTER, /* the lag is the server's: requests waited out 429 Retry-After */
    VALIDITY_RATE_CLIENT,      /* the client could not keep the schedule (lag above threshold) */
    VALIDITY_RATE_DRAW,        /* the arrival process drew fewer arrivals than the mean */
    VALIDITY_RATE_UNEXPLAINED, /* none of the three */
} validity_rate_cause_t;

/* What the cause of a rate shortfall is chosen from: the run's workers summed, over the
 * measured window. */
typedef struct validity_rate_input {
    uint64_t cap_waits;                  /* arrivals that waited for a free slot under the cap */
    uint64_t arrivals;                   /* arrivals the schedules drew */
    double schedule_lag_p99_ms;          /* negative when nothing was measured */
    double lag_threshold_ms;             /* lag p99 above this: the client fell behind */
    double busiest_loop_share;           /* the busiest worker loop's share of a core */
    uint64_t retried_requests;           /* requests resent after waiting out a 429 */
    const config_scheduler_t *scheduler; /* the arrival process and its coefficient of variation */
    double expected_starts;              /* requested rate times the window's length */
    uint64_t starts;                     /* session starts inside the window */
} validity_rate_input_t;

/* The cause of a rate shortfall (the caller decides there is one): the cap when any arrival
 * waited for it, else the client when the lag p99 is above the threshold, else the draw when
 * the arrivals are random (Poisson, gamma) and the shortfall is within three standard deviations
 * of a renewal count (3 cv sqrt(expected)), else unexplained. Constant arrivals are never the
 * draw. */
validity_rate_cause_t validity_rate_cause(const validity_rate_input_t *in);

/* What the servers' own counters said about the run (controller/telemetry/telemetry.c, the
 * shared-rig guard). */
typedef struct validity_server {
    bool shared;            /* they served markedly more requests than this run sent */
    const char *shared_why; /* the sentence saying so, with the figures */
    bool restarted;         /* a counter went backwards: a server restarted mid-run */
    const char *restarted_why;
} validity_server_t;

/* Adds the servers' causes to *out (each makes the run invalid): someone else using the server,
 * a server restart. */
void validity_judge_server(const validity_server_t *in, validity_t *out);

#endif
