#include "sweep_recover.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "journal.h"
#include "report.h"
#include "report_cmd.h"
#include "spool_merge.h"

/* The figures a sweep's level gives at its top (controller/report/sweep_report.c's names): taken
 * from the rebuilt repetition's level, or its "reference" block (the same keys). */
static const char *const figure_keys[] = {
    "ttft_p50_ms",    "ttft_p95_ms",         "tpot_p50_ms",    "tpot_p95_ms", "latency_p50_ms",
    "latency_p95_ms", "itl_p50_ms",          "itl_p95_ms",     "error_pct",   "actual_rps",
    "requests_per_s", "output_tokens_per_s", "kv_hit_rate_pct"};
/* A repetition's blocks kept as they are (the latency distributions, errors, finish reasons). */
static const char *const block_keys[] = {"ttft_ms",        "ttfc_ms", "tpot_ms",
                                         "itl_ms",         "e2e_ms",  "errors",
                                         "finish_reasons", "buckets", "workload_digest"};
/* A repetition's counts, added up over the level's repetitions: its requests ("records" adds
 * those up), then its output tokens, last. */
static const char *const count_keys[] = {
    "requests_ok",     "requests_failed",        "requests_cancelled",
    "requests_warmup", "requests_warmup_failed", "output_tokens"};

static json_t *load(const char *dir) {
    char path[4700];
    snprintf(path, sizeof path, "%s/results.json", dir);
    return json_load_file(path, 0, NULL);
}

bool sweep_recover_is_sweep(const char *sweep_dir) {
    json_t *root = load(sweep_dir);
    bool sweep = root && !strcmp(json_string_value(json_object_get(root, "kind")) ?: "", "sweep");
    json_decref(root);
    char levels[4200];
    snprintf(levels, sizeof levels, "%s/levels", sweep_dir);
    struct stat st;
    return sweep || (stat(levels, &st) == 0 && S_ISDIR(st.st_mode));
}

int sweep_recover_find(const char *sweep_dir, sweep_recover_level_t *out) {
    memset(out, 0, sizeof *out);
    json_t *root = load(sweep_dir);
    out->index = json_array_size(json_object_get(root, "levels"));
    json_decref(root);
    char levels[4200], prefix[32];
    snprintf(levels, sizeof levels, "%s/levels", sweep_dir);
    snprintf(prefix, sizeof prefix, "%02zu-", out->index + 1); /* sweep_run.c's level names */
    DIR *d = opendir(levels);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            snprintf(out->dir, sizeof out->dir, "%s/%s", levels, e->d_name);
            break;
        }
    if (d)
        closedir(d);
    for (uint32_t r = 1; out->dir[0]; r++) {
        char rep[4600];
        snprintf(rep, sizeof rep, "%s/rep-%u", out->dir, (unsigned)r);
        struct stat st;
        if (stat(rep, &st) != 0)
            break;
        out->reps = r;
        snprintf(out->rep, sizeof out->rep, "%s", rep);
    }
    /* the repetition in flight has its journal (a finished one, its results.json instead) */
    char journal[4700], results[4700];
    snprintf(journal, sizeof journal, "%s/%s", out->rep, JOURNAL_NAME);
    snprintf(results, sizeof results, "%s/results.json", out->rep);
    struct stat st;
    return out->reps > 0 && (stat(journal, &st) == 0 || stat(results, &st) == 0);
}

/* The axis and value of the level from its directory's name ("02-c4", "03-r2.5"). */
static void level_value(const sweep_recover_level_t *level, json_t *o) {
    const char *name = strrchr(level->dir, '/');
    name = name ? name + 1 : level->dir;
    const char *dash = strchr(name, '-');
    char *end = NULL;
    double value = dash && dash[1] ? strtod(dash + 2, &end) : 0;
    bool rate = dash && dash[1] == 'r';
    json_t *v = end && end != dash + 2
                    ? (value == (double)(json_int_t)value && !rate ? json_integer((json_int_t)value)
                                                                   : json_real(value))
                    : json_null();
    json_object_set_new(o, rate ? "rate" : "concurrency", v);
}

/* The rebuilt level's object: the repetitions' counts added up, the figures and distributions
 * of the last repetition with requests (over its run after the warm-up: no snapshot window),
 * marked interrupted and not valid, with why. */
static json_t *level_json(const sweep_recover_level_t *level, json_t **reps, uint64_t from_spools,
                          const char *workers) {
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer((json_int_t)level->index));
    level_value(level, o);
    json_object_set_new(o, "rate_cap", json_null());
    json_object_set_new(o, "interrupted", json_true());
    json_object_set_new(o, "stopped_early", json_false());
    json_object_set_new(o, "rebuilt", json_true());
    uint32_t run = 0, from = 0;
    json_t *repetitions = json_array();
    json_int_t sums[sizeof count_keys / sizeof *count_keys] = {0};
    json_t *interrupted = json_pack("{s:b, s:[s]}", "valid", 0, "reasons", "interrupted");
    for (uint32_t r = 0; r < level->reps; r++) {
        json_t *l = json_array_get(json_object_get(reps[r], "levels"), 0);
        if (!l)
            continue;
        run++;
        for (size_t k = 0; k < sizeof count_keys / sizeof *count_keys; k++)
            sums[k] += json_integer_value(json_object_get(l, count_keys[k]));
        if (json_integer_value(json_object_get(l, "requests_ok")) > 0 || !from)
            from = r + 1;
        const char *name = strrchr(level->dir, '/');
        char results[4700];
        snprintf(results, sizeof results, "levels/%s/rep-%u/results.json",
                 name ? name + 1 : level->dir, (unsigned)r + 1);
        bool in_flight = r + 1 == level->reps;
        json_array_append_new(
            repetitions,
            json_pack("{s:i, s:b, s:n, s:b, s:b, s:b, s:s, s:s, s:O?, s:O?, s:O?, s:O?}",
                      "repetition", (int)r + 1, "excluded", 0, "excluded_reason", "interrupted",
                      in_flight, "stopped_early", 0, "drain_cut", 0, "stop_reason",
                      in_flight ? "interrupted" : "", "results", results, "validity",
                      in_flight ? interrupted : json_object_get(reps[r], "validity"), "requests_ok",
                      json_object_get(l, "requests_ok"), "requests_failed",
                      json_object_get(l, "requests_failed"), "requests_cancelled",
                      json_object_get(l, "requests_cancelled")));
    }
    json_decref(interrupted);
    json_object_set_new(o, "repetitions_run", json_integer(run));
    json_object_set_new(o, "workers", json_null());
    json_object_set_new(o, "valid_runs", json_integer(0));
    char label[32];
    snprintf(label, sizeof label, "0/%u", (unsigned)run);
    json_object_set_new(o, "valid_runs_label", json_string(label));
    json_object_set_new(o, "pooled_over", json_string("rebuilt"));
    json_t *l = from ? json_array_get(json_object_get(reps[from - 1], "levels"), 0) : NULL;
    json_t *reference = json_object_get(l, "reference");
    for (size_t k = 0; k < sizeof figure_keys / sizeof *figure_keys; k++) {
        json_t *v = json_object_get(l, figure_keys[k]);
        v = json_is_number(v) ? v : json_object_get(reference, figure_keys[k]);
        char percentile[4] = ""; /* "itl_p95_ms": its "itl_ms" block's "p95" */
        if (!json_is_number(v) && !strncmp(figure_keys[k], "itl_", 4)) {
            memcpy(percentile, figure_keys[k] + 4, 3);
            v = json_object_get(json_object_get(l, "itl_ms"), percentile);
        }
        json_object_set_new(o, figure_keys[k], json_is_number(v) ? json_incref(v) : json_null());
    }
    for (size_t k = 0; k < sizeof block_keys / sizeof *block_keys; k++) {
        json_t *v = json_object_get(l, block_keys[k]);
        if (v)
            json_object_set(o, block_keys[k], v);
    }
    for (size_t k = 0; k < sizeof count_keys / sizeof *count_keys; k++)
        json_object_set_new(o, count_keys[k], json_integer(sums[k]));
    /* every request the level's workers ended, the warm-up's too: what the server saw */
    json_int_t records = 0;
    for (size_t k = 0; k + 1 < sizeof count_keys / sizeof *count_keys; k++)
        records += sums[k];
    json_object_set_new(o, "records", json_integer(records));
    json_object_set_new(o, "figures_from_repetition", from ? json_integer(from) : json_null());
    json_object_set_new(o, "records_from_workers", json_integer((json_int_t)from_spools));
    char note[600];
    snprintf(note, sizeof note,
             "interrupted: its driver (serve) stopped during this level; rebuilt from its "
             "repetitions' journals%s%s%s: a partial level, its figures over the whole run after "
             "the warm-up (drain included, no snapshot window), not comparable with a complete "
             "level",
             workers && workers[0] ? " and the batches its workers handed over (" : "",
             workers ? workers : "", workers && workers[0] ? ")" : "");
    json_object_set_new(o, "validity", json_pack("{s:b, s:[s]}", "valid", 0, "reasons", note));
    json_object_set_new(o, "repetitions", repetitions);
    json_object_set_new(o, "server", json_null());
    json_object_set_new(o, "gap", json_null());
    json_object_set_new(o, "server_from_repetition", json_null());
    return o;
}

/* A sweep's results.json for one whose first level was in flight: what the repetition's
 * results.json says of the run, and no level yet. */
static json_t *new_root(json_t *rep, const sweep_recover_level_t *level) {
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_integer(REPORT_SCHEMA_VERSION));
    json_object_set_new(root, "generator", json_string("stampede"));
    json_object_set_new(root, "kind", json_string("sweep"));
    json_t *served_by = json_object_get(rep, "served_by");
    if (served_by)
        json_object_set(root, "served_by", served_by);
    json_t *run = json_object_get(rep, "run");
    json_object_set_new(root, "run", run ? json_deep_copy(run) : json_object());
    json_t *axis = json_object(); /* the level's value names its axis */
    level_value(level, axis);
    const char *key = json_object_iter_key(json_object_iter(axis));
    json_object_set_new(
        root, "sweep",
        json_pack("{s:s, s:s, s:n}", "source", "list", "axis", key, "levels_planned"));
    json_decref(axis);
    json_object_set_new(root, "levels", json_array());
    json_object_set_new(root, "analysis", json_object());
    return root;
}

int sweep_recover_write(const char *name, const char *sweep_dir, const sweep_recover_level_t *level,
                        char **spools, int n_spools, const char *workers, uint64_t *from_spools) {
    json_t **reps = calloc(level->reps, sizeof *reps);
    if (!reps) {
        fprintf(stderr, "%s: %s: out of memory\n", name, sweep_dir);
        return -1;
    }
    uint64_t records = 0;
    for (uint32_t r = 0; r < level->reps; r++) {
        char rep[4600];
        snprintf(rep, sizeof rep, "%s/rep-%u", level->dir, (unsigned)r + 1);
        bool last = r + 1 == level->reps;
        uint64_t from = 0;
        spool_merge_options_t merge = {.allow_invalid = true, .from_spools = &from};
        /* a finished repetition's rebuild stays as it is; the one in flight is redone with
         * every hand-over so far */
        reps[r] = last ? NULL : load(rep);
        if (!reps[r] &&
            spool_merge_run(rep, last ? spools : NULL, last ? n_spools : 0, &merge) != 1)
            reps[r] = load(rep);
        records += from;
    }
    if (from_spools)
        *from_spools = records;
    char path[4400], err[4400];
    snprintf(path, sizeof path, "%s/results.json", sweep_dir);
    json_t *root = load(sweep_dir);
    if (!root)
        for (uint32_t r = 0; r < level->reps && !root; r++)
            root = reps[r] ? new_root(reps[r], level) : NULL;
    int rc = -1;
    if (!root) {
        fprintf(stderr, "%s: %s: no repetition of level %zu could be rebuilt\n", name, sweep_dir,
                level->index + 1);
        goto out;
    }
    json_t *levels = json_object_get(root, "levels");
    json_t *l = level_json(level, reps, records, workers);
    if (json_array_size(levels) > level->index)
        json_array_set_new(levels, level->index, l);
    else
        json_array_append_new(levels, l);
    json_object_set_new(root, "partial", json_true());
    json_object_set_new(json_object_get(root, "run"), "stop_reason", json_string("interrupted"));
    json_t *reasons = json_array();
    for (size_t i = 0; i < json_array_size(levels); i++) {
        json_t *v = json_object_get(json_array_get(levels, i), "validity");
        if (!json_is_true(json_object_get(v, "valid"))) {
            char reason[200];
            snprintf(reason, sizeof reason, "level %zu is not valid", i + 1);
            json_array_append_new(reasons, json_string(reason));
        }
    }
    json_object_set_new(root, "validity", json_pack("{s:b, s:o}", "valid", 0, "reasons", reasons));
    if (report_write_json_root(root, path) != 0)
        fprintf(stderr, "%s: cannot write %s: %s\n", name, path, strerror(errno));
    else if (report_cmd_render(sweep_dir, err, sizeof err) != 0)
        fprintf(stderr, "%s: %s: cannot write the reports: %s\n", name, sweep_dir, err);
    else
        rc = 0;
out:
    json_decref(root);
    for (uint32_t r = 0; r < level->reps; r++)
        json_decref(reps[r]);
    free(reps);
    return rc;
}
