#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "cli.h"
#include "config.h"
#include "controller.h"
#include "loop.h"
#include "report.h"
#include "slo.h"
#include "sweep.h"

/* The most a level waits for its requests after its window (then they are cancelled). */
#define CAPACITY_DRAIN_NS 30000000000LL
/* Too little of a level has run before this share to project its total (slo_clearly_lost). */
#define CAPACITY_WATCH_FROM 0.1

/* One run of a level, as the search saw it. */
typedef struct capacity_trial {
    double level; /* on the search's axis */
    bool pass;
    bool stopped_early;
    char why[256]; /* the binding SLO's label, or why the level was stopped early */
} capacity_trial_t;

/* The search as a sweep source, and what it keeps for the report. */
struct capacity_run {
    const config_t *cfg; /* the file: slo, capacity, warm-up and duration */
    capacity_t *search;
    double level; /* the level asked for last, on the search's axis */
    capacity_trial_t trials[CAPACITY_MAX_TRIALS];
    size_t n_trials;
    /* the watch: the repetition it is following, since when, and why it stopped one */
    size_t watch_index;
    uint32_t watch_rep;
    int64_t watch_from_ns;
    char lost[256];
    const char *out_dir; /* where results.json gets the search's analysis */
};

static const char *capacity_run_unit(config_axis_t axis) {
    return axis == CAPACITY_AXIS_CONCURRENCY ? "sessions"
           : axis == CAPACITY_AXIS_RATE      ? "sessions/s"
                                             : "requests/s";
}

/* The level's statistics as the SLO evaluation reads them. */
static slo_input_t capacity_run_input(const window_stats_t *w) {
    return (slo_input_t){.latency = w->latency,
                         .ok = w->ok,
                         .failed = w->failed,
                         .window_s = (double)w->duration_ns / 1e9};
}

/* Judges the level just run and tells the search. */
static void capacity_run_judge(capacity_run_t *self, const level_result_t *previous) {
    slo_result_t r;
    slo_input_t in = capacity_run_input(previous->pooled);
    slo_evaluate(&self->cfg->slo, &in, &r);
    capacity_trial_t *t = &self->trials[self->n_trials++];
    *t = (capacity_trial_t){.level = self->level,
                            .pass = r.pass && !previous->stopped_early,
                            .stopped_early = previous->stopped_early};
    if (previous->stopped_early)
        snprintf(t->why, sizeof t->why, "%s", self->lost);
    else if (r.binding >= 0)
        slo_label(&r.checks[r.binding].spec, t->why, sizeof t->why);
    capacity_report(self->search, self->level, t->pass, t->why);
    char margin[64] = "";
    if (!previous->stopped_early && r.binding >= 0 && r.checks[r.binding].measured)
        snprintf(margin, sizeof margin, ", margin %+.1f %%", r.checks[r.binding].margin * 100);
    fprintf(stderr, "capacity: %s %g %s: %s (%s%s%s)\n", config_axis_name(self->cfg->capacity.axis),
            self->level, capacity_run_unit(self->cfg->capacity.axis), t->pass ? "PASS" : "FAIL",
            previous->stopped_early ? "stopped early: " : "binding ", t->why, margin);
}

/* The sweep's next: the level the search asks for, as the fleet runs it. */
static int capacity_run_next(void *arg, const level_result_t *previous, level_spec_t *out) {
    capacity_run_t *self = arg;
    if (previous && previous->interrupted)
        return 0; /* a partial level says nothing about the boundary */
    if (previous)
        capacity_run_judge(self, previous);
    double level;
    if (!capacity_next(self->search, &level))
        return 0;
    self->level = level;
    self->lost[0] = '\0';
    const config_t *cfg = self->cfg;
    const config_capacity_t *c = &cfg->capacity;
    *out = (level_spec_t){
        .axis = c->axis == CAPACITY_AXIS_CONCURRENCY ? SWEEP_AXIS_CONCURRENCY : SWEEP_AXIS_RATE,
        .value = c->axis == CAPACITY_AXIS_RHO ? level / c->requests_per_session : level,
        .warmup_ns = cfg->warmup_ns,
        .snapshots = 1,
        .snapshot_ns = cfg->limits.duration_ns - cfg->warmup_ns,
        .drain_ns = CAPACITY_DRAIN_NS,
        .repeat = 1,
        .exclude_error_pct = 100, /* errors are the SLOs' to judge, not a reason to drop a run */
    };
    return 1;
}

/* The sweep's watch: stops a level whose SLOs are already lost. */
static bool capacity_run_watch(void *arg, const level_result_t *so_far) {
    capacity_run_t *self = arg;
    int64_t now = loop_now_ns();
    if (so_far->index != self->watch_index || so_far->repetitions != self->watch_rep ||
        !self->watch_from_ns) {
        self->watch_index = so_far->index;
        self->watch_rep = so_far->repetitions;
        self->watch_from_ns = now; /* the first call comes as the window opens */
        return false;
    }
    double progress = (double)(now - self->watch_from_ns) /
                      (double)(self->cfg->limits.duration_ns - self->cfg->warmup_ns);
    if (progress < CAPACITY_WATCH_FROM)
        return false;
    slo_input_t in = capacity_run_input(so_far->pooled);
    if (!slo_clearly_lost(&self->cfg->slo, &in, progress, self->lost, sizeof self->lost))
        return false;
    fprintf(stderr, "capacity: %s %g: stopping the level early: %s\n",
            config_axis_name(self->cfg->capacity.axis), self->level, self->lost);
    self->watch_from_ns = 0;
    return true;
}

static json_t *capacity_run_level_json(const capacity_level_t *l, bool with_binding) {
    if (!l)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "level", json_real(l->level));
    json_object_set_new(o, "passes", json_integer(l->passes));
    json_object_set_new(o, "runs", json_integer(l->passes + l->fails));
    if (with_binding)
        json_object_set_new(o, "binding", json_string(l->binding));
    return o;
}

/* "frontier passed 2 of 2 runs, first failing level failed 2 of 2". */
static void capacity_run_confidence(const capacity_summary_t *s, char *buf, size_t len) {
    int n = 0;
    buf[0] = '\0';
    if (s->frontier)
        n = snprintf(buf, len, "frontier passed %u of %u run%s", s->frontier->passes,
                     s->frontier->passes + s->frontier->fails,
                     s->frontier->passes + s->frontier->fails == 1 ? "" : "s");
    if (s->first_fail && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "%sfirst failing level failed %u of %u run%s",
                 n ? ", " : "", s->first_fail->fails, s->first_fail->passes + s->first_fail->fails,
                 s->first_fail->passes + s->first_fail->fails == 1 ? "" : "s");
}

/* Whether the search showed capacity.target carried: its frontier at or above it (yes), or its
 * first failing level at or below it (no); the target inside the final bracket is not shown
 * either way ("not shown"), and a search that passed nothing did not carry it. NULL: no target. */
static const char *capacity_run_target_verdict(const config_capacity_t *c,
                                               const capacity_summary_t *s) {
    if (!(c->target > 0))
        return NULL;
    if (s->frontier && s->frontier->level >= c->target)
        return "carried";
    if (!s->frontier || (s->first_fail && s->first_fail->level <= c->target))
        return "not carried";
    return "not shown";
}

static json_t *capacity_run_json(const capacity_run_t *self) {
    const config_capacity_t *c = &self->cfg->capacity;
    capacity_summary_t s;
    capacity_summary(self->search, &s);
    char confidence[256];
    capacity_run_confidence(&s, confidence, sizeof confidence);
    json_t *o = json_object();
    json_object_set_new(o, "axis", json_string(config_axis_name(c->axis)));
    json_object_set_new(o, "unit", json_string(capacity_run_unit(c->axis)));
    if (c->axis == CAPACITY_AXIS_RHO)
        json_object_set_new(o, "requests_per_session", json_real(c->requests_per_session));
    json_object_set_new(o, "outcome", json_string(capacity_state_name(s.state)));
    json_object_set_new(o, "frontier", capacity_run_level_json(s.frontier, false));
    json_object_set_new(o, "first_failing", capacity_run_level_json(s.first_fail, true));
    json_object_set_new(o, "bracket",
                        s.frontier && s.first_fail
                            ? json_real(s.first_fail->level - s.frontier->level)
                            : json_null());
    json_object_set_new(o, "precision", json_real(c->precision));
    json_object_set_new(o, "precision_relative", json_boolean(c->precision_relative));
    json_object_set_new(o, "confidence", json_string(confidence));
    const char *verdict = capacity_run_target_verdict(c, &s);
    json_object_set_new(o, "target", verdict ? json_real(c->target) : json_null());
    json_object_set_new(o, "target_verdict", verdict ? json_string(verdict) : json_null());
    json_t *trials = json_array();
    for (size_t i = 0; i < self->n_trials; i++) {
        const capacity_trial_t *t = &self->trials[i];
        json_array_append_new(trials,
                              json_pack("{s:f, s:b, s:s, s:b, s:o}", "level", t->level, "pass",
                                        t->pass, "binding", t->stopped_early ? "" : t->why,
                                        "stopped_early", t->stopped_early, "reason",
                                        t->stopped_early ? json_string(t->why) : json_null()));
    }
    json_object_set_new(o, "trials", trials);
    json_t *levels = json_array(); /* each level tried once, with its runs' verdicts pooled */
    for (size_t i = 0; i < capacity_levels(self->search); i++)
        json_array_append_new(levels,
                              capacity_run_level_json(capacity_level(self->search, i), true));
    json_object_set_new(o, "levels_tried", levels);
    return o;
}

static void capacity_run_print(const capacity_run_t *self, FILE *out) {
    const config_capacity_t *c = &self->cfg->capacity;
    const char *axis = config_axis_name(c->axis), *unit = capacity_run_unit(c->axis);
    capacity_summary_t s;
    capacity_summary(self->search, &s);
    char confidence[256];
    capacity_run_confidence(&s, confidence, sizeof confidence);
    fprintf(out, "\nCapacity (%s, %u runs):\n", axis, s.trials);
    switch (s.state) {
    case CAPACITY_MAX_PASSES:
        fprintf(out, "  every level up to max %g %s met the SLOs: the limit is above the range\n",
                c->max, unit);
        break;
    case CAPACITY_NONE_PASSES:
        fprintf(out, "  no level met the SLOs, down to %g %s\n",
                s.first_fail ? s.first_fail->level : 0, unit);
        break;
    case CAPACITY_TRIALS_SPENT:
        fprintf(out, "  the search did not settle within %u runs\n",
                c->max_trials ? c->max_trials : CAPACITY_MAX_TRIALS);
        break;
    default:
        break;
    }
    if (s.frontier)
        fprintf(out, "  frontier (highest passing):  %s %g %s\n", axis, s.frontier->level, unit);
    if (s.first_fail)
        fprintf(out, "  first failing:               %s %g %s (binding: %s)\n", axis,
                s.first_fail->level, unit, s.first_fail->binding);
    if (s.frontier && s.first_fail && c->precision_relative)
        fprintf(out, "  bracket %g %s (asked: at most %g %% of the frontier, %g)\n",
                s.first_fail->level - s.frontier->level, unit, c->precision,
                c->precision / 100 * s.frontier->level);
    else if (s.frontier && s.first_fail)
        fprintf(out, "  bracket %g %s (asked: at most %g)\n",
                s.first_fail->level - s.frontier->level, unit, c->precision);
    if (confidence[0])
        fprintf(out, "  confidence: %s\n", confidence);
    const char *verdict = capacity_run_target_verdict(c, &s);
    if (verdict)
        fprintf(out, "  target %s %g %s: %s%s\n", axis, c->target, unit, verdict,
                strcmp(verdict, "not shown") ? ""
                                             : " (inside the final bracket: narrow the precision)");
    size_t early = 0;
    for (size_t i = 0; i < self->n_trials; i++)
        early += self->trials[i].stopped_early;
    if (early)
        fprintf(out, "  %zu level%s stopped early once an SLO was clearly lost\n", early,
                early == 1 ? "" : "s");
}

/* analysis.capacity into the results.json the sweep wrote (which has each level's SLOs). */
static int capacity_run_write(const capacity_run_t *self, const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) {
        fprintf(stderr, "capacity: cannot read %s to add the search: %s\n", path, err.text);
        return -1;
    }
    json_t *analysis = json_object_get(root, "analysis");
    if (!json_is_object(analysis))
        json_object_set_new(root, "analysis", analysis = json_object());
    json_object_set_new(analysis, "capacity", capacity_run_json(self));
    int rc = report_write_json_root(root, path);
    if (rc != 0)
        fprintf(stderr, "capacity: cannot write %s: %s\n", path, strerror(errno));
    json_decref(root);
    return rc;
}

static void capacity_run_usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede capacity FILE [--workers N] [--target URL]... [--out DIR] [--trace]\n"
        "                         [--allow-invalid] [--no-preflight]\n"
        "       stampede capacity FILE --bind tcp://*:PORT --expect-workers N [--target URL]...\n"
        "                         [--out DIR] [--data-port P] [--register-timeout SECONDS]\n"
        "                         [--key FILE --authorized-keys DIR | --insecure]\n"
        "                         [--metrics-listen HOST:PORT [--linger DURATION]\n"
        "                          [--metrics-token-file FILE | --metrics-insecure]]\n"
        "                         [--print-report]\n"
        "  the highest rate, concurrency or normalised request rate (rho) at which every\n"
        "  SLO of FILE's slo: section holds, searched as FILE's capacity: section says\n"
        "  (exponential probing, bisection to the precision, repetitions near the\n"
        "  boundary); each level runs FILE's warmup then the rest of limits.duration.\n"
        "  The fleet is `stampede run`'s: N local workers (default 2) and, without a\n"
        "  target, the embedded mock with FILE's mock: options; with --bind it is\n"
        "  `stampede controller`'s: N remote `stampede worker`s connect to it (N to start;\n"
        "  a worker lost on the way, the next levels go on with those left). Results:\n"
        "  DIR/results.json (every level, analysis.capacity, analysis.slo); docs/slo.md.\n"
        "  A `veeksha capacity-search` file runs as it is: start_value, max_value,\n"
        "  expansion_factor, max_iterations, precision and its benchmark_config's SLOs\n"
        "  (docs/workloads.md, \"Veeksha files\").\n");
}

/* The workload file among argv's arguments (getopt as `stampede run` parses them), and the output
 * directory (--out, else the file's). 0 ok, 2 usage error, -1 help printed. */
static int capacity_run_args(int argc, char **argv, const char **file, const char **out,
                             bool *bind) {
    static const struct option longopts[] = {
        {"workers", required_argument, NULL, 'w'},
        CONTROLLER_SHARED_LONGOPTS,
        {"bind", required_argument, NULL, 'b'},
        {"expect-workers", required_argument, NULL, 'n'},
        {"data-port", required_argument, NULL, 'd'},
        {"register-timeout", required_argument, NULL, 'r'},
        {"key", required_argument, NULL, 'k'},
        {"authorized-keys", required_argument, NULL, 'a'},
        {"insecure", no_argument, NULL, 'i'},
        {"linger", required_argument, NULL, 'L'},
        {"print-report", no_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    *out = NULL;
    *bind = false;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "w:t:o:TPvb:n:d:r:h", longopts, NULL)) != -1) {
        *bind = *bind || c == 'b';
        if (c == 'h') {
            capacity_run_usage(stdout);
            return -1;
        }
        if (c == '?') {
            fprintf(stderr, "capacity: unknown option '%s'\n", argv[optind - 1]);
            capacity_run_usage(stderr);
            return 2;
        }
        if (c == 'o')
            *out = optarg;
    }
    opterr = 1;
    if (optind != argc - 1) {
        fprintf(stderr, "capacity: exactly one workload FILE is required\n");
        capacity_run_usage(stderr);
        return 2;
    }
    *file = argv[optind];
    return 0;
}

/* A file the search can run: SLOs to judge, and levels of a fixed length. */
static int capacity_run_check(const char *file, const config_t *cfg) {
    if (cfg->slo.n == 0) {
        fprintf(stderr,
                "capacity: %s has no slo: section; the search needs SLOs to judge each "
                "level (docs/slo.md)\n",
                file);
        return -1;
    }
    if (cfg->sweep.axis != SWEEP_AXIS_NONE) {
        fprintf(stderr,
                "capacity: %s has a sweep: section; the search chooses the levels itself "
                "(drop the sweep, give warmup and limits.duration for each level)\n",
                file);
        return -1;
    }
    if (cfg->limits.duration_ns <= 0) {
        fprintf(stderr,
                "capacity: %s: each level runs warmup then the rest of limits.duration; "
                "give limits.duration\n",
                file);
        return -1;
    }
    if (!cfg->capacity.given)
        fprintf(stderr,
                "capacity: note: %s has no capacity: section; searching the rate from "
                "%g to %g sessions/s to %g %%\n",
                file, cfg->capacity.start, cfg->capacity.max, cfg->capacity.precision);
    return 0;
}

int capacity_run_finish(void *arg, int rc) {
    capacity_run_t *self = arg;
    if (self->n_trials == 0)
        return 0;
    capacity_run_print(self, stdout);
    return capacity_run_write(self, self->out_dir) != 0 ? 1 : 0;
}

capacity_run_t *capacity_run_open(const char *file, const config_t *cfg, const char *out_dir,
                                  sweep_source_t *source) {
    if (capacity_run_check(file, cfg) != 0)
        return NULL;
    const config_capacity_t *c = &cfg->capacity;
    capacity_params_t params = {.start = c->start,
                                .max = c->max,
                                .precision = c->precision,
                                .precision_relative = c->precision_relative,
                                .integer = c->axis == CAPACITY_AXIS_CONCURRENCY,
                                .repeat_near_boundary = c->repeat_near_boundary,
                                .expansion = c->expansion,
                                .max_trials = c->max_trials};
    capacity_run_t *self = calloc(1, sizeof *self);
    if (!self || !(self->search = capacity_new(&params))) {
        fprintf(stderr, "capacity: out of memory\n");
        free(self);
        return NULL;
    }
    self->cfg = cfg;
    self->out_dir = out_dir ? out_dir : cfg->output.dir ? cfg->output.dir : "results";
    *source = (sweep_source_t){.next = capacity_run_next, .watch = capacity_run_watch, .arg = self};
    return self;
}

void capacity_run_close(capacity_run_t **self_p) {
    capacity_run_t *self = *self_p;
    if (!self)
        return;
    capacity_destroy(&self->search);
    free(self);
    *self_p = NULL;
}

int capacity_main(int argc, char **argv) {
    const char *file, *out_dir;
    bool bind;
    int rc = capacity_run_args(argc, argv, &file, &out_dir, &bind);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    config_t cfg;
    config_error_t err;
    if (config_load_file(&cfg, file, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "capacity: %s\n", msg);
        return 1;
    }
    sweep_source_t source;
    capacity_run_t *self = capacity_run_open(file, &cfg, out_dir, &source);
    if (!self)
        rc = 1;
    else if (bind) /* written before a --linger serves them */
        rc = controller_main_after(argc, argv, &source, capacity_run_finish, self);
    else if ((rc = run_main_source(argc, argv, &source)) == 0)
        rc = capacity_run_finish(self, rc);
    else
        capacity_run_finish(self, rc);
    capacity_run_close(&self);
    config_free(&cfg);
    return rc;
}
