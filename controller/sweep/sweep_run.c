#include "sweep_run.h"

#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drain.h"
#include "loop.h"
#include "losses.h"
#include "outfile.h"
#include "report.h"
#include "report_network.h"
#include "results.h"
#include "slo.h"
#include "sweep_pool.h"
#include "sweep_report.h"
#include "telemetry_run.h"
#include "units.h"
#include "window.h"

/* Rows of figures (one per repetition, or per snapshot), grown as they come. */
typedef struct sweep_rows {
    double (*rows)[SWEEP_FIG__COUNT];
    size_t n;
    size_t cap;
} sweep_rows_t;

struct sweep_run {
    fleet_t *fleet;
    run_options_t options; /* the first repetition's (every repetition's are the same) */
    measurement_t *run;    /* the repetition being run (NULL outside one) */
    config_t cfg; /* the file's, sweep section included; output.dir is the sweep's directory */
    const char *config_path;
    char label[64]; /* its lines' prefix, or "" */
    char
        *server_said; /* what the endpoints said of themselves at the last repetition's preflight */
    sweep_list_t list;
    sweep_source_t own;
    const sweep_source_t *source;
    int64_t start_unix_ns; /* of the first repetition */

    /* The level being run. */
    level_spec_t spec;
    size_t index;     /* 0-based */
    bool have_level;  /* spec holds a level not yet ended */
    uint32_t rep;     /* 1-based, the repetition being run */
    window_t *window; /* the repetition's, from its start */
    int64_t start_ns; /* the repetition's start (controller clock) */
    int64_t window_end_ns;
    telemetry_mark_t *snap_marks; /* server scrape marks at the snapshots' edges (count + 1) */
    uint32_t n_snap_marks;        /* 0: no server scrape */
    int64_t stop_ns; /* when the repetition was told to stop early (drain bound, watch); 0 none */
    bool drained, stopped_early;
    int64_t next_watch_ns;
    window_stats_t pooled;        /* the kept repetitions */
    window_stats_t pooled_all;    /* every repetition (the level's figures when none is kept) */
    slo_goodput_t good, good_all; /* goodput of the same (each repetition's, controller/slo.h) */
    sweep_pool_t pool, pool_all;  /* roles, sessions, decode overlap, series of the same */
    uint32_t reps_run, valid;
    bool any_stopped_early;
    sweep_rows_t rep_rows;  /* kept repetitions' window figures */
    sweep_rows_t snap_rows; /* kept repetitions' snapshot figures */
    json_t *reps;
    json_t *level_reasons;
    json_t *server;  /* the last valid repetition's {"server", "gap"} (NULL: none scraped) */
    json_t *workers; /* the repetitions' workers (registry_run_json), pooled: the fewest started
                        and carried it, the joins and losses added up */
    uint32_t server_rep;
    level_result_t previous; /* handed to next(); its pooled stays valid until then */
    bool has_previous;

    /* The finished levels. */
    json_t *levels;
    level_spec_t *specs;
    sweep_report_level_t *done;
    size_t n_done;
    bool interrupted;

    /* For the whole sweep's remaining time: repetitions finished and their span, gaps included. */
    int64_t first_start_ns, last_end_ns;
    uint32_t reps_finished;
};

/* Says a line as the fleet says its lines; without a fleet (a simulation), on stderr. */
static void sweep_run_say(sweep_run_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sweep_run_say(sweep_run_t *self, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *colon = self->label[0] ? ": " : "";
    if (self->fleet)
        fleet_say(self->fleet, "%s%s%s", self->label, colon, msg);
    else
        fprintf(stderr, "%s: %s%s%s\n", self->options.name ? self->options.name : "sweep",
                self->label, colon, msg);
}

void sweep_run_set_label(sweep_run_t *self, const char *label) {
    snprintf(self->label, sizeof self->label, "%s", label ? label : "");
}

static int sweep_rows_push(sweep_rows_t *rows, const double figures[SWEEP_FIG__COUNT]) {
    if (rows->n == rows->cap) {
        size_t cap = rows->cap ? rows->cap * 2 : 8;
        void *grown = realloc(rows->rows, cap * sizeof *rows->rows);
        if (!grown)
            return -1;
        rows->rows = grown;
        rows->cap = cap;
    }
    memcpy(rows->rows[rows->n++], figures, sizeof rows->rows[0]);
    return 0;
}

sweep_run_t *sweep_run_new(fleet_t *fleet, const measurement_t *first,
                           const sweep_source_t *source) {
    sweep_run_t *self = calloc(1, sizeof *self);
    if (!self || config_copy(&self->cfg, &first->cfg) != 0) {
        free(self);
        if (fleet)
            fleet_say(fleet, "out of memory setting up the sweep of %s", first->config_path);
        else
            fprintf(stderr, "out of memory setting up the sweep of %s\n", first->config_path);
        return NULL;
    }
    self->fleet = fleet;
    self->options = first->options;
    self->config_path = first->config_path;
    if (source) {
        self->source = source;
    } else {
        self->own = sweep_list_source(&self->list, &self->cfg.sweep);
        self->source = &self->own;
    }
    self->levels = json_array();
    return self;
}

static void sweep_run_level_free(sweep_run_t *self) {
    window_destroy(&self->window);
    free(self->snap_marks);
    self->snap_marks = NULL;
    self->n_snap_marks = 0;
    window_stats_free(&self->pooled);
    window_stats_free(&self->pooled_all);
    sweep_pool_free(&self->pool);
    sweep_pool_free(&self->pool_all);
    free(self->rep_rows.rows);
    free(self->snap_rows.rows);
    self->rep_rows = (sweep_rows_t){0};
    self->snap_rows = (sweep_rows_t){0};
    json_decref(self->reps);
    json_decref(self->level_reasons);
    json_decref(self->server);
    json_decref(self->workers);
    self->reps = self->level_reasons = self->server = self->workers = NULL;
    self->server_rep = 0;
}

void sweep_run_destroy(sweep_run_t **self_p) {
    sweep_run_t *self = *self_p;
    if (!self)
        return;
    sweep_run_level_free(self);
    json_decref(self->levels);
    free(self->specs);
    free(self->done);
    config_free(&self->cfg);
    free(self->server_said);
    free(self);
    *self_p = NULL;
}

/* Why a level the source gave cannot run, or NULL when it can. */
static const char *sweep_run_bad_spec(const level_spec_t *s) {
    if (s->axis != SWEEP_AXIS_CONCURRENCY && s->axis != SWEEP_AXIS_RATE)
        return "its axis is neither concurrency nor rate";
    if (!(s->value > 0) || (s->axis == SWEEP_AXIS_CONCURRENCY &&
                            (s->value != floor(s->value) || s->value > UINT32_MAX)))
        return "its value is not a positive level";
    if (s->snapshots == 0 || s->snapshot_ns <= 0)
        return "it has no measurement window (snapshots x duration)";
    if (s->repeat == 0 || s->warmup_ns < 0 || s->drain_ns < 0)
        return "its repeat, warm-up or drain is out of range";
    return NULL;
}

int sweep_run_next_level(sweep_run_t *self) {
    level_spec_t next;
    int got =
        self->source->next(self->source->arg, self->has_previous ? &self->previous : NULL, &next);
    sweep_run_level_free(self);
    self->has_previous = false;
    if (got <= 0)
        return got;
    const char *bad = sweep_run_bad_spec(&next);
    if (bad) {
        sweep_run_say(self, "the sweep's level %zu cannot run: %s", self->n_done + 1, bad);
        return -1;
    }
    self->spec = next;
    self->index = self->n_done;
    self->have_level = true;
    self->reps_run = self->valid = 0;
    self->good = self->good_all = (slo_goodput_t){0};
    self->any_stopped_early = false;
    self->reps = json_array();
    self->level_reasons = json_array();
    size_t n_endpoints = self->cfg.target.n_endpoints;
    if (window_stats_init(&self->pooled) != 0 || window_stats_init(&self->pooled_all) != 0 ||
        sweep_pool_init(&self->pool, n_endpoints) != 0 ||
        sweep_pool_init(&self->pool_all, n_endpoints) != 0) {
        sweep_run_say(self, "out of memory for the sweep's level %zu", self->index + 1);
        return -1;
    }
    char planned[32] = "";
    if (self->source->planned)
        snprintf(planned, sizeof planned, "/%zu", self->source->planned);
    char cap[64] = "";
    if (self->spec.rate_cap > 0)
        snprintf(cap, sizeof cap, ", at most %g session starts/s", self->spec.rate_cap);
    sweep_run_say(self, "level %zu%s: %s %g%s, %u repetition%s", self->index + 1, planned,
                  sweep_report_axis_key(&self->spec), self->spec.value, cap,
                  (unsigned)self->spec.repeat, self->spec.repeat == 1 ? "" : "s");
    return 1;
}

const level_spec_t *sweep_run_spec(const sweep_run_t *self) {
    return &self->spec;
}

/* "NN-c50" or "NN-r2.5": the level's directory name. */
static void sweep_run_level_name(const sweep_run_t *self, char *buf, size_t len) {
    snprintf(buf, len, "%02zu-%s%g", self->index + 1,
             self->spec.axis == SWEEP_AXIS_RATE ? "r" : "c", self->spec.value);
}

/* The repetition's policy and sink (arg is the sweep): a limit stops the level, the verdict ends
 * the repetition, every record goes to its window. */
static void policy_stop(void *arg, measurement_t *run, const char *why) {
    (void)run;
    sweep_run_stop_early(arg, loop_now_ns(), why);
}

static void policy_end(void *arg, const measurement_t *run, const validity_t *validity,
                       const char *stop_reason, bool interrupted, json_t *server) {
    (void)run;
    sweep_run_end_repetition(arg, validity, stop_reason, interrupted, server);
}

static void sink_open(void *arg, const measurement_t *run) {
    sweep_run_start(arg, run);
}

static void sink_record(void *arg, const measurement_t *run, const request_record_t *rec,
                        const metrics_t *m) {
    (void)run;
    sweep_run_record(arg, rec, m);
}

int sweep_run_prepare(sweep_run_t *self, measurement_t *run, uint32_t rep) {
    char level[64], dir[4096];
    sweep_run_level_name(self, level, sizeof level);
    snprintf(dir, sizeof dir, "%s/levels/%s/rep-%u", self->cfg.output.dir, level, (unsigned)rep);
    sweep_apply_level(&run->cfg, &self->spec);
    sweep_apply_text(&run->cfg, &self->cfg, self->index, rep);
    free(run->cfg.output.dir);
    run->cfg.output.dir = strdup(dir);
    free(run->config_yaml);
    run->config_yaml = config_to_yaml_unredacted(&run->cfg);
    if (!run->cfg.output.dir || !run->config_yaml) {
        sweep_run_say(self, "out of memory setting up %s", dir);
        return -1;
    }
    if (outfile_make_dir(dir) != 0) {
        sweep_run_say(self, "cannot create the output directory %s: %s", dir, strerror(errno));
        return -1;
    }
    self->rep = rep;
    /* the workers expected of this repetition (a rig's share may change at a level) */
    self->options.expect_workers = run->options.expect_workers;
    self->stop_ns = self->next_watch_ns = 0;
    self->drained = self->stopped_early = false;
    self->run = run;
    run->policy = (run_policy_t){.stop = policy_stop, .end = policy_end, .arg = self};
    if (measurement_add_sink(
            run, (run_sink_t){.open = sink_open, .record = sink_record, .arg = self}) != 0) {
        sweep_run_say(self, "the run of %s has no room for the sweep's window", dir);
        return -1;
    }
    return 0;
}

/* With server metrics on: a scrape mark at every snapshot edge (the window's opening is the run's
 * own first mark; the window's end gets one, before the drain). */
static void sweep_run_mark_snapshots(sweep_run_t *self, const measurement_t *run, int64_t opens) {
    free(self->snap_marks);
    self->snap_marks = NULL;
    self->n_snap_marks = 0;
    if (!run->telemetry)
        return;
    uint32_t n = self->spec.snapshots;
    if (!(self->snap_marks = calloc((size_t)n + 1, sizeof *self->snap_marks)))
        return;
    self->snap_marks[0] = run->window_opens;
    for (uint32_t i = 1; i <= n; i++) {
        char label[48];
        snprintf(label, sizeof label, i < n ? "snapshot-%u-start" : "window-edge", i + 1);
        self->snap_marks[i] =
            telemetry_mark(run->telemetry, opens + (int64_t)i * self->spec.snapshot_ns, label);
    }
    self->n_snap_marks = n + 1;
}

void sweep_run_start(sweep_run_t *self, const measurement_t *run) {
    window_destroy(&self->window);
    self->start_ns = run->start_ns;
    if (!self->first_start_ns)
        self->first_start_ns = run->start_ns;
    if (!self->start_unix_ns)
        self->start_unix_ns = run->start_unix_ns;
    int64_t opens = run->start_ns + self->spec.warmup_ns;
    self->window_end_ns = opens + (int64_t)self->spec.snapshots * self->spec.snapshot_ns;
    self->window = window_new(opens, self->spec.snapshot_ns, self->spec.snapshots);
    sweep_run_mark_snapshots(self, run, opens);
    if (!self->window)
        sweep_run_say(self,
                      "out of memory for the window of level %zu: its repetition %u "
                      "has no snapshots",
                      self->index + 1, (unsigned)self->rep);
}

void sweep_run_record(sweep_run_t *self, const request_record_t *rec, const metrics_t *m) {
    if (self->window)
        window_add(self->window, rec, m);
}

/* The repetition so far, as watch sees it. */
static void sweep_run_so_far(const sweep_run_t *self, level_result_t *out) {
    *out = (level_result_t){.spec = &self->spec,
                            .index = self->index,
                            .repetitions = self->rep,
                            .valid = self->valid,
                            .pooled = window_total(self->window)};
}

void sweep_run_step(sweep_run_t *self, int64_t now) {
    measurement_t *run = self->run;
    if (!run || run->phase != PHASE_RUN || run->stopping || !self->start_ns)
        return;
    if (!self->drained && now >= self->window_end_ns + self->spec.drain_ns) {
        self->drained = true;
        self->stop_ns = now;
        sweep_run_say(self,
                      "level %zu: the drain's bound (%.0f s) ran out; cancelling what is "
                      "still in flight",
                      self->index + 1, (double)self->spec.drain_ns / 1e9);
        drain_stop(run, "the level's drain ran out");
        return;
    }
    int64_t opens = self->start_ns + self->spec.warmup_ns;
    if (!self->source->watch || !self->window || now < opens || now >= self->window_end_ns ||
        now < self->next_watch_ns)
        return;
    self->next_watch_ns = now + 1000000000LL;
    level_result_t so_far;
    sweep_run_so_far(self, &so_far);
    if (self->source->watch(self->source->arg, &so_far))
        sweep_run_stop_early(self, now, "stopped early by the sweep's source");
}

void sweep_run_stop_early(sweep_run_t *self, int64_t now, const char *why) {
    self->stopped_early = self->any_stopped_early = true;
    self->stop_ns = now;
    sweep_run_say(self, "level %zu: %s", self->index + 1, why);
    merge_mark_partial(self->run->merge, why);
    drain_stop(self->run, why);
}

void sweep_run_stopped(sweep_run_t *self, int64_t now) {
    if (!self->stop_ns)
        self->stop_ns = now;
}

/* About how long the rest of the sweep takes, into buf (" | sweep about 2 h 10 min left"; ""
 * when the number of levels is not known): what is left of this repetition, then every
 * repetition not yet run at the mean span of those finished, the gaps between them included (the
 * level's planned warm-up and window before the first has finished). */
static void sweep_run_eta(const sweep_run_t *self, int64_t rep_left_ns, char *buf, size_t len) {
    buf[0] = '\0';
    size_t planned = self->source->planned;
    if (!planned || self->index >= planned)
        return;
    uint64_t reps_left = (uint64_t)(planned - self->index - 1) * self->spec.repeat +
                         (self->spec.repeat > self->rep ? self->spec.repeat - self->rep : 0);
    int64_t per =
        self->reps_finished
            ? (self->last_end_ns - self->first_start_ns) / self->reps_finished
            : self->spec.warmup_ns + (int64_t)self->spec.snapshots * self->spec.snapshot_ns;
    char human[48];
    units_format_human(rep_left_ns + (int64_t)reps_left * per, human, sizeof human);
    snprintf(buf, len, " | sweep about %s left", human);
}

void sweep_run_live_line(const sweep_run_t *self, int64_t now, const live_t *live, char *buf,
                         size_t len) {
    char level[48], phase[48];
    if (self->source->planned)
        snprintf(level, sizeof level, "level %zu/%zu", self->index + 1, self->source->planned);
    else
        snprintf(level, sizeof level, "level %zu", self->index + 1);
    int64_t total = self->spec.warmup_ns + (int64_t)self->spec.snapshots * self->spec.snapshot_ns;
    int64_t opens = self->start_ns + self->spec.warmup_ns, elapsed = 0, remaining = total;
    if (!self->start_ns) {
        snprintf(phase, sizeof phase, "starting");
    } else if (now < opens) {
        snprintf(phase, sizeof phase, "warm-up");
    } else if (now < self->window_end_ns) {
        snprintf(phase, sizeof phase, "snapshot %lld/%u",
                 (long long)((now - opens) / self->spec.snapshot_ns) + 1,
                 (unsigned)self->spec.snapshots);
    } else {
        snprintf(phase, sizeof phase, "drain");
        total = self->spec.drain_ns; /* the drain's own clock: at most drain */
        elapsed = now - self->window_end_ns;
    }
    if (self->start_ns && now < self->window_end_ns)
        elapsed = now - self->start_ns;
    remaining = total - elapsed > 0 ? total - elapsed : 0;
    /* TTFT p50 over the window so far (exact), else the last seconds' (warm-up) */
    const window_stats_t *w = self->window ? window_total(self->window) : NULL;
    double ttft = w ? window_stats_percentile_ms(w, METRIC_TTFT, 50) : -1;
    if (ttft < 0)
        ttft = live->ttft_p50_ms;
    char ttft_text[32] = "-";
    if (ttft >= 0)
        report_format_ms(ttft_text, sizeof ttft_text, ttft);
    char in_flight[64], eta[96];
    report_live_in_flight(live, in_flight, sizeof in_flight);
    /* in the drain, the level's remaining is the drain's bound */
    sweep_run_eta(self, remaining, eta, sizeof eta);
    snprintf(buf, len,
             "%s %s %g rep %u/%u | %s %.0f s, %.0f s left%s | %s | %.1f req/s | TTFT p50 %s ms | "
             "%" PRIu64 " errors",
             level, sweep_report_axis_key(&self->spec), self->spec.value, (unsigned)self->rep,
             (unsigned)self->spec.repeat, phase, (double)elapsed / 1e9, (double)remaining / 1e9,
             eta, in_flight, live->requests_per_s, ttft_text, live->requests_failed);
}

/* {"index", "start_s", ...stats} of snapshot i of the window (start from the run's start). */
static json_t *sweep_run_snapshot_json(const sweep_run_t *self, uint32_t i) {
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer((json_int_t)i));
    json_object_set_new(
        o, "start_s", json_real((double)(window_edge_ns(self->window, i) - self->start_ns) / 1e9));
    json_object_update_new(o, sweep_report_stats_json(window_snapshot(self->window, i)));
    const measurement_t *run = self->run;
    if (i + 1 < self->n_snap_marks && run && run->telemetry)
        json_object_set_new(
            o, "server",
            telemetry_run_between_json(run, self->snap_marks[i], self->snap_marks[i + 1]));
    return o;
}

static json_t *sweep_run_validity_json(const validity_t *v) {
    json_t *reasons = json_array();
    for (size_t i = 0; i < v->n_reasons; i++)
        json_array_append_new(reasons, json_string(v->reasons[i]));
    return json_pack("{s:b, s:o}", "valid", v->valid, "reasons", reasons);
}

/* Pools a repetition's workers (registry_run_json) into the level's. */
static void sweep_run_pool_workers(sweep_run_t *self, json_t *rep) {
    if (!self->workers) {
        self->workers = json_deep_copy(rep);
        return;
    }
    static const char *const fewest[] = {"started", "carried_by"};
    static const char *const added[] = {"joined", "lost"};
    for (size_t i = 0; i < 2; i++) {
        json_int_t a = json_integer_value(json_object_get(self->workers, fewest[i]));
        json_int_t b = json_integer_value(json_object_get(rep, fewest[i]));
        json_object_set_new(self->workers, fewest[i], json_integer(a < b ? a : b));
        a = json_integer_value(json_object_get(self->workers, added[i]));
        b = json_integer_value(json_object_get(rep, added[i]));
        json_object_set_new(self->workers, added[i], json_integer(a + b));
    }
}

void sweep_run_end_repetition(sweep_run_t *self, const validity_t *validity,
                              const char *stop_reason, bool interrupted, json_t *server) {
    if (!self->window)
        return;
    /* A window the run did not fill is cut where the load stopped: at the stop (watch,
     * interrupt), or at the last end when a count limit ended the run first. */
    if (self->stopped_early || interrupted)
        window_close(self->window, self->stop_ns ? self->stop_ns : loop_now_ns());
    else if (stop_reason && strcmp(stop_reason, "duration reached") != 0)
        window_close(self->window, window_last_end_ns(self->window));
    const window_stats_t *total = window_total(self->window);
    double figures[SWEEP_FIG__COUNT];
    sweep_report_figures(total, figures);
    double error_pct = window_stats_error_pct(total);
    bool excluded = error_pct > self->spec.exclude_error_pct;
    self->reps_run++;
    const measurement_t *run = self->run;
    if (run->server_said) { /* results.json's served_by, written after the run is gone */
        free(self->server_said);
        self->server_said = strdup(run->server_said);
    }
    window_stats_pool(&self->pooled_all, total);
    slo_goodput_pool(&self->good_all, &run->goodput);
    if (sweep_pool_add(&self->pool_all, run->merge, run->client_series, self->rep) != 0 ||
        (!excluded && sweep_pool_add(&self->pool, run->merge, run->client_series, self->rep) != 0))
        sweep_run_say(self,
                      "out of memory pooling level %zu's roles and sessions: its tables lack "
                      "repetition %u",
                      self->index + 1, (unsigned)self->rep);
    if (!excluded) {
        self->valid++;
        window_stats_pool(&self->pooled, total);
        slo_goodput_pool(&self->good, &run->goodput);
        sweep_rows_push(&self->rep_rows, figures);
    }
    json_t *snapshots = json_array();
    for (uint32_t i = 0; i < window_snapshots(self->window); i++) {
        double row[SWEEP_FIG__COUNT];
        sweep_report_figures(window_snapshot(self->window, i), row);
        if (!excluded)
            sweep_rows_push(&self->snap_rows, row);
        json_array_append_new(snapshots, sweep_run_snapshot_json(self, i));
    }
    char level[64], path[4096], why[200] = "";
    sweep_run_level_name(self, level, sizeof level);
    snprintf(path, sizeof path, "levels/%s/rep-%u/results.json", level, (unsigned)self->rep);
    if (excluded)
        snprintf(why, sizeof why, "%.2f %% errors, above exclude_error_pct %g", error_pct,
                 self->spec.exclude_error_pct);
    json_t *rep = json_object();
    json_object_set_new(rep, "repetition", json_integer(self->rep));
    char text_seed[24]; /* a 64-bit seed: as text, since JSON integers stop at 2^53 in many readers
                         */
    snprintf(text_seed, sizeof text_seed, "%" PRIu64, config_text_seed(&run->cfg));
    json_object_set_new(rep, "text_seed", json_string(text_seed));
    json_object_set_new(rep, "excluded", json_boolean(excluded));
    json_object_set_new(rep, "excluded_reason", excluded ? json_string(why) : json_null());
    json_object_set_new(rep, "interrupted", json_boolean(interrupted));
    json_object_set_new(rep, "stopped_early", json_boolean(self->stopped_early));
    json_object_set_new(rep, "drain_cut", json_boolean(self->drained));
    json_object_set_new(rep, "stop_reason", json_string(stop_reason ? stop_reason : ""));
    json_object_set_new(rep, "results", json_string(path));
    json_object_set_new(rep, "validity", sweep_run_validity_json(validity));
    json_object_set_new(rep, "window", sweep_report_stats_json(total));
    json_object_set_new(rep, "snapshots", snapshots);
    json_t *workers = losses_workers_json(run);
    sweep_run_pool_workers(self, workers);
    json_object_set_new(rep, "workers", workers);
    json_t *none = json_null();
    json_object_set(rep, "server", server ? json_object_get(server, "server") : none);
    json_object_set(rep, "gap", server ? json_object_get(server, "gap") : none);
    json_decref(none);
    if (server && (!excluded || !self->server)) {
        json_decref(self->server);
        self->server = json_incref(server);
        self->server_rep = self->rep;
    }
    json_array_append_new(self->reps, rep);
    for (size_t i = 0; i < validity->n_reasons; i++) {
        char reason[VALIDITY_REASON_LEN + 32];
        snprintf(reason, sizeof reason, "repetition %u: %s", (unsigned)self->rep,
                 validity->reasons[i]);
        json_array_append_new(self->level_reasons, json_string(reason));
    }
    char ttft[32] = "-", tpot[32] = "-";
    if (!isnan(figures[SWEEP_FIG_TTFT_P50]))
        report_format_ms(ttft, sizeof ttft, figures[SWEEP_FIG_TTFT_P50]);
    if (!isnan(figures[SWEEP_FIG_TPOT_P50]))
        report_format_ms(tpot, sizeof tpot, figures[SWEEP_FIG_TPOT_P50]);
    sweep_run_say(self,
                  "level %zu (%s %g) repetition %u/%u: TTFT p50 %s ms, TPOT p50 %s ms, %.2f %% "
                  "errors, %.3f conversations/s%s%s",
                  self->index + 1, sweep_report_axis_key(&self->spec), self->spec.value,
                  (unsigned)self->rep, (unsigned)self->spec.repeat, ttft, tpot, error_pct,
                  figures[SWEEP_FIG_ACTUAL_RPS], excluded ? "; excluded: " : "", why);
    window_destroy(&self->window);
    self->start_ns = 0;
    self->run = NULL;
    self->reps_finished++;
    self->last_end_ns = loop_now_ns();
}

/* The level's object in results.json. */
static json_t *sweep_run_level_json(sweep_run_t *self, bool interrupted,
                                    const window_stats_t *figures_from) {
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer((json_int_t)self->index));
    json_object_set_new(o, sweep_report_axis_key(&self->spec),
                        sweep_report_value_json(self->spec.value));
    json_object_set_new(o, "rate_cap",
                        self->spec.rate_cap > 0 ? json_real(self->spec.rate_cap) : json_null());
    json_object_set_new(o, "interrupted", json_boolean(interrupted));
    json_object_set_new(o, "stopped_early", json_boolean(self->any_stopped_early));
    json_object_set_new(o, "repetitions_run", json_integer(self->reps_run));
    json_object_set_new(o, "workers", self->workers ? json_incref(self->workers) : json_null());
    json_object_set_new(o, "valid_runs", json_integer(self->valid));
    char label[32];
    snprintf(label, sizeof label, "%u/%u", (unsigned)self->valid, (unsigned)self->reps_run);
    json_object_set_new(o, "valid_runs_label", json_string(label));
    json_object_set_new(o, "pooled_over", json_string(self->valid ? "valid" : "all"));
    json_object_update_new(o, sweep_report_stats_json(figures_from));
    report_add_buckets(o, (const histogram_t *const *)figures_from->latency);
    json_object_set_new(
        o, "snapshot_mean",
        sweep_report_mean_json((const double(*)[SWEEP_FIG__COUNT])self->snap_rows.rows,
                               self->snap_rows.n));
    json_object_set_new(
        o, "stability",
        sweep_report_stability_json((const double(*)[SWEEP_FIG__COUNT])self->snap_rows.rows,
                                    self->snap_rows.n));
    json_object_set_new(
        o, "across_repetitions",
        sweep_report_across_json((const double(*)[SWEEP_FIG__COUNT])self->rep_rows.rows,
                                 self->rep_rows.n));
    json_object_set_new(o, "reference", sweep_report_reference_json(&self->spec, figures_from));
    /* roles, sessions, decode overlap: pooled over the same repetitions as the figures above */
    report_meta_t meta = {.role_names = (const char *const *)self->cfg.workload.roles,
                          .n_role_names = self->cfg.workload.n_roles};
    sweep_pool_json(self->valid ? &self->pool : &self->pool_all, o, &meta);
    bool valid = self->valid > 0 && json_array_size(self->level_reasons) == 0 && !interrupted;
    if (self->valid == 0 && self->reps_run > 0)
        json_array_append_new(self->level_reasons,
                              json_string("every repetition was excluded (errors above "
                                          "exclude_error_pct)"));
    if (interrupted)
        json_array_append_new(self->level_reasons, json_string("interrupted"));
    json_object_set_new(o, "validity",
                        json_pack("{s:b, s:O}", "valid", valid, "reasons", self->level_reasons));
    json_object_set_new(o, "repetitions", json_incref(self->reps));
    /* The server scrape (telemetry) of one repetition: the last valid one (or the last, when
     * every one was excluded). Each repetition's own is in repetitions[]. */
    json_t *none = json_null();
    json_object_set(o, "server", self->server ? json_object_get(self->server, "server") : none);
    json_object_set(o, "gap", self->server ? json_object_get(self->server, "gap") : none);
    json_decref(none);
    json_object_set_new(o, "server_from_repetition",
                        self->server ? json_integer(self->server_rep) : json_null());
    return o;
}

/* The finished levels, their specs pointing into self->specs (moved by realloc). */
static const sweep_report_level_t *sweep_run_done(sweep_run_t *self) {
    for (size_t i = 0; i < self->n_done; i++)
        self->done[i].spec = &self->specs[i];
    return self->done;
}

/* results.json of the sweep so far. 0 ok, -1 after saying why. */
static int sweep_run_write(sweep_run_t *self, bool final) {
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_integer(REPORT_SCHEMA_VERSION));
    json_object_set_new(root, "generator", json_string("stampede"));
    json_object_set_new(root, "kind", json_string("sweep"));
    bool partial = self->interrupted || !final;
    json_object_set_new(root, "partial", json_boolean(partial));
    json_object_set_new(root, "served_by",
                        report_served_by_json(self->options.simulated_profile, self->server_said));
    if (self->options.simulation)
        report_simulation_mark(root, self->options.simulation);
    json_t *run = json_object();
    json_object_set_new(run, "config", json_string(self->config_path));
    json_object_set_new(run, "seed", json_integer((json_int_t)self->cfg.seed));
    json_object_set_new(run, "workers", json_integer(self->options.expect_workers));
    if (self->start_unix_ns) {
        char when[40];
        time_t seconds = (time_t)(self->start_unix_ns / 1000000000LL);
        struct tm tm;
        gmtime_r(&seconds, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_set_new(run, "start_time", json_string(when));
    }
    json_object_set_new(run, "stop_reason",
                        json_string(self->interrupted ? "interrupted"
                                    : final           ? "completed"
                                                      : "in progress"));
    json_t *urls = json_array();
    for (size_t i = 0; i < self->cfg.target.n_endpoints; i++)
        json_array_append_new(urls, json_string(self->cfg.target.endpoints[i]));
    json_object_set_new(run, "endpoint_urls", urls);
    json_object_set_new(run, "routing", json_string(config_routing_name(self->cfg.target.routing)));
    json_object_set_new(run, "network", report_network_json(&self->cfg.target));
    if (self->cfg.deployment) /* the file's deployment: map, verbatim, for the reports */
        json_object_set_new(run, "deployment", json_loads(self->cfg.deployment, 0, NULL));
    json_object_set_new(root, "run", run);
    const config_sweep_t *s = &self->cfg.sweep;
    json_t *sweep = json_object();
    json_object_set_new(sweep, "source", json_string(self->source == &self->own ? "list" : "hook"));
    json_object_set_new(sweep, "axis",
                        json_string(config_sweep_axis_name(
                            s->axis != SWEEP_AXIS_NONE ? s->axis : self->spec.axis)));
    json_object_set_new(sweep, "levels_planned", json_integer((json_int_t)self->source->planned));
    json_object_set_new(sweep, "fresh_text",
                        json_boolean(self->cfg.capacity.given ? self->cfg.capacity.fresh_text
                                                              : self->cfg.sweep.fresh_text));
    json_object_set_new(root, "sweep", sweep);
    json_object_set_new(root, "levels", json_incref(self->levels));
    json_t *analysis = sweep_report_analysis_json(sweep_run_done(self), self->n_done);
    slo_analysis_json(analysis, self->levels);
    json_object_set_new(root, "analysis", analysis);
    json_t *reasons = json_array();
    for (size_t i = 0; i < json_array_size(self->levels); i++) {
        json_t *v = json_object_get(json_array_get(self->levels, i), "validity");
        if (!json_is_true(json_object_get(v, "valid"))) {
            char reason[200];
            snprintf(reason, sizeof reason, "level %zu is not valid", i + 1);
            json_array_append_new(reasons, json_string(reason));
        }
    }
    json_object_set_new(
        root, "validity",
        json_pack("{s:b, s:o}", "valid", json_array_size(reasons) == 0, "reasons", reasons));
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", self->cfg.output.dir);
    int rc = report_write_json_root(root, path);
    json_decref(root);
    if (rc != 0)
        sweep_run_say(self, "cannot write %s: %s", path, strerror(errno));
    return rc;
}

void sweep_run_end_level(sweep_run_t *self, bool interrupted) {
    if (!self->have_level)
        return;
    self->have_level = false;
    self->interrupted = self->interrupted || interrupted;
    if (self->reps_run == 0) /* nothing ran (it could not start, or Ctrl-C before) */
        return;
    const window_stats_t *from = self->valid ? &self->pooled : &self->pooled_all;
    json_t *level = sweep_run_level_json(self, interrupted, from);
    slo_level_json(level, &self->cfg.slo, from, self->valid ? &self->good : &self->good_all);
    json_array_append_new(self->levels, level);
    level_spec_t *specs = realloc(self->specs, (self->n_done + 1) * sizeof *specs);
    sweep_report_level_t *done =
        specs ? realloc(self->done, (self->n_done + 1) * sizeof *done) : NULL;
    if (specs)
        self->specs = specs;
    if (done) {
        self->done = done;
        self->specs[self->n_done] = self->spec;
        sweep_report_level_t *l = &self->done[self->n_done++];
        *l = (sweep_report_level_t){
            .repetitions = self->reps_run, .valid = self->valid, .interrupted = interrupted};
        sweep_report_figures(from, l->figures);
        sweep_report_server_figures(l, self->server);
    }
    self->previous = (level_result_t){.spec = &self->spec,
                                      .index = self->index,
                                      .repetitions = self->reps_run,
                                      .valid = self->valid,
                                      .pooled = from,
                                      .interrupted = interrupted,
                                      .stopped_early = self->any_stopped_early};
    self->has_previous = true;
    double f[SWEEP_FIG__COUNT];
    sweep_report_figures(from, f);
    char ttft[32] = "-", tpot[32] = "-"; /* no ok request: no percentile, never "nan" */
    if (!isnan(f[SWEEP_FIG_TTFT_P50]))
        snprintf(ttft, sizeof ttft, "%.1f", f[SWEEP_FIG_TTFT_P50]);
    if (!isnan(f[SWEEP_FIG_TPOT_P50]))
        snprintf(tpot, sizeof tpot, "%.2f", f[SWEEP_FIG_TPOT_P50]);
    sweep_run_say(
        self,
        "level %zu done: %s %g, valid runs %u/%u%s, TTFT p50 %s ms, TPOT p50 %s ms, "
        "%.2f %% errors, %.3f conversations/s, carried by %d of %d workers",
        self->index + 1, sweep_report_axis_key(&self->spec), self->spec.value,
        (unsigned)self->valid, (unsigned)self->reps_run, interrupted ? " (interrupted)" : "", ttft,
        tpot, isnan(f[SWEEP_FIG_ERROR_PCT]) ? 0 : f[SWEEP_FIG_ERROR_PCT], f[SWEEP_FIG_ACTUAL_RPS],
        (int)json_integer_value(json_object_get(self->workers, "carried_by")),
        (int)self->options.expect_workers);
    sweep_run_write(self, false);
}

/* Under the table: each level that did not run on every worker expected from start to end. */
static void sweep_run_print_workers(const sweep_run_t *self, FILE *out) {
    for (size_t i = 0; i < json_array_size(self->levels); i++) {
        const json_t *w = json_object_get(json_array_get(self->levels, i), "workers");
        json_int_t expected = json_integer_value(json_object_get(w, "expected"));
        json_int_t started = json_integer_value(json_object_get(w, "started"));
        json_int_t lost = json_integer_value(json_object_get(w, "lost"));
        json_int_t carried = json_integer_value(json_object_get(w, "carried_by"));
        if (!w || (started >= expected && carried >= expected && lost == 0))
            continue;
        fprintf(out,
                "Level %zu: started by %lld of the %lld workers expected, %lld lost, carried to "
                "its end by %lld\n",
                i + 1, (long long)started, (long long)expected, (long long)lost,
                (long long)carried);
    }
}

int sweep_run_finish(sweep_run_t *self, bool interrupted) {
    self->interrupted = self->interrupted || interrupted;
    if (self->fleet)
        fleet_clear_line(self->fleet);
    char simulation[256];
    if (self->options.simulation) { /* the table's first line says what served it */
        report_simulation_text(self->options.simulation, simulation, sizeof simulation);
        printf("stampede sweep - SIMULATED (%s)\n", simulation);
    } else if (self->options.simulated_profile)
        printf("stampede sweep - simulated server (profile %s)\n", self->options.simulated_profile);
    sweep_report_print(stdout, sweep_run_done(self), self->n_done);
    sweep_run_print_workers(self, stdout);
    report_network_print(stdout, &self->cfg.target);
    slo_print_levels(stdout, self->levels);
    fflush(stdout);
    int rc = sweep_run_write(self, true);
    char path[4096];
    snprintf(path, sizeof path, "%s/config.yaml", self->cfg.output.dir);
    FILE *f = fopen(path, "w");
    if (!f || config_write_yaml(&self->cfg, f) != 0) {
        sweep_run_say(self, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (f)
        fclose(f);
    if (rc == 0 && results_reports(&self->options, self->fleet ? fleet_link(self->fleet) : NULL,
                                   self->cfg.output.dir) != 0)
        rc = -1;
    if (rc == 0)
        sweep_run_say(self, "sweep results in %s/results.json (%zu level%s%s)",
                      self->cfg.output.dir, self->n_done, self->n_done == 1 ? "" : "s",
                      self->interrupted ? ", interrupted" : "");
    return rc;
}

static void hook_step(void *arg, int64_t now) {
    sweep_run_step(arg, now);
}

static void hook_stopped(void *arg, int64_t now) {
    sweep_run_stopped(arg, now);
}

static void hook_live_line(void *arg, int64_t now, const live_t *live, char *buf, size_t len) {
    sweep_run_live_line(arg, now, live, buf, len);
}

static double hook_level(void *arg) {
    return sweep_run_spec(arg)->value;
}

fleet_hooks_t sweep_run_hooks(sweep_run_t *self) {
    return (fleet_hooks_t){.step = hook_step,
                           .stopped = hook_stopped,
                           .live_line = hook_live_line,
                           .level = hook_level,
                           .arg = self};
}
