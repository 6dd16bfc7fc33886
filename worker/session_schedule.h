/* Which session starts, and when: the first stage of a session's request. concurrent: each slot
 * of this share, from its ramp-up instant, runs its sessions one after another; sequential is the
 * same with the fleet's single slot (worker 0's), so each session starts when the previous one has
 * completed. rate: this worker's arrivals start at their times, as far as the share's cap on
 * sessions in flight allows. Both stop at the limits (duration, max_sessions, max_requests). A
 * started session belongs to worker/session_graph, which says when it ended. */
#ifndef STAMPEDE_SESSION_SCHEDULE_H
#define STAMPEDE_SESSION_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "loop.h"
#include "plan.h"
#include "session_graph.h"

typedef struct session_schedule session_schedule_t;

/* An idle schedule for this share (copied), starting sessions in graph (borrowed); settled(arg)
 * runs when a source retires (the executor may be finished). NULL when memory is short. */
session_schedule_t *session_schedule_new(loop_t *loop, const config_t *cfg,
                                         const plan_share_t *share, session_graph_t *graph,
                                         void (*settled)(void *arg), void *arg);
/* Arms the slots (concurrent) or the arrival stream (rate) from start_ns, until end_ns (0: none).
 */
void session_schedule_start(session_schedule_t *self, int64_t start_ns, int64_t end_ns);
/* A session ended: its slot (source, with the pause its requests left in backoff_ns) starts the
 * next one, or due arrivals start (rate mode, source NULL). */
void session_schedule_next(session_schedule_t *self, void *source, int64_t backoff_ns);
/* No session starts any more: cancels the slot and arrival timers. */
void session_schedule_stop(session_schedule_t *self);
/* Slots (or the arrival stream) that may still start sessions. */
uint32_t session_schedule_sources_left(const session_schedule_t *self);
/* Rate mode: arrivals started, and how many were due while the cap was full. */
uint64_t session_schedule_arrivals(const session_schedule_t *self);
uint64_t session_schedule_cap_waits(const session_schedule_t *self);
/* The controller's grant (docs/protocol.md "Worker loss"): no session with an index at or past
 * limit starts; a slot or arrival that reaches it waits, its intended instant kept, until a raise.
 * A lower limit than the one in force is ignored. */
void session_schedule_set_limit(session_schedule_t *self, uint64_t limit);
uint64_t session_schedule_limit(const session_schedule_t *self);
/* 1 + the highest session index started (0: none), and the number of sessions started. */
uint64_t session_schedule_frontier(const session_schedule_t *self);
uint64_t session_schedule_started(const session_schedule_t *self);
/* Whether a slot or the next arrival waits for the grant. */
bool session_schedule_held(const session_schedule_t *self);
/* Takes over the sessions i with i % modulus == residue and i >= first_session: concurrent, one
 * more slot running them one after another from now; rate, one more arrival stream (and
 * rate_cap_add more of the cap on sessions in flight). 0 ok, -1 when stopped or out of memory. */
int session_schedule_adopt(session_schedule_t *self, uint64_t residue, uint64_t modulus,
                           uint64_t first_session, uint32_t rate_cap_add);
/* A joining worker's schedule (no load of its own): it does not finish, when started, before its
 * first adoption (or a stop). Call before session_schedule_start. */
void session_schedule_await_adoption(session_schedule_t *self);
/* Gives up the class residue mod modulus: a slot starts no session of it any more (the one in
 * progress finishes), an arrival stream none at or past from_session, where the class goes on
 * elsewhere. 0 ok, -1 when no slot or stream runs that class. */
int session_schedule_release(session_schedule_t *self, uint64_t residue, uint64_t modulus,
                             uint64_t from_session);
/* Cancels its timers and frees it. */
void session_schedule_destroy(session_schedule_t **self_p);

#endif
