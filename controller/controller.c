#include "controller.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock_probe.h"
#include "collect.h"
#include "console.h"
#include "controller_internal.h"
#include "envelope.h"
#include "journal.h"
#include "launch.h"
#include "live_metrics.h"
#include "loop.h"
#include "measurement.h"
#include "rebalance.h"
#include "results.h"
#include "sweep.h"
#include "sweep_run.h"
#include "units.h"

#define DATA_BURST 32 /* data messages per iteration before control is looked at again */

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig) {
    signals_seen++;
}

void controller_abort(controller_t *self, const char *fmt, ...) {
    measurement_t *run = self->run;
    assert(run);
    if (run->abort_reason[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->abort_reason, sizeof run->abort_reason, fmt, ap);
    va_end(ap);
    run->phase = PHASE_OVER;
}

int64_t controller_heartbeat_ns(const controller_t *self) {
    return self->run && self->run->cfg.fleet.heartbeat_ns > 0 ? self->run->cfg.fleet.heartbeat_ns
                                                              : CONTROLLER_HEARTBEAT_NS;
}

int64_t controller_silence_ns(const controller_t *self) {
    uint32_t liveness = self->run && self->run->cfg.fleet.liveness ? self->run->cfg.fleet.liveness
                                                                   : CONTROLLER_LIVENESS;
    return controller_heartbeat_ns(self) * liveness;
}

int controller_send(controller_t *self, registry_worker_t *w, Stampede__Envelope *env) {
    return transport_send(self->transport, TRANSPORT_CONTROL, w->id, w->id_len, env);
}

int controller_send_stop(controller_t *self, registry_worker_t *w, const char *reason, bool cancel,
                         bool abandon) {
    Stampede__Stop stop = STAMPEDE__STOP__INIT;
    stop.reason = (char *)reason;
    stop.cancel = cancel;
    stop.abandon = abandon;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_STOP;
    env.stop = &stop;
    env.run_id = self->run->id;
    return controller_send(self, w, &env);
}

/* A worker leaving in order (SIGTERM on it): said, not counted as a loss. One that leaves a run
 * still going takes its share of the load with it, and one whose last batches were not
 * acknowledged has spooled them: the results say both. */
static void handle_goodbye(controller_t *self, registry_worker_t *w,
                           const Stampede__Envelope *env) {
    const Stampede__Goodbye *bye = env->goodbye;
    measurement_t *run = self->run;
    char msg[1200];
    int n = snprintf(msg, sizeof msg, "worker %s left: %s", w->name,
                     bye->reason && *bye->reason ? bye->reason : "goodbye");
    /* Leaving before a later run started (a --once worker after its level): that run goes on
     * without it. */
    if (registry_in_run(w) && run->phase < PHASE_RUN && self->started_once) {
        console_say(self, "%s", msg);
        registry_forget_before_start(self, w, "left");
        return;
    }
    /* A worker released by the run says goodbye outside it (run id 0): it is still the run's. */
    if (!registry_in_run(w) || run->phase != PHASE_RUN) {
        console_say(self, "%s", msg);
        if (!registry_in_run(w))
            w->last_rx_ns = 0; /* forgotten at the next check, not waited for */
        return;
    }
    bool was_finished = registry_finished(w);
    if (w->acked_seq < bye->last_seq && n > 0 && (size_t)n < sizeof msg)
        snprintf(msg + n, sizeof msg - (size_t)n,
                 "; batches %" PRIu64 "-%" PRIu64 " not acknowledged%s%s", w->acked_seq + 1,
                 bye->last_seq, bye->spool && *bye->spool ? ", spooled to " : "",
                 bye->spool && *bye->spool ? bye->spool : "");
    console_say(self, "%s", msg);
    /* Leaving a run still going takes the worker's share of the load with it. */
    if (w->acked_seq < bye->last_seq || !run->stopping)
        merge_mark_partial(run->merge, msg);
    if (!was_finished)
        w->state = REGISTRY_COMPLETE; /* gone in order: nothing more to wait for, not lost */
}

/* A message from the control socket (a transport_message_fn), handed to the step it belongs to. */
static void handle_control(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
                           size_t len, int64_t rx_ns) {
    controller_t *self = arg;
    Stampede__Envelope *env = envelope_unpack(self->arena, data, len);
    if (!env) {
        collect_undecodable(self, id, id_len, len, "control");
        return;
    }
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_HELLO) {
        registry_hello(self, id, id_len, env);
        return;
    }
    registry_worker_t *w = registry_find(self, id, id_len);
    if (!w)
        return;
    w->last_rx_ns = rx_ns;
    bool this_run = env->run_id == self->run->id && registry_in_run(w);
    if (this_run && w->state == REGISTRY_LOST && self->run->phase == PHASE_RUN)
        registry_mark_back(self, w);
    switch (env->body_case) {
    case STAMPEDE__ENVELOPE__BODY_PROBE:
        clock_probe_answer(self, w, env->probe, rx_ns);
        break;
    case STAMPEDE__ENVELOPE__BODY_READY:
        if (this_run && self->run->phase == PHASE_RUN)
            rebalance_join_ready(self, w, env->ready); /* a worker joining the run */
        else if (this_run)
            launch_ready(self, w, env->ready);
        break;
    case STAMPEDE__ENVELOPE__BODY_HEARTBEAT:
        w->inflight = env->heartbeat->inflight;
        if (this_run)
            rebalance_heartbeat(self, w, env->heartbeat);
        /* An idle worker outside our run no longer holds a part of it (it dropped the run). */
        if (registry_in_run(w) && self->run->phase == PHASE_RUN && w->state == REGISTRY_RUNNING &&
            env->run_id != self->run->id &&
            env->heartbeat->state == ENVELOPE_WORKER_IDLE) /* (a joiner is idle until assigned) */
            registry_mark_lost(self, w, "it left the run", false);
        break;
    case STAMPEDE__ENVELOPE__BODY_DONE:
        if (this_run && (self->run->phase == PHASE_RUN || w->state == REGISTRY_COMPLETE))
            collect_done(self, w, env->done);
        break;
    case STAMPEDE__ENVELOPE__BODY_GOODBYE:
        handle_goodbye(self, w, env);
        break;
    default:
        break;
    }
}

/* A run after the fleet's first starts with the workers still registered, one at least: says
 * so when they are fewer than --expect-workers. */
static void start_with_fewer(controller_t *self, uint32_t n) {
    console_say(self,
                "%u of the %u workers expected (--expect-workers) are registered: the run goes "
                "on with them; a worker that comes back joins at the next run or level",
                n, self->options.expect_workers);
    clock_probe_begin(self);
}

static void step_register(controller_t *self, int64_t now) {
    uint32_t n = registry_count(self, REGISTRY_REGISTERED);
    if (n >= self->options.expect_workers)
        clock_probe_begin(self);
    else if (self->started_once && n > 0)
        start_with_fewer(self, n);
    else if (self->started_once && now >= self->run->deadline_ns)
        controller_abort(self,
                         "no worker is left to carry the run: every worker was lost, and none "
                         "registered within %g s (expected %u at %s)",
                         self->options.register_timeout_ns / 1e9, self->options.expect_workers,
                         transport_endpoint(self->transport));
    else if (now >= self->run->deadline_ns && n == 0)
        controller_abort(self,
                         "no worker came within %g s (expected %u at %s); in an Indexed Job of "
                         "one worker a pod, %s %u is missing",
                         self->options.register_timeout_ns / 1e9, self->options.expect_workers,
                         transport_endpoint(self->transport),
                         self->options.expect_workers == 1 ? "index" : "every index 0 to",
                         self->options.expect_workers - 1);
    else if (now >= self->run->deadline_ns) {
        char why[1024];
        registry_describe_missing(self, why, sizeof why);
        controller_abort(self, "%s", why);
    }
}

static void step_run(controller_t *self, int64_t now) {
    measurement_t *run = self->run;
    collect_grace_step(self, now);
    bool all = true;
    for (size_t i = 0; i < self->n_workers; i++)
        if (registry_in_run(&self->workers[i]) && !registry_finished(&self->workers[i]))
            all = false;
    if (all) {
        run->phase = PHASE_OVER;
    } else if (run->stopping && now >= run->deadline_ns) {
        for (size_t i = 0; i < self->n_workers; i++)
            if (registry_in_run(&self->workers[i]) && !registry_finished(&self->workers[i]))
                registry_mark_lost(self, &self->workers[i],
                                   "did not finish within 15 s of the stop", true);
        run->phase = PHASE_OVER;
    }
    if (self->sweep)
        sweep_run_step(self->sweep, now);
    rebalance_join_step(self, now);
    if (now >= run->next_live_ns) { /* a terminal's line every second, a log's less often */
        int64_t every = self->tty ? 1000000000LL : self->options.progress_ns;
        console_live(self, now);
        run->next_live_ns += every;
        if (run->next_live_ns < now)
            run->next_live_ns = now + every;
    }
}

/* Phase changes, deadlines and periodic work; called on every loop iteration. */
static void step(controller_t *self, int64_t now) {
    measurement_t *run = self->run;
    if (now >= self->next_heartbeat_ns) {
        if (run->phase == PHASE_RUN)
            rebalance_tick(self);
        registry_send_heartbeats(self, now);
        self->next_heartbeat_ns = now + controller_heartbeat_ns(self);
    }
    /* On every iteration (at most 100 ms apart): a silent worker is lost, and its share taken
     * over, within a tenth of a second of fleet.heartbeat x fleet.liveness. */
    registry_check_silence(self, now);
    switch (run->phase) {
    case PHASE_REGISTER:
        step_register(self, now);
        break;
    case PHASE_PROBE:
        if (clock_probe_step(self, now))
            launch_assign(self);
        else if (now >= run->deadline_ns)
            controller_abort(self, "clock probes unanswered within %.0f s",
                             CONTROLLER_READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_ASSIGN:
        if (registry_count(self, REGISTRY_READY) == run->in_run)
            launch_start(self);
        else if (now >= run->deadline_ns)
            controller_abort(self, "not every worker was ready within %.0f s",
                             CONTROLLER_READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_RUN:
        step_run(self, now);
        break;
    case PHASE_OVER:
        break;
    }
}

static void handle_signal(controller_t *self, int count) {
    measurement_t *run = self->run;
    if (run->phase != PHASE_RUN) {
        controller_abort(self, "interrupted before the start");
        return;
    }
    if (count == 1 && !run->stopping) {
        console_say(self,
                    "interrupted: stopping the workers and draining for up to %.1f s (Ctrl-C "
                    "again to quit now)",
                    self->options.grace_ns / 1e9);
        merge_mark_partial(run->merge, "interrupted");
        if (self->sweep)
            sweep_run_stopped(self->sweep, loop_now_ns());
        collect_stop_grace(self, "interrupted at the controller", self->options.grace_ns);
    } else {
        /* Every worker still in the run is told to abandon it, so none waits for a controller
         * that is gone (a --once worker exits at once). */
        uint32_t told = 0;
        for (size_t i = 0; i < self->n_workers; i++) {
            registry_worker_t *w = &self->workers[i];
            if (!registry_in_run(w) || registry_finished(w))
                continue;
            controller_send_stop(self, w, "the controller was interrupted twice", true, true);
            w->state = REGISTRY_LOST;
            told++;
        }
        if (told)
            merge_mark_partial(run->merge, "interrupted twice: the workers abandoned the run");
        console_say(self,
                    "interrupted again: %u worker%s told to abandon the run; writing what "
                    "arrived",
                    told, told == 1 ? "" : "s");
        run->phase = PHASE_OVER;
    }
}

/* The embedder's hook (a local child died): stops a running run, aborts one not yet started. */
static void check_hook(controller_t *self) {
    measurement_t *run = self->run;
    char why[512];
    if (!self->options.hook || run->phase == PHASE_OVER ||
        !self->options.hook(self->options.hook_arg, why, sizeof why))
        return;
    if (run->phase == PHASE_RUN) {
        console_say(self, "%s", why);
        merge_mark_partial(run->merge, why);
        if (!run->stopping)
            collect_stop(self, why);
    } else {
        controller_abort(self, "%s", why);
    }
}

/* The fleet's gauges for --metrics-listen, then the scrapes that are ready. */
static void controller_live_metrics(controller_t *self) {
    if (!self->live_metrics)
        return;
    live_gauges_t g = {.in_flight = registry_inflight(self)};
    if (self->sweep)
        g.level = sweep_run_spec(self->sweep)->value;
    g.workers_lost = registry_count(self, REGISTRY_LOST);
    g.workers_connected = (uint32_t)self->n_workers - g.workers_lost;
    live_metrics_set_gauges(self->live_metrics, &g);
    live_metrics_poll(self->live_metrics);
}

/* The event loop: control drained first on every iteration, then a bounded burst of data. */
static void run_loop(controller_t *self) {
    int seen = 0;
    int64_t last_iteration = loop_now_ns();
    while (self->run->phase != PHASE_OVER) {
        int64_t now = loop_now_ns();
        int64_t wait_ms = (self->next_heartbeat_ns - now) / 1000000;
        if (wait_ms > 100)
            wait_ms = 100;
        if (wait_ms < 0)
            wait_ms = 0;
        int fds[2] = {telemetry_fd(self->run->telemetry),
                      self->live_metrics ? live_metrics_fd(self->live_metrics) : -1};
        transport_wait_fds(self->transport, true, (long)wait_ms, fds, 2);
        telemetry_poll(self->run->telemetry);
        controller_live_metrics(self);
        int64_t gap = loop_now_ns() - last_iteration;
        if (gap > 2 * controller_heartbeat_ns(self)) {
            /* This process was not running (stopped, swapped out): the workers' silence over that
             * gap is ours, not theirs. */
            console_say(self, "the controller itself stalled for %.1f s", gap / 1e9);
            registry_excuse_stall(self, gap);
        }
        while (transport_receive(self->transport, TRANSPORT_CONTROL, handle_control, self))
            ;
        for (int i = 0; i < DATA_BURST &&
                        transport_receive(self->transport, TRANSPORT_DATA, collect_data, self);
             i++)
            ;
        if (signals_seen != seen) {
            seen = signals_seen;
            handle_signal(self, seen);
        }
        check_hook(self);
        step(self, loop_now_ns());
        last_iteration = loop_now_ns();
    }
}

/* Workers released while their connection was down are told when they repeat their Done (every
 * heartbeat), for a bounded time. */
static void deliver_releases(controller_t *self) {
    int64_t end = loop_now_ns() + 5 * controller_heartbeat_ns(self) / 2;
    for (;;) {
        bool pending = false;
        for (size_t i = 0; i < self->n_workers; i++)
            if (self->workers[i].state == REGISTRY_COMPLETE && self->workers[i].release_pending)
                pending = true;
        if (!pending || loop_now_ns() >= end)
            return;
        transport_wait(self->transport, false, 100);
        while (transport_receive(self->transport, TRANSPORT_CONTROL, handle_control, self))
            ;
    }
}

/* The workload files to run, in order: options.config_paths, or options.config_path alone. */
static const char *config_at(const controller_t *self, size_t i) {
    return self->options.n_configs ? self->options.config_paths[i] : self->options.config_path;
}

static size_t n_runs(const controller_t *self) {
    return self->options.n_configs ? self->options.n_configs : 1;
}

controller_t *controller_new(const controller_options_t *options) {
    controller_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->options = *options;
    self->name = options->name ? options->name : "controller";
    if (!self->options.register_timeout_ns)
        self->options.register_timeout_ns = 60000000000LL;
    if (!self->options.expect_workers)
        self->options.expect_workers = 1;
    self->options.grace_ns = CONTROLLER_DEFAULT_GRACE_NS;
    if (options->grace && units_parse_duration(options->grace, &self->options.grace_ns) != 0) {
        fprintf(stderr,
                "%s: --grace wants a duration such as 10s or 500ms (0: no grace), got '%s'\n",
                self->name, options->grace);
        free(self);
        return NULL;
    }
    const char *progress = options->progress_interval ? options->progress_interval
                                                      : getenv("STAMPEDE_PROGRESS_INTERVAL");
    self->options.progress_ns = CONTROLLER_DEFAULT_PROGRESS_NS;
    if (progress && (units_parse_duration(progress, &self->options.progress_ns) != 0 ||
                     self->options.progress_ns <= 0)) {
        fprintf(stderr, "%s: %s wants a duration > 0 such as 10s or 1m, got '%s'\n", self->name,
                options->progress_interval ? "--progress-interval" : "STAMPEDE_PROGRESS_INTERVAL",
                progress);
        free(self);
        return NULL;
    }
    /* Every file is checked before the first run: a mistake in the last one costs no run. */
    for (size_t i = 0; i < n_runs(self); i++)
        if (measurement_check(&self->options, self->name, config_at(self, i)) != 0) {
            controller_destroy(&self);
            return NULL;
        }
    if (!(self->transport =
              transport_new(options->bind, options->data_port, &options->security, self->name)) ||
        !(self->arena = envelope_arena_new())) {
        controller_destroy(&self);
        return NULL;
    }
    if (options->metrics_listen &&
        !(self->live_metrics =
              live_metrics_new(options->metrics_listen, &options->metrics_access,
                               options->metrics_prefix, options->metrics_compat, self->name))) {
        controller_destroy(&self);
        return NULL;
    }
    return self;
}

const char *controller_endpoint(const controller_t *self) {
    return transport_endpoint(self->transport);
}

/* A prepared run over the fleet, from registration to its results. Its exit status (as
 * controller_run); *started tells whether it got past its start. */
static int run_prepared(controller_t *self, measurement_t *run, bool *started) {
    *started = false;
    self->run = run;
    registry_next_run(self);
    uint32_t have = registry_count(self, REGISTRY_REGISTERED);
    if (have < self->options.expect_workers && (!self->started_once || have == 0))
        console_say(self, "listening on %s (data port %u); waiting for %u worker%s",
                    transport_endpoint(self->transport), transport_data_port(self->transport),
                    self->options.expect_workers, self->options.expect_workers == 1 ? "" : "s");
    run_loop(self);
    deliver_releases(self);
    *started = run->start_ns != 0;
    if (!run->abort_reason[0]) {
        int rc = results_finish(self, signals_seen != 0);
        journal_close(self);
        return rc;
    }
    journal_close(self);
    console_say(self, "cannot run: %s", run->abort_reason);
    for (size_t i = 0; i < self->n_workers; i++)
        if (registry_in_run(&self->workers[i]))
            controller_send_stop(self, &self->workers[i], run->abort_reason, true, true);
    return signals_seen ? 130 : 1;
}

/* The levels of a sweep, one after another over the same fleet, each repetition a run of its
 * own (clocks probed again before each); first is the file's run, used for the first
 * repetition. The first non-zero status of a repetition, 130 when interrupted. */
static int run_sweep(controller_t *self, measurement_t *first, size_t number) {
    sweep_run_t *sweep = sweep_run_new(self, first, self->options.source);
    if (!sweep) {
        measurement_destroy(&first);
        return 1;
    }
    self->sweep = sweep;
    int rc = 0, got = 0;
    bool started = true;
    while (!signals_seen && started && (got = sweep_run_next_level(sweep)) > 0) {
        for (uint32_t rep = 1; rep <= sweep_run_spec(sweep)->repeat && !signals_seen; rep++) {
            measurement_t *run =
                first ? first
                      : measurement_new(&self->options, self->name, config_at(self, number - 1),
                                        number, n_runs(self));
            first = NULL;
            int run_rc = 1;
            if (run && sweep_run_prepare(sweep, run, rep) == 0)
                run_rc = run_prepared(self, run, &started);
            else
                started = false;
            measurement_destroy(&run);
            self->run = NULL;
            if (!rc)
                rc = run_rc;
            if (!started)
                break;
        }
        sweep_run_end_level(sweep, signals_seen != 0 || !started);
    }
    if (got < 0 && !rc)
        rc = 1;
    measurement_destroy(&first);
    if (sweep_run_finish(sweep, signals_seen != 0) != 0 && !rc)
        rc = 1;
    sweep_run_destroy(&sweep);
    self->sweep = NULL;
    return signals_seen ? 130 : rc;
}

/* One file over the fleet: a sweep when it has a `sweep:` section or the options bring a
 * source, else one run. Its exit status (as controller_run). */
static int run_one(controller_t *self, size_t number, bool *started) {
    size_t total = n_runs(self);
    *started = false;
    measurement_t *run =
        measurement_new(&self->options, self->name, config_at(self, number - 1), number, total);
    if (!run)
        return 1;
    if (!self->results_root[0]) { /* several runs write to OUT/run-N: OUT is the root */
        char dir[sizeof self->results_root];
        snprintf(dir, sizeof dir, "%s", run->cfg.output.dir);
        snprintf(self->results_root, sizeof self->results_root, "%s",
                 self->options.out_dir ? self->options.out_dir
                 : total > 1           ? dirname(dir)
                                       : run->cfg.output.dir);
    }
    if (total > 1)
        console_say(self, "run %zu of %zu: %s, results in %s", number, total, run->config_path,
                    run->cfg.output.dir);
    if (self->options.source || run->cfg.sweep.axis != SWEEP_AXIS_NONE) {
        *started = true;
        return run_sweep(self, run, number);
    }
    int rc = run_prepared(self, run, started);
    measurement_destroy(&self->run);
    return rc;
}

int controller_run(controller_t *self) {
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signals_seen = 0;
    self->tty = isatty(STDERR_FILENO);
    int rc = 0;
    for (size_t i = 0; i < n_runs(self); i++) {
        bool started;
        int run_rc = run_one(self, i + 1, &started);
        if (!rc)
            rc = run_rc;
        /* An interrupt ends the list; so does a run that could not start (the next would not). */
        if (signals_seen)
            break;
        if (!started && i + 1 < n_runs(self)) {
            console_say(self, "the remaining %zu run%s not started", n_runs(self) - i - 1,
                        n_runs(self) - i - 1 == 1 ? " is" : "s are");
            break;
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

void controller_linger(controller_t *self) {
    if (!self->options.linger_ns || !self->live_metrics || !self->results_root[0] || signals_seen)
        return;
    transport_destroy(&self->transport); /* the workers see the controller gone */
    if (live_metrics_serve_results(self->live_metrics, self->results_root) != 0)
        return;
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    char how_long[64];
    units_format_duration(self->options.linger_ns, how_long, sizeof how_long);
    console_say(self, "serving %s read-only at http://%s/results/ for %s (SIGTERM ends it)",
                self->results_root, live_metrics_address(self->live_metrics), how_long);
    int64_t end = loop_now_ns() + self->options.linger_ns;
    while (!signals_seen) {
        int64_t left_ms = (end - loop_now_ns()) / 1000000;
        if (left_ms <= 0)
            break;
        struct pollfd p = {.fd = live_metrics_fd(self->live_metrics), .events = POLLIN};
        if (poll(&p, 1, left_ms > 1000 ? 1000 : (int)left_ms) < 0 && errno != EINTR)
            break;
        live_metrics_poll(self->live_metrics);
    }
    console_say(self, "%s; no longer serving the results",
                signals_seen ? "interrupted" : "the linger is over");
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

void controller_destroy(controller_t **self_p) {
    controller_t *self = *self_p;
    if (!self)
        return;
    transport_destroy(&self->transport);
    envelope_arena_destroy(&self->arena);
    live_metrics_destroy(&self->live_metrics);
    for (size_t i = 0; i < self->n_workers; i++)
        rebalance_free_worker(&self->workers[i]);
    free(self->workers);
    free(self);
    *self_p = NULL;
}
