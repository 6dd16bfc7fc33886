/* The hand-over of held batches (docs/protocol.md "Hand-over"): a worker that registers with a
 * fleet whose driver died during the worker's run and came back (serve restarted) says in its Hello
 * which run it still holds unacknowledged batches of. When the driver knows the run, the worker is
 * welcomed into it, kept out of runs meanwhile, and its batches come on the data socket as in a
 * run: taken in sequence (go-back-N), each kept by the driver before its Ack. Its Done says the
 * last one; once that is taken the worker is released (Stop) and free for runs again. */
#include <inttypes.h>
#include <stdio.h>

#include "fleet_internal.h"
#include "loop.h"

/* A hand-over not complete by then ends with what came; the worker drops the rest (it keeps its
 * spool file, for stampede merge). */
#define FLEET_HANDOVER_NS 20000000000LL

void fleet_set_handover(fleet_t *self, const fleet_handover_hooks_t *hooks) {
    self->handover = hooks ? *hooks : (fleet_handover_hooks_t){0};
}

static void send_stop(fleet_t *self, registry_worker_t *w, const char *reason, bool cancel,
                      bool abandon) {
    Stampede__Stop stop;
    Stampede__Envelope env;
    envelope_stop(&env, &stop, w->handover.held.run_id, reason, cancel, abandon);
    transport_send(self->transport, TRANSPORT_CONTROL, w->id, w->id_len, &env);
}

static void send_ack(fleet_t *self, registry_worker_t *w) {
    Stampede__Ack ack = STAMPEDE__ACK__INIT;
    ack.up_to_seq = w->handover.held.acked_seq;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    env.run_id = w->handover.held.run_id;
    transport_send(self->transport, TRANSPORT_DATA, w->id, w->id_len, &env);
}

bool fleet_handover_offered(fleet_t *self, const Stampede__Hello *h) {
    const Stampede__HeldRun *held = h->held;
    return held && held->run_id && self->handover.offer &&
           self->handover.offer(self->handover.arg, h->name ? h->name : "?", held);
}

void fleet_handover_begin(fleet_t *self, registry_worker_t *w, const Stampede__HeldRun *held) {
    w->handover.held = *held; /* scalars only; the unknown fields stay in the arena */
    w->handover.held.base.n_unknown_fields = 0;
    w->handover.held.base.unknown_fields = NULL;
    w->handover.done = false;
    w->handover.deadline_ns = loop_now_ns() + FLEET_HANDOVER_NS;
    w->run.state = RUN_WORKER_WAITING; /* not free until the hand-over ends: no run takes it */
    console_say(&self->console,
                "worker %s (host %s) holds batches %" PRIu64 "-%" PRIu64 " of run %016" PRIx64
                " (%" PRIu64 " requests completed): taking them over",
                w->run.name, w->host, held->acked_seq + 1, held->last_seq, held->run_id,
                held->requests_done);
}

void fleet_handover_stop_load(fleet_t *self, registry_worker_t *w) {
    /* Still loading (it came back before it noticed the loss): the run is over, its load ends. */
    uint32_t state = w->handover.held.state;
    if (state == ENVELOPE_WORKER_ASSIGNED || state == ENVELOPE_WORKER_RUNNING)
        send_stop(self, w, "the controller restarted: the run is over; hand over its batches", true,
                  false);
}

void fleet_handover_end(fleet_t *self, registry_worker_t *w, const char *why) {
    registry_handover_t *ho = &w->handover;
    if (!ho->held.run_id)
        return;
    if (why)
        console_say(&self->console,
                    "worker %s: hand-over of run %016" PRIx64 " ended with batches 1-%" PRIu64
                    ": %s",
                    w->run.name, ho->held.run_id, ho->held.acked_seq, why);
    else
        console_say(&self->console,
                    "worker %s handed over run %016" PRIx64 ": batches up to %" PRIu64 ", %" PRIu64
                    " records in all",
                    w->run.name, ho->held.run_id, ho->held.acked_seq, ho->held.records);
    if (self->handover.end)
        self->handover.end(self->handover.arg, w->run.name, &ho->held, why);
    /* Released when complete; told to drop the run (its spool file stays) when not. */
    send_stop(self, w, why ? "the hand-over of its batches ended short" : "its batches were taken",
              false, why != NULL);
    ho->held.run_id = 0;
    w->run.state = RUN_WORKER_REGISTERED;
    self->next_silence_ns = 0;
}

/* Ends the hand-over when the Done came and every batch up to its last was taken. */
static void check_complete(fleet_t *self, registry_worker_t *w) {
    registry_handover_t *ho = &w->handover;
    if (ho->done && ho->held.acked_seq >= ho->held.last_seq)
        fleet_handover_end(self, w, NULL);
}

void fleet_handover_control(fleet_t *self, registry_worker_t *w, const Stampede__Envelope *env) {
    registry_handover_t *ho = &w->handover;
    switch (env->body_case) {
    case STAMPEDE__ENVELOPE__BODY_HEARTBEAT:
        w->run.inflight = env->heartbeat->inflight;
        break;
    case STAMPEDE__ENVELOPE__BODY_DONE:
        if (env->run_id != ho->held.run_id)
            break;
        ho->done = true;
        ho->held.last_seq = env->done->last_seq;
        ho->held.records = env->done->records;
        check_complete(self, w);
        break;
    case STAMPEDE__ENVELOPE__BODY_GOODBYE:
        fleet_handover_end(self, w, "it left (SIGTERM)");
        break;
    default:
        break;
    }
}

void fleet_handover_data(fleet_t *self, registry_worker_t *w, const uint8_t *data, size_t len) {
    registry_handover_t *ho = &w->handover;
    Stampede__Envelope *env = envelope_unpack(self->arena, data, len);
    /* Only its own batches of that run: the rebuild keys batches by their worker index. */
    if (!env || env->body_case != STAMPEDE__ENVELOPE__BODY_BATCH ||
        env->run_id != ho->held.run_id || env->batch->worker_index != ho->held.worker_index)
        return;
    uint64_t seq = env->batch->seq;
    if (seq == ho->held.acked_seq + 1) {
        if (!self->handover.batch ||
            self->handover.batch(self->handover.arg, w->run.name, &ho->held, data, len) != 0) {
            fleet_handover_end(self, w, "its batches could not be kept");
            return;
        }
        ho->held.acked_seq = seq;
    } else if (seq > ho->held.acked_seq + 1) {
        return; /* a gap: the resend from the last acknowledged one fills it */
    }
    send_ack(self, w); /* a batch already taken (a resend) is acknowledged again */
    check_complete(self, w);
}

void fleet_handover_check(fleet_t *self, int64_t now) {
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        if (w->handover.held.run_id && now > w->handover.deadline_ns)
            fleet_handover_end(self, w,
                               w->handover.done ? "its last batches did not come in time"
                                                : "its Done did not come in time");
    }
}
