/* What a worker may report, bounded by what the run's plan allows (docs/protocol.md "Numbers a
 * worker reports"). A worker holds a real key and is still not believed blindly: a buggy or
 * compromised peer, or a newer build with a bug, could otherwise put 2^31 output tokens in one
 * record and have them merged. Every check is a bound that no honest worker and server can pass,
 * so a refusal always means the numbers are wrong. */
#ifndef STAMPEDE_BOUNDS_H
#define STAMPEDE_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "record.h"
#include "workload.h"

/* The most tokens one request may count, any of its counts: the ceiling a plan's token counts
 * are refused above and drawn ones clamped to (10^7, the largest context window of any model). */
#define BOUNDS_MAX_TOKENS WORKLOAD_MAX_TOKENS
/* How far a worker's timestamp may lie outside the run's span, beyond its clock probe's error:
 * this, plus a thousandth of the time since the start (two hosts' clocks drift apart). */
#define BOUNDS_CLOCK_SLACK_NS 1000000000LL

/* The plan's side of the bounds, for one run at one instant. */
typedef struct bounds {
    int64_t start_ns;          /* the run's start on the controller's clock */
    int64_t now_ns;            /* the controller's clock as the record arrives */
    uint64_t session_limit;    /* the grant: no worker starts a session index at or past it */
    size_t n_endpoints;        /* target.endpoints */
    uint32_t retry_max;        /* target.retry_429_max: resends of one request after 429s */
    const plan_share_t *share; /* the worker's share as planned, while it runs only that (no
                                  class adopted or given up); NULL: not checked */
} bounds_t;

/* Whether rec (on the controller's clock) lies within b: its session below the grant and one of
 * its share's (when b says the share), its
 * endpoint one of the run's, every timestamp and duration within the run's span, every token
 * count within BOUNDS_MAX_TOKENS and its output within the max_tokens it asked for, its cached
 * tokens within its prompt, its retries within target.retry_429_max. false with why filled
 * ("completion_tokens 2147483648 above the request's max_tokens 16"). */
bool bounds_record(const bounds_t *b, const request_record_t *rec, char *why, size_t len);
/* Whether a worker's loop figures over the run (its Done's WorkerStats: CPU, wall and wait time,
 * wait -1 when unknown) lie within the run's span so far. false with why filled. */
bool bounds_loop_times(const bounds_t *b, int64_t cpu_ns, int64_t wall_ns, int64_t wait_ns,
                       char *why, size_t len);

#endif
