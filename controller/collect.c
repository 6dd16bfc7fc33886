#include "collect.h"

#include <inttypes.h>
#include <stdio.h>

#include "bounds.h"
#include "console.h"
#include "controller_internal.h"
#include "journal.h"
#include "loop.h"
#include "plan.h"
#include "results.h"
#include "transport.h"

#define DRAIN_NS 15000000000LL

static void send_ack(controller_t *self, registry_worker_t *w) {
    Stampede__Ack ack = STAMPEDE__ACK__INIT;
    ack.up_to_seq = w->acked_seq;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    env.run_id = self->run->id;
    transport_send(self->transport, TRANSPORT_DATA, w->id, w->id_len, &env);
}

/* Releases w once its Done is in and every batch up to its last_seq merged; a count that differs
 * from the announced one, or records it dropped, make the results partial. */
static void check_complete(controller_t *self, registry_worker_t *w) {
    if (w->state != REGISTRY_RUNNING || !w->done || w->acked_seq < w->done_last_seq)
        return;
    w->state = REGISTRY_COMPLETE;
    if (w->ingested != w->done_records) {
        char why[256];
        snprintf(why, sizeof why, "worker %s: %" PRIu64 " records announced, %" PRIu64 " merged",
                 w->name, w->done_records, w->ingested);
        merge_mark_partial(self->run->merge, why);
        console_say(self, "%s", why);
    }
    if (w->done_dropped) {
        char why[256];
        snprintf(why, sizeof why, "worker %s dropped %" PRIu64 " records (its queue was full)",
                 w->name, w->done_dropped);
        merge_mark_partial(self->run->merge, why);
        console_say(self, "%s", why);
    }
    w->release_pending = controller_send_stop(self, w, "run complete", false, false) != 0;
}

collect_batch_outcome_t collect_batch(registry_worker_t *w, ingest_t *ingest,
                                      const Stampede__EventBatch *batch, ingest_record_fn fn,
                                      void *arg) {
    if (batch->seq != w->acked_seq + 1)
        return COLLECT_OUT_OF_ORDER;
    long n = ingest_batch(ingest, batch, w->offset_ns, (uint32_t)w->index, fn, arg);
    if (n == INGEST_NO_MEMORY)
        return COLLECT_NO_MEMORY;
    w->acked_seq = batch->seq;
    if (n == INGEST_REFUSED)
        return COLLECT_REFUSED;
    w->ingested += (uint64_t)n;
    return COLLECT_MERGED;
}

/* A batch that can never be merged: the results say so, and the worker's Done will show its
 * records missing from the count. */
static void refuse_batch(controller_t *self, registry_worker_t *w, uint64_t seq) {
    char why[400];
    snprintf(why, sizeof why,
             "worker %s: batch %" PRIu64 " refused, its records are not merged: %s", w->name, seq,
             ingest_error(self->run->ingest));
    merge_mark_partial(self->run->merge, why);
    console_say(self, "%s", why);
}

void collect_peer_name(const registry_worker_t *w, const uint8_t *id, size_t id_len, char *buf,
                       size_t len) {
    if (w) {
        snprintf(buf, len, "worker %s", w->name);
        return;
    }
    size_t used = (size_t)snprintf(buf, len, "unregistered peer with routing id 0x");
    for (size_t i = 0; i < id_len && i < 16 && used + 3 <= len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%02x", id[i]);
    if (id_len > 16 && used + 4 <= len)
        snprintf(buf + used, len - used, "...");
}

bool collect_undecodable_logged(uint64_t failures) {
    return failures <= COLLECT_UNDECODABLE_LOGGED || failures % 1000 == 0;
}

void collect_undecodable(controller_t *self, const uint8_t *id, size_t id_len, size_t len,
                         const char *socket) {
    /* counted per worker, and for all strangers together: a peer flooding garbage cannot use up
     * the log lines another peer's refusals need */
    registry_worker_t *w = registry_find(self, id, id_len);
    uint64_t failures = w ? ++w->undecodable : ++self->undecodable_strangers;
    if (!collect_undecodable_logged(failures))
        return;
    char peer[160];
    collect_peer_name(w, id, id_len, peer, sizeof peer);
    const char *addr = transport_peer_address(self->transport);
    console_say(self,
                "refused a %zu-byte message on the %s socket from %s%s%s: %s (%" PRIu64
                " from %s so far)",
                len, socket, peer, *addr ? " at " : "", addr, envelope_arena_error(self->arena),
                failures, w ? "this worker" : "unregistered peers");
}

void collect_refuse_number(controller_t *self, registry_worker_t *w, const char *what,
                           const char *why) {
    if (!w->refused++)
        snprintf(w->refused_first, sizeof w->refused_first, "%s: %s", what, why);
    if (collect_undecodable_logged(w->refused))
        console_say(self,
                    "worker %s: refused %s outside what the plan allows: %s (%" PRIu64
                    " from this worker so far; the run is invalid)",
                    w->name, what, why, w->refused);
}

/* A record of a worker's batch, checked against the plan before it is merged. */
typedef struct checked {
    controller_t *self;
    registry_worker_t *w;
    bounds_t bounds;
} checked_t;

static void collect_checked_record(void *arg, request_record_t *rec) {
    checked_t *c = arg;
    char why[160];
    if (bounds_record(&c->bounds, rec, why, sizeof why)) {
        results_record(c->self, rec);
        return;
    }
    char what[64];
    snprintf(what, sizeof what, "the record of request %" PRIu64, rec->request_id);
    collect_refuse_number(c->self, c->w, what, why);
}

void collect_data(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data, size_t len,
                  int64_t rx_ns) {
    controller_t *self = arg;
    registry_worker_t *w = registry_find(self, id, id_len);
    if (!w || !registry_in_run(w) || self->run->phase != PHASE_RUN)
        return;
    Stampede__Envelope *env = envelope_unpack(self->arena, data, len);
    if (!env) {
        collect_undecodable(self, id, id_len, len, "data");
        return;
    }
    w->last_rx_ns = rx_ns;
    if (w->state == REGISTRY_LOST && env->run_id == self->run->id)
        registry_mark_back(self, w);
    /* Only a started worker's batches: a worker joining again (fleet.rebalance_on_join) numbers
     * them from 1 once it is started, and what its old incarnation still sends is not merged. */
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_BATCH && env->run_id == self->run->id &&
        w->state == REGISTRY_RUNNING) {
        /* Go-back-N: only the next batch in sequence is merged; a duplicate (resent after a
         * reconnect) or one past a gap is answered with the cumulative ack. */
        const measurement_t *run = self->run;
        plan_share_t share;
        bool planned =
            !w->classes_changed && (uint32_t)w->index < run->started_with &&
            plan_share_for(&run->cfg, run->started_with, (uint32_t)w->index, &share) == 0;
        checked_t checked = {self, w,
                             (bounds_t){.start_ns = run->start_ns,
                                        .now_ns = loop_now_ns(),
                                        .session_limit = run->session_limit,
                                        .n_endpoints = run->cfg.target.n_endpoints,
                                        .retry_max = run->cfg.target.retry_429_max,
                                        .share = planned ? &share : NULL}};
        collect_batch_outcome_t outcome =
            collect_batch(w, self->run->ingest, env->batch, collect_checked_record, &checked);
        if (outcome == COLLECT_REFUSED)
            refuse_batch(self, w, env->batch->seq);
        /* Write-ahead: what is acknowledged is in the journal first (the worker frees it). */
        if (outcome == COLLECT_MERGED || outcome == COLLECT_REFUSED)
            journal_batch(self, data, len);
        send_ack(self, w);
        check_complete(self, w);
    }
}

/* Keeps what the worker measured of its loop (absent from a worker that did not measure). */
static void collect_stats(registry_worker_t *w, const Stampede__WorkerStats *stats) {
    w->has_stats = stats != NULL;
    if (!stats)
        return;
    w->write_callbacks = stats->write_callbacks;
    w->sse_events = stats->sse_events;
    w->token_events = stats->token_events;
    w->loop_cpu_ns = stats->loop_cpu_ns;
    w->loop_wall_ns = stats->loop_wall_ns;
    w->loop_wait_ns = stats->loop_wait_ns;
    w->arrivals = stats->arrivals;
    w->cap_waits = stats->cap_waits;
}

void collect_done(controller_t *self, registry_worker_t *w, const Stampede__Done *done) {
    /* Its share runs elsewhere, or it is joining again and its old incarnation's Done is stale. */
    if (w->taken_over || w->state == REGISTRY_PROBING || w->state == REGISTRY_REGISTERED ||
        w->state == REGISTRY_ASSIGNED)
        return;
    if (w->state == REGISTRY_COMPLETE) {
        /* our release was lost: again */
        w->release_pending = controller_send_stop(self, w, "run complete", false, false) != 0;
        return;
    }
    if (!w->done && done->error && *done->error)
        console_say(self, "worker %s: %s", w->name, done->error);
    w->done = true;
    w->done_last_seq = done->last_seq;
    w->done_records = done->records;
    w->done_dropped = done->dropped;
    collect_stats(w, done->stats);
    const measurement_t *run = self->run;
    bounds_t b = {.start_ns = run->start_ns, .now_ns = loop_now_ns()};
    char why[160];
    if (w->has_stats &&
        !bounds_loop_times(&b, w->loop_cpu_ns, w->loop_wall_ns, w->loop_wait_ns, why, sizeof why)) {
        collect_refuse_number(self, w, "its Done", why);
        w->has_stats = false; /* not judged on figures it could not have measured */
    }
    journal_done(self, w);
    if (w->state == REGISTRY_LOST)
        w->state = REGISTRY_RUNNING;
    check_complete(self, w);
}

/* Stop{cancel} (or not) with reason to every unfinished worker of the run; how many. */
static uint32_t stop_unfinished(controller_t *self, const char *reason, bool cancel) {
    uint32_t n = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        if (registry_in_run(&self->workers[i]) && !registry_finished(&self->workers[i])) {
            controller_send_stop(self, &self->workers[i], reason, cancel, false);
            n++;
        }
    return n;
}

void collect_stop(controller_t *self, const char *reason) {
    self->run->stopping = true;
    self->run->cancel_at_ns = 0;
    self->run->deadline_ns = loop_now_ns() + DRAIN_NS;
    stop_unfinished(self, reason, true);
}

void collect_stop_grace(controller_t *self, const char *reason, int64_t grace_ns) {
    if (grace_ns <= 0) {
        collect_stop(self, reason);
        return;
    }
    self->run->stopping = true;
    self->run->cancel_at_ns = loop_now_ns() + grace_ns;
    self->run->deadline_ns = self->run->cancel_at_ns + DRAIN_NS;
    stop_unfinished(self, reason, false);
}

void collect_grace_step(controller_t *self, int64_t now) {
    measurement_t *run = self->run;
    if (!run->stopping || !run->cancel_at_ns || now < run->cancel_at_ns)
        return;
    run->cancel_at_ns = 0;
    uint32_t inflight = registry_inflight(self);
    if (stop_unfinished(self, "the grace period ran out", true))
        console_say(self, "grace period over: cancelling the requests still in flight (%u)",
                    inflight);
}
