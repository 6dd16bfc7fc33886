/* `stampede compare RUN...`: results.json documents side by side (compare.h, docs/compare.md). */
#include "compare.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_doc.h"

#define COMPARE_SCHEMA 2
#define COMPARE_NAME_MAX 128
#define COMPARE_CELL 96
/* A ratio from this on reads as "+31x worse" rather than "+3100% worse" (the EAGLE-3 report). */
#define COMPARE_RATIO_FROM 10.0

typedef enum { COMPARE_LOWER, COMPARE_HIGHER } compare_better_t;

typedef struct compare_metric {
    const char *key;   /* in the level object, else in its `reference` block */
    const char *title; /* table heading and row label */
    const char *unit;  /* "ms", "%", "/s", "tok/s", "s" */
    compare_better_t better;
    bool points;      /* a percentage: changes are in percentage points */
    const char *path; /* NULL, or where in the level the figure is ("gap/total/tpot/...") */
    const char *per;  /* NULL, or the level key the figure is divided by (a mean per request) */
} compare_metric_t;

/* The reports' headline figures, in the EAGLE-3 report's order (TPOT, TTFT, E2E, errors, RPS),
 * each latency followed by the server's own (the scaling report's §3.1 Server TPOT and §3.3
 * Server TTFT: the level's `gap` block, present only when the run scraped the servers; the
 * server's exact means, as the reference reports' _sum/_count deltas are, never its buckets'
 * estimates). */
static const compare_metric_t compare_metrics[] = {
    {"tpot_p50_ms", "TPOT p50", "ms", COMPARE_LOWER, false, NULL, NULL},
    {"tpot_p95_ms", "TPOT p95", "ms", COMPARE_LOWER, false, NULL, NULL},
    {"server_tpot_mean_ms", "Server TPOT mean", "ms", COMPARE_LOWER, false,
     "gap/total/tpot/server_mean_ms", NULL},
    {"ttft_p50_ms", "TTFT p50", "ms", COMPARE_LOWER, false, NULL, NULL},
    {"ttft_p95_ms", "TTFT p95", "ms", COMPARE_LOWER, false, NULL, NULL},
    {"server_ttft_mean_ms", "Server TTFT mean", "ms", COMPARE_LOWER, false,
     "gap/total/ttft/server_mean_ms", NULL},
    {"itl_p99_ms", "ITL p99", "ms", COMPARE_LOWER, false, "itl_ms/p99", NULL},
    {"ttfc_p99_ms", "TTFC p99", "ms", COMPARE_LOWER, false, "ttfc_ms/p99", NULL},
    {"latency_p50_ms", "E2E p50", "ms", COMPARE_LOWER, false, NULL, NULL},
    {"latency_p95_ms", "E2E p95", "ms", COMPARE_LOWER, false, NULL, NULL},
    {"error_pct", "Error rate", "%", COMPARE_LOWER, true, NULL, NULL},
    {"actual_rps", "Conversation starts/s", "/s", COMPARE_HIGHER, false, NULL, NULL},
    {"requests_per_s", "Requests/s", "/s", COMPARE_HIGHER, false, NULL, NULL},
    {"tops", "Output tokens/s", "tok/s", COMPARE_HIGHER, false, NULL, NULL},
    {"kv_hit_rate_pct", "KV hit rate", "%", COMPARE_HIGHER, true, NULL, NULL},
    {"wall_clock_s", "Wall clock", "s", COMPARE_LOWER, false, NULL, NULL},
    /* the linear-vs-DAG case study's context size: fewer prompt tokens for the same work is less
     * prefill (a framework's message overhead shows here) */
    {"prompt_tokens_mean", "Prompt tokens (mean)", "tok", COMPARE_LOWER, false, NULL,
     "requests_ok"},
};
#define COMPARE_N_METRICS (sizeof compare_metrics / sizeof compare_metrics[0])

/* analysis.saturation's points, in the report's "Saturation Point" order. */
static const struct {
    const char *key;
    const char *title;
} compare_saturation[] = {
    {"first_errors", "First errors"},
    {"sustained_errors", "Sustained >5% errors"},
    {"ttft_p50_over_1s", "TTFT p50 > 1s"},
    {"tpot_plateau", "TPOT p50 plateau"},
};
#define COMPARE_N_SATURATION (sizeof compare_saturation / sizeof compare_saturation[0])

typedef struct compare_run {
    char name[COMPARE_NAME_MAX];
    char path[COMPARE_PATH_MAX]; /* the results.json read */
    json_t *root;
    const char *kind; /* "run" or "sweep" */
    size_t n_levels;
    double *level_values; /* each level's concurrency or rate, in the document's order */
    json_t **levels;      /* borrowed from root */
} compare_run_t;

struct compare {
    compare_run_t *runs;
    size_t n_runs;
    const char *axis; /* "concurrency" or "rate", from the first run */
    double *levels;   /* every run's levels, ascending, each once */
    size_t n_levels;
};

compare_t *compare_new(void) {
    return calloc(1, sizeof(compare_t));
}

void compare_destroy(compare_t **self_p) {
    if (!self_p || !*self_p)
        return;
    compare_t *self = *self_p;
    for (size_t i = 0; i < self->n_runs; i++) {
        json_decref(self->runs[i].root);
        free(self->runs[i].level_values);
        free(self->runs[i].levels);
    }
    free(self->runs);
    free(self->levels);
    free(self);
    *self_p = NULL;
}

/* A level's position on the axis: `concurrency`, a sweep's `rate`, or a plain rate run's
 * `rate.requested_per_s`. */
static bool compare_level_value(json_t *level, const char **axis, double *value) {
    json_t *c = json_object_get(level, "concurrency");
    if (json_is_number(c)) {
        *axis = "concurrency";
        *value = json_number_value(c);
        return true;
    }
    json_t *r = json_object_get(level, "rate");
    if (json_is_object(r))
        r = json_object_get(r, "requested_per_s");
    if (json_is_number(r)) {
        *axis = "rate";
        *value = json_number_value(r);
        return true;
    }
    return false;
}

/* The file to read for a RUN argument, and the run's name (its directory's base name). */
static int compare_locate(const char *arg, compare_run_t *run, char *err, size_t errlen) {
    struct stat st;
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "%s: %s", arg, strerror(errno));
        return -1;
    }
    /* Room for "/results.json" after it in run->path. */
    char copy[COMPARE_PATH_MAX - 16];
    if (strlen(arg) >= sizeof copy) {
        snprintf(err, errlen, "%.64s...: path too long", arg);
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", arg);
    size_t len = strlen(copy);
    while (len > 1 && copy[len - 1] == '/')
        copy[--len] = '\0';
    if (S_ISDIR(st.st_mode)) {
        snprintf(run->path, sizeof run->path, "%s/results.json", copy);
        snprintf(run->name, sizeof run->name, "%s", basename(copy));
        if (stat(run->path, &st) != 0) {
            snprintf(err, errlen, "%s: %s (not a results directory)", run->path, strerror(errno));
            return -1;
        }
        return 0;
    }
    snprintf(run->path, sizeof run->path, "%s", copy);
    char base[COMPARE_PATH_MAX], dir[COMPARE_PATH_MAX];
    snprintf(base, sizeof base, "%s", copy);
    snprintf(dir, sizeof dir, "%s", copy);
    if (!strcmp(basename(base), "results.json"))
        snprintf(run->name, sizeof run->name, "%s", basename(dirname(dir)));
    else
        snprintf(run->name, sizeof run->name, "%s", basename(base));
    return 0;
}

/* Reads and checks run->path: a JSON object, schema_version 2, levels each on the axis. */
static int compare_load(compare_run_t *run, char *err, size_t errlen) {
    json_error_t jerr;
    run->root = json_load_file(run->path, 0, &jerr);
    if (!run->root) {
        snprintf(err, errlen, "%s:%d: not a results.json (not JSON: %s)", run->path, jerr.line,
                 jerr.text);
        return -1;
    }
    json_t *version = json_object_get(run->root, "schema_version");
    if (!json_is_integer(version) || json_integer_value(version) != COMPARE_SCHEMA) {
        char got[32] = "none";
        if (json_is_integer(version))
            snprintf(got, sizeof got, "%lld", (long long)json_integer_value(version));
        snprintf(err, errlen, "%s: schema_version %s, expected %d (docs/results.md)", run->path,
                 got, COMPARE_SCHEMA);
        return -1;
    }
    json_t *kind = json_object_get(run->root, "kind");
    run->kind = json_is_string(kind) ? json_string_value(kind) : "run";
    json_t *levels = json_object_get(run->root, "levels");
    if (!json_is_array(levels) || json_array_size(levels) == 0) {
        snprintf(err, errlen, "%s: no levels (key \"levels\" missing or empty)", run->path);
        return -1;
    }
    run->n_levels = json_array_size(levels);
    run->level_values = calloc(run->n_levels, sizeof(double));
    run->levels = calloc(run->n_levels, sizeof(json_t *));
    if (!run->level_values || !run->levels) {
        snprintf(err, errlen, "%s: out of memory", run->path);
        return -1;
    }
    return 0;
}

/* Fills the run's level values, all on one axis (the comparison's, once it has one). */
static int compare_levels(compare_t *self, compare_run_t *run, char *err, size_t errlen) {
    json_t *levels = json_object_get(run->root, "levels");
    for (size_t i = 0; i < run->n_levels; i++) {
        json_t *level = json_array_get(levels, i);
        const char *axis = NULL;
        if (!json_is_object(level) || !compare_level_value(level, &axis, &run->level_values[i])) {
            snprintf(err, errlen, "%s: levels[%zu] has neither \"concurrency\" nor \"rate\"",
                     run->path, i);
            return -1;
        }
        if (self->axis && strcmp(self->axis, axis) != 0) {
            snprintf(err, errlen, "%s: levels[%zu] is a %s level; %s has %s levels", run->path, i,
                     axis, self->runs[0].path, self->axis);
            return -1;
        }
        self->axis = axis;
        run->levels[i] = level;
    }
    return 0;
}

static int compare_double_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The union of every run's levels, ascending, each once. */
static int compare_union(compare_t *self, const compare_run_t *run) {
    double *all = realloc(self->levels, (self->n_levels + run->n_levels) * sizeof(double));
    if (!all)
        return -1;
    self->levels = all;
    for (size_t i = 0; i < run->n_levels; i++) {
        bool seen = false;
        for (size_t j = 0; j < self->n_levels && !seen; j++)
            seen = self->levels[j] == run->level_values[i];
        if (!seen)
            self->levels[self->n_levels++] = run->level_values[i];
    }
    qsort(self->levels, self->n_levels, sizeof(double), compare_double_cmp);
    return 0;
}

/* Two runs of the same name get "#2", "#3" ... after the later ones. */
static void compare_unique_name(const compare_t *self, compare_run_t *run) {
    char base[COMPARE_NAME_MAX];
    snprintf(base, sizeof base, "%s", run->name);
    for (int n = 2;; n++) {
        bool taken = false;
        for (size_t i = 0; i < self->n_runs && !taken; i++)
            taken = !strcmp(self->runs[i].name, run->name);
        if (!taken)
            return;
        snprintf(run->name, sizeof run->name, "%.100s#%d", base, n);
    }
}

int compare_add(compare_t *self, const char *path, char *err, size_t errlen) {
    if (errlen)
        err[0] = '\0';
    compare_run_t *runs = realloc(self->runs, (self->n_runs + 1) * sizeof(compare_run_t));
    if (!runs) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    self->runs = runs;
    compare_run_t run = {0};
    if (compare_locate(path, &run, err, errlen) != 0 || compare_load(&run, err, errlen) != 0 ||
        compare_levels(self, &run, err, errlen) != 0 || compare_union(self, &run) != 0) {
        if (!err[0])
            snprintf(err, errlen, "%s: out of memory", run.path);
        json_decref(run.root);
        free(run.level_values);
        free(run.levels);
        return -1;
    }
    compare_unique_name(self, &run);
    self->runs[self->n_runs++] = run;
    return 0;
}

/* The run's level at value, or NULL when the run does not have it. */
static json_t *compare_level(const compare_run_t *run, double value) {
    for (size_t i = 0; i < run->n_levels; i++)
        if (run->level_values[i] == value)
            return run->levels[i];
    return NULL;
}

/* Whether the run's level at value was judged invalid (its `validity.valid` is false): its figures
 * are shown, marked. */
static bool compare_invalid(const compare_run_t *run, double value) {
    json_t *level = compare_level(run, value);
    return level && json_is_false(json_object_get(json_object_get(level, "validity"), "valid"));
}

/* A metric of a level: the level's own key, else its `reference` block's; NAN when absent or
 * null. */
static double compare_value(const compare_run_t *run, double level_value, const char *key) {
    json_t *level = compare_level(run, level_value);
    if (!level)
        return NAN;
    json_t *v = json_object_get(level, key);
    if (!v)
        v = json_object_get(json_object_get(level, "reference"), key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A metric of a level: at its path when it has one, else compare_value's key. */
static double compare_metric_value(const compare_run_t *run, double level_value,
                                   const compare_metric_t *m) {
    if (m->per) { /* prompt_tokens_mean: the ok requests' input tokens over their count */
        double total = compare_value(run, level_value, "input_tokens");
        double n = compare_value(run, level_value, m->per);
        return n > 0 ? total / n : NAN;
    }
    if (!m->path)
        return compare_value(run, level_value, m->key);
    json_t *v = compare_level(run, level_value);
    char part[64];
    for (const char *p = m->path; v && *p;) {
        size_t len = strcspn(p, "/");
        snprintf(part, sizeof part, "%.*s", (int)len, p);
        v = json_object_get(v, part);
        p += len + (p[len] == '/');
    }
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The change from a to b: percent (percentage points for a percentage), NAN when undefined. */
static double compare_change(const compare_metric_t *m, double a, double b) {
    if (isnan(a) || isnan(b))
        return NAN;
    if (m->points)
        return b - a;
    if (a == 0)
        return b == 0 ? 0 : NAN;
    return (b - a) / a * 100;
}

/* "better", "worse" or "same" for b against a; NULL when either is absent. */
static const char *compare_verdict(const compare_metric_t *m, double a, double b) {
    if (isnan(a) || isnan(b))
        return NULL;
    if (a == b)
        return "same";
    bool lower = b < a;
    return lower == (m->better == COMPARE_LOWER) ? "better" : "worse";
}

/* Whether x beats y for the metric (strictly). */
static bool compare_beats(const compare_metric_t *m, double x, double y) {
    return m->better == COMPARE_LOWER ? x < y : x > y;
}

typedef struct compare_winner {
    size_t present;    /* runs with a value at this level */
    double best;       /* the winning value */
    size_t n_best;     /* runs holding it (more than one: a tie) */
    size_t first_best; /* the first of them */
    double margin;     /* the winner against the runner-up, as compare_change; NAN without one */
} compare_winner_t;

/* The best value of a metric at a level among the runs that have it. */
static compare_winner_t compare_winner(const compare_t *self, const compare_metric_t *m,
                                       double level) {
    compare_winner_t w = {0, NAN, 0, 0, NAN};
    for (size_t r = 0; r < self->n_runs; r++) {
        double v = compare_metric_value(&self->runs[r], level, m);
        if (isnan(v))
            continue;
        w.present++;
        if (isnan(w.best) || compare_beats(m, v, w.best)) {
            w.best = v;
            w.n_best = 1;
            w.first_best = r;
        } else if (v == w.best) {
            w.n_best++;
        }
    }
    double second = NAN;
    for (size_t r = 0; r < self->n_runs; r++) {
        double v = compare_metric_value(&self->runs[r], level, m);
        if (!isnan(v) && v != w.best && (isnan(second) || compare_beats(m, v, second)))
            second = v;
    }
    if (w.n_best == 1 && !isnan(second))
        w.margin = compare_change(m, second, w.best);
    return w;
}

static bool compare_is_winner(const compare_winner_t *w, double v) {
    return w->present >= 2 && !isnan(v) && v == w->best;
}

static json_t *compare_number(double x) {
    if (isnan(x))
        return json_null();
    if (x == floor(x) && fabs(x) < 1e15)
        return json_integer((json_int_t)x);
    return json_real(x);
}

/* analysis.saturation of a run; NULL when it has none (a plain run). */
static json_t *compare_saturation_of(const compare_run_t *run) {
    json_t *s = json_object_get(json_object_get(run->root, "analysis"), "saturation");
    return json_is_object(s) ? s : NULL;
}

/* A saturation point's level, NAN when not reached. */
static double compare_point_level(const compare_t *self, json_t *point) {
    json_t *v = json_object_get(point, self->axis);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *compare_saturation_json(const compare_t *self) {
    json_t *out = json_object();
    for (size_t k = 0; k < COMPARE_N_SATURATION; k++) {
        json_t *row = json_array();
        for (size_t r = 0; r < self->n_runs; r++) {
            json_t *s = compare_saturation_of(&self->runs[r]);
            json_t *point = s ? json_object_get(s, compare_saturation[k].key) : NULL;
            if (!json_is_object(point)) {
                json_array_append_new(row, json_null());
                continue;
            }
            double level = compare_point_level(self, point);
            json_t *cell = json_object();
            json_object_set_new(cell, "level", compare_number(level));
            json_object_set_new(cell, "error_pct",
                                compare_number(compare_value(&self->runs[r], level, "error_pct")));
            json_t *tpot = json_object_get(point, "tpot_p50_ms");
            if (json_is_number(tpot))
                json_object_set_new(cell, "tpot_p50_ms", json_real(json_number_value(tpot)));
            json_array_append_new(row, cell);
        }
        json_object_set_new(out, compare_saturation[k].key, row);
    }
    return out;
}

static json_t *compare_metric_json(const compare_t *self, const compare_metric_t *m, double level) {
    json_t *values = json_array(), *change = json_array(), *verdict = json_array();
    json_t *winners = json_array();
    compare_winner_t w = compare_winner(self, m, level);
    double first = compare_metric_value(&self->runs[0], level, m);
    for (size_t r = 0; r < self->n_runs; r++) {
        double v = compare_metric_value(&self->runs[r], level, m);
        json_array_append_new(values, compare_number(v));
        json_array_append_new(change,
                              r ? compare_number(compare_change(m, first, v)) : json_null());
        const char *word = r ? compare_verdict(m, first, v) : NULL;
        json_array_append_new(verdict, word ? json_string(word) : json_null());
        if (compare_is_winner(&w, v))
            json_array_append_new(winners, json_integer((json_int_t)r));
    }
    json_t *o = json_object();
    json_object_set_new(o, "values", values);
    json_object_set_new(o, "change_pct", change);
    json_object_set_new(o, "verdict", verdict);
    json_object_set_new(o, "winners", winners);
    json_object_set_new(o, "margin_pct", compare_number(w.margin));
    return o;
}

json_t *compare_json(const compare_t *self) {
    json_t *root = json_object();
    json_object_set_new(root, "kind", json_string("compare"));
    json_object_set_new(root, "axis", json_string(self->axis ? self->axis : "concurrency"));
    json_t *runs = json_array();
    for (size_t r = 0; r < self->n_runs; r++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(self->runs[r].name));
        json_object_set_new(o, "path", json_string(self->runs[r].path));
        json_object_set_new(o, "kind", json_string(self->runs[r].kind));
        const char *simulated = report_doc_simulated(self->runs[r].root);
        char text[256];
        json_object_set_new(o, "simulated", json_boolean(simulated));
        json_object_set_new(
            o, "virtual_time",
            json_boolean(report_doc_simulation(self->runs[r].root, text, sizeof text) != NULL));
        if (simulated)
            json_object_set_new(o, "simulated_profile", json_string(simulated));
        json_array_append_new(runs, o);
    }
    json_object_set_new(root, "runs", runs);
    json_t *metrics = json_array();
    for (size_t k = 0; k < COMPARE_N_METRICS; k++) {
        const compare_metric_t *m = &compare_metrics[k];
        json_t *o = json_object();
        json_object_set_new(o, "key", json_string(m->key));
        json_object_set_new(o, "title", json_string(m->title));
        json_object_set_new(o, "unit", json_string(m->unit));
        json_object_set_new(o, "better",
                            json_string(m->better == COMPARE_LOWER ? "lower" : "higher"));
        json_object_set_new(o, "change", json_string(m->points ? "points" : "percent"));
        json_array_append_new(metrics, o);
    }
    json_object_set_new(root, "metrics", metrics);
    json_t *levels = json_array();
    for (size_t l = 0; l < self->n_levels; l++) {
        json_t *o = json_object(), *present = json_array(), *by_metric = json_object();
        json_object_set_new(o, "level", compare_number(self->levels[l]));
        for (size_t r = 0; r < self->n_runs; r++)
            json_array_append_new(present,
                                  json_boolean(compare_level(&self->runs[r], self->levels[l])));
        json_object_set_new(o, "present", present);
        json_t *invalid = json_array();
        for (size_t r = 0; r < self->n_runs; r++)
            json_array_append_new(invalid,
                                  json_boolean(compare_invalid(&self->runs[r], self->levels[l])));
        json_object_set_new(o, "invalid", invalid);
        for (size_t k = 0; k < COMPARE_N_METRICS; k++)
            json_object_set_new(by_metric, compare_metrics[k].key,
                                compare_metric_json(self, &compare_metrics[k], self->levels[l]));
        json_object_set_new(o, "metrics", by_metric);
        json_array_append_new(levels, o);
    }
    json_object_set_new(root, "levels", levels);
    json_object_set_new(root, "saturation", compare_saturation_json(self));
    return root;
}

/* ---- Markdown ---- */

/* A level as written in the workload file: "40", "2.5". */
static void compare_format_level(char *buf, size_t len, double x) {
    snprintf(buf, len, "%g", x);
}

/* A change as the EAGLE-3 report writes it: "+48% worse", "-10% better", "+31x worse", and
 * "+16.3 pt worse" for a percentage. */
static void compare_format_change(char *buf, size_t len, const compare_metric_t *m, double a,
                                  double b) {
    const char *verdict = compare_verdict(m, a, b);
    double change = compare_change(m, a, b);
    if (!verdict) {
        snprintf(buf, len, "—");
    } else if (!strcmp(verdict, "same")) {
        snprintf(buf, len, "same");
    } else if (isnan(change)) {
        snprintf(buf, len, "from 0, %s", verdict);
    } else if (m->points) {
        snprintf(buf, len, "%+.1f pt %s", change, verdict);
    } else if (b / a >= COMPARE_RATIO_FROM) {
        snprintf(buf, len, "+%.0fx %s", b / a, verdict);
    } else {
        snprintf(buf, len, fabs(change) < 10 ? "%+.1f%% %s" : "%+.0f%% %s", change, verdict);
    }
}

/* A margin in a winner cell: "-14%", "+1.5%", "-1.7 pt". */
static void compare_format_margin(char *buf, size_t len, const compare_metric_t *m, double x) {
    if (m->points)
        snprintf(buf, len, "%+.1f pt", x);
    else
        snprintf(buf, len, fabs(x) < 10 ? "%+.1f%%" : "%+.0f%%", x);
}

/* A run's name for a table cell: a '|' would end the cell. */
static void compare_cell_name(char *buf, size_t len, const char *name) {
    size_t o = 0;
    for (const char *p = name; *p && o + 3 < len; p++) {
        if (*p == '|')
            buf[o++] = '\\';
        buf[o++] = *p;
    }
    buf[o] = '\0';
}

static const char *compare_axis_title(const compare_t *self) {
    return self->axis && !strcmp(self->axis, "rate") ? "Rate (/s)" : "Concurrency";
}

static const char *compare_axis_short(const compare_t *self) {
    return self->axis && !strcmp(self->axis, "rate") ? "rate" : "c";
}

/* One metric's table: with two runs A, B and the change; with more, one column per run. */
static void compare_md_metric(const compare_t *self, const compare_metric_t *m, FILE *out) {
    char name[COMPARE_CELL], cell[COMPARE_CELL];
    fprintf(out, "### %s (%s)\n\n| %s |", m->title, m->unit, compare_axis_title(self));
    for (size_t r = 0; r < self->n_runs; r++) {
        compare_cell_name(name, sizeof name, self->runs[r].name);
        fprintf(out, self->n_runs == 2 ? " %s %s |" : " %s |", name, m->title);
    }
    fprintf(out, self->n_runs == 2 ? " Change |\n|:---:|:---:|:---:|:---:|\n" : "\n|:---:|");
    if (self->n_runs != 2) {
        for (size_t r = 0; r < self->n_runs; r++)
            fprintf(out, ":---:|");
        fprintf(out, "\n");
    }
    for (size_t l = 0; l < self->n_levels; l++) {
        double level = self->levels[l];
        compare_format_level(cell, sizeof cell, level);
        fprintf(out, "| %s |", cell);
        compare_winner_t w = compare_winner(self, m, level);
        for (size_t r = 0; r < self->n_runs; r++) {
            double v = compare_metric_value(&self->runs[r], level, m);
            report_doc_figure(cell, sizeof cell, v, "");
            bool bold = self->n_runs > 2 && compare_is_winner(&w, v);
            const char *mark = !isnan(v) && compare_invalid(&self->runs[r], level) ? " †" : "";
            fprintf(out, bold ? " **%s**%s |" : " %s%s |", cell, mark);
        }
        if (self->n_runs == 2) {
            compare_format_change(cell, sizeof cell, m,
                                  compare_metric_value(&self->runs[0], level, m),
                                  compare_metric_value(&self->runs[1], level, m));
            fprintf(out, " %s |", cell);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "\n");
}

/* One saturation cell: "Concurrency 110 (1.7%)", "~84ms (c 120)", "not reached", or "—" for a
 * run without the analysis (a plain run). */
static void compare_md_saturation_cell(const compare_t *self, const compare_run_t *run,
                                       const char *key, char *buf, size_t len) {
    json_t *s = compare_saturation_of(run);
    if (!s) {
        snprintf(buf, len, "—");
        return;
    }
    json_t *point = json_object_get(s, key);
    double level = json_is_object(point) ? compare_point_level(self, point) : NAN;
    if (isnan(level)) {
        snprintf(buf, len, "not reached");
        return;
    }
    char lv[32], x[32];
    compare_format_level(lv, sizeof lv, level);
    json_t *tpot = json_object_get(point, "tpot_p50_ms");
    double err = compare_value(run, level, "error_pct");
    if (json_is_number(tpot)) {
        report_doc_figure(x, sizeof x, json_number_value(tpot), "");
        snprintf(buf, len, "~%sms (%s %s)", x, compare_axis_short(self), lv);
    } else if (!strcmp(key, "first_errors") && !isnan(err)) {
        report_doc_figure(x, sizeof x, err, "");
        snprintf(buf, len, "%s %s (%s%%)", compare_axis_title(self), lv, x);
    } else {
        snprintf(buf, len, "%s %s", compare_axis_title(self), lv);
    }
}

static void compare_md_saturation(const compare_t *self, FILE *out) {
    char name[COMPARE_CELL], cell[COMPARE_CELL];
    fprintf(out, "### Saturation Point\n\n| Metric |");
    for (size_t r = 0; r < self->n_runs; r++) {
        compare_cell_name(name, sizeof name, self->runs[r].name);
        fprintf(out, " %s |", name);
    }
    fprintf(out, "\n|:-------|");
    for (size_t r = 0; r < self->n_runs; r++)
        fprintf(out, ":---:|");
    fprintf(out, "\n");
    for (size_t k = 0; k < COMPARE_N_SATURATION; k++) {
        fprintf(out, "| %s |", compare_saturation[k].title);
        for (size_t r = 0; r < self->n_runs; r++) {
            compare_md_saturation_cell(self, &self->runs[r], compare_saturation[k].key, cell,
                                       sizeof cell);
            fprintf(out, " %s |", cell);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "\n");
}

/* Finding 1's table: per metric and level the winner and its margin over the runner-up. */
static void compare_md_winners(const compare_t *self, FILE *out) {
    char cell[COMPARE_CELL], name[COMPARE_CELL], margin[32];
    fprintf(out, "### Winner per level\n\n| Metric |");
    for (size_t l = 0; l < self->n_levels; l++) {
        compare_format_level(cell, sizeof cell, self->levels[l]);
        fprintf(out, " %s=%s Winner |", compare_axis_short(self), cell);
    }
    fprintf(out, "\n|--------|");
    for (size_t l = 0; l < self->n_levels; l++)
        fprintf(out, "------|");
    fprintf(out, "\n");
    for (size_t k = 0; k < COMPARE_N_METRICS; k++) {
        const compare_metric_t *m = &compare_metrics[k];
        bool any = false;
        for (size_t l = 0; l < self->n_levels && !any; l++)
            any = compare_winner(self, m, self->levels[l]).present >= 2;
        if (!any)
            continue;
        fprintf(out, "| %s |", m->title);
        for (size_t l = 0; l < self->n_levels; l++) {
            compare_winner_t w = compare_winner(self, m, self->levels[l]);
            compare_cell_name(name, sizeof name, self->runs[w.first_best].name);
            if (w.present < 2)
                fprintf(out, " — |");
            else if (w.n_best > 1)
                fprintf(out, " tie (%zu runs) |", w.n_best);
            else if (isnan(w.margin))
                fprintf(out, " %s |", name);
            else {
                compare_format_margin(margin, sizeof margin, m, w.margin);
                fprintf(out, " %s (%s) |", name, margin);
            }
        }
        fprintf(out, "\n");
    }
    fprintf(out, "\nThe margin is the winner's change against the runner-up at that level.\n\n");
}

void compare_print_markdown(const compare_t *self, FILE *out) {
    char name[COMPARE_CELL];
    if (self->n_runs == 2) {
        char b[COMPARE_CELL];
        compare_cell_name(name, sizeof name, self->runs[0].name);
        compare_cell_name(b, sizeof b, self->runs[1].name);
        fprintf(out, "## Comparison: %s vs %s\n\n", b, name);
    } else {
        fprintf(out, "## Comparison of %zu runs\n\n", self->n_runs);
    }
    fprintf(out, "| Run | Kind | Levels | Results |\n|-----|------|--------|---------|\n");
    for (size_t r = 0; r < self->n_runs; r++) {
        compare_cell_name(name, sizeof name, self->runs[r].name);
        const char *simulated = report_doc_simulated(self->runs[r].root);
        char text[256];
        const char *simulation = report_doc_simulation(self->runs[r].root, text, sizeof text);
        fprintf(out, "| %s | %s%s%s%s | %zu | `%s` |\n", name, self->runs[r].kind,
                simulation  ? ", SIMULATED in virtual time (profile "
                : simulated ? ", simulated server (profile "
                            : "",
                simulated ? simulated : "", simulated ? ")" : "", self->runs[r].n_levels,
                self->runs[r].path);
    }
    fprintf(out, "\n");
    if (self->n_runs == 2)
        fprintf(out,
                "Change: the second run against the first; lower is better for latencies "
                "and errors, higher for throughput. — : the level is absent from a run. † : the "
                "run judged the level invalid (its validity reasons are in its results.json)."
                "\n\n");
    else
        fprintf(out,
                "Winners in bold (lowest latency and errors, highest throughput). — : the "
                "level is absent from a run. † : the run judged the level invalid (its validity "
                "reasons are in its results.json).\n\n");
    for (size_t k = 0; k < COMPARE_N_METRICS; k++) {
        bool any = false;
        for (size_t l = 0; l < self->n_levels && !any; l++)
            for (size_t r = 0; r < self->n_runs && !any; r++)
                any = !isnan(
                    compare_metric_value(&self->runs[r], self->levels[l], &compare_metrics[k]));
        if (any)
            compare_md_metric(self, &compare_metrics[k], out);
    }
    compare_md_saturation(self, out);
    if (self->n_runs > 2)
        compare_md_winners(self, out);
}

/* ---- CSV ---- */

static void compare_csv_number(FILE *out, double x) {
    if (!isnan(x))
        fprintf(out, "%.17g", x);
}

void compare_print_csv(const compare_t *self, FILE *out) {
    fprintf(out, "level,metric,unit,better,run,value,change_vs_first,verdict_vs_first,winner\n");
    for (size_t l = 0; l < self->n_levels; l++) {
        for (size_t k = 0; k < COMPARE_N_METRICS; k++) {
            const compare_metric_t *m = &compare_metrics[k];
            compare_winner_t w = compare_winner(self, m, self->levels[l]);
            double first = compare_metric_value(&self->runs[0], self->levels[l], m);
            for (size_t r = 0; r < self->n_runs; r++) {
                double v = compare_metric_value(&self->runs[r], self->levels[l], m);
                compare_csv_number(out, self->levels[l]);
                fprintf(out, ",%s,%s,%s,", m->key, m->unit,
                        m->better == COMPARE_LOWER ? "lower" : "higher");
                report_doc_csv_field(out, self->runs[r].name);
                fputc(',', out);
                compare_csv_number(out, v);
                fputc(',', out);
                if (r)
                    compare_csv_number(out, compare_change(m, first, v));
                const char *verdict = r ? compare_verdict(m, first, v) : NULL;
                fprintf(out, ",%s,%d\n", verdict ? verdict : "", compare_is_winner(&w, v));
            }
        }
    }
}
