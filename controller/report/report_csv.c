#include "report_csv.h"

#include <stdbool.h>
#include <string.h>

#include "report.h"
#include "report_doc.h"

static const char *const report_csv_metrics[] = {"ttft", "ttfc", "tpot", "itl", "e2e"};
static const char *const report_csv_stats[] = {"mean", "p50", "p90", "p95", "p99"};
/* The slice's plain figures, in column order after the slice's name. */
static const char *const report_csv_figures[] = {
    "requests_ok",         "requests_failed",    "requests_cancelled",
    "error_pct",           "requests_per_s",     "sessions_per_s",
    "output_tokens_per_s", "input_tokens_per_s", "prefix_cache_hit_pct"};

const char *const report_csv_columns =
    "kind,axis,level_index,level,repetition,excluded,slice,name,requests_ok,requests_failed,"
    "requests_cancelled,error_pct,requests_per_s,sessions_per_s,output_tokens_per_s,"
    "input_tokens_per_s,prefix_cache_hit_pct,"
    "ttft_mean_ms,ttft_p50_ms,ttft_p90_ms,ttft_p95_ms,ttft_p99_ms,"
    "ttfc_mean_ms,ttfc_p50_ms,ttfc_p90_ms,ttfc_p95_ms,ttfc_p99_ms,"
    "tpot_mean_ms,tpot_p50_ms,tpot_p90_ms,tpot_p95_ms,tpot_p99_ms,"
    "itl_mean_ms,itl_p50_ms,itl_p90_ms,itl_p95_ms,itl_p99_ms,"
    "e2e_mean_ms,e2e_p50_ms,e2e_p90_ms,e2e_p95_ms,e2e_p99_ms,duration_s";

/* A number field: an integer as it is, a real with 10 significant digits, empty when absent. */
static void report_csv_number(FILE *out, const json_t *v) {
    if (json_is_integer(v))
        fprintf(out, ",%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(out, ",%.10g", json_real_value(v));
    else
        fputc(',', out);
}

/* Where a row sits: its level and repetition. */
typedef struct report_csv_row {
    const char *kind;
    const char *axis;
    size_t level_index;
    const char *level;
    const json_t *repetition; /* a number, or NULL: the level pooled over its repetitions */
    bool excluded;
} report_csv_row_t;

static void report_csv_slice(FILE *out, const report_csv_row_t *row, const char *slice,
                             const char *name, const json_t *s, double duration_s) {
    fprintf(out, "%s,%s,%zu,%s", row->kind, row->axis, row->level_index, row->level);
    if (row->repetition)
        report_csv_number(out, row->repetition);
    else
        fputs(",pooled", out);
    fprintf(out, ",%s,%s,", row->excluded ? "true" : "false", slice);
    report_doc_csv_field(out, name);
    for (size_t i = 0; i < sizeof report_csv_figures / sizeof report_csv_figures[0]; i++) {
        const json_t *v = json_object_get(s, report_csv_figures[i]);
        /* a sweep's level in a results.json written before the rename: the reference's name */
        if (!v && !strcmp(report_csv_figures[i], "output_tokens_per_s"))
            v = json_object_get(s, "tops");
        report_csv_number(out, v);
    }
    char key[32];
    for (size_t m = 0; m < sizeof report_csv_metrics / sizeof report_csv_metrics[0]; m++) {
        snprintf(key, sizeof key, "%s_ms", report_csv_metrics[m]);
        const json_t *block = json_object_get(s, key);
        for (size_t k = 0; k < sizeof report_csv_stats / sizeof report_csv_stats[0]; k++)
            report_csv_number(out, json_object_get(block, report_csv_stats[k]));
    }
    fprintf(out, ",%.10g\n", duration_s);
}

/* The rows of one run document's level: all, each endpoint, each role. */
static void report_csv_level(FILE *out, const report_csv_row_t *row, const json_t *level) {
    double duration = report_doc_number(level, "duration_s");
    report_csv_slice(out, row, "all", "all", level, duration);
    const char *name;
    const json_t *s;
    json_object_foreach((json_t *)json_object_get(level, "per_endpoint"), name, s)
        report_csv_slice(out, row, "endpoint", name, s, duration);
    json_object_foreach((json_t *)json_object_get(level, "per_role"), name, s)
        report_csv_slice(out, row, "role", name, s, duration);
}

/* The rows of each repetition of a sweep's level, from the repetition's own results.json. */
static int report_csv_repetitions(FILE *out, report_csv_row_t *row, const json_t *level,
                                  const char *dir, char *err, size_t err_len) {
    size_t i;
    const json_t *rep;
    json_array_foreach(json_object_get(level, "repetitions"), i, rep) {
        const char *results = json_string_value(json_object_get(rep, "results"));
        if (!results) /* a repetition that never started has no file */
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, results);
        json_error_t jerr;
        json_t *doc = json_load_file(path, 0, &jerr);
        if (!doc) {
            snprintf(err, err_len, "%s (repetition %zu of level %zu): %s", path, i + 1,
                     row->level_index, jerr.text);
            return -1;
        }
        const json_t *version = json_object_get(doc, "schema_version");
        const json_t *first = json_array_get(json_object_get(doc, "levels"), 0);
        if (json_integer_value(version) != REPORT_SCHEMA_VERSION || !json_is_object(first)) {
            snprintf(err, err_len, "%s: not a run's results.json of schema_version %d", path,
                     REPORT_SCHEMA_VERSION);
            json_decref(doc);
            return -1;
        }
        row->repetition = json_object_get(rep, "repetition");
        row->excluded = json_is_true(json_object_get(rep, "excluded"));
        report_csv_level(out, row, first);
        json_decref(doc);
    }
    return 0;
}

int report_csv_render(const json_t *root, const char *dir, FILE *out, char *err, size_t err_len) {
    fprintf(out, "%s\n", report_csv_columns);
    bool sweep = json_object_get(root, "sweep") != NULL;
    const json_t *levels = json_object_get(root, "levels");
    json_t *one = json_integer(1);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(levels); i++) {
        const json_t *level = json_array_get(levels, i);
        char value[32];
        report_csv_row_t row = {.kind = sweep ? "sweep" : "run",
                                .axis = report_doc_axis(root),
                                .level_index = i,
                                .level = report_doc_level_text(root, level, value, sizeof value),
                                .repetition = one};
        if (sweep) {
            rc = report_csv_repetitions(out, &row, level, dir, err, err_len);
            /* the level's headline figures, pooled over its valid repetitions, as results.json */
            row.repetition = NULL;
            row.excluded = false;
            if (rc == 0)
                report_csv_slice(out, &row, "all", "all", level,
                                 report_doc_number(level, "duration_s"));
        } else
            report_csv_level(out, &row, level);
    }
    json_decref(one);
    return rc;
}
