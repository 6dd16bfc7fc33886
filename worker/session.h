/* The session executor: one per worker loop. It runs the sessions this worker's plan share owns
 * (common/plan.h), node by node, and hands each request to a backend (the request engine, or a
 * fake in tests).
 *
 * A session is a DAG of nodes (common/workload.h; parents have smaller indices). A node becomes
 * ready when all its parents finished, waits its wait_after_ready, then is sent; its prompt is the
 * scaffold (the shared system prompt, or its role's system prompt and tools: session_scaffold.h),
 * then user text + the server's reply (verbatim) of the turns it inherits, then its own user text
 * (its parents' replies first when it appends them, then its fresh text), some of it sent as tool
 * results and, past the compaction limit, from a summary instead (session_prompt.h).
 * The turns inherited: ANCESTORS history, the last round(inherit x n) of its n ancestors in node
 * order (a chat turn inherits every previous turn); CHAIN history, the last round(inherit x n) of
 * the n turns of its history parent's conversation (that parent's inherited turns and its own), so
 * inherit 1 is `full` and 0 is `none` (a sub-agent). A failed request ends its session: nothing
 * more of it is sent, what is in flight finishes. Memory is pooled: session and request state is
 * reused from session to session, and grows only with the largest session seen.
 *
 * Schedulers. concurrent: global slot s (of this share) starts at start + s * ramp_up / C and
 * runs sessions s, s+C, s+2C, ... one after another; each session's intended start is the instant
 * its predecessor finished. rate: session i (i mod W == worker index) is intended at
 * start + workload_arrivals_time_ns(i); while the share's rate_cap sessions are in flight it waits,
 * and its intended time stays, so the schedule lag shows.
 *
 * Limits. Nothing is sent at or after start + duration (in-flight requests finish, bounded by the
 * engine timeout); a later turn whose time would fall past the end is dropped when its parent
 * finishes, so its session ends then and the slot starts a new one while time remains. Sessions
 * with index >= max_sessions never start; a request whose global ordinal (first ordinal of its
 * session + node index) is >= max_requests is never sent, so a run bounded by max_requests sends
 * exactly ordinals [0, max_requests) unless failures end sessions early.
 *
 * Routing (global ordinal g, E endpoints). round_robin: endpoint g mod E, so over any contiguous
 * range of ordinals (a run bounded by max_requests or max_sessions, whatever the worker count) the
 * per-endpoint counts differ by at most 1; a run cut by duration sends a not quite contiguous set
 * (slots end at different points), so the balance is then only approximate. sticky: endpoint
 * session mod E and an X-Session-ID header holding the session index. random:
 * rng(seed, RNG_STREAM_ROUTING, g) mod E. least_inflight: the endpoint with the fewest requests in
 * flight on this worker, ties broken starting from g mod E.
 *
 * Records. on_record sees every request handed to the backend (successes, failures and
 * cancellations) with session, node, role, endpoint, request_id (= g), intended_ns, requested
 * token counts (words sent: scaffold + inherited history + fresh, and max_tokens), warmup (sent
 * before start + warmup), session_end (nothing more of the session will be sent; a session the end
 * of the run cuts while it waits between turns has no such record) and workload_hash
 * (XXH3 of the deterministic parts only: session, node, shape, fresh text and the role's
 * scaffold, and in rate mode the arrival offset), so the sum of hashes over a run is the same for
 * any worker count. A summarise request (workload.compaction) is recorded with its node's session,
 * node and request_id, the compaction role and workload_hash 0: it depends on the server's replies.
 *
 * The executor's stages, one file each, in the order a request lives them; each calls only the
 * ones after it and hears back through the callbacks it gave them:
 *   session.c           the executor: wires the stages, the end of the run, stop, finish
 *   session_schedule.c  which session starts, and when (slots, arrivals, limits)
 *   session_graph.c     which node is ready (the one owner of a session's DAG state), its end
 *   session_prompt.c    what a node says: scaffold, inherited history, upstream replies, fresh
 *   session_scaffold.c  the system prompt and tools, per role or shared by every session
 *   body.c              the JSON of the request
 *   session_send.c      its endpoint (route.c) and the backend (the engine), or the queue */
#ifndef STAMPEDE_SESSION_H
#define STAMPEDE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "engine.h"
#include "loop.h"
#include "plan.h"
#include "record.h"
#include "workload.h"

typedef struct session_executor session_executor_t;

/* Every finished request, failures included; rec is valid only during the call. It may call
 * session_executor_stop, never session_executor_destroy. */
typedef void (*session_record_fn)(void *arg, const request_record_t *rec);
/* Nothing more will be sent or finish; called once, from the loop (never from inside a
 * session_executor_* call), so the callee may destroy the executor. */
typedef void (*session_finished_fn)(void *arg);

/* Where requests go: the engine, or a fake in tests. submit returns 0, or -1 when no transfer can
 * start now (the request then waits until one of ours finishes). cancel_all must run the done
 * callbacks of everything in flight before it returns. */
typedef struct session_backend {
    int (*submit)(void *ctx, const engine_request_t *req, engine_done_fn done, void *arg);
    uint32_t (*inflight_to)(void *ctx, uint32_t endpoint);
    void (*cancel_all)(void *ctx);
    void *ctx;
} session_backend_t;

/* Generates session `index` into *out like workload_session_generate (0 ok, -1 on failure); it
 * must produce workload_session_size(cfg, index) nodes, parents before children. */
typedef int (*session_generate_fn)(void *arg, const config_t *cfg, uint64_t index,
                                   workload_session_t *out);

/* A backend that forwards to engine_submit / engine_inflight_to / engine_cancel_all. */
session_backend_t session_backend_engine(engine_t *engine);

/* An idle executor for this share (copied). cfg and loop must outlive it. NULL when the config has
 * no endpoint or memory is short. Callbacks get arg. */
session_executor_t *session_executor_new(loop_t *loop, const config_t *cfg,
                                         const plan_share_t *share, session_backend_t backend,
                                         session_record_fn on_record,
                                         session_finished_fn on_finished, void *arg);
/* Replaces workload_session_generate as the source of session shapes; call before
 * session_executor_start. A test seam: tests drive DAG shapes the workload does not generate. */
void session_executor_set_generator(session_executor_t *self, session_generate_fn generate,
                                    void *arg);
/* Schedules the run from start_ns, the local CLOCK_MONOTONIC instant of the synchronized start
 * (it may be in the past: what is due starts at once). 0 ok; -1 if already started or stopped. */
int session_executor_start(session_executor_t *self, int64_t start_ns);
/* Stops issuing; with cancel_inflight, also cancels what is in flight (recorded as cancelled).
 * on_finished follows once nothing is in flight. Harmless when repeated or before start. */
void session_executor_stop(session_executor_t *self, bool cancel_inflight);
/* Requests in flight (handed to the backend, done not yet called). */
uint32_t session_executor_inflight(const session_executor_t *self);
/* Rate mode: arrivals this executor started, and how many of them were due while its share of
 * scheduler.concurrency was full (they waited for a session to end and started late). */
uint64_t session_executor_arrivals(const session_executor_t *self);
uint64_t session_executor_cap_waits(const session_executor_t *self);
/* The controller's session-index grant (session_schedule_set_limit): nothing at or past it starts.
 */
void session_executor_set_limit(session_executor_t *self, uint64_t limit);
/* Where the schedule stands, for the heartbeats. */
typedef struct session_progress {
    uint64_t frontier; /* 1 + the highest session index started (0: none) */
    uint64_t started;  /* sessions started */
    uint64_t limit;    /* the grant in force (0: none) */
    bool held;         /* a slot or arrival waits for the grant */
} session_progress_t;
void session_executor_progress(const session_executor_t *self, session_progress_t *out);
/* Takes over a lost worker's residue class of sessions (session_schedule_adopt). 0 ok; -1 when
 * the executor is not running (not started, stopped or finished) or out of memory. */
int session_executor_adopt(session_executor_t *self, uint64_t residue, uint64_t modulus,
                           uint64_t first_session, uint32_t rate_cap_add);
/* A joining worker (fleet.rebalance_on_join): it holds no load until its first adoption and does
 * not finish before it. Call before session_executor_start. */
void session_executor_await_adoption(session_executor_t *self);
/* Gives up a class to a joining worker (session_schedule_release). 0 ok, -1 when not held. */
int session_executor_release(session_executor_t *self, uint64_t residue, uint64_t modulus,
                             uint64_t from_session);
/* Cancels what is still in flight (without reporting it) and frees everything. */
void session_executor_destroy(session_executor_t **self_p);

#endif
