/* The session executor's life: creation, start, stop, finish and destruction (see session.h). */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "prompt.h"
#include "route.h"
#include "session_internal.h"
#include "workload.h"

void session_die(const char *what) {
    fprintf(stderr, "stampede: session executor: %s\n", what);
    abort();
}

/* The executor cannot go on without its runs and requests: no memory is fatal. */
void *session_alloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p)
        session_die("out of memory");
    return p;
}

/* on_finished runs from the loop, so the callee may destroy the executor. */
static void session_finished_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_t *self = arg;
    self->finished_timer = 0;
    self->on_finished(self->arg);
}

void session_check_finished(session_executor_t *self) {
    if (self->finished || self->destroying || !(self->started || self->stopped))
        return;
    if (self->sources_left || self->active_sessions || self->inflight)
        return;
    self->finished = true;
    self->finished_timer = loop_timer_at(self->loop, loop_now_ns(), session_finished_fire, self);
}

/* The end of the run (duration reached, or stop): nothing more starts or is sent. */
static void session_stop_issuing(session_executor_t *self) {
    self->issuing = false;
    loop_timer_cancel(self->loop, self->end_timer);
    self->end_timer = 0;
    session_schedule_stop(self);
    session_run_t *run = self->active;
    while (run) {
        session_run_t *next = run->next;
        session_run_abandon(run);
        session_run_settle(run);
        run = next;
    }
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

static int session_generate_workload(void *arg, const config_t *cfg, uint64_t index,
                                     workload_session_t *out) {
    return workload_session_generate(cfg, index, out);
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
    self->share = *share;
    self->backend = backend;
    self->on_record = on_record;
    self->on_finished = on_finished;
    self->arg = arg;
    self->generate = session_generate_workload;
    self->n_endpoints = (uint32_t)cfg->target.n_endpoints;
    self->urls = calloc(self->n_endpoints, sizeof *self->urls);
    size_t system_cap = prompt_max_bytes(cfg->workload.system_prompt_tokens);
    self->system_text = malloc(system_cap);
    if (share->kind == PLAN_CONCURRENT && share->slot_count)
        self->slots = calloc(share->slot_count, sizeof *self->slots);
    bool ok = self->urls && self->system_text &&
              (self->slots || share->kind == PLAN_RATE || share->slot_count == 0);
    for (uint32_t e = 0; ok && e < self->n_endpoints; e++)
        ok = (self->urls[e] = route_url(cfg->target.endpoints[e], cfg->target.api)) != NULL;
    long n = ok ? workload_system_text(cfg, self->system_text, system_cap) : -1;
    if (n < 0) {
        session_executor_destroy(&self);
        return NULL;
    }
    self->system_len = (size_t)n;
    self->system_hash = XXH3_64bits(self->system_text, self->system_len);
    return self;
}

void session_executor_set_generator(session_executor_t *self, session_generate_fn generate,
                                    void *arg) {
    self->generate = generate;
    self->generate_arg = arg;
}

int session_executor_start(session_executor_t *self, int64_t start_ns) {
    if (self->started || self->stopped)
        return -1;
    const config_t *cfg = self->cfg;
    self->started = true;
    self->issuing = true;
    self->start_ns = start_ns;
    self->end_ns = cfg->limits.duration_ns > 0 ? start_ns + cfg->limits.duration_ns : 0;
    self->warmup_end_ns = start_ns + (cfg->warmup_ns > 0 ? cfg->warmup_ns : 0);
    if (self->end_ns)
        self->end_timer = loop_timer_at(self->loop, self->end_ns, session_end_fire, self);
    session_schedule_start(self);
    session_check_finished(self);
    return 0;
}

void session_executor_stop(session_executor_t *self, bool cancel_inflight) {
    self->stopped = true;
    session_stop_issuing(self);
    if (cancel_inflight && self->inflight > 0)
        self->backend.cancel_all(self->backend.ctx);
    session_check_finished(self);
}

uint32_t session_executor_inflight(const session_executor_t *self) {
    return self->inflight;
}

uint32_t session_executor_active_sessions(const session_executor_t *self) {
    return self->active_sessions;
}

uint64_t session_executor_arrivals(const session_executor_t *self) {
    return self->arrivals_started;
}

uint64_t session_executor_cap_waits(const session_executor_t *self) {
    return self->cap_waits;
}

void session_executor_destroy(session_executor_t **self_p) {
    session_executor_t *self = *self_p;
    if (!self)
        return;
    self->destroying = true;
    if (self->inflight > 0)
        self->backend.cancel_all(self->backend.ctx);
    if (self->inflight > 0)
        session_die("the backend kept requests in flight after cancel_all");
    loop_timer_cancel(self->loop, self->end_timer);
    loop_timer_cancel(self->loop, self->finished_timer);
    session_schedule_stop(self);
    session_run_t *lists[] = {self->active, self->free_runs};
    for (size_t l = 0; l < 2; l++)
        while (lists[l]) {
            session_run_t *next = lists[l]->next;
            session_run_free(self, lists[l]);
            lists[l] = next;
        }
    session_request_free_list(self->blocked_head);
    session_request_free_list(self->free_requests);
    for (uint32_t e = 0; self->urls && e < self->n_endpoints; e++)
        free(self->urls[e]);
    free(self->urls);
    free(self->system_text);
    free(self->prefix);
    free(self->slots);
    free(self);
    *self_p = NULL;
}
