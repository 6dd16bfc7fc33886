#include "sim_replicas.h"

#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "outfile.h"
#include "report.h"
#include "report_cmd.h"
#include "report_doc.h"

#define SIM_REPLICAS_NAME "simulate"
/* Trials a search holds: a bisection over 1 ... 4096 takes 13, a table at most the table's max. */
#define SIM_REPLICAS_MAX_TRIALS 64

/* One replica count, as its simulation judged it. */
typedef struct sim_replicas_trial {
    uint32_t replicas;
    bool pass;            /* its run met every SLO, or its search's frontier carried the target */
    char binding[256];    /* the SLO that bound its run, or its search's first failing level */
    double frontier;      /* a search's highest healthy level; NAN: none (or no search) */
    double first_failing; /* a search's lowest failing level; NAN: none failed up to max */
    char outcome[32];     /* the search's outcome (found, max_passes, ...) */
    char verdict[32];     /* the target: carried, not carried, not shown; "" without one */
} sim_replicas_trial_t;

/* The question (the file, its capacity search and target) and the trials that answer it. */
typedef struct sim_replicas {
    const simulate_options_t *o;
    uint32_t max;    /* the most replicas tried: --find-replicas MAX */
    char base[4096]; /* OUT: each trial in OUT/replicas-N */
    bool capacity;   /* each trial is the file's capacity search */
    double target;   /* capacity.target, in the axis' unit; 0: none */
    char axis[16];
    char unit[16];
    sim_replicas_trial_t trials[SIM_REPLICAS_MAX_TRIALS];
    size_t n_trials;
    uint32_t needed; /* the answer; 0: none (none up to the bound, or no target) */
    char statement[1024];
} sim_replicas_t;

/* A level as the tables write it: "12.5", or `none` for NAN. */
static const char *sim_replicas_level(double level, const char *none, char *buf, size_t len) {
    if (isnan(level))
        return none;
    snprintf(buf, len, "%g", level);
    return buf;
}

/* The judgement of a run of one count: its analysis.slo. */
static int sim_replicas_read_slo(const json_t *analysis, sim_replicas_trial_t *t) {
    const json_t *slo = json_object_get(analysis, "slo");
    if (!json_is_object(slo))
        return -1;
    t->pass = json_is_true(json_object_get(slo, "pass"));
    const char *binding = json_string_value(json_object_get(slo, "binding"));
    snprintf(t->binding, sizeof t->binding, "%s", binding ? binding : "");
    return 0;
}

/* The judgement of a search of one count: its analysis.capacity (cli/capacity_cli.c). */
static int sim_replicas_read_capacity(sim_replicas_t *self, const json_t *analysis,
                                      sim_replicas_trial_t *t) {
    const json_t *c = json_object_get(analysis, "capacity");
    if (!json_is_object(c))
        return -1;
    const json_t *first = json_object_get(c, "first_failing");
    t->frontier = report_doc_number(json_object_get(c, "frontier"), "level");
    t->first_failing = report_doc_number(first, "level");
    const char *outcome = json_string_value(json_object_get(c, "outcome"));
    const char *binding = json_string_value(json_object_get(first, "binding"));
    const char *verdict = json_string_value(json_object_get(c, "target_verdict"));
    const char *axis = json_string_value(json_object_get(c, "axis"));
    const char *unit = json_string_value(json_object_get(c, "unit"));
    snprintf(t->outcome, sizeof t->outcome, "%s", outcome ? outcome : "?");
    snprintf(t->binding, sizeof t->binding, "%s", binding ? binding : "");
    snprintf(t->verdict, sizeof t->verdict, "%s", verdict ? verdict : "");
    snprintf(self->axis, sizeof self->axis, "%s", axis ? axis : "?");
    snprintf(self->unit, sizeof self->unit, "%s", unit ? unit : "?");
    t->pass = verdict && !strcmp(verdict, "carried");
    return 0;
}

/* Simulates the file on n replicas into OUT/replicas-n and judges it. -1 when it could not. */
static int sim_replicas_trial(sim_replicas_t *self, uint32_t n) {
    assert(self->n_trials < SIM_REPLICAS_MAX_TRIALS);
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/replicas-%u", self->base, n);
    int rc = simulate_on(self->o, n, dir);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *root = rc == 0 || rc == 3 ? json_load_file(path, 0, NULL) : NULL;
    const json_t *analysis = json_object_get(root, "analysis");
    sim_replicas_trial_t *t = &self->trials[self->n_trials];
    *t = (sim_replicas_trial_t){.replicas = n, .frontier = NAN, .first_failing = NAN};
    int got = self->capacity ? sim_replicas_read_capacity(self, analysis, t)
                             : sim_replicas_read_slo(analysis, t);
    json_decref(root);
    if (got != 0) {
        fprintf(stderr, SIM_REPLICAS_NAME ": the %s on %u replicas has no %s (%s)\n",
                self->capacity ? "capacity search" : "run", n,
                self->capacity ? "analysis.capacity" : "SLO verdict", path);
        return -1;
    }
    self->n_trials++;
    char level[32];
    if (self->capacity)
        fprintf(stderr, SIM_REPLICAS_NAME ": %u replica%s: frontier %s %s %s%s%s\n", n,
                n == 1 ? "" : "s", self->axis,
                sim_replicas_level(t->frontier, "none", level, sizeof level), self->unit,
                t->verdict[0] ? ", target " : "", t->verdict);
    else
        fprintf(stderr, SIM_REPLICAS_NAME ": %u replica%s: %s%s\n", n, n == 1 ? "" : "s",
                t->pass ? "every SLO met" : "FAIL, binding: ", t->pass ? "" : t->binding);
    return 0;
}

/* The fewest passing count by bisection over 1 ... max (more replicas never serve the same load
 * worse): max first, then halves of the bracket. 0, or -1 when a trial could not run. */
static int sim_replicas_bisect(sim_replicas_t *self) {
    uint32_t lo = 0, hi = self->max; /* lo fails (0: none tried), hi to check */
    if (sim_replicas_trial(self, hi) != 0)
        return -1;
    if (!self->trials[0].pass)
        return 0;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sim_replicas_trial(self, mid) != 0)
            return -1;
        if (self->trials[self->n_trials - 1].pass)
            hi = mid;
        else
            lo = mid;
    }
    self->needed = hi;
    return 0;
}

/* The trial of n replicas, NULL when none ran. */
static const sim_replicas_trial_t *sim_replicas_of(const sim_replicas_t *self, uint32_t n) {
    for (size_t i = 0; i < self->n_trials; i++)
        if (self->trials[i].replicas == n)
            return &self->trials[i];
    return NULL;
}

/* The answer as one sentence: stdout, replicas.md, the chosen trial's reports. */
static void sim_replicas_state(sim_replicas_t *self) {
    const simulate_options_t *o = self->o;
    char mark[256], level[32];
    snprintf(mark, sizeof mark, "SIMULATED, profile %s, router %s", o->profile,
             mock_router_name(o->router));
    const sim_replicas_trial_t *top = &self->trials[0]; /* MAX, the first run */
    char *s = self->statement;
    size_t len = sizeof self->statement;
    if (self->capacity && !(self->target > 0))
        snprintf(s, len,
                 "Replicas needed: not decided (%s): %s gives no capacity.target, the load to "
                 "carry; the capacity of 1 ... %u replicas is tabled",
                 mark, o->config_path, self->max);
    else if (self->needed && self->capacity)
        snprintf(s, len,
                 "Replicas needed: %u (%s): the fewest whose capacity search of %s carried the "
                 "target, %s %g %s, at every SLO (frontier %s %s; searched 1 ... %u)",
                 self->needed, mark, o->config_path, self->axis, self->target, self->unit,
                 sim_replicas_level(sim_replicas_of(self, self->needed)->frontier, "none", level,
                                    sizeof level),
                 self->unit, self->max);
    else if (self->needed)
        snprintf(s, len,
                 "Replicas needed: %u (%s): the fewest whose run of %s met every SLO (searched 1 "
                 "... %u)",
                 self->needed, mark, o->config_path, self->max);
    else if (self->capacity)
        snprintf(s, len,
                 "Replicas needed: more than %u (%s): the capacity search of %s on %u replicas "
                 "did not show the target, %s %g %s, carried (frontier %s %s: %s)",
                 self->max, mark, o->config_path, self->max, self->axis, self->target, self->unit,
                 sim_replicas_level(top->frontier, "none", level, sizeof level), self->unit,
                 top->verdict);
    else
        snprintf(s, len,
                 "Replicas needed: more than %u (%s): %u replicas missed the SLOs of %s "
                 "(binding: %s)",
                 self->max, mark, self->max, o->config_path, top->binding);
}

/* The trials in order of replica count, as a markdown table. */
static void sim_replicas_table(const sim_replicas_t *self, FILE *out) {
    bool target = self->capacity && self->target > 0;
    if (self->capacity) {
        fprintf(out,
                "| replicas | frontier (%s, %s) | per replica | first failing | outcome | "
                "binding SLO |",
                self->axis, self->unit);
        if (target)
            fprintf(out, " target %g %s |", self->target, self->unit);
        fprintf(out, "\n|---:|---:|---:|---:|---|---|%s\n", target ? "---|" : "");
    } else {
        fprintf(out, "| replicas | every SLO met | binding SLO |\n|---:|---|---|\n");
    }
    for (uint32_t n = 1; n <= self->max; n++) {
        const sim_replicas_trial_t *t = sim_replicas_of(self, n);
        if (!t)
            continue;
        if (!self->capacity) {
            fprintf(out, "| %u | %s | %s |\n", n, t->pass ? "yes" : "no", t->binding);
            continue;
        }
        char frontier[32], per[32], first[32];
        fprintf(out, "| %u | %s | %s | %s | %s | %s |", n,
                sim_replicas_level(t->frontier, "none", frontier, sizeof frontier),
                sim_replicas_level(t->frontier / n, "-", per, sizeof per),
                sim_replicas_level(t->first_failing, "none up to max", first, sizeof first),
                t->outcome, t->binding[0] ? t->binding : "-");
        if (target)
            fprintf(out, " %s |", t->verdict);
        fprintf(out, "\n");
    }
}

/* OUT/replicas.md: the question, the answer, every trial. */
static int sim_replicas_write_md(const sim_replicas_t *self, const char *path) {
    FILE *out = outfile_fopen(path);
    if (!out)
        return -1;
    const simulate_options_t *o = self->o;
    fprintf(out, "# Replicas needed: %s\n\n", o->config_path);
    fprintf(out,
            "**SIMULATED:** virtual time through the engine model, profile %s, router %s, 1 ... "
            "%u replicas (`stampede simulate --find-replicas %u`): no server was measured\n\n",
            o->profile, mock_router_name(o->router), self->max, self->max);
    fprintf(out, "**%s**\n\n", self->statement);
    if (self->capacity)
        fprintf(out,
                "Each count ran the file's capacity search: its frontier is the highest %s level "
                "that met every SLO.%s\n\n",
                self->axis,
                self->target > 0 ? " A count carries the target when its frontier is at or above "
                                   "it (not shown: the target is inside the final bracket)."
                                 : "");
    sim_replicas_table(self, out);
    fprintf(out, "\nEach trial's results and reports: `replicas-N/`.\n");
    return ferror(out) | (fclose(out) != 0) ? -1 : 0;
}

/* OUT/replicas.json: the question, the answer and every trial, in the order they ran. */
static int sim_replicas_write_json(const sim_replicas_t *self, const char *path) {
    const simulate_options_t *o = self->o;
    json_t *list = json_array();
    for (size_t i = 0; i < self->n_trials; i++) {
        const sim_replicas_trial_t *t = &self->trials[i];
        json_t *trial = json_pack("{s:i, s:b, s:s}", "replicas", (json_int_t)t->replicas, "pass",
                                  t->pass, "binding", t->binding);
        if (self->capacity) {
            json_object_set_new(trial, "frontier",
                                isnan(t->frontier) ? json_null() : json_real(t->frontier));
            json_object_set_new(trial, "first_failing",
                                isnan(t->first_failing) ? json_null()
                                                        : json_real(t->first_failing));
            json_object_set_new(trial, "outcome", json_string(t->outcome));
            json_object_set_new(trial, "target_verdict",
                                t->verdict[0] ? json_string(t->verdict) : json_null());
        }
        json_array_append_new(list, trial);
    }
    json_t *root = json_pack("{s:b, s:s, s:s, s:s, s:i, s:s, s:o, s:s, s:o}", "simulated", 1,
                             "file", o->config_path, "profile", o->profile, "router",
                             mock_router_name(o->router), "searched_up_to", (json_int_t)self->max,
                             "by", self->capacity ? "capacity" : "slo", "needed",
                             self->needed ? json_integer(self->needed) : json_null(), "statement",
                             self->statement, "trials", list);
    if (self->capacity)
        json_object_set_new(root, "capacity",
                            json_pack("{s:s, s:s, s:o}", "axis", self->axis, "unit", self->unit,
                                      "target",
                                      self->target > 0 ? json_real(self->target) : json_null()));
    int rc = report_write_json_root(root, path);
    json_decref(root);
    return rc;
}

/* The chosen trial's results.json gets analysis.replicas, and its reports say the count. */
static int sim_replicas_mark_chosen(const sim_replicas_t *self) {
    char dir[4200], path[4300], err[512];
    snprintf(dir, sizeof dir, "%s/replicas-%u", self->base, self->needed);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *root = json_load_file(path, 0, NULL);
    json_t *analysis = json_object_get(root, "analysis");
    if (!json_is_object(analysis)) {
        fprintf(stderr, SIM_REPLICAS_NAME ": cannot read %s to state the count\n", path);
        json_decref(root);
        return -1;
    }
    json_object_set_new(analysis, "replicas",
                        json_pack("{s:b, s:i, s:i, s:s, s:s}", "simulated", 1, "needed",
                                  (json_int_t)self->needed, "searched_up_to", (json_int_t)self->max,
                                  "statement", self->statement, "search", "../replicas.json"));
    int rc = report_write_json_root(root, path);
    json_decref(root);
    if (rc != 0) {
        fprintf(stderr, SIM_REPLICAS_NAME ": cannot write %s\n", path);
        return -1;
    }
    if (report_cmd_render(dir, err, sizeof err) != 0) {
        fprintf(stderr, SIM_REPLICAS_NAME ": %s\n", err);
        return -1;
    }
    return 0;
}

/* The file's question: its SLOs, its capacity search and target, and OUT. 0, or -1 said. */
static int sim_replicas_question(sim_replicas_t *self) {
    const simulate_options_t *o = self->o;
    config_t cfg;
    config_error_t err;
    if (config_load_file(&cfg, o->config_path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, SIM_REPLICAS_NAME ": %s\n", msg);
        return -1;
    }
    bool ok = cfg.slo.n > 0 && cfg.sweep.axis == SWEEP_AXIS_NONE && !o->source;
    self->capacity = cfg.capacity.given;
    self->target = cfg.capacity.target;
    snprintf(self->axis, sizeof self->axis, "%s", config_axis_name(cfg.capacity.axis));
    const char *base = o->out_dir ? o->out_dir : cfg.output.dir ? cfg.output.dir : "results";
    snprintf(self->base, sizeof self->base, "%s", base);
    config_free(&cfg);
    assert(!self->capacity || o->search); /* the tool gives the search of a capacity file */
    if (!ok) {
        fprintf(stderr,
                SIM_REPLICAS_NAME ": %s: --find-replicas needs an slo: section and no sweep: "
                                  "section: it judges each replica count by the SLOs (one run, "
                                  "or the capacity: section's search)\n",
                o->config_path);
        return -1;
    }
    if (self->capacity && !(self->target > 0) && self->max > SIM_REPLICAS_TABLE_MAX) {
        fprintf(stderr,
                SIM_REPLICAS_NAME ": %s: without capacity.target (the load to carry) "
                                  "--find-replicas %u would run a capacity search for each "
                                  "count 1 ... %u; give capacity.target to bisect, or a MAX of "
                                  "at most %d\n",
                o->config_path, self->max, self->max, SIM_REPLICAS_TABLE_MAX);
        return -1;
    }
    return 0;
}

int sim_replicas_find(const simulate_options_t *o, uint32_t max) {
    sim_replicas_t *self = calloc(1, sizeof *self);
    if (!self) {
        fprintf(stderr, SIM_REPLICAS_NAME ": out of memory\n");
        return 1;
    }
    self->o = o;
    self->max = max;
    int rc = sim_replicas_question(self) == 0 ? 0 : 1;
    if (rc == 0 && self->capacity && !(self->target > 0)) {
        for (uint32_t n = 1; rc == 0 && n <= self->max; n++)
            rc = sim_replicas_trial(self, n) == 0 ? 0 : 1;
    } else if (rc == 0) {
        rc = sim_replicas_bisect(self) == 0 ? 0 : 1;
    }
    if (rc != 0) {
        free(self);
        return 1;
    }
    sim_replicas_state(self);
    char json_path[4200], md_path[4200];
    snprintf(json_path, sizeof json_path, "%s/replicas.json", self->base);
    snprintf(md_path, sizeof md_path, "%s/replicas.md", self->base);
    if (sim_replicas_write_json(self, json_path) != 0 || sim_replicas_write_md(self, md_path)) {
        fprintf(stderr, SIM_REPLICAS_NAME ": cannot write %s or %s\n", json_path, md_path);
        rc = 1;
    }
    if (self->needed && sim_replicas_mark_chosen(self) != 0)
        rc = 1;
    printf("\n");
    sim_replicas_table(self, stdout);
    printf("\n%s; ", self->statement);
    if (self->needed)
        printf("results in %s/replicas-%u, the search in %s\n", self->base, self->needed, md_path);
    else
        printf("the search in %s\n", md_path);
    bool answered = self->needed || (self->capacity && !(self->target > 0));
    free(self);
    return answered ? rc : 1;
}
