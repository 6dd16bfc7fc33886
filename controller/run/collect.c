#include "collect.h"

#include <inttypes.h>
#include <stdio.h>

#include "bounds.h"
#include "journal.h"
#include "loop.h"
#include "plan.h"
#include "results.h"

static void send_ack(measurement_t *run, run_worker_t *w) {
    Stampede__Ack ack = STAMPEDE__ACK__INIT;
    ack.up_to_seq = w->acked_seq;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    env.run_id = run->id;
    if (run->link.send)
        run->link.send(run->link.arg, w, &env, true);
}

/* Releases w once its Done is in and every batch up to its last_seq merged; a count that differs
 * from the announced one, or records it dropped, make the results partial. */
static void check_complete(measurement_t *run, run_worker_t *w) {
    if (w->state != RUN_WORKER_RUNNING || !w->done || w->acked_seq < w->done_last_seq)
        return;
    w->state = RUN_WORKER_COMPLETE;
    if (w->ingested != w->done_records) {
        char why[256];
        snprintf(why, sizeof why, "worker %s: %" PRIu64 " records announced, %" PRIu64 " merged",
                 w->name, w->done_records, w->ingested);
        merge_mark_partial(run->merge, why);
        measurement_say(run, "%s", why);
    }
    if (w->done_dropped) {
        char why[256];
        snprintf(why, sizeof why, "worker %s dropped %" PRIu64 " records (its queue was full)",
                 w->name, w->done_dropped);
        merge_mark_partial(run->merge, why);
        measurement_say(run, "%s", why);
    }
    w->release_pending = measurement_send_stop(run, w, "run complete", false, false) != 0;
}

collect_batch_outcome_t collect_batch(run_worker_t *w, ingest_t *ingest,
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
static void refuse_batch(measurement_t *run, run_worker_t *w, uint64_t seq) {
    char why[400];
    snprintf(why, sizeof why,
             "worker %s: batch %" PRIu64 " refused, its records are not merged: %s", w->name, seq,
             ingest_error(run->ingest));
    merge_mark_partial(run->merge, why);
    measurement_say(run, "%s", why);
}

/* A record of a worker's batch, checked against the plan before it is merged. */
typedef struct checked {
    measurement_t *run;
    run_worker_t *w;
    bounds_t bounds;
} checked_t;

static void collect_checked_record(void *arg, request_record_t *rec) {
    checked_t *c = arg;
    char why[160];
    if (bounds_record(&c->bounds, rec, why, sizeof why)) {
        results_record(c->run, rec);
        return;
    }
    char what[64];
    snprintf(what, sizeof what, "the record of request %" PRIu64, rec->request_id);
    measurement_refuse_number(c->run, c->w, what, why);
}

void collect_data(measurement_t *run, run_worker_t *w, const Stampede__Envelope *env,
                  const uint8_t *data, size_t len) {
    /* Only a started worker's batches: a worker joining again (fleet.rebalance_on_join) numbers
     * them from 1 once it is started, and what its old incarnation still sends is not merged. */
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_BATCH && env->run_id == run->id &&
        w->state == RUN_WORKER_RUNNING) {
        /* Go-back-N: only the next batch in sequence is merged; a duplicate (resent after a
         * reconnect) or one past a gap is answered with the cumulative ack. */
        plan_share_t share;
        bool planned =
            !w->classes_changed && (uint32_t)w->index < run->started_with &&
            plan_share_for(&run->cfg, run->started_with, (uint32_t)w->index, &share) == 0;
        checked_t checked = {run, w,
                             (bounds_t){.start_ns = run->start_ns,
                                        .now_ns = loop_now_ns(),
                                        .session_limit = run->session_limit,
                                        .n_endpoints = run->cfg.target.n_endpoints,
                                        .retry_max = run->cfg.target.retry_429_max,
                                        .share = planned ? &share : NULL}};
        collect_batch_outcome_t outcome =
            collect_batch(w, run->ingest, env->batch, collect_checked_record, &checked);
        if (outcome == COLLECT_REFUSED)
            refuse_batch(run, w, env->batch->seq);
        /* Write-ahead: what is acknowledged is in the journal first (the worker frees it). */
        if (outcome == COLLECT_MERGED || outcome == COLLECT_REFUSED)
            journal_batch(run, data, len);
        send_ack(run, w);
        check_complete(run, w);
    }
}

/* Keeps what the worker measured of its loop (absent from a worker that did not measure). */
static void collect_stats(run_worker_t *w, const Stampede__WorkerStats *stats) {
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

void collect_done(measurement_t *run, run_worker_t *w, const Stampede__Done *done) {
    /* Its share runs elsewhere, or it is joining again and its old incarnation's Done is stale. */
    if (w->taken_over || w->state == RUN_WORKER_PROBING || w->state == RUN_WORKER_REGISTERED ||
        w->state == RUN_WORKER_ASSIGNED)
        return;
    if (w->state == RUN_WORKER_COMPLETE) {
        /* our release was lost: again */
        w->release_pending = measurement_send_stop(run, w, "run complete", false, false) != 0;
        return;
    }
    if (!w->done && done->error && *done->error)
        measurement_say(run, "worker %s: %s", w->name, done->error);
    w->done = true;
    w->done_last_seq = done->last_seq;
    w->done_records = done->records;
    w->done_dropped = done->dropped;
    collect_stats(w, done->stats);
    bounds_t b = {.start_ns = run->start_ns, .now_ns = loop_now_ns()};
    char why[160];
    if (w->has_stats &&
        !bounds_loop_times(&b, w->loop_cpu_ns, w->loop_wall_ns, w->loop_wait_ns, why, sizeof why)) {
        measurement_refuse_number(run, w, "its Done", why);
        w->has_stats = false; /* not judged on figures it could not have measured */
    }
    journal_done(run, w);
    if (w->state == RUN_WORKER_LOST)
        w->state = RUN_WORKER_RUNNING;
    check_complete(run, w);
}
