#include "sim_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "results.h"
#include "session.h"
#include "sim_backend.h"
#include "sim_figures.h"

#define SIM_WORKER_NAME "simulated"

typedef struct sim_run_state {
    loop_t *loop;
    measurement_t *run;
    const sim_run_hooks_t *hooks;
    session_executor_t *exec;
    sim_backend_t *backend;
    sim_figures_t *figures;
    run_worker_t worker;
    run_worker_t *workers[1];
    bool finished;
} sim_run_state_t;

/* The run's link: its Stop reaches the executor; its lines go to stderr. */
static int sim_run_send(void *arg, run_worker_t *w, Stampede__Envelope *env, bool data) {
    sim_run_state_t *st = arg;
    (void)w;
    (void)data;
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_STOP && st->exec)
        session_executor_stop(st->exec, env->stop->cancel);
    return 0;
}

static void sim_run_say(void *arg, const char *msg) {
    sim_run_state_t *st = arg;
    fprintf(stderr, "%s: %s\n", st->run->options.name, msg);
}

static uint32_t sim_run_inflight(void *arg) {
    sim_run_state_t *st = arg;
    return st->backend ? sim_backend_inflight(st->backend) : 0;
}

/* Every finished request, as the controller merges a worker's record. */
static void sim_run_on_record(void *arg, const request_record_t *rec) {
    sim_run_state_t *st = arg;
    request_record_t merged = *rec;
    merged.worker = 0;
    st->worker.ingested++;
    results_record(st->run, &merged);
}

static void sim_run_on_finished(void *arg) {
    sim_run_state_t *st = arg;
    st->finished = true;
    loop_stop(st->loop);
}

static void sim_run_before_sleep(loop_t *loop, void *arg) {
    sim_run_state_t *st = arg;
    if (st->hooks && st->hooks->step && !st->finished)
        st->hooks->step(st->hooks->arg, loop_time_ns(loop));
}

/* The run's worker: the whole plan, started now. */
static int sim_run_start(sim_run_state_t *st, mock_virtual_t *server, int64_t delay_ns) {
    measurement_t *run = st->run;
    plan_share_t share;
    if (plan_share_for(&run->cfg, 1, 0, &share) != 0 ||
        !(st->backend = sim_backend_new(st->loop, server, &run->cfg, delay_ns)) ||
        !(st->exec =
              session_executor_new(st->loop, &run->cfg, &share, sim_backend_session(st->backend),
                                   sim_run_on_record, sim_run_on_finished, st))) {
        measurement_say(run, "cannot set up the simulated worker (out of memory)");
        return -1;
    }
    st->worker.concurrency = share.kind == PLAN_CONCURRENT ? share.slot_count : share.rate_cap;
    st->worker.state = RUN_WORKER_RUNNING;
    run->start_ns = loop_now_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    run->start_unix_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec;
    run->phase = PHASE_RUN;
    int64_t duration = run->cfg.limits.duration_ns;
    st->figures = sim_figures_new(st->loop, server, run->start_ns + run->cfg.warmup_ns,
                                  duration > 0 ? run->start_ns + duration : 0);
    sim_backend_set_figures(st->backend, st->figures);
    results_open_trace(run);
    if (session_executor_start(st->exec, run->start_ns) != 0) {
        measurement_say(run, "cannot start the simulated worker");
        return -1;
    }
    return 0;
}

int sim_run(loop_t *loop, mock_virtual_t *server, int64_t delay_ns, measurement_t *run,
            const sim_run_hooks_t *hooks) {
    sim_run_state_t st = {.loop = loop, .run = run, .hooks = hooks};
    run_worker_init(&st.worker, SIM_WORKER_NAME, 0);
    st.worker.index = 0;
    st.workers[0] = &st.worker;
    run->link = (run_link_t){
        .send = sim_run_send, .say = sim_run_say, .inflight = sim_run_inflight, .arg = &st};
    run->workers = st.workers;
    run->n_workers = 1;
    run->in_run = run->started_with = 1;
    run->window_starts = calloc(2, sizeof *run->window_starts);
    int rc = 1;
    if (!run->window_starts) {
        measurement_say(run, "out of memory");
    } else if (sim_run_start(&st, server, delay_ns) == 0) {
        loop_before_sleep(loop, sim_run_before_sleep, &st);
        loop_run(loop);
        loop_before_sleep(loop, NULL, NULL);
        if (!st.finished) /* the loop ran dry: nothing could happen any more */
            measurement_say(run, "the simulation stalled with %u requests in flight",
                            sim_backend_inflight(st.backend));
        st.worker.arrivals = session_executor_arrivals(st.exec);
        st.worker.cap_waits = session_executor_cap_waits(st.exec);
        st.worker.state = RUN_WORKER_COMPLETE;
        run->phase = PHASE_OVER;
        if (st.figures)
            run->server_figures = sim_figures_json(st.figures);
        rc = results_finish(run, false);
    }
    session_executor_destroy(&st.exec);
    sim_backend_destroy(&st.backend);
    sim_figures_destroy(&st.figures);
    run_worker_reset(&st.worker, RUN_WORKER_REGISTERED);
    run->workers = NULL;
    run->n_workers = 0;
    run->link = (run_link_t){0};
    return rc;
}
