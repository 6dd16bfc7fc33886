/* The reports stampede writes from a results.json (controller/report_md, report_csv, report_hgrm,
 * report_cmd) on the fixtures of tests/fixtures/report (made by `stampede run` on the .yaml
 * files there: a run, a sweep, a diamond graph run and sweep, a run over two endpoints), and the
 * workload file's deployment: map they show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "report_cmd.h"
#include "report_csv.h"
#include "report_doc.h"
#include "report_hgrm.h"
#include "report_md.h"
#include "temp_file.h"
#include "unit_main.h"

#define FIXTURES "tests/fixtures/report"
#define REFERENCE FIXTURES "/reference-sweep-round-robin-eagle3-50-160.md"

static json_t *load_fixture(const char *name) {
    char dir[256], err[1024];
    snprintf(dir, sizeof dir, FIXTURES "/%s", name);
    json_t *root = report_cmd_load(dir, err, sizeof err);
    if (!root)
        fail_msg("%s", err);
    return root;
}

/* report_md_render into a malloc'd string. */
static char *render_md(const json_t *root) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    report_md_render(root, out);
    fclose(out);
    return text;
}

static char *render_csv(const json_t *root, const char *dir) {
    char *text = NULL, err[1024];
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (report_csv_render(root, dir, out, err, sizeof err) != 0)
        fail_msg("%s", err);
    fclose(out);
    /* a copy: gcc 12 -O3 takes what open_memstream filled for a pointer into the local `text`
     * (-Wdangling-pointer) in the callers */
    char *copy = strdup(text);
    free(text);
    return copy;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, out);
    fclose(f);
    fclose(out);
    return text;
}

static void test_report_md_and_csv_render_the_same_bytes_from_a_fresh_load(void **state) {
    const char *names[] = {"quickstart", "sweep", "diamond", "two-endpoints"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, FIXTURES "/%s", names[i]);
        json_t *a = load_fixture(names[i]), *b = load_fixture(names[i]);
        char *md_a = render_md(a), *md_b = render_md(b);
        char *csv_a = render_csv(a, dir), *csv_b = render_csv(b, dir);
        assert_string_equal(md_a, md_b);
        assert_string_equal(csv_a, csv_b);
        free(md_a), free(md_b), free(csv_a), free(csv_b);
        json_decref(a), json_decref(b);
    }
}

/* A Markdown section: its heading and the header row of its first table ("" when none), and
 * the first cell of each row of that table (NUL-separated in rows). */
typedef struct section {
    char heading[160];
    char header[400];
    char rows[1024];
    size_t rows_len;
} section_t;

static size_t parse_sections(const char *text, section_t *out, size_t cap) {
    size_t n = 0;
    int table_line = 0; /* 0 none, 1 header seen, 2 rule seen */
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > 3 && line[0] == '#' && line[1] == '#' && n < cap) {
            section_t *s = &out[n++];
            memset(s, 0, sizeof *s);
            snprintf(s->heading, sizeof s->heading, "%.*s", (int)len, line);
            table_line = 0;
        } else if (n > 0 && len > 0 && line[0] == '|') {
            section_t *s = &out[n - 1];
            if (table_line == 0 && !s->header[0]) {
                snprintf(s->header, sizeof s->header, "%.*s", (int)len, line);
                table_line = 1;
            } else if (table_line == 1) {
                table_line = 2;
            } else if (table_line == 2) {
                const char *cell_end = strchr(line + 1, '|');
                int cell = (int)(cell_end - line - 1);
                s->rows_len += (size_t)snprintf(s->rows + s->rows_len, sizeof s->rows - s->rows_len,
                                                "%.*s;", cell, line + 1);
            }
        } else if (len == 0 || line[0] != '|') {
            table_line = table_line == 2 || table_line == 1 ? 3 : table_line;
        }
        line = end ? end + 1 : NULL;
    }
    return n;
}

static const section_t *find_section(const section_t *s, size_t n, const char *heading, size_t from,
                                     size_t *at) {
    for (size_t i = from; i < n; i++)
        if (!strcmp(s[i].heading, heading)) {
            *at = i;
            return &s[i];
        }
    return NULL;
}

/* The reference's words that report.md replaces (issue 18 §7): a heading that named two metrics
 * as one, and "Actual RPS" for what is conversation starts per second. */
static const char *const renamed[][2] = {
    {"## TPOT -- Time Per Output Token (ITL)", "## TPOT -- Time Per Output Token"},
    {"## Actual RPS (Conversation Starts/s)", "## Conversation Starts/s"},
    {"| Concurrency | Actual RPS |", "| Concurrency | Conversation starts/s |"},
};

/* Text as report.md words it (the reference's own, but the renamed). */
static const char *ours_for(const char *reference) {
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (!strcmp(reference, renamed[i][0]))
            return renamed[i][1];
    return reference;
}

/* Every section of the reference sweep report, but its Phase 3 vs Phase 0 analysis (that is
 * `stampede compare`'s), is in report.md in the same order and with the same table columns (but
 * for the renamed words); the saturation table has the reference's rows. */
static void check_reference_headings_and_columns(const char *path) {
    static section_t ref[64], ours[64];
    char *reference = read_text(path);
    size_t n_ref = parse_sections(reference, ref, 64);
    json_t *root = load_fixture("sweep");
    char *md = render_md(root);
    size_t n_ours = parse_sections(md, ours, 64);
    size_t checked = 0, at = 0;
    for (size_t i = 0; i < n_ref; i++) {
        if (strncmp(ref[i].heading, "## ", 3) != 0 || !strncmp(ref[i].heading, "## Analysis:", 12))
            continue;
        const section_t *s = find_section(ours, n_ours, ours_for(ref[i].heading), at, &at);
        if (!s)
            fail_msg("%s: report.md has no '%s' after the previous reference heading", path,
                     ours_for(ref[i].heading));
        if (strcmp(s->header, ours_for(ref[i].header)) != 0)
            fail_msg("%s: '%s' has columns '%s', report.md '%s'", path, ref[i].heading,
                     ours_for(ref[i].header), s->header);
        checked++;
    }
    assert_int_equal(checked, 8); /* Methodology .. Actual RPS and Reference Data */
    size_t ref_at, ours_at;
    const section_t *want = find_section(ref, n_ref, "### Saturation Point", 0, &ref_at);
    const section_t *got = find_section(ours, n_ours, "### Saturation Point", 0, &ours_at);
    assert_non_null(want);
    assert_non_null(got);
    assert_string_equal(got->rows, want->rows);
    assert_true(!strncmp(got->header, "| Metric |", 10));
    free(md);
    free(reference);
    json_decref(root);
}

static void test_report_md_holds_the_reference_headings_and_columns(void **state) {
    check_reference_headings_and_columns(REFERENCE);
}

/* The same against the shared reference itself (../shared/reference beside the checkout, or the
 * directory STAMPEDE_SHARED_REFERENCE names) when it is there, so a change to the reference that
 * the fixture copy has not followed fails here. Skipped where the checkout has no such sibling. */
static void test_report_md_holds_the_shared_reference_headings(void **state) {
    const char *dir = getenv("STAMPEDE_SHARED_REFERENCE");
    char path[1024];
    snprintf(path, sizeof path, "%s/sweep-round-robin-eagle3-50-160.md",
             dir && *dir ? dir : "../shared/reference");
    if (access(path, R_OK) != 0) {
        if (dir && *dir)
            fail_msg("STAMPEDE_SHARED_REFERENCE=%s: no readable %s", dir, path);
        skip();
    }
    check_reference_headings_and_columns(path);
}

static void test_report_md_tables_have_a_row_per_level_with_the_level_figures(void **state) {
    json_t *root = load_fixture("sweep");
    char *md = render_md(root);
    const json_t *levels = json_object_get(root, "levels");
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *ref = json_object_get(json_array_get(levels, i), "reference");
        char row[128];
        snprintf(row, sizeof row, "| %lld | %.2f |\n",
                 (long long)json_integer_value(json_object_get(ref, "concurrency")),
                 json_number_value(json_object_get(ref, "actual_rps")));
        if (!strstr(md, row))
            fail_msg("no conversation starts/s row '%s'", row);
    }
    assert_non_null(
        strstr(md, "| Model | Llama 3.3 70B Instruct FP8 (simulated by stampede mock) |"));
    assert_non_null(strstr(md, "### Scaling Fit"));
    free(md);
    json_decref(root);
}

static void test_report_md_shows_roles_sessions_and_the_gap_when_present(void **state) {
    json_t *graph = load_fixture("diamond"), *run = load_fixture("quickstart");
    char *md = render_md(graph), *plain = render_md(run);
    assert_non_null(strstr(md, "### Critical Path vs Makespan"));
    assert_non_null(strstr(md, "| 6 | aggregator |"));
    assert_null(strstr(md, "### Client-Server TPOT Gap"));
    assert_non_null(strstr(plain, "### Client-Server TPOT Gap"));
    assert_null(strstr(plain, "### Per-Role Metrics")); /* only the default role */
    free(md), free(plain);
    json_decref(graph), json_decref(run);
}

/* A graph sweep (tests/fixtures/report/sweep-diamond): the Sessions and Roles tables have a row
 * per level (per level and role), from each level's pooled roles and sessions. */
static void test_report_md_graph_sweep_has_sessions_and_roles_per_level(void **state) {
    json_t *root = load_fixture("sweep-diamond");
    char *md = render_md(root);
    static section_t ours[64];
    size_t n = parse_sections(md, ours, 64), at;
    assert_non_null(find_section(ours, n, "## Sessions and Roles", 0, &at));
    const section_t *paths = find_section(ours, n, "### Critical Path vs Makespan", 0, &at);
    assert_non_null(paths);
    assert_string_equal(paths->rows, " 1 ; 2 ;");
    const section_t *roles = find_section(ours, n, "### Per-Role Metrics", 0, &at);
    assert_non_null(roles);
    assert_string_equal(roles->rows, " 1 ; 1 ; 1 ; 2 ; 2 ; 2 ;");
    const section_t *share = find_section(ours, n, "### Critical Path Share by Role", 0, &at);
    assert_non_null(share);
    assert_string_equal(share->rows, " 1 ; 1 ; 1 ; 2 ; 2 ; 2 ;");
    const json_t *levels = json_object_get(root, "levels");
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *level = json_array_get(levels, i);
        long long c = (long long)json_integer_value(json_object_get(level, "concurrency"));
        const json_t *sessions = json_object_get(level, "sessions");
        char row[128];
        snprintf(row, sizeof row, "| %lld | %lld | ", c,
                 (long long)json_integer_value(json_object_get(sessions, "count")));
        if (!strstr(md, row))
            fail_msg("no Critical Path row '%s'", row);
        const json_t *executor = json_object_get(json_object_get(level, "roles"), "executor");
        long long requests = (long long)json_integer_value(json_object_get(executor, "requests"));
        assert_true(requests > 0);
        snprintf(row, sizeof row, "| %lld | executor | %lld | ", c, requests);
        if (!strstr(md, row))
            fail_msg("no Per-Role row '%s'", row);
    }
    free(md);
    json_decref(root);
}

/* A rate run's level keeps its target in the rate block: tables and file names still show it. */
static void test_report_rate_run_levels_are_named_by_their_target(void **state) {
    json_t *root =
        json_pack("{s:i, s:[{s:{s:f}, s:{s:n, s:f}}]}", "schema_version", 2, "levels", "rate",
                  "requested_per_s", 2.5, "reference", "concurrency", "actual_rps", 2.4);
    char *md = render_md(root);
    assert_non_null(strstr(md, "| Rate (sessions/s) | Conversation starts/s |"));
    assert_non_null(strstr(md, "| 2.5 | 2.40 |\n"));
    assert_non_null(strstr(md, "- **Target RPS:** 2.5 (session starts/s)\n"));
    char name[64];
    report_doc_level_name(root, 0, name, sizeof name);
    assert_string_equal(name, "01-r2.5");
    free(md);
    json_decref(root);
}

static size_t count_fields(const char *line, size_t len) {
    size_t n = 1;
    bool quoted = false;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '"')
            quoted = !quoted;
        else if (line[i] == ',' && !quoted)
            n++;
    }
    return n;
}

static void test_report_csv_has_a_row_per_level_repetition_and_slice(void **state) {
    json_t *root = load_fixture("sweep");
    char *csv = render_csv(root, FIXTURES "/sweep");
    size_t columns = count_fields(report_csv_columns, strlen(report_csv_columns));
    size_t rows = 0;
    for (char *line = csv; *line;) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        assert_int_equal(count_fields(line, (size_t)(end - line)), columns);
        rows++;
        line = end + 1;
    }
    /* 3 levels x (2 repetitions x (all, one endpoint, one role) + the pooled row), the header */
    assert_int_equal(rows, 1 + 3 * (2 * 3 + 1));
    /* level 8 (index 2), repetition 2, all: its TTFT p50 is the repetition's own results.json's */
    json_error_t jerr;
    json_t *rep = json_load_file(FIXTURES "/sweep/levels/03-c8/rep-2/results.json", 0, &jerr);
    assert_non_null(rep);
    double p50 = json_number_value(json_object_get(
        json_object_get(json_array_get(json_object_get(rep, "levels"), 0), "ttft_ms"), "p50"));
    char want[128];
    snprintf(want, sizeof want, "sweep,concurrency,2,8,2,false,all,all,");
    char *row = strstr(csv, want);
    assert_non_null(row);
    /* ttft_p50_ms is the 19th column */
    char *field = row;
    for (int i = 0; i < 18; i++)
        field = strchr(field, ',') + 1;
    assert_true(fabs(strtod(field, NULL) - p50) <= 1e-6 * p50);
    json_decref(rep);
    free(csv);
    json_decref(root);
}

/* The latency cells of md's latency tables and session means checked to be "NNNms" (or "—");
 * how many. (Not inlined: gcc then sees md as render_md's memstream buffer and warns.) */
static __attribute__((noinline)) size_t check_ms_cells(const char *md, const char *fixture) {
    static const char *const tables[] = {"## TPOT -- Time Per Output Token",
                                         "## TTFT -- Time to First Token", "## End-to-End Latency",
                                         "### Critical Path vs Makespan"};
    size_t cells = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        char heading[96];
        snprintf(heading, sizeof heading, "%s\n", tables[t]);
        const char *at = strstr(md, heading);
        if (!at)
            continue;
        const char *end = strstr(at + 1, "\n#");
        int row = 0;
        for (const char *line = strchr(at, '\n') + 1; line && *line && (!end || line < end);) {
            const char *eol = strchr(line, '\n');
            if (!eol)
                break;
            /* past the header and the rule; cells after the level, but TPOT's Error % (4th)
             * and the session table's count (2nd) */
            if (line[0] == '|' && row++ >= 2) {
                int cell = 0;
                for (const char *p = line + 1; p < eol;) {
                    const char *bar = memchr(p, '|', (size_t)(eol - p));
                    if (!bar)
                        break;
                    cell++;
                    if (cell > 1 && !(t == 0 && cell == 4) && !(t == 3 && cell == 2)) {
                        char text[64];
                        snprintf(text, sizeof text, "%.*s", (int)(bar - p), p);
                        size_t len = strlen(text);
                        while (len && text[len - 1] == ' ')
                            text[--len] = '\0';
                        if (!(len >= 2 && !strcmp(text + len - 2, "ms")) && !strstr(text, "—"))
                            fail_msg("%s: '%s' cell %d is '%s', not ms", fixture, tables[t], cell,
                                     text);
                        cells++;
                    }
                    p = bar + 1;
                }
            }
            line = eol + 1;
        }
    }
    return cells;
}

/* One unit per column: every cell of the latency tables, and of the session means, is "NNNms"
 * (or "—" when absent); never a bare number beside "0.13ms", nor "1.2s" beside "909ms". */
static void test_report_md_latency_columns_have_one_unit(void **state) {
    static const char *const fixtures[] = {"sweep", "sweep-diamond"};
    size_t cells = 0;
    for (size_t f = 0; f < 2; f++) {
        json_t *root = load_fixture(fixtures[f]);
        char *md = render_md(root);
        cells += check_ms_cells(md, fixtures[f]);
        free(md);
        json_decref(root);
    }
    assert_true(cells >= 3 * 5 + 2 * 4); /* every level's cells were looked at */
}

/* The number at column (0-based) of a CSV line without quoted fields. */
static double csv_column(const char *line, int column) {
    for (int i = 0; i < column; i++)
        line = strchr(line, ',') + 1;
    return strtod(line, NULL);
}

/* Each sweep level's pooled row holds the headline figures of results.json's level (pooled over
 * its valid repetitions), so the report's percentiles can be rebuilt from the CSV alone. */
static void test_report_csv_pooled_row_per_level_holds_the_headline_figures(void **state) {
    json_t *root = load_fixture("sweep");
    char *csv = render_csv(root, FIXTURES "/sweep");
    const json_t *levels = json_object_get(root, "levels");
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *level = json_array_get(levels, i);
        char want[64];
        snprintf(want, sizeof want, "\nsweep,concurrency,%zu,%lld,pooled,false,all,all,", i,
                 (long long)json_integer_value(json_object_get(level, "concurrency")));
        const char *row = strstr(csv, want);
        assert_non_null(row);
        row++;
        /* columns: 8 requests_ok, 14 output_tokens_per_s, 18 ttft_p50_ms, 28 tpot_p50_ms,
         * 40 e2e_p95_ms */
        assert_int_equal(csv_column(row, 8),
                         json_integer_value(json_object_get(level, "requests_ok")));
        static const struct {
            int column;
            const char *key;
        } headline[] = {
            {14, "tops"}, {18, "ttft_p50_ms"}, {28, "tpot_p50_ms"}, {40, "latency_p95_ms"}};
        for (size_t k = 0; k < sizeof headline / sizeof headline[0]; k++) {
            double want_v = json_number_value(json_object_get(level, headline[k].key));
            assert_true(fabs(csv_column(row, headline[k].column) - want_v) <= 1e-6 * want_v);
        }
    }
    free(csv);
    json_decref(root);
}

/* Value and percentile rows of an .hgrm text; returns how many. */
static size_t parse_hgrm(const char *text, double *values, double *percentiles, uint64_t *counts,
                         size_t cap, uint64_t *total) {
    size_t n = 0;
    *total = 0;
    for (const char *line = text; line && *line;) {
        double v, p;
        unsigned long long c, t;
        if (sscanf(line, "#[Max = %*f, Total count = %llu]", &t) == 1)
            *total = t;
        else if (line[0] != '#' && sscanf(line, "%lf %lf %llu", &v, &p, &c) == 3 && n < cap) {
            values[n] = v;
            percentiles[n] = p;
            counts[n++] = c;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return n;
}

/* A run over two endpoints (tests/fixtures/report/two-endpoints): results.csv has the all row, a
 * row per endpoint with that endpoint's own figures (a fast and a slow mock), and the role row;
 * the endpoints' requests add up to all's. */
static void test_report_csv_has_a_row_per_endpoint(void **state) {
    json_t *root = load_fixture("two-endpoints");
    char *csv = render_csv(root, FIXTURES "/two-endpoints");
    const json_t *level = json_array_get(json_object_get(root, "levels"), 0);
    const json_t *per_endpoint = json_object_get(level, "per_endpoint");
    assert_int_equal(json_object_size(per_endpoint), 2);
    const char *all = strstr(csv, "\nrun,concurrency,0,4,1,false,all,all,");
    assert_non_null(all);
    double sum = 0;
    const char *url;
    const json_t *slice;
    json_object_foreach((json_t *)per_endpoint, url, slice) {
        char want[256];
        snprintf(want, sizeof want, "\nrun,concurrency,0,4,1,false,endpoint,%s,", url);
        const char *row = strstr(csv, want);
        if (!row)
            fail_msg("no results.csv row for endpoint %s", url);
        double ok = csv_column(row + 1, 8), ttft_p50 = csv_column(row + 1, 18);
        assert_float_equal(ok, json_number_value(json_object_get(slice, "requests_ok")), 0);
        double want_p50 =
            json_number_value(json_object_get(json_object_get(slice, "ttft_ms"), "p50"));
        assert_true(fabs(ttft_p50 - want_p50) <= 1e-6 * want_p50);
        sum += ok;
    }
    assert_float_equal(sum, csv_column(all + 1, 8), 0);
    assert_true(sum > 0);
    /* the two mocks differ (TTFT 15 and 40 ms): each row has its endpoint's own figure */
    double p50[2];
    size_t n = 0;
    json_object_foreach((json_t *)per_endpoint, url, slice) {
        p50[n++] = json_number_value(json_object_get(json_object_get(slice, "ttft_ms"), "p50"));
    }
    assert_true(fabs(p50[0] - p50[1]) > 10);
    size_t rows = 0;
    for (const char *p = csv; (p = strchr(p, '\n')); p++)
        rows++;
    assert_int_equal(rows, 1 + 1 + 2 + 1); /* header, all, two endpoints, the role */
    free(csv);
    json_decref(root);
}

/* The export's p50, p90 and p95 rows agree with results.json's percentiles within the
 * histogram's bucket (1/2048 relative, the export giving the bucket's upper edge) plus the
 * printed 0.001 ms, and its counts add up. */
static void test_report_hgrm_percentiles_match_the_results_within_a_bucket(void **state) {
    json_t *root = load_fixture("quickstart");
    const json_t *level = json_array_get(json_object_get(root, "levels"), 0);
    const char *metrics[] = {"ttft_ms", "ttfc_ms", "tpot_ms", "itl_ms", "e2e_ms"};
    static double values[4096], percentiles[4096];
    static uint64_t counts[4096];
    for (size_t m = 0; m < 5; m++) {
        const json_t *block = json_object_get(level, metrics[m]);
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        assert_int_equal(report_hgrm_render(block, out), 0);
        fclose(out);
        assert_true(
            !strncmp(text, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n", 57));
        uint64_t total;
        size_t n = parse_hgrm(text, values, percentiles, counts, 4096, &total);
        uint64_t count = (uint64_t)json_integer_value(json_object_get(block, "count"));
        assert_true(n > 2);
        assert_int_equal(total, count);
        assert_int_equal(counts[n - 1], count);
        assert_true(percentiles[n - 1] == 1.0);
        const struct {
            const char *key;
            double p;
        } checks[] = {{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}};
        for (size_t c = 0; c < 3; c++) {
            size_t i = 0;
            while (i < n && percentiles[i] < checks[c].p)
                i++;
            assert_true(i < n);
            double want = json_number_value(json_object_get(block, checks[c].key));
            if (!(fabs(values[i] - want) <= want / 2048 + 0.0015))
                fail_msg("%s %s: .hgrm %.3f, results.json %.6f", metrics[m], checks[c].key,
                         values[i], want);
        }
        free(text);
    }
    json_decref(root);
}

static void test_report_hgrm_without_buckets_writes_nothing(void **state) {
    json_t *block = json_pack("{s:i, s:n, s:[]}", "count", 0, "mean", "buckets");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(report_hgrm_render(block, out), -1);
    fclose(out);
    assert_int_equal(len, 0);
    free(text);
    json_decref(block);
}

/* A scratch directory holding results.json with text (NULL: none). */
static char *scratch_dir(const char *text) {
    char *dir = strdup("/tmp/stampede-report-XXXXXX");
    assert_non_null(mkdtemp(dir));
    if (text) {
        char path[256];
        snprintf(path, sizeof path, "%s/results.json", dir);
        temp_file_write_at(path, text);
    }
    return dir;
}

static void remove_scratch(char *dir) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static void test_report_bad_input_names_the_file(void **state) {
    char err[4400], want[512];
    char *old = scratch_dir("{\"schema_version\": 1, \"levels\": []}\n");
    assert_int_equal(report_cmd_render(old, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/results.json: schema_version 1, this stampede reads 2", old);
    assert_string_equal(err, want);
    remove_scratch(old);

    char *empty = scratch_dir(NULL);
    assert_int_equal(report_cmd_render(empty, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/results.json: No such file or directory", empty);
    assert_string_equal(err, want);
    remove_scratch(empty);

    assert_int_equal(report_cmd_render("/nonexistent/run", err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/run: No such file or directory");

    char *broken = scratch_dir("{\"schema_version\": 2,\n");
    assert_int_equal(report_cmd_render(broken, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/results.json:", broken);
    assert_true(!strncmp(err, want, strlen(want)) && strstr(err, "not JSON"));
    remove_scratch(broken);
}

/* A sweep whose repetition file is gone: the CSV names it, and report.md is still written. */
static void test_report_sweep_missing_repetition_names_it(void **state) {
    char *text = read_text(FIXTURES "/sweep/results.json");
    char *dir = scratch_dir(text);
    char err[4400];
    assert_int_equal(report_cmd_render(dir, err, sizeof err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s/levels/01-c2/rep-1/results.json (repetition 1 of level 0)",
             dir);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("error '%s' does not start with '%s'", err, want);
    char path[300];
    snprintf(path, sizeof path, "%s/report.md", dir);
    assert_int_equal(access(path, F_OK), 0);
    remove_scratch(dir);
    free(text);
}

static void test_config_deployment_is_kept_verbatim_and_written_back(void **state) {
    const char *yaml = "limits: {duration: 1s}\n"
                       "deployment:\n  Model: \"Llama | FP8\"\n  max-num-seqs: 64\n"
                       "  flags: [--a, \"--b=1\"]\n  nested: {x: 1.50}\n";
    config_t cfg, again;
    config_error_t err;
    assert_int_equal(config_load_string(&cfg, yaml, strlen(yaml), "d.yaml", &err), 0);
    const char *want = "{\"Model\":\"Llama | FP8\",\"max-num-seqs\":\"64\",\"flags\":[\"--a\","
                       "\"--b=1\"],\"nested\":{\"x\":\"1.50\"}}";
    assert_string_equal(cfg.deployment, want);
    char *written = config_to_yaml(&cfg);
    assert_non_null(written);
    assert_int_equal(config_load_string(&again, written, strlen(written), "back.yaml", &err), 0);
    assert_string_equal(again.deployment, want);
    config_free(&again);
    free(written);
    config_free(&cfg);
}

static void test_config_deployment_must_be_a_mapping(void **state) {
    const char *yaml = "limits: {duration: 1s}\ndeployment: [a, b]\n";
    config_t cfg;
    config_error_t err;
    assert_int_equal(config_load_string(&cfg, yaml, strlen(yaml), "d.yaml", &err), -1);
    char msg[1024];
    config_error_format(&err, msg, sizeof msg);
    assert_string_equal(msg, "d.yaml:2:13: deployment: expected a mapping of deployment details "
                             "(e.g. Model: ..., GPU: ...), got a sequence");
}

UNIT_MAIN(cmocka_unit_test(test_report_md_and_csv_render_the_same_bytes_from_a_fresh_load),
          cmocka_unit_test(test_report_md_holds_the_reference_headings_and_columns),
          cmocka_unit_test(test_report_md_holds_the_shared_reference_headings),
          cmocka_unit_test(test_report_md_tables_have_a_row_per_level_with_the_level_figures),
          cmocka_unit_test(test_report_md_shows_roles_sessions_and_the_gap_when_present),
          cmocka_unit_test(test_report_md_graph_sweep_has_sessions_and_roles_per_level),
          cmocka_unit_test(test_report_rate_run_levels_are_named_by_their_target),
          cmocka_unit_test(test_report_csv_has_a_row_per_level_repetition_and_slice),
          cmocka_unit_test(test_report_md_latency_columns_have_one_unit),
          cmocka_unit_test(test_report_csv_pooled_row_per_level_holds_the_headline_figures),
          cmocka_unit_test(test_report_csv_has_a_row_per_endpoint),
          cmocka_unit_test(test_report_hgrm_percentiles_match_the_results_within_a_bucket),
          cmocka_unit_test(test_report_hgrm_without_buckets_writes_nothing),
          cmocka_unit_test(test_report_bad_input_names_the_file),
          cmocka_unit_test(test_report_sweep_missing_repetition_names_it),
          cmocka_unit_test(test_config_deployment_is_kept_verbatim_and_written_back),
          cmocka_unit_test(test_config_deployment_must_be_a_mapping))
