/* The session executor: the stages of a session's request wired in the order a request lives
 * them (see session.h), and the run's life around them: start, end of the run, stop, finish. */
#include "session.h"

#include <stdlib.h>

#include "session_graph.h"
#include "session_schedule.h"

struct session_executor {
    loop_t *loop;
    const config_t *cfg;
    session_finished_fn on_finished;
    void *arg;
    session_schedule_t *schedule;
    session_graph_t *graph;
    uint64_t end_timer, finished_timer;
    bool started, stopped, finished;
};

/* on_finished runs from the loop, so the callee may destroy the executor. */
static void session_finished_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_t *self = arg;
    self->finished_timer = 0;
    self->on_finished(self->arg);
}

/* When nothing can start, is waiting or in flight any more, schedules on_finished (once). */
static void session_check_finished(void *arg) {
    session_executor_t *self = arg;
    if (self->finished || !(self->started || self->stopped))
        return;
    if (session_schedule_sources_left(self->schedule) || session_graph_active(self->graph) ||
        session_graph_inflight(self->graph))
        return;
    self->finished = true;
    self->finished_timer = loop_timer_at(self->loop, loop_now_ns(), session_finished_fire, self);
}

/* A session ended: the schedule starts the next one. */
static void session_ended(void *arg, void *source, int64_t backoff_ns) {
    session_executor_t *self = arg;
    session_schedule_next(self->schedule, source, backoff_ns);
}

/* The end of the run (duration reached, or stop): nothing more starts or is sent. */
static void session_stop_issuing(session_executor_t *self) {
    loop_timer_cancel(self->loop, self->end_timer);
    self->end_timer = 0;
    session_schedule_stop(self->schedule);
    session_graph_stop(self->graph);
    session_check_finished(self);
}

/* start + duration: the end of the run. */
static void session_end_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_t *self = arg;
    self->end_timer = 0;
    session_stop_issuing(self);
}

static int session_engine_submit(void *ctx, const engine_request_t *req, engine_done_fn done,
                                 void *arg) {
    return engine_submit(ctx, req, done, arg);
}

static uint32_t session_engine_inflight_to(void *ctx, uint32_t endpoint) {
    return engine_inflight_to(ctx, endpoint);
}

static void session_engine_cancel_all(void *ctx) {
    engine_cancel_all(ctx);
}

session_backend_t session_backend_engine(engine_t *engine) {
    return (session_backend_t){.submit = session_engine_submit,
                               .inflight_to = session_engine_inflight_to,
                               .cancel_all = session_engine_cancel_all,
                               .ctx = engine};
}

session_executor_t *session_executor_new(loop_t *loop, const config_t *cfg,
                                         const plan_share_t *share, session_backend_t backend,
                                         session_record_fn on_record,
                                         session_finished_fn on_finished, void *arg) {
    if (cfg->target.n_endpoints == 0 || share->n_workers == 0)
        return NULL;
    session_executor_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    self->cfg = cfg;
    self->on_finished = on_finished;
    self->arg = arg;
    session_graph_hooks_t hooks = {.on_record = on_record,
                                   .record_arg = arg,
                                   .session_ended = session_ended,
                                   .settled = session_check_finished,
                                   .arg = self};
    self->graph = session_graph_new(loop, cfg, backend, &hooks);
    self->schedule = self->graph ? session_schedule_new(loop, cfg, share, self->graph,
                                                        session_check_finished, self)
                                 : NULL;
    if (!self->schedule) {
        session_executor_destroy(&self);
        return NULL;
    }
    return self;
}

void session_executor_set_generator(session_executor_t *self, session_generate_fn generate,
                                    void *arg) {
    session_graph_set_generator(self->graph, generate, arg);
}

int session_executor_start(session_executor_t *self, int64_t start_ns) {
    if (self->started || self->stopped)
        return -1;
    const config_t *cfg = self->cfg;
    self->started = true;
    int64_t end_ns = cfg->limits.duration_ns > 0 ? start_ns + cfg->limits.duration_ns : 0;
    int64_t warmup_end_ns = start_ns + (cfg->warmup_ns > 0 ? cfg->warmup_ns : 0);
    session_graph_begin(self->graph, end_ns, warmup_end_ns);
    if (end_ns)
        self->end_timer = loop_timer_at(self->loop, end_ns, session_end_fire, self);
    session_schedule_start(self->schedule, start_ns, end_ns);
    session_check_finished(self);
    return 0;
}

void session_executor_stop(session_executor_t *self, bool cancel_inflight) {
    self->stopped = true;
    session_stop_issuing(self);
    if (cancel_inflight)
        session_graph_cancel_all(self->graph);
    session_check_finished(self);
}

uint32_t session_executor_inflight(const session_executor_t *self) {
    return session_graph_inflight(self->graph);
}

uint64_t session_executor_arrivals(const session_executor_t *self) {
    return session_schedule_arrivals(self->schedule);
}

uint64_t session_executor_cap_waits(const session_executor_t *self) {
    return session_schedule_cap_waits(self->schedule);
}

void session_executor_set_limit(session_executor_t *self, uint64_t limit) {
    session_schedule_set_limit(self->schedule, limit);
}

void session_executor_progress(const session_executor_t *self, session_progress_t *out) {
    out->frontier = session_schedule_frontier(self->schedule);
    out->started = session_schedule_started(self->schedule);
    out->limit = session_schedule_limit(self->schedule);
    out->held = session_schedule_held(self->schedule);
}

int session_executor_adopt(session_executor_t *self, uint64_t residue, uint64_t modulus,
                           uint64_t first_session, uint32_t rate_cap_add) {
    if (!self->started || self->stopped || self->finished)
        return -1;
    return session_schedule_adopt(self->schedule, residue, modulus, first_session, rate_cap_add);
}

void session_executor_await_adoption(session_executor_t *self) {
    session_schedule_await_adoption(self->schedule);
}

int session_executor_release(session_executor_t *self, uint64_t residue, uint64_t modulus,
                             uint64_t from_session) {
    int rc = session_schedule_release(self->schedule, residue, modulus, from_session);
    session_check_finished(self);
    return rc;
}

void session_executor_destroy(session_executor_t **self_p) {
    session_executor_t *self = *self_p;
    if (!self)
        return;
    self->finished = true; /* nothing reported from here on */
    loop_timer_cancel(self->loop, self->end_timer);
    loop_timer_cancel(self->loop, self->finished_timer);
    session_schedule_destroy(&self->schedule);
    session_graph_destroy(&self->graph);
    free(self);
    *self_p = NULL;
}
