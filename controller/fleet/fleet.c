#include "fleet.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_probe.h"
#include "collect.h"
#include "drain.h"
#include "fleet_internal.h"
#include "journal.h"
#include "launch.h"
#include "loop.h"
#include "rebalance.h"
#include "report.h"
#include "results.h"

#define DATA_BURST 32 /* data messages per turn before control is looked at again */

static volatile sig_atomic_t signals_seen;
static struct sigaction old_int, old_term;

static void on_signal(int sig) {
    (void)sig;
    signals_seen++;
}

void fleet_catch_signals(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signals_seen = 0;
}

void fleet_release_signals(void) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

int fleet_signals(void) {
    return signals_seen;
}

void fleet_say(fleet_t *self, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    console_say(&self->console, "%s", msg);
}

void fleet_clear_line(fleet_t *self) {
    console_clear(&self->console);
}

/* Requests in flight on slot's unfinished workers (a silent one's left out, being stale), and
 * how many of them are silent. */
static uint32_t slot_inflight(const fleet_slot_t *slot, int64_t now, int64_t heartbeat_ns) {
    return registry_inflight_of(slot->workers, slot->n_workers, now, heartbeat_ns);
}

static uint32_t slot_silent(const fleet_slot_t *slot, int64_t now, int64_t heartbeat_ns) {
    return registry_silent_of(slot->workers, slot->n_workers, now, heartbeat_ns);
}

/* The links: what a run may ask of the fleet (arg: its slot), and what work outside a run may
 * (fleet_link; arg: the fleet). */
static int fleet_send(fleet_t *self, run_worker_t *w, Stampede__Envelope *env, bool data) {
    registry_worker_t *fw = registry_of(w);
    return transport_send(self->transport, data ? TRANSPORT_DATA : TRANSPORT_CONTROL, fw->id,
                          fw->id_len, env);
}

static int link_send(void *arg, run_worker_t *w, Stampede__Envelope *env, bool data) {
    return fleet_send(arg, w, env, data);
}

static void link_say(void *arg, const char *msg) {
    fleet_t *self = arg;
    console_say(&self->console, "%s", msg);
}

static uint32_t link_inflight(void *arg) {
    fleet_t *self = arg;
    return registry_inflight(self->registry, loop_now_ns(), fleet_heartbeat_ns(self));
}

static int slot_send(void *arg, run_worker_t *w, Stampede__Envelope *env, bool data) {
    fleet_slot_t *slot = arg;
    return fleet_send(slot->fleet, w, env, data);
}

static void slot_say(void *arg, const char *msg) {
    fleet_slot_t *slot = arg;
    if (slot->label[0])
        console_say(&slot->fleet->console, "%s: %s", slot->label, msg);
    else
        console_say(&slot->fleet->console, "%s", msg);
}

static uint32_t slot_link_inflight(void *arg) {
    fleet_slot_t *slot = arg;
    return slot_inflight(slot, loop_now_ns(), measurement_heartbeat_ns(slot->run));
}

const run_link_t *fleet_link(const fleet_t *self) {
    return &self->link;
}

fleet_t *fleet_new(const fleet_options_t *options) {
    fleet_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->options = *options;
    if (options->security)
        self->security = *options->security;
    self->options.security = &self->security;
    console_init(&self->console, options->name ? options->name : "controller");
    self->link =
        (run_link_t){.send = link_send, .say = link_say, .inflight = link_inflight, .arg = self};
    if (!(self->transport = transport_new(options->bind, options->data_port, &self->security,
                                          self->console.name)) ||
        !(self->arena = envelope_arena_new()) || !(self->registry = registry_new())) {
        fleet_destroy(&self);
        return NULL;
    }
    return self;
}

void fleet_destroy(fleet_t **self_p) {
    fleet_t *self = *self_p;
    if (!self)
        return;
    transport_destroy(&self->transport);
    envelope_arena_destroy(&self->arena);
    registry_destroy(&self->registry);
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        free(self->slots[i].workers);
    free(self);
    *self_p = NULL;
}

const char *fleet_endpoint(const fleet_t *self) {
    return transport_endpoint(self->transport);
}

void fleet_close(fleet_t *self) {
    transport_destroy(&self->transport);
}

void fleet_set_hooks(fleet_t *self, const fleet_hooks_t *hooks) {
    self->hooks = hooks ? *hooks : (fleet_hooks_t){0};
}

void fleet_set_run_hooks(fleet_t *self, const measurement_t *run, const fleet_hooks_t *hooks,
                         const char *label) {
    fleet_slot_t *slot = fleet_slot_of_run(self, run);
    if (!slot)
        return;
    slot->hooks = hooks ? *hooks : (fleet_hooks_t){0};
    snprintf(slot->label, sizeof slot->label, "%s", label ? label : "");
}

/* The hooks of slot's run: its own when its driver set any, else the fleet's. */
static const fleet_hooks_t *slot_hooks(const fleet_t *self, const fleet_slot_t *slot) {
    const fleet_hooks_t *h = &slot->hooks;
    return h->step || h->stopped || h->live_line || h->level ? h : &self->hooks;
}

/* The live status line: the trace's drops said first, then the run's figures (the driver's line
 * when it has one), sampled into the run's client series. */
static void show_live(fleet_t *self, fleet_slot_t *slot, int64_t now) {
    measurement_t *run = slot->run;
    uint64_t dropped = run->trace_out ? report_trace_dropped(run->trace_out) : 0;
    if (dropped > run->trace_dropped_said) {
        int error = report_trace_error(run->trace_out);
        if (error)
            console_say(&self->console,
                        "cannot write %s/requests.jsonl: %s; %llu lines dropped so far",
                        run->cfg.output.dir, strerror(error), (unsigned long long)dropped);
        else
            console_say(&self->console,
                        "the trace writer cannot keep up (slow disk or unread pipe): %llu lines "
                        "dropped so far",
                        (unsigned long long)dropped);
        run->trace_dropped_said = dropped;
    }
    int64_t heartbeat = measurement_heartbeat_ns(run);
    live_t live;
    merge_live(run->merge, now, slot_inflight(slot, now, heartbeat), &live);
    live.silent = slot_silent(slot, now, heartbeat);
    live.duration_s = (double)run->cfg.limits.duration_ns / 1e9;
    client_series_add(run->client_series, live.elapsed_s, live.in_flight, live.requests_per_s);
    char line[512], labelled[600];
    const fleet_hooks_t *hooks = slot_hooks(self, slot);
    if (hooks->live_line) /* a sweep's: the level, its phase and what is left of it first */
        hooks->live_line(hooks->arg, now, &live, line, sizeof line);
    else
        report_live_line(&live, line, sizeof line);
    if (slot->label[0])
        snprintf(labelled, sizeof labelled, "%s: %s", slot->label, line);
    console_live(&self->console, slot->label[0] ? labelled : line);
}

/* A run after the fleet's first starts with the workers still registered, one at least: says
 * so when they are fewer than --expect-workers. */
static void start_with_fewer(fleet_t *self, fleet_slot_t *slot, uint32_t n) {
    console_say(&self->console,
                "%u of the %u workers expected (--expect-workers) are registered: the run goes "
                "on with them; a worker that comes back joins at the next run or level",
                n, slot->expect);
    clock_probe_begin(slot->run);
}

static void step_register(fleet_t *self, fleet_slot_t *slot, int64_t now) {
    measurement_t *run = slot->run;
    uint32_t n = fleet_slot_count(slot, RUN_WORKER_REGISTERED);
    if (n >= slot->expect)
        clock_probe_begin(run);
    else if (self->started_once && n > 0)
        start_with_fewer(self, slot, n);
    else if (self->started_once && now >= run->deadline_ns)
        measurement_abort(run,
                          "no worker is left to carry the run: every worker was lost, and none "
                          "registered within %g s (expected %u at %s)",
                          self->options.register_timeout_ns / 1e9, slot->expect,
                          transport_endpoint(self->transport));
    else if (now >= run->deadline_ns && n == 0)
        measurement_abort(run,
                          "no worker came within %g s (expected %u at %s); in an Indexed Job of "
                          "one worker a pod, %s %u is missing",
                          self->options.register_timeout_ns / 1e9, slot->expect,
                          transport_endpoint(self->transport),
                          slot->expect == 1 ? "index" : "every index 0 to", slot->expect - 1);
    else if (now >= run->deadline_ns) {
        char why[1024];
        registry_describe_missing(self->registry, slot->expect, self->options.register_timeout_ns,
                                  why, sizeof why);
        measurement_abort(run, "%s", why);
    }
}

static void step_run(fleet_t *self, fleet_slot_t *slot, int64_t now) {
    measurement_t *run = slot->run;
    drain_grace_step(run, now);
    bool all = true;
    for (size_t i = 0; i < run->n_workers && all; i++)
        if (run_worker_in_run(run->workers[i]) && !run_worker_finished(run->workers[i]))
            all = false;
    if (all) {
        run->phase = PHASE_OVER;
    } else if (run->stopping && now >= run->deadline_ns) {
        for (size_t i = 0; i < slot->n_workers; i++) {
            registry_worker_t *w = registry_of(slot->workers[i]);
            if (run_worker_in_run(&w->run) && !run_worker_finished(&w->run))
                fleet_workers_lost(self, w, "did not finish within 15 s of the stop", true);
        }
        run->phase = PHASE_OVER;
    }
    const fleet_hooks_t *hooks = slot_hooks(self, slot);
    if (hooks->step)
        hooks->step(hooks->arg, now);
    rebalance_join_step(run, now);
    if (now >= run->next_live_ns) { /* a terminal's line every second, a log's less often */
        int64_t every = self->console.tty ? 1000000000LL : self->options.progress_ns;
        show_live(self, slot, now);
        run->next_live_ns += every;
        if (run->next_live_ns < now)
            run->next_live_ns = now + every;
    }
}

/* Workers released while their connection was down are told when they repeat their Done (every
 * heartbeat): an ended run waits for that for a bounded time before it is over. */
static bool releases_pending(const fleet_slot_t *slot) {
    for (size_t i = 0; i < slot->n_workers; i++)
        if (slot->workers[i]->state == RUN_WORKER_COMPLETE && slot->workers[i]->release_pending)
            return true;
    return false;
}

/* One run's phase changes and deadlines. */
static void step_slot(fleet_t *self, fleet_slot_t *slot, int64_t now) {
    measurement_t *run = slot->run;
    switch (run->phase) {
    case PHASE_REGISTER:
        step_register(self, slot, now);
        break;
    case PHASE_PROBE:
        if (clock_probe_step(run, now))
            launch_assign(run);
        else if (now >= run->deadline_ns)
            measurement_abort(run, "clock probes unanswered within %.0f s",
                              MEASUREMENT_READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_ASSIGN:
        if (fleet_slot_count(slot, RUN_WORKER_READY) == run->in_run) {
            launch_begin(run);
            rebalance_start(run);
            launch_send_starts(run);
            self->started_once = true;
        } else if (now >= run->deadline_ns)
            measurement_abort(run, "not every worker was ready within %.0f s",
                              MEASUREMENT_READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_RUN:
        step_run(self, slot, now);
        break;
    case PHASE_OVER:
        break;
    }
    if (run->phase == PHASE_OVER && !slot->release_end_ns)
        slot->release_end_ns = now + 5 * measurement_heartbeat_ns(run) / 2;
}

/* Phase changes, deadlines and periodic work of every run; called on every loop turn. */
static void step(fleet_t *self, int64_t now) {
    if (now >= self->next_heartbeat_ns) {
        for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
            if (self->slots[i].run && self->slots[i].run->phase == PHASE_RUN)
                rebalance_tick(self->slots[i].run);
        fleet_workers_heartbeats(self, now);
        self->next_heartbeat_ns = now + fleet_heartbeat_ns(self);
    }
    /* A silent worker is lost, and its share taken over, within a tenth of a second of
     * fleet.heartbeat x fleet.liveness (the walk itself only once one can be silent). */
    fleet_workers_check_silence(self, now);
    fleet_handover_check(self, now);
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        if (self->slots[i].run)
            step_slot(self, &self->slots[i], now);
}

static void handle_signal(fleet_t *self, fleet_slot_t *slot, int count) {
    measurement_t *run = slot->run;
    if (run->phase != PHASE_RUN) {
        measurement_abort(run, "interrupted before the start");
        return;
    }
    if (count == 1 && !run->stopping) {
        console_say(&self->console,
                    "interrupted: stopping the workers and draining for up to %.1f s (Ctrl-C "
                    "again to quit now)",
                    self->options.grace_ns / 1e9);
        merge_mark_partial(run->merge, "interrupted");
        const fleet_hooks_t *hooks = slot_hooks(self, slot);
        if (hooks->stopped)
            hooks->stopped(hooks->arg, loop_now_ns());
        drain_stop_grace(run, "interrupted at the controller", self->options.grace_ns);
        return;
    }
    /* Every worker still in the run is told to abandon it, so none waits for a controller that
     * is gone (a --once worker exits at once). */
    uint32_t told = 0;
    for (size_t i = 0; i < run->n_workers; i++) {
        run_worker_t *w = run->workers[i];
        if (!run_worker_in_run(w) || run_worker_finished(w))
            continue;
        measurement_send_stop(run, w, "the controller was interrupted twice", true, true);
        w->state = RUN_WORKER_LOST;
        told++;
    }
    if (told)
        merge_mark_partial(run->merge, "interrupted twice: the workers abandoned the run");
    console_say(&self->console,
                "interrupted again: %u worker%s told to abandon the run; writing what arrived",
                told, told == 1 ? "" : "s");
    run->phase = PHASE_OVER;
}

/* Stops a running run for why (said, the results partial, the workers drained), aborts one not
 * yet started. */
static void stop_run(fleet_t *self, measurement_t *run, const char *why) {
    if (run->phase == PHASE_OVER)
        return;
    if (run->phase == PHASE_RUN) {
        console_say(&self->console, "%s", why);
        merge_mark_partial(run->merge, why);
        if (!run->stopping)
            drain_stop(run, why);
    } else {
        measurement_abort(run, "%s", why);
    }
}

void fleet_stop(fleet_t *self, measurement_t *run, const char *why) {
    if (fleet_slot_of_run(self, run))
        stop_run(self, run, why);
}

/* The embedder's hook (a local child died): stops every run. */
static void check_hook(fleet_t *self) {
    char why[512];
    bool live = false;
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        live |= self->slots[i].run && self->slots[i].run->phase != PHASE_OVER;
    if (!self->options.hook || !live ||
        !self->options.hook(self->options.hook_arg, why, sizeof why))
        return;
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        if (self->slots[i].run)
            stop_run(self, self->slots[i].run, why);
}

/* The fleet's gauges for --metrics-listen, then the scrapes that are ready. */
static void live_gauges(fleet_t *self) {
    live_metrics_t *live = self->options.live_metrics;
    if (!live)
        return;
    live_gauges_t g = {
        .in_flight = registry_inflight(self->registry, loop_now_ns(), fleet_heartbeat_ns(self))};
    if (self->hooks.level)
        g.level = self->hooks.level(self->hooks.arg);
    g.workers_lost = registry_count(self->registry, RUN_WORKER_LOST);
    g.workers_connected = (uint32_t)registry_size(self->registry) - g.workers_lost;
    live_metrics_set_gauges(live, &g);
    live_metrics_poll(live);
}

/* One turn of the event loop: control drained first, then a bounded burst of data, then every
 * run's step. Waits up to timeout_ms (and never past the next heartbeat) for a message, a run's
 * telemetry, the live metrics' socket or one of fds. */
void fleet_step(fleet_t *self, long timeout_ms, const int *fds, size_t n_fds) {
    live_metrics_t *live = self->options.live_metrics;
    int64_t now = loop_now_ns();
    if (!self->last_turn_ns)
        self->last_turn_ns = now;
    int64_t wait_ms = (self->next_heartbeat_ns - now) / 1000000;
    if (wait_ms > timeout_ms)
        wait_ms = timeout_ms;
    if (wait_ms < 0)
        wait_ms = 0;
    int all[FLEET_MAX_RUNS + 1 + FLEET_MAX_FDS];
    size_t n = 0;
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        if (self->slots[i].run)
            all[n++] = telemetry_fd(self->slots[i].run->telemetry);
    all[n++] = live ? live_metrics_fd(live) : -1;
    for (size_t i = 0; i < n_fds && i < FLEET_MAX_FDS; i++)
        all[n++] = fds[i];
    transport_wait_fds(self->transport, true, (long)wait_ms, all, n);
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        if (self->slots[i].run)
            telemetry_poll(self->slots[i].run->telemetry);
    live_gauges(self);
    int64_t gap = loop_now_ns() - self->last_turn_ns;
    if (gap > 2 * fleet_heartbeat_ns(self)) {
        /* This process was not running (stopped, swapped out): the workers' silence over that
         * gap is ours, not theirs. */
        console_say(&self->console, "the controller itself stalled for %.1f s", gap / 1e9);
        registry_excuse_stall(self->registry, gap);
    }
    while (transport_receive(self->transport, TRANSPORT_CONTROL, fleet_workers_control, self))
        ;
    for (int i = 0; i < DATA_BURST &&
                    transport_receive(self->transport, TRANSPORT_DATA, fleet_workers_data, self);
         i++)
        ;
    if (signals_seen != self->signals_handled) {
        self->signals_handled = signals_seen;
        for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
            if (self->slots[i].run && self->slots[i].run->phase != PHASE_OVER)
                handle_signal(self, &self->slots[i], self->signals_handled);
    }
    check_hook(self);
    step(self, loop_now_ns());
    self->last_turn_ns = loop_now_ns();
}

int fleet_start(fleet_t *self, measurement_t *run, uint32_t expect) {
    fleet_slot_t *slot = NULL;
    for (size_t i = 0; i < FLEET_MAX_RUNS && !slot; i++)
        if (!self->slots[i].run)
            slot = &self->slots[i];
    if (!slot)
        return -1;
    slot->run = run;
    slot->fleet = self;
    slot->takes_all = expect == 0;
    slot->expect = expect ? expect : self->options.expect_workers;
    slot->release_end_ns = 0;
    slot->hooks = (fleet_hooks_t){0};
    slot->label[0] = '\0';
    slot->link = (run_link_t){
        .send = slot_send, .say = slot_say, .inflight = slot_link_inflight, .arg = slot};
    run->link = slot->link;
    run->after_first = self->started_once;
    fleet_workers_next_run(self, slot);
    uint32_t have = fleet_slot_count(slot, RUN_WORKER_REGISTERED);
    if (have < slot->expect && (!self->started_once || have == 0))
        console_say(&self->console, "listening on %s (data port %u); waiting for %u worker%s",
                    transport_endpoint(self->transport), transport_data_port(self->transport),
                    slot->expect, slot->expect == 1 ? "" : "s");
    return 0;
}

bool fleet_over(fleet_t *self, const measurement_t *run) {
    fleet_slot_t *slot = fleet_slot_of_run(self, run);
    return !slot || (run->phase == PHASE_OVER && slot->release_end_ns &&
                     (!releases_pending(slot) || loop_now_ns() >= slot->release_end_ns));
}

int fleet_finish(fleet_t *self, measurement_t *run, bool *started) {
    fleet_slot_t *slot = fleet_slot_of_run(self, run);
    *started = run->start_ns != 0;
    int rc;
    if (!run->abort_reason[0]) {
        console_clear(&self->console);
        rc = results_finish(run, signals_seen != 0);
        journal_close(run);
    } else {
        journal_close(run);
        console_say(&self->console, "%s%scannot run: %s", slot ? slot->label : "",
                    slot && slot->label[0] ? ": " : "", run->abort_reason);
        for (size_t i = 0; i < run->n_workers; i++)
            if (run_worker_in_run(run->workers[i]))
                measurement_send_stop(run, run->workers[i], run->abort_reason, true, true);
        rc = signals_seen ? 130 : 1;
    }
    if (slot) {
        fleet_workers_release(self, slot);
        slot->run = NULL;
        slot->n_workers = 0;
    }
    run->workers = NULL;
    run->n_workers = 0;
    return rc;
}

int fleet_run(fleet_t *self, measurement_t *run, bool *started) {
    self->signals_handled = 0; /* as each run's own loop did: a signal of an earlier run counts */
    if (fleet_start(self, run, 0) != 0) {
        *started = false;
        return 1;
    }
    while (!fleet_over(self, run))
        fleet_step(self, 100, NULL, 0);
    return fleet_finish(self, run, started);
}

uint32_t fleet_workers_free(const fleet_t *self) {
    uint32_t n = 0;
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        const registry_worker_t *w = registry_at(self->registry, i);
        n += w->slot < 0 && w->run.state == RUN_WORKER_REGISTERED;
    }
    return n;
}

uint32_t fleet_workers_connected(const fleet_t *self) {
    uint32_t n = 0;
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        const registry_worker_t *w = registry_at(self->registry, i);
        n += w->run.state != RUN_WORKER_LOST && !w->handover.held.run_id;
    }
    return n;
}
