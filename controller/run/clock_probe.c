#include "clock_probe.h"

#include <stdlib.h>

#include "loop.h"

#define PROBE_ROUNDS 8
#define PROBE_RESEND_NS 1000000000LL

static void send_probe(measurement_t *run, run_worker_t *w) {
    Stampede__ClockProbe probe = STAMPEDE__CLOCK_PROBE__INIT;
    probe.round = w->round;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_PROBE;
    env.probe = &probe;
    w->probe_sent_ns = loop_now_ns();
    probe.t1 = w->probe_sent_ns;
    measurement_send(run, w, &env);
}

void clock_probe_begin(measurement_t *run) {
    run->phase = PHASE_PROBE;
    run->deadline_ns = loop_now_ns() + MEASUREMENT_READY_TIMEOUT_NS;
    /* Indexes are taken from the workers known, so this holds every one of them. */
    run->window_starts = calloc(run->n_workers + 1, sizeof *run->window_starts);
    if (!run->window_starts) {
        measurement_abort(run, "out of memory for %zu workers", run->n_workers);
        return;
    }
    uint32_t index = 0;
    for (size_t i = 0; i < run->n_workers; i++) {
        run_worker_t *w = run->workers[i];
        if (w->state != RUN_WORKER_REGISTERED)
            continue;
        w->index = (int)index++;
        w->state = RUN_WORKER_PROBING;
        w->round = 0;
        send_probe(run, w);
    }
    run->in_run = index;
    measurement_say(run, "all %u workers registered; measuring clocks", index);
}

void clock_probe_answer(measurement_t *run, run_worker_t *w, const Stampede__ClockProbe *p,
                        int64_t t4) {
    if (w->state != RUN_WORKER_PROBING || p->round != w->round)
        return;
    int64_t rtt = (t4 - p->t1) - (p->t3 - p->t2);
    int64_t offset = ((p->t2 - p->t1) + (p->t3 - t4)) / 2;
    if (w->round == 0 || rtt < w->rtt_ns) {
        w->rtt_ns = rtt;
        w->offset_ns = offset;
    }
    w->round++;
    if (w->round < PROBE_ROUNDS)
        send_probe(run, w);
}

void clock_probe_one(measurement_t *run, run_worker_t *w) {
    w->state = RUN_WORKER_PROBING;
    w->round = 0;
    send_probe(run, w);
}

bool clock_probe_step(measurement_t *run, int64_t now) {
    bool all = true;
    for (size_t i = 0; i < run->n_workers; i++) {
        run_worker_t *w = run->workers[i];
        if (w->state != RUN_WORKER_PROBING)
            continue;
        if (w->round < PROBE_ROUNDS) {
            all = false;
            if (now - w->probe_sent_ns > PROBE_RESEND_NS)
                send_probe(run, w);
        } else {
            w->state = RUN_WORKER_REGISTERED; /* measured; assigned next */
        }
    }
    return all;
}
