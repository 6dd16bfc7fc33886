#include "controller.h"

#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "live_metrics.h"
#include "loop.h"
#include "measurement.h"
#include "report.h"
#include "sweep.h"
#include "sweep_run.h"
#include "units.h"

/* The controller: a fleet, the files to run on it one after another (each a plain run or a
 * sweep), the live metrics every run feeds, and the results directory a --linger serves. */
struct controller {
    controller_options_t options;
    const char *name; /* prefix of every message */
    fleet_t *fleet;
    run_options_t run_options;    /* what every run of the files is given */
    struct sweep_run *sweep;      /* the sweep in progress; NULL: a plain run */
    live_metrics_t *live_metrics; /* --metrics-listen; or NULL */
    char results_root[4096];      /* --out DIR or the first run's directory: what --linger serves */
};

/* The live metrics' sink (arg is the controller): every record labelled by endpoint, role and
 * level. */
static void live_record(void *arg, const measurement_t *run, const request_record_t *rec,
                        const metrics_t *m) {
    controller_t *self = arg;
    const config_t *cfg = &run->cfg;
    const char *role = config_role_name(cfg, rec->role);
    char level[32] = "run", unnamed[32];
    if (!role) /* as results.json, the CSV and the reports name it */
        role = report_role_name(NULL, rec->role, unnamed, sizeof unnamed);
    if (self->sweep)
        snprintf(level, sizeof level, "%g", sweep_run_spec(self->sweep)->value);
    live_labels_t labels = {
        .endpoint =
            rec->endpoint < cfg->target.n_endpoints ? cfg->target.endpoints[rec->endpoint] : "?",
        .role = role,
        .level = level,
    };
    live_metrics_record(self->live_metrics, rec, m, &labels, loop_now_ns());
}

/* Runs run on the fleet with the controller's sinks installed. */
static int run_on_fleet(controller_t *self, measurement_t *run, bool *started) {
    if (self->live_metrics &&
        measurement_add_sink(run, (run_sink_t){.record = live_record, .arg = self}) != 0) {
        fleet_say(self->fleet, "the run has no room for the live metrics' sink");
        *started = false;
        return 1;
    }
    return fleet_run(self->fleet, run, started);
}

/* The workload files to run, in order: options.config_paths, or options.config_path alone. */
static const char *config_at(const controller_t *self, size_t i) {
    return self->options.n_configs ? self->options.config_paths[i] : self->options.config_path;
}

static size_t n_runs(const controller_t *self) {
    return self->options.n_configs ? self->options.n_configs : 1;
}

/* What a run of this controller is given, from its options. */
static run_options_t run_options_of(const controller_options_t *o, const char *name) {
    return (run_options_t){.name = name,
                           .targets = o->targets,
                           .n_targets = o->n_targets,
                           .out_dir = o->out_dir,
                           .trace = o->trace,
                           .no_preflight = o->no_preflight,
                           .http_phases = o->http_phases,
                           .allow_invalid = o->allow_invalid,
                           .print_report = o->print_report,
                           .expect_workers = o->expect_workers,
                           .register_timeout_ns = o->register_timeout_ns,
                           .simulated_profile = o->simulated_profile};
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
    self->run_options = run_options_of(&self->options, self->name);
    /* Every file is checked before the first run: a mistake in the last one costs no run. */
    for (size_t i = 0; i < n_runs(self); i++)
        if (measurement_check(&self->run_options, config_at(self, i)) != 0) {
            controller_destroy(&self);
            return NULL;
        }
    /* The metrics port first: the fleet polls it on its loop. */
    if (options->metrics_listen &&
        !(self->live_metrics =
              live_metrics_new(options->metrics_listen, &options->metrics_access,
                               options->metrics_prefix, options->metrics_compat, self->name))) {
        controller_destroy(&self);
        return NULL;
    }
    fleet_options_t fleet = {.name = self->name,
                             .bind = options->bind,
                             .data_port = options->data_port,
                             .security = &options->security,
                             .expect_workers = self->options.expect_workers,
                             .register_timeout_ns = self->options.register_timeout_ns,
                             .grace_ns = self->options.grace_ns,
                             .progress_ns = self->options.progress_ns,
                             .hook = options->hook,
                             .hook_arg = options->hook_arg,
                             .live_metrics = self->live_metrics};
    if (!(self->fleet = fleet_new(&fleet))) {
        controller_destroy(&self);
        return NULL;
    }
    return self;
}

const char *controller_endpoint(const controller_t *self) {
    return fleet_endpoint(self->fleet);
}

/* The levels of a sweep, one after another over the same fleet, each repetition a run of its
 * own (clocks probed again before each); first is the file's run, used for the first
 * repetition. The first non-zero status of a repetition, 130 when interrupted. */
static int run_sweep(controller_t *self, measurement_t *first, size_t number) {
    sweep_run_t *sweep = sweep_run_new(self->fleet, first, self->options.source);
    if (!sweep) {
        measurement_destroy(&first);
        return 1;
    }
    self->sweep = sweep;
    fleet_hooks_t hooks = sweep_run_hooks(sweep);
    fleet_set_hooks(self->fleet, &hooks);
    int rc = 0, got = 0;
    bool started = true;
    while (!fleet_signals() && started && (got = sweep_run_next_level(sweep)) > 0) {
        for (uint32_t rep = 1; rep <= sweep_run_spec(sweep)->repeat && !fleet_signals(); rep++) {
            measurement_t *run =
                first ? first
                      : measurement_new(&self->run_options, config_at(self, number - 1), number,
                                        n_runs(self));
            first = NULL;
            int run_rc = 1;
            if (run && sweep_run_prepare(sweep, run, rep) == 0)
                run_rc = run_on_fleet(self, run, &started);
            else
                started = false;
            measurement_destroy(&run);
            if (!rc)
                rc = run_rc;
            if (!started)
                break;
        }
        sweep_run_end_level(sweep, fleet_signals() != 0 || !started);
    }
    if (got < 0 && !rc)
        rc = 1;
    measurement_destroy(&first);
    if (sweep_run_finish(sweep, fleet_signals() != 0) != 0 && !rc)
        rc = 1;
    fleet_set_hooks(self->fleet, NULL);
    sweep_run_destroy(&sweep);
    self->sweep = NULL;
    return fleet_signals() ? 130 : rc;
}

/* One file over the fleet: a sweep when it has a `sweep:` section or the options bring a
 * source, else one run. Its exit status (as controller_run). */
static int run_one(controller_t *self, size_t number, bool *started) {
    size_t total = n_runs(self);
    *started = false;
    measurement_t *run =
        measurement_new(&self->run_options, config_at(self, number - 1), number, total);
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
        fleet_say(self->fleet, "run %zu of %zu: %s, results in %s", number, total, run->config_path,
                  run->cfg.output.dir);
    if (self->options.source || run->cfg.sweep.axis != SWEEP_AXIS_NONE) {
        *started = true;
        return run_sweep(self, run, number);
    }
    int rc = run_on_fleet(self, run, started);
    measurement_destroy(&run);
    return rc;
}

int controller_run(controller_t *self) {
    fleet_catch_signals();
    int rc = 0;
    for (size_t i = 0; i < n_runs(self); i++) {
        bool started;
        int run_rc = run_one(self, i + 1, &started);
        if (!rc)
            rc = run_rc;
        /* An interrupt ends the list; so does a run that could not start (the next would not). */
        if (fleet_signals())
            break;
        if (!started && i + 1 < n_runs(self)) {
            fleet_say(self->fleet, "the remaining %zu run%s not started", n_runs(self) - i - 1,
                      n_runs(self) - i - 1 == 1 ? " is" : "s are");
            break;
        }
    }
    fleet_release_signals();
    return rc;
}

void controller_linger(controller_t *self) {
    if (!self->options.linger_ns || !self->live_metrics || !self->results_root[0] ||
        fleet_signals())
        return;
    fleet_close(self->fleet); /* the workers see the controller gone */
    if (live_metrics_serve_results(self->live_metrics, self->results_root) != 0)
        return;
    fleet_catch_signals();
    char how_long[64];
    units_format_duration(self->options.linger_ns, how_long, sizeof how_long);
    fleet_say(self->fleet, "serving %s read-only at http://%s/results/ for %s (SIGTERM ends it)",
              self->results_root, live_metrics_address(self->live_metrics), how_long);
    int64_t end = loop_now_ns() + self->options.linger_ns;
    while (!fleet_signals()) {
        int64_t left_ms = (end - loop_now_ns()) / 1000000;
        if (left_ms <= 0)
            break;
        struct pollfd p = {.fd = live_metrics_fd(self->live_metrics), .events = POLLIN};
        if (poll(&p, 1, left_ms > 1000 ? 1000 : (int)left_ms) < 0 && errno != EINTR)
            break;
        live_metrics_poll(self->live_metrics);
    }
    fleet_say(self->fleet, "%s; no longer serving the results",
              fleet_signals() ? "interrupted" : "the linger is over");
    fleet_release_signals();
}

void controller_destroy(controller_t **self_p) {
    controller_t *self = *self_p;
    if (!self)
        return;
    fleet_destroy(&self->fleet);
    live_metrics_destroy(&self->live_metrics);
    free(self);
    *self_p = NULL;
}
