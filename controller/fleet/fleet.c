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

/* The run's link: what it may ask of the fleet. */
static int link_send(void *arg, run_worker_t *w, Stampede__Envelope *env, bool data) {
    fleet_t *self = arg;
    registry_worker_t *fw = registry_of(w);
    return transport_send(self->transport, data ? TRANSPORT_DATA : TRANSPORT_CONTROL, fw->id,
                          fw->id_len, env);
}

static void link_say(void *arg, const char *msg) {
    fleet_t *self = arg;
    console_say(&self->console, "%s", msg);
}

static uint32_t link_inflight(void *arg) {
    fleet_t *self = arg;
    return registry_inflight(self->registry, loop_now_ns(), fleet_heartbeat_ns(self));
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

measurement_t *fleet_current(const fleet_t *self) {
    return self->run;
}

/* The live status line: the trace's drops said first, then the run's figures (the driver's line
 * when it has one), sampled into the run's client series. */
static void show_live(fleet_t *self, int64_t now) {
    measurement_t *run = self->run;
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
    int64_t heartbeat = fleet_heartbeat_ns(self);
    live_t live;
    merge_live(run->merge, now, registry_inflight(self->registry, now, heartbeat), &live);
    live.silent = registry_silent(self->registry, now, heartbeat);
    live.duration_s = (double)run->cfg.limits.duration_ns / 1e9;
    client_series_add(run->client_series, live.elapsed_s, live.in_flight, live.requests_per_s);
    char line[512];
    if (self->hooks.live_line) /* a sweep's: the level, its phase and what is left of it first */
        self->hooks.live_line(self->hooks.arg, now, &live, line, sizeof line);
    else
        report_live_line(&live, line, sizeof line);
    console_live(&self->console, line);
}

/* A run after the fleet's first starts with the workers still registered, one at least: says
 * so when they are fewer than --expect-workers. */
static void start_with_fewer(fleet_t *self, uint32_t n) {
    console_say(&self->console,
                "%u of the %u workers expected (--expect-workers) are registered: the run goes "
                "on with them; a worker that comes back joins at the next run or level",
                n, self->options.expect_workers);
    clock_probe_begin(self->run);
}

static void step_register(fleet_t *self, int64_t now) {
    measurement_t *run = self->run;
    uint32_t n = registry_count(self->registry, RUN_WORKER_REGISTERED);
    if (n >= self->options.expect_workers)
        clock_probe_begin(run);
    else if (self->started_once && n > 0)
        start_with_fewer(self, n);
    else if (self->started_once && now >= run->deadline_ns)
        measurement_abort(run,
                          "no worker is left to carry the run: every worker was lost, and none "
                          "registered within %g s (expected %u at %s)",
                          self->options.register_timeout_ns / 1e9, self->options.expect_workers,
                          transport_endpoint(self->transport));
    else if (now >= run->deadline_ns && n == 0)
        measurement_abort(run,
                          "no worker came within %g s (expected %u at %s); in an Indexed Job of "
                          "one worker a pod, %s %u is missing",
                          self->options.register_timeout_ns / 1e9, self->options.expect_workers,
                          transport_endpoint(self->transport),
                          self->options.expect_workers == 1 ? "index" : "every index 0 to",
                          self->options.expect_workers - 1);
    else if (now >= run->deadline_ns) {
        char why[1024];
        registry_describe_missing(self->registry, self->options.expect_workers,
                                  self->options.register_timeout_ns, why, sizeof why);
        measurement_abort(run, "%s", why);
    }
}

static void step_run(fleet_t *self, int64_t now) {
    measurement_t *run = self->run;
    drain_grace_step(run, now);
    bool all = true;
    for (size_t i = 0; i < run->n_workers && all; i++)
        if (run_worker_in_run(run->workers[i]) && !run_worker_finished(run->workers[i]))
            all = false;
    if (all) {
        run->phase = PHASE_OVER;
    } else if (run->stopping && now >= run->deadline_ns) {
        for (size_t i = 0; i < registry_size(self->registry); i++) {
            registry_worker_t *w = registry_at(self->registry, i);
            if (run_worker_in_run(&w->run) && !run_worker_finished(&w->run))
                fleet_workers_lost(self, w, "did not finish within 15 s of the stop", true);
        }
        run->phase = PHASE_OVER;
    }
    if (self->hooks.step)
        self->hooks.step(self->hooks.arg, now);
    rebalance_join_step(run, now);
    if (now >= run->next_live_ns) { /* a terminal's line every second, a log's less often */
        int64_t every = self->console.tty ? 1000000000LL : self->options.progress_ns;
        show_live(self, now);
        run->next_live_ns += every;
        if (run->next_live_ns < now)
            run->next_live_ns = now + every;
    }
}

/* Phase changes, deadlines and periodic work; called on every loop turn. */
static void step(fleet_t *self, int64_t now) {
    measurement_t *run = self->run;
    if (now >= self->next_heartbeat_ns) {
        if (run->phase == PHASE_RUN)
            rebalance_tick(run);
        fleet_workers_heartbeats(self, now);
        self->next_heartbeat_ns = now + fleet_heartbeat_ns(self);
    }
    /* A silent worker is lost, and its share taken over, within a tenth of a second of
     * fleet.heartbeat x fleet.liveness (the walk itself only once one can be silent). */
    fleet_workers_check_silence(self, now);
    switch (run->phase) {
    case PHASE_REGISTER:
        step_register(self, now);
        break;
    case PHASE_PROBE:
        if (clock_probe_step(run, now))
            launch_assign(run);
        else if (now >= run->deadline_ns)
            measurement_abort(run, "clock probes unanswered within %.0f s",
                              MEASUREMENT_READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_ASSIGN:
        if (registry_count(self->registry, RUN_WORKER_READY) == run->in_run) {
            launch_begin(run);
            rebalance_start(run);
            launch_send_starts(run);
            self->started_once = true;
        } else if (now >= run->deadline_ns)
            measurement_abort(run, "not every worker was ready within %.0f s",
                              MEASUREMENT_READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_RUN:
        step_run(self, now);
        break;
    case PHASE_OVER:
        break;
    }
}

static void handle_signal(fleet_t *self, int count) {
    measurement_t *run = self->run;
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
        if (self->hooks.stopped)
            self->hooks.stopped(self->hooks.arg, loop_now_ns());
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

/* The embedder's hook (a local child died): stops a running run, aborts one not yet started. */
static void check_hook(fleet_t *self) {
    measurement_t *run = self->run;
    char why[512];
    if (!self->options.hook || run->phase == PHASE_OVER ||
        !self->options.hook(self->options.hook_arg, why, sizeof why))
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

/* The event loop: control drained first on every turn, then a bounded burst of data. */
static void loop(fleet_t *self) {
    int seen = 0;
    int64_t last_turn = loop_now_ns();
    live_metrics_t *live = self->options.live_metrics;
    while (self->run->phase != PHASE_OVER) {
        int64_t now = loop_now_ns();
        int64_t wait_ms = (self->next_heartbeat_ns - now) / 1000000;
        if (wait_ms > 100)
            wait_ms = 100;
        if (wait_ms < 0)
            wait_ms = 0;
        int fds[2] = {telemetry_fd(self->run->telemetry), live ? live_metrics_fd(live) : -1};
        transport_wait_fds(self->transport, true, (long)wait_ms, fds, 2);
        telemetry_poll(self->run->telemetry);
        live_gauges(self);
        int64_t gap = loop_now_ns() - last_turn;
        if (gap > 2 * fleet_heartbeat_ns(self)) {
            /* This process was not running (stopped, swapped out): the workers' silence over that
             * gap is ours, not theirs. */
            console_say(&self->console, "the controller itself stalled for %.1f s", gap / 1e9);
            registry_excuse_stall(self->registry, gap);
        }
        while (transport_receive(self->transport, TRANSPORT_CONTROL, fleet_workers_control, self))
            ;
        for (int i = 0; i < DATA_BURST && transport_receive(self->transport, TRANSPORT_DATA,
                                                            fleet_workers_data, self);
             i++)
            ;
        if (signals_seen != seen) {
            seen = signals_seen;
            handle_signal(self, seen);
        }
        check_hook(self);
        step(self, loop_now_ns());
        last_turn = loop_now_ns();
    }
}

/* Workers released while their connection was down are told when they repeat their Done (every
 * heartbeat), for a bounded time. */
static void deliver_releases(fleet_t *self) {
    int64_t end = loop_now_ns() + 5 * fleet_heartbeat_ns(self) / 2;
    for (;;) {
        bool pending = false;
        for (size_t i = 0; i < self->run->n_workers; i++)
            if (self->run->workers[i]->state == RUN_WORKER_COMPLETE &&
                self->run->workers[i]->release_pending)
                pending = true;
        if (!pending || loop_now_ns() >= end)
            return;
        transport_wait(self->transport, false, 100);
        while (transport_receive(self->transport, TRANSPORT_CONTROL, fleet_workers_control, self))
            ;
    }
}

int fleet_run(fleet_t *self, measurement_t *run, bool *started) {
    *started = false;
    self->run = run;
    run->link = self->link;
    run->after_first = self->started_once;
    fleet_workers_next_run(self);
    fleet_workers_changed(self);
    uint32_t have = registry_count(self->registry, RUN_WORKER_REGISTERED);
    if (have < self->options.expect_workers && (!self->started_once || have == 0))
        console_say(&self->console, "listening on %s (data port %u); waiting for %u worker%s",
                    transport_endpoint(self->transport), transport_data_port(self->transport),
                    self->options.expect_workers, self->options.expect_workers == 1 ? "" : "s");
    loop(self);
    deliver_releases(self);
    *started = run->start_ns != 0;
    int rc;
    if (!run->abort_reason[0]) {
        console_clear(&self->console);
        rc = results_finish(run, signals_seen != 0);
        journal_close(run);
    } else {
        journal_close(run);
        console_say(&self->console, "cannot run: %s", run->abort_reason);
        for (size_t i = 0; i < run->n_workers; i++)
            if (run_worker_in_run(run->workers[i]))
                measurement_send_stop(run, run->workers[i], run->abort_reason, true, true);
        rc = signals_seen ? 130 : 1;
    }
    self->run = NULL;
    self->idle_reset = false;
    run->workers = NULL;
    run->n_workers = 0;
    return rc;
}

void fleet_idle(fleet_t *self, long timeout_ms, const int *fds, size_t n_fds) {
    if (!self->idle_reset) { /* the last run's states go: every worker heard from is ready */
        fleet_workers_next_run(self);
        self->idle_reset = true;
    }
    int64_t now = loop_now_ns();
    if (now >= self->next_heartbeat_ns) {
        fleet_workers_heartbeats(self, now);
        self->next_heartbeat_ns = now + fleet_heartbeat_ns(self);
    }
    long until_heartbeat = (long)((self->next_heartbeat_ns - now) / 1000000);
    transport_wait_fds(self->transport, true,
                       until_heartbeat < timeout_ms ? until_heartbeat : timeout_ms, fds, n_fds);
    while (transport_receive(self->transport, TRANSPORT_CONTROL, fleet_workers_control, self))
        ;
    while (transport_receive(self->transport, TRANSPORT_DATA, fleet_workers_data, self))
        ; /* a late batch of a run that is over: nothing takes it */
    fleet_workers_check_silence(self, loop_now_ns());
}

uint32_t fleet_workers_connected(const fleet_t *self) {
    uint32_t n = 0;
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        n += registry_at(self->registry, i)->run.state != RUN_WORKER_LOST;
    }
    return n;
}
