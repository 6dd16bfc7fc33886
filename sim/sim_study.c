#include "sim_study.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* A day of virtual time: the window's bound when the file's limits.max_sessions ends its run. */
#define SIM_STUDY_DAY_NS (86400LL * 1000000000LL)
/* The drain: requests still in flight when the last task ends are waited for this long. */
#define SIM_STUDY_DRAIN_NS (600LL * 1000000000LL)
/* The level whose per-role TPOT §4.6 shows, and the one §5.2 scales to, as the report's. */
#define SIM_STUDY_ROLE_LEVEL 8
#define SIM_STUDY_SCALE_LEVEL 32
#define SIM_STUDY_MAX_ROLES 8

static int sim_study_next(void *arg, const level_result_t *previous, level_spec_t *out) {
    (void)previous;
    sim_study_levels_t *self = arg;
    if (self->next >= self->n_levels)
        return 0;
    *out = (level_spec_t){.axis = SWEEP_AXIS_CONCURRENCY,
                          .value = self->levels[self->next++],
                          .snapshots = 1,
                          .snapshot_ns = self->window_ns > 0 ? self->window_ns : SIM_STUDY_DAY_NS,
                          .drain_ns = SIM_STUDY_DRAIN_NS,
                          .repeat = 1,
                          .exclude_error_pct = 100};
    return 1;
}

sweep_source_t sim_study_source(sim_study_levels_t *self) {
    self->next = 0;
    return (sweep_source_t){.next = sim_study_next, .arg = self, .planned = self->n_levels};
}

bool sim_study_runs(size_t file, size_t profile) {
    return file == 0 || profile == 0;
}

void sim_study_cell_dir(const char *dir, const char *label, const char *profile, char *buf,
                        size_t len) {
    const char *slash = strrchr(profile, '/'); /* a profile file: its name */
    snprintf(buf, len, "%s/%s-%s", dir, label, slash ? slash + 1 : profile);
}

/* One level of one cell, in the report's terms (§2: the server's exact means, NaN when absent). */
typedef struct sim_study_level {
    double c;
    double server_tpot, gen_tps, server_ttft, wall_s;
    double makespan, critical_path, idle;
    double errors_400, requests;
    char roles[SIM_STUDY_MAX_ROLES][32];
    double role_tpot[SIM_STUDY_MAX_ROLES];
    size_t n_roles;
} sim_study_level_t;

typedef struct sim_study_cell {
    bool ran;
    sim_study_level_t levels[SIM_STUDY_MAX_LEVELS];
    size_t n;
} sim_study_cell_t;

static double sim_study_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void sim_study_read_level(const json_t *level, sim_study_level_t *l) {
    const json_t *total = json_object_get(json_object_get(level, "server"), "total");
    const json_t *sessions = json_object_get(level, "sessions");
    const json_t *errors = json_object_get(level, "errors");
    l->c = sim_study_num(level, "concurrency");
    l->server_tpot = sim_study_num(json_object_get(total, "tpot"), "mean_ms");
    l->server_ttft = sim_study_num(json_object_get(total, "ttft"), "mean_ms");
    l->gen_tps = sim_study_num(total, "generation_tokens_per_s");
    l->wall_s = sim_study_num(level, "duration_s");
    l->makespan = sim_study_num(json_object_get(sessions, "makespan_ms"), "mean");
    l->critical_path = sim_study_num(json_object_get(sessions, "critical_path_ms"), "mean");
    l->idle = sim_study_num(json_object_get(sessions, "idle_ms"), "mean");
    l->errors_400 = sim_study_num(errors, "context_length") + sim_study_num(errors, "http_4xx");
    l->requests = sim_study_num(level, "requests_ok") + sim_study_num(level, "requests_failed");
    const char *name;
    const json_t *role;
    json_object_foreach((json_t *)json_object_get(level, "roles"), name, role) {
        if (l->n_roles == SIM_STUDY_MAX_ROLES)
            break;
        snprintf(l->roles[l->n_roles], sizeof l->roles[0], "%s", name);
        l->role_tpot[l->n_roles++] = sim_study_num(json_object_get(role, "tpot_ms"), "mean");
    }
}

static int sim_study_read(const char *dir, sim_study_cell_t *cell) {
    char path[4400];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) {
        fprintf(stderr, "simulate: study: %s: %s\n", path, err.text);
        return -1;
    }
    size_t i;
    const json_t *level;
    json_array_foreach(json_object_get(root, "levels"), i, level) {
        if (cell->n == SIM_STUDY_MAX_LEVELS)
            break;
        sim_study_read_level(level, &cell->levels[cell->n++]);
    }
    cell->ran = true;
    json_decref(root);
    return 0;
}

/* The cell's level at concurrency c, or NULL. */
static const sim_study_level_t *sim_study_at(const sim_study_cell_t *cell, double c) {
    for (size_t i = 0; cell->ran && i < cell->n; i++)
        if (cell->levels[i].c == c)
            return &cell->levels[i];
    return NULL;
}

/* What the tables read. */
typedef struct sim_study {
    const char *const *labels, *const *profiles;
    size_t n_files, n_profiles;
    sim_study_cell_t *cells; /* [file * n_profiles + profile] */
    double levels[SIM_STUDY_MAX_LEVELS];
    size_t n_levels;
} sim_study_t;

static const sim_study_cell_t *sim_study_cell(const sim_study_t *s, size_t file, size_t profile) {
    return &s->cells[file * s->n_profiles + profile];
}

typedef double (*sim_study_figure_fn)(const sim_study_level_t *l);
static double fig_server_tpot(const sim_study_level_t *l) {
    return l->server_tpot;
}
static double fig_gen_tps(const sim_study_level_t *l) {
    return l->gen_tps;
}
static double fig_server_ttft(const sim_study_level_t *l) {
    return l->server_ttft;
}
static double fig_wall(const sim_study_level_t *l) {
    return l->wall_s;
}
static double fig_makespan(const sim_study_level_t *l) {
    return l->makespan;
}

/* "| FIRST | name... |" and its rule: a table's head. */
static void sim_study_head(FILE *out, const char *first, const char *const *names, size_t n) {
    fprintf(out, "| %s", first);
    for (size_t j = 0; j < n; j++)
        fprintf(out, " | %s", names[j]);
    fputs(" |\n|---", out);
    for (size_t j = 0; j < n; j++)
        fputs("|---", out);
    fputs("|\n", out);
}

static void sim_study_cell_value(FILE *out, const sim_study_level_t *l, sim_study_figure_fn f,
                                 const char *format) {
    double v = l ? f(l) : NAN;
    fputs(" | ", out);
    if (isnan(v))
        fputs("—", out);
    else
        fprintf(out, format, v);
}

/* A table of one figure: a row per level, a column per cell given (files x profiles along one). */
static void sim_study_table(FILE *out, const sim_study_t *s, const char *title, bool by_profile,
                            sim_study_figure_fn f, const char *format) {
    size_t columns = by_profile ? s->n_profiles : s->n_files;
    fprintf(out, "\n### %s\n\n", title);
    sim_study_head(out, "c", by_profile ? s->profiles : s->labels, columns);
    for (size_t i = 0; i < s->n_levels; i++) {
        fprintf(out, "| %g", s->levels[i]);
        for (size_t j = 0; j < columns; j++) {
            const sim_study_cell_t *cell =
                by_profile ? sim_study_cell(s, 0, j) : sim_study_cell(s, j, 0);
            sim_study_cell_value(out, sim_study_at(cell, s->levels[i]), f, format);
        }
        fputs(" |\n", out);
    }
}

/* §4.5: makespan, critical path and the idle time between them, per level and file. */
static void sim_study_critical_path(FILE *out, const sim_study_t *s) {
    fprintf(out, "\n### 4.5 Critical Path vs Makespan (ms)\n\n| c | Framework | Makespan | "
                 "Critical Path | Idle/Wait |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < s->n_levels; i++)
        for (size_t j = 0; j < s->n_files; j++) {
            const sim_study_level_t *l = sim_study_at(sim_study_cell(s, j, 0), s->levels[i]);
            if (l)
                fprintf(out, "| %g | %s | %.0f | %.0f | %.0f |\n", s->levels[i], s->labels[j],
                        l->makespan, l->critical_path, l->idle);
        }
}

/* §4.6: each role's TPOT (the client's mean) at one level, the files side by side. */
static void sim_study_roles(FILE *out, const sim_study_t *s, double c) {
    const sim_study_level_t *first = sim_study_at(sim_study_cell(s, 0, 0), c);
    if (!first)
        return;
    fprintf(out, "\n### 4.6 Per-Role TPOT (ms) at c=%g\n\n", c);
    sim_study_head(out, "Role", s->labels, s->n_files);
    for (size_t r = 0; r < first->n_roles; r++) {
        fprintf(out, "| %s", first->roles[r]);
        for (size_t j = 0; j < s->n_files; j++) {
            const sim_study_level_t *l = sim_study_at(sim_study_cell(s, j, 0), c);
            double v = NAN;
            for (size_t k = 0; l && k < l->n_roles; k++)
                if (!strcmp(l->roles[k], first->roles[r]))
                    v = l->role_tpot[k];
            fprintf(out, isnan(v) ? " | —" : " | %.2f", v);
        }
        fputs(" |\n", out);
    }
}

/* §4.7: the requests refused with HTTP 400 (context length) of all sent, per level and file. */
static void sim_study_errors(FILE *out, const sim_study_t *s) {
    fprintf(out, "\n### 4.7 400 Error Rate\n\n");
    sim_study_head(out, "c", s->labels, s->n_files);
    for (size_t i = 0; i < s->n_levels; i++) {
        fprintf(out, "| %g", s->levels[i]);
        for (size_t j = 0; j < s->n_files; j++) {
            const sim_study_level_t *l = sim_study_at(sim_study_cell(s, j, 0), s->levels[i]);
            if (l)
                fprintf(out, " | %.0f/%.0f", l->errors_400, l->requests);
            else
                fputs(" | —", out);
        }
        fputs(" |\n", out);
    }
}

/* §5: every cell run, its server TPOT = base x c^alpha and its throughput from c = 1 to the
 * report's c = 32 (the largest level below it otherwise). */
static void sim_study_scaling(FILE *out, const sim_study_t *s) {
    fprintf(out, "\n## 5. Scaling Models\n\n### 5.1 TPOT Power-Law Fit: TPOT(c) = base × c^α\n\n"
                 "| Config | base (ms) | α | Fit Quality |\n|---|---|---|---|\n");
    for (size_t j = 0; j < s->n_profiles; j++)
        for (size_t i = 0; i < s->n_files; i++) {
            const sim_study_cell_t *cell = sim_study_cell(s, i, j);
            if (!cell->ran)
                continue;
            double x[SIM_STUDY_MAX_LEVELS], y[SIM_STUDY_MAX_LEVELS];
            for (size_t k = 0; k < cell->n; k++) {
                x[k] = cell->levels[k].c;
                y[k] = cell->levels[k].server_tpot;
            }
            analysis_fit_t fit;
            analysis_fit_power(x, y, cell->n, &fit);
            if (fit.ok)
                fprintf(out, "| %s (%s) | %.2f | %.2f | R² %.3f over c=%g-%g |\n", s->profiles[j],
                        s->labels[i], fit.base, fit.exponent, fit.r2, x[0], x[cell->n - 1]);
        }
    double top = s->levels[0];
    for (size_t i = 0; i < s->n_levels; i++)
        if (s->levels[i] <= SIM_STUDY_SCALE_LEVEL)
            top = s->levels[i];
    fprintf(out,
            "\n### 5.2 Throughput Scaling\n\n| Config | TPS at c=%g | TPS at c=%g | Scaling "
            "Factor | Efficiency |\n|---|---|---|---|---|\n",
            s->levels[0], top);
    for (size_t j = 0; j < s->n_profiles; j++)
        for (size_t i = 0; i < s->n_files; i++) {
            const sim_study_cell_t *cell = sim_study_cell(s, i, j);
            const sim_study_level_t *a = sim_study_at(cell, s->levels[0]),
                                    *b = sim_study_at(cell, top);
            if (a && b && a->gen_tps > 0)
                fprintf(out, "| %s (%s) | %.1f | %.1f | %.2fx | %.0f%% |\n", s->profiles[j],
                        s->labels[i], a->gen_tps, b->gen_tps, b->gen_tps / a->gen_tps,
                        100 * b->gen_tps / a->gen_tps / (top / s->levels[0]));
        }
}

int sim_study_print(FILE *out, const char *dir, const char *const *labels, size_t n_files,
                    const char *const *profiles, size_t n_profiles) {
    sim_study_t s = {.labels = labels,
                     .profiles = profiles,
                     .n_files = n_files,
                     .n_profiles = n_profiles,
                     .cells = calloc(n_files * n_profiles, sizeof *s.cells)};
    if (!s.cells) {
        fprintf(stderr, "simulate: study: out of memory\n");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n_files && rc == 0; i++)
        for (size_t j = 0; j < n_profiles && rc == 0; j++) {
            if (!sim_study_runs(i, j))
                continue;
            char cell_dir[4200];
            sim_study_cell_dir(dir, labels[i], profiles[j], cell_dir, sizeof cell_dir);
            rc = sim_study_read(cell_dir, &s.cells[i * n_profiles + j]);
        }
    const sim_study_cell_t *first = &s.cells[0];
    for (size_t i = 0; rc == 0 && i < first->n; i++)
        s.levels[s.n_levels++] = first->levels[i].c;
    if (rc == 0) {
        fprintf(out,
                "# Scaling study - SIMULATED (virtual time through the engine model; results "
                "in %s)\n\n## 3. Server Configuration Comparison (%s, same framework)\n",
                dir, labels[0]);
        sim_study_table(out, &s, "3.1 Server TPOT (ms)", true, fig_server_tpot, "%.2f");
        sim_study_table(out, &s, "3.2 Gen TPS (tok/s)", true, fig_gen_tps, "%.1f");
        sim_study_table(out, &s, "3.3 Server TTFT (ms)", true, fig_server_ttft, "%.1f");
        sim_study_table(out, &s, "3.4 Wall Clock (s)", true, fig_wall, "%.1f");
        fprintf(out, "\n## 4. Framework Comparison (%s, same server)\n", profiles[0]);
        sim_study_table(out, &s, "4.1 Server TPOT (ms)", false, fig_server_tpot, "%.2f");
        sim_study_table(out, &s, "4.2 Gen TPS (tok/s)", false, fig_gen_tps, "%.1f");
        sim_study_table(out, &s, "4.3 Wall Clock (s)", false, fig_wall, "%.1f");
        sim_study_table(out, &s, "4.4 Makespan Mean (ms)", false, fig_makespan, "%.0f");
        sim_study_critical_path(out, &s);
        sim_study_roles(out, &s, SIM_STUDY_ROLE_LEVEL);
        sim_study_errors(out, &s);
        sim_study_scaling(out, &s);
    }
    free(s.cells);
    return rc;
}
