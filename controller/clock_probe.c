#include "clock_probe.h"

#include <stdlib.h>

#include "console.h"
#include "controller_internal.h"
#include "loop.h"

#define PROBE_ROUNDS 8
#define PROBE_RESEND_NS 1000000000LL

static void send_probe(controller_t *self, registry_worker_t *w) {
    Stampede__ClockProbe probe = STAMPEDE__CLOCK_PROBE__INIT;
    probe.round = w->round;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_PROBE;
    env.probe = &probe;
    w->probe_sent_ns = loop_now_ns();
    probe.t1 = w->probe_sent_ns;
    controller_send(self, w, &env);
}

void clock_probe_begin(controller_t *self) {
    self->run->phase = PHASE_PROBE;
    self->run->deadline_ns = loop_now_ns() + CONTROLLER_READY_TIMEOUT_NS;
    /* Indexes are taken from the workers known, so this holds every one of them. */
    self->run->window_starts = calloc(self->n_workers + 1, sizeof *self->run->window_starts);
    if (!self->run->window_starts) {
        controller_abort(self, "out of memory for %zu workers", self->n_workers);
        return;
    }
    uint32_t index = 0;
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (w->state != REGISTRY_REGISTERED)
            continue;
        w->index = (int)index++;
        w->state = REGISTRY_PROBING;
        w->round = 0;
        send_probe(self, w);
    }
    self->run->in_run = index;
    console_say(self, "all %u workers registered; measuring clocks", index);
}

void clock_probe_answer(controller_t *self, registry_worker_t *w, const Stampede__ClockProbe *p,
                        int64_t t4) {
    if (w->state != REGISTRY_PROBING || p->round != w->round)
        return;
    int64_t rtt = (t4 - p->t1) - (p->t3 - p->t2);
    int64_t offset = ((p->t2 - p->t1) + (p->t3 - t4)) / 2;
    if (w->round == 0 || rtt < w->rtt_ns) {
        w->rtt_ns = rtt;
        w->offset_ns = offset;
    }
    w->round++;
    if (w->round < PROBE_ROUNDS)
        send_probe(self, w);
}

void clock_probe_one(controller_t *self, registry_worker_t *w) {
    w->state = REGISTRY_PROBING;
    w->round = 0;
    send_probe(self, w);
}

bool clock_probe_step(controller_t *self, int64_t now) {
    bool all = true;
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (w->state != REGISTRY_PROBING)
            continue;
        if (w->round < PROBE_ROUNDS) {
            all = false;
            if (now - w->probe_sent_ns > PROBE_RESEND_NS)
                send_probe(self, w);
        } else {
            w->state = REGISTRY_REGISTERED; /* measured; assigned next */
        }
    }
    return all;
}
