#include "report_md.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report_doc.h"

/* The number at o[block][key] (e.g. "ttft_ms", "p50"), NaN when absent. */
static double report_md_block(const json_t *o, const char *block, const char *key) {
    return report_doc_number(json_object_get(o, block), key);
}

static const char *report_md_axis_title(const json_t *root) {
    return strcmp(report_doc_axis(root), "rate") ? "Concurrency" : "Rate (sessions/s)";
}

static void report_md_pct(char *buf, size_t len, double pct) {
    if (isnan(pct))
        snprintf(buf, len, "—");
    else
        snprintf(buf, len, "%.1f%%", pct);
}

static void report_md_plain(char *buf, size_t len, double v, const char *format) {
    if (isnan(v))
        snprintf(buf, len, "—");
    else
        snprintf(buf, len, format, v);
}

/* The axis column of the scaling report's tables: "c", or "rate". */
static const char *report_md_axis_short(const json_t *root) {
    return strcmp(report_doc_axis(root), "rate") ? "c" : "rate";
}

static const json_t *report_md_levels(const json_t *root) {
    return json_object_get(root, "levels");
}

/* The level's headline figure: its reference object has them for a run and a sweep alike. */
static double report_md_figure(const json_t *level, const char *key) {
    double v = report_doc_number(json_object_get(level, "reference"), key);
    return isnan(v) ? report_doc_number(level, key) : v;
}

/* Whether the level was judged invalid (its `validity.valid` is false: e.g. pooled over
 * repetitions that were all excluded), marked † as `stampede compare` marks it. */
static bool report_md_invalid(const json_t *level) {
    return json_is_false(json_object_get(json_object_get(level, "validity"), "valid"));
}

static bool report_md_any_invalid(const json_t *root) {
    const json_t *levels = report_md_levels(root);
    for (size_t i = 0; i < json_array_size(levels); i++)
        if (report_md_invalid(json_array_get(levels, i)))
            return true;
    return false;
}

/* The level's axis value, with " †" when it is invalid. */
static const char *report_md_level_text(const json_t *root, const json_t *level, char *buf,
                                        size_t len) {
    char value[32];
    report_doc_level_text(root, level, value, sizeof value);
    snprintf(buf, len, "%s%s", value, report_md_invalid(level) ? " †" : "");
    return buf;
}

/* The rate a run was held to: a concurrency sweep's rate cap (session starts/s at most), else a
 * rate run's requested rate; NAN when neither. */
static double report_md_target_rps(const json_t *root) {
    const json_t *first = json_array_get(report_md_levels(root), 0);
    double cap = report_doc_number(first, "rate_cap");
    return isnan(cap) ? report_doc_number(json_object_get(first, "rate"), "requested_per_s") : cap;
}

static void report_md_title(const json_t *root, FILE *out) {
    const json_t *run = json_object_get(root, "run");
    const char *config = json_string_value(json_object_get(run, "config"));
    bool sweep = json_object_get(root, "sweep") != NULL;
    size_t n = json_array_size(report_md_levels(root));
    fprintf(out, "# Benchmark %s: %s (%zu level%s)\n\n", sweep ? "Sweep" : "Run",
            config ? config : "stampede", n, n == 1 ? "" : "s");
    const char *start = json_string_value(json_object_get(run, "start_time"));
    /* The run's start, never the rendering's time: a re-render gives the same bytes. */
    fprintf(out, "**Generated:** %s (run start)\n\n", start ? start : "unknown");
    char simulation_text[256];
    const char *simulation = report_doc_simulation(root, simulation_text, sizeof simulation_text);
    const char *simulated = report_doc_simulated(root);
    if (simulation)
        fprintf(out, "**SIMULATED:** %s (`stampede simulate`): no server was measured\n\n",
                simulation);
    else if (simulated)
        fprintf(out,
                "**Server:** simulated server (profile %s): stampede's embedded mock, not an "
                "inference server (no target was given)\n\n",
                simulated);
    const char *replicas = report_doc_replicas(root);
    if (replicas)
        fprintf(out, "**%s**\n\n", replicas);
}

/* The warm-up and the window of a level: a sweep's from its first repetition's snapshots. */
static void report_md_measurement(const json_t *first, FILE *out) {
    const json_t *reps = json_object_get(first, "repetitions");
    const json_t *snaps = json_object_get(json_array_get(reps, 0), "snapshots");
    const json_t *snap = json_array_get(snaps, 0);
    char window[32], warmup[32], each[32];
    report_md_plain(window, sizeof window, report_doc_number(first, "duration_s"), "%.1fs");
    if (!json_is_object(snap)) {
        fprintf(out, "- **Measurement:** %s measured window\n", window);
        return;
    }
    report_md_plain(warmup, sizeof warmup, report_doc_number(snap, "start_s"), "%.1fs");
    report_md_plain(each, sizeof each, report_doc_number(snap, "duration_s"), "%gs");
    fprintf(out, "- **Warmup:** %s per repetition\n", warmup);
    fprintf(out,
            "- **Measurement:** %s per level (%zu repetition%s × %zu snapshots @ %s, pooled)\n",
            window, json_array_size(reps), json_array_size(reps) == 1 ? "" : "s",
            json_array_size(snaps), each);
}

static void report_md_methodology(const json_t *root, FILE *out) {
    const json_t *run = json_object_get(root, "run");
    const json_t *levels = report_md_levels(root);
    fprintf(out, "## Test Methodology\n\n");
    fprintf(out, "- **Run kind:** %s\n",
            json_object_get(root, "sweep") ? "sweep (levels run one after another)" : "single run");
    fprintf(out, "- **%s levels:** ", report_md_axis_title(root));
    for (size_t i = 0; i < json_array_size(levels); i++) {
        char level[32];
        report_doc_level_text(root, json_array_get(levels, i), level, sizeof level);
        fprintf(out, "%s%s", i ? ", " : "", level);
    }
    fprintf(out, "\n");
    const json_t *first = json_array_get(levels, 0);
    const json_t *reps = json_object_get(first, "repetitions_run");
    if (json_is_integer(reps))
        fprintf(out, "- **Repetitions:** %lld per level (pooled over the valid ones)\n",
                (long long)json_integer_value(reps));
    double cap = report_doc_number(first, "rate_cap");
    double target = report_md_target_rps(root);
    if (!isnan(cap))
        fprintf(out,
                "- **Target RPS:** %.1f (rate cap: at most that many session starts/s at "
                "every level)\n",
                cap);
    else if (!isnan(target))
        fprintf(out, "- **Target RPS:** %.1f (session starts/s)\n", target);
    else
        fprintf(out, "- **Target RPS:** none (no rate cap: sessions start as slots free)\n");
    const char *routing = json_string_value(json_object_get(run, "routing"));
    if (routing)
        fprintf(out, "- **Routing:** %s across %zu endpoint%s\n", routing,
                json_array_size(json_object_get(run, "endpoint_urls")),
                json_array_size(json_object_get(run, "endpoint_urls")) == 1 ? "" : "s");
    report_md_measurement(first, out);
    const json_t *workers = json_object_get(run, "workers");
    if (json_is_integer(workers))
        fprintf(out, "- **Workers:** %lld\n", (long long)json_integer_value(workers));
    const json_t *seed = json_object_get(run, "seed");
    if (json_is_integer(seed))
        fprintf(out, "- **Seed:** %lld\n", (long long)json_integer_value(seed));
    const json_t *urls = json_object_get(run, "endpoint_urls");
    for (size_t i = 0; i < json_array_size(urls); i++)
        fprintf(out, "%s`%s`", i ? ", " : "- **Endpoints:** ",
                json_string_value(json_array_get(urls, i)));
    if (json_array_size(urls))
        fprintf(out, "\n");
    const char *stop = json_string_value(json_object_get(run, "stop_reason"));
    fprintf(out, "- **Stop reason:** %s\n", stop ? stop : "unknown");
    fprintf(out, "- **Metric source:** stampede's client-side histograms (exact over each "
                 "level's measured window; docs/metrics.md)\n\n");
}

/* A scalar of the deployment map as a table cell (nested values as compact JSON). */
static void report_md_cell(const json_t *v, FILE *out) {
    if (json_is_string(v)) {
        for (const char *p = json_string_value(v); *p; p++)
            fputs(*p == '|' ? "\\|" : *p == '\n' ? " " : (char[2]){*p, 0}, out);
        return;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
    fputs(text ? text : "", out);
    free(text);
}

static void report_md_deployment(const json_t *root, FILE *out) {
    fprintf(out, "## Deployment Details\n\n");
    const json_t *deployment = json_object_get(json_object_get(root, "run"), "deployment");
    if (!json_is_object(deployment) || json_object_size(deployment) == 0) {
        fprintf(out, "No `deployment:` map in the workload file (docs/reports.md).\n\n");
        return;
    }
    fprintf(out, "| Parameter | Value |\n|:----------|:------|\n");
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)deployment, key, value) {
        fprintf(out, "| %s | ", key);
        report_md_cell(value, out);
        fprintf(out, " |\n");
    }
    fprintf(out, "\n");
}

/* A table's rows for one level, value its axis text; arg is the table's own. */
typedef void (*report_md_rows_fn)(const json_t *level, const char *value, const void *arg,
                                  FILE *out);

/* The rows of every level in order, then the blank line that ends the table. */
static void report_md_each_level(const json_t *root, report_md_rows_fn rows, const void *arg,
                                 FILE *out) {
    const json_t *levels = report_md_levels(root);
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *level = json_array_get(levels, i);
        char value[40];
        report_md_level_text(root, level, value, sizeof value);
        rows(level, value, arg, out);
    }
    fprintf(out, "\n");
}

typedef void (*report_md_row_fn)(const json_t *level, FILE *out);
typedef struct {
    report_md_row_fn row;
} report_md_columns_t;

static void report_md_columns_row(const json_t *level, const char *value, const void *arg,
                                  FILE *out) {
    fprintf(out, "| %s |", value);
    ((const report_md_columns_t *)arg)->row(level, out);
    fprintf(out, "\n");
}

/* One table, a row per level: the axis column, then each column of row. */
static void report_md_level_table(const json_t *root, const char *heading, const char *columns,
                                  const char *rule, report_md_row_fn row, FILE *out) {
    fprintf(out, "## %s\n\n| %s | %s |\n|:%s:|%s|\n", heading, report_md_axis_title(root), columns,
            "-----------", rule);
    report_md_columns_t table = {row};
    report_md_each_level(root, report_md_columns_row, &table, out);
}

static void report_md_tpot_row(const json_t *level, FILE *out) {
    char a[32], b[32], c[32];
    report_doc_figure(a, sizeof a, report_md_figure(level, "tpot_p50_ms"), "ms");
    report_doc_figure(b, sizeof b, report_md_figure(level, "tpot_p95_ms"), "ms");
    report_md_pct(c, sizeof c, report_md_figure(level, "error_pct"));
    fprintf(out, " %s | %s | %s |", a, b, c);
}

static void report_md_ttft_row(const json_t *level, FILE *out) {
    char a[32], b[32];
    report_doc_figure(a, sizeof a, report_md_figure(level, "ttft_p50_ms"), "ms");
    report_doc_figure(b, sizeof b, report_md_figure(level, "ttft_p95_ms"), "ms");
    fprintf(out, " %s | %s |", a, b);
}

static void report_md_latency_row(const json_t *level, FILE *out) {
    char a[32], b[32];
    /* ms like the other latency tables: "909ms" beside "1.2s" reads as one unit to a skimmer */
    report_doc_figure(a, sizeof a, report_md_figure(level, "latency_p50_ms"), "ms");
    report_doc_figure(b, sizeof b, report_md_figure(level, "latency_p95_ms"), "ms");
    fprintf(out, " %s | %s |", a, b);
}

static void report_md_error_row(const json_t *level, FILE *out) {
    char a[32];
    report_md_pct(a, sizeof a, report_md_figure(level, "error_pct"));
    fprintf(out, " %s |", a);
}

static void report_md_rps_row(const json_t *level, FILE *out) {
    char a[32];
    report_md_plain(a, sizeof a, report_md_figure(level, "actual_rps"), "%.2f");
    fprintf(out, " %s |", a);
}

/* "Concurrency 110 (1.7%)" for a saturation point (with the level's error % when errors). */
static void report_md_point(const json_t *root, const json_t *point, bool with_errors, char *buf,
                            size_t len) {
    if (!json_is_object(point)) {
        snprintf(buf, len, "not reached");
        return;
    }
    char value[32];
    report_doc_level_text(root, point, value, sizeof value);
    const char *axis = strcmp(report_doc_axis(root), "rate") ? "Concurrency" : "Rate";
    const json_t *index = json_object_get(point, "index");
    const json_t *level = json_array_get(report_md_levels(root),
                                         json_is_integer(index) ? json_integer_value(index) : -1);
    double pct = report_md_figure(level, "error_pct");
    if (with_errors && !isnan(pct))
        snprintf(buf, len, "%s %s (%.1f%%)", axis, value, pct);
    else
        snprintf(buf, len, "%s %s", axis, value);
}

static void report_md_saturation(const json_t *root, FILE *out) {
    fprintf(out, "## Analysis\n\n### Saturation Point\n\n");
    const json_t *sat = json_object_get(json_object_get(root, "analysis"), "saturation");
    if (!json_is_object(sat)) {
        fprintf(out, "No saturation analysis: it needs a sweep (docs/sweeps.md).\n\n");
        return;
    }
    char buf[96];
    fprintf(out, "| Metric | This run |\n|:-------|:-------:|\n");
    report_md_point(root, json_object_get(sat, "first_errors"), true, buf, sizeof buf);
    fprintf(out, "| First errors | %s |\n", buf);
    report_md_point(root, json_object_get(sat, "sustained_errors"), false, buf, sizeof buf);
    fprintf(out, "| Sustained >5%% errors | %s |\n", buf);
    report_md_point(root, json_object_get(sat, "ttft_p50_over_1s"), false, buf, sizeof buf);
    fprintf(out, "| TTFT p50 > 1s | %s |\n", buf);
    const json_t *plateau = json_object_get(sat, "tpot_plateau");
    if (json_is_object(plateau)) {
        char ms[32], level[32];
        report_doc_figure(ms, sizeof ms, report_doc_number(plateau, "tpot_p50_ms"), "ms");
        report_doc_level_text(root, plateau, level, sizeof level);
        fprintf(out, "| TPOT p50 plateau | ~%s (%s %s) |\n", ms,
                strcmp(report_doc_axis(root), "rate") ? "conc" : "rate", level);
    } else {
        fprintf(out, "| TPOT p50 plateau | not reached |\n");
    }
    fprintf(out, "\n");
}

static void report_md_fits(const json_t *root, FILE *out) {
    const json_t *fits = json_object_get(json_object_get(root, "analysis"), "fits");
    if (!json_is_object(fits))
        return;
    static const char *const names[][2] = {
        {"tpot", "TPOT p50 (ms)"},
        {"throughput", "Output tokens/s"},
        {"tpot_unsaturated", "TPOT p50 (ms), unsaturated levels"},
        {"throughput_unsaturated", "Output tokens/s, unsaturated levels"}};
    fprintf(out, "### Scaling Fit\n\nPower law `y = base × level^exponent`, fitted in log space "
                 "(docs/sweeps.md).\n\n");
    fprintf(out,
            "| Fit | Points | Base | Exponent | R² |\n|:----|:------:|:----:|:--------:|:--:|\n");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const json_t *fit = json_object_get(fits, names[i][0]);
        if (!json_is_object(fit))
            continue;
        char points[32], base[32], exponent[32], r2[32];
        report_md_plain(points, sizeof points, report_doc_number(fit, "points"), "%.0f");
        report_md_plain(base, sizeof base, report_doc_number(fit, "base"), "%.4g");
        report_md_plain(exponent, sizeof exponent, report_doc_number(fit, "exponent"), "%.3f");
        report_md_plain(r2, sizeof r2, report_doc_number(fit, "r2"), "%.3f");
        fprintf(out, "| %s | %s | %s | %s | %s |\n", names[i][1], points, base, exponent, r2);
    }
    fprintf(out, "\n");
}

/* True when the level's roles are the workload's own (not only the default "role 0"). */
static bool report_md_has_roles(const json_t *roles) {
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)roles, key, value) {
        if (strncmp(key, "role ", 5) != 0)
            return true;
    }
    return json_object_size(roles) > 1;
}

/* The level's roles object when the workload names its roles, else NULL. */
static const json_t *report_md_level_roles(const json_t *level) {
    const json_t *roles = json_object_get(level, "roles");
    return report_md_has_roles(roles) ? roles : NULL;
}

static bool report_md_any(const json_t *root, const json_t *(*get)(const json_t *level)) {
    const json_t *levels = report_md_levels(root);
    for (size_t i = 0; i < json_array_size(levels); i++)
        if (get(json_array_get(levels, i)))
            return true;
    return false;
}

static const json_t *report_md_level_sessions(const json_t *level) {
    const json_t *s = json_object_get(level, "sessions");
    return report_doc_number(s, "count") > 0 ? s : NULL;
}

static void report_md_critical_path_row(const json_t *level, const char *value, const void *arg,
                                        FILE *out) {
    (void)arg;
    const json_t *s = report_md_level_sessions(level);
    if (!s)
        return;
    char count[32], a[32], b[32], c[32], d[32];
    report_md_plain(count, sizeof count, report_doc_number(s, "count"), "%.0f");
    report_doc_figure(a, sizeof a, report_md_block(s, "makespan_ms", "mean"), "ms");
    report_doc_figure(b, sizeof b, report_md_block(s, "critical_path_ms", "mean"), "ms");
    report_doc_figure(c, sizeof c, report_md_block(s, "idle_ms", "mean"), "ms");
    report_doc_figure(d, sizeof d, report_md_block(s, "sibling_wait_ms", "mean"), "ms");
    fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", value, count, a, b, c, d);
}

/* The scaling report's §4.5: session means, in ms. */
static void report_md_critical_path(const json_t *root, FILE *out) {
    fprintf(out,
            "### Critical Path vs Makespan\n\nMeans over the complete sessions of the "
            "measured window (docs/metrics.md section 12).\n\n"
            "| %s | Sessions | Makespan | Critical Path | Idle/Wait | Sibling Wait |\n"
            "|---|----------|----------|---------------|-----------|--------------|\n",
            report_md_axis_short(root));
    report_md_each_level(root, report_md_critical_path_row, NULL, out);
}

static void report_md_critical_share_rows(const json_t *level, const char *value, const void *arg,
                                          FILE *out) {
    (void)arg;
    const json_t *s = report_md_level_sessions(level);
    char pct[32];
    const char *role;
    const json_t *share;
    json_object_foreach((json_t *)json_object_get(s, "critical_path_share"), role, share) {
        report_md_pct(pct, sizeof pct, json_number_value(share) * 100);
        fprintf(out, "| %s | %s | %s |\n", value, role, pct);
    }
}

/* The scaling report's §6.1: each role's share of the critical paths. */
static void report_md_critical_share(const json_t *root, FILE *out) {
    fprintf(out, "### Critical Path Share by Role\n\n| %s | Role | Share |\n|---|------|-------|\n",
            report_md_axis_short(root));
    report_md_each_level(root, report_md_critical_share_rows, NULL, out);
}

static void report_md_roles_rows(const json_t *level, const char *value, const void *arg,
                                 FILE *out) {
    (void)arg;
    char ttft[32], tpot[32], itl[32], requests[32], errors[32], http4[32], in[32], done[32],
        ratio[32];
    const char *name;
    const json_t *role;
    json_object_foreach((json_t *)report_md_level_roles(level), name, role) {
        report_doc_figure(ttft, sizeof ttft, report_md_block(role, "ttft_ms", "p50"), "ms");
        report_doc_figure(tpot, sizeof tpot, report_md_block(role, "tpot_ms", "p50"), "ms");
        report_doc_figure(itl, sizeof itl, report_md_block(role, "itl_ms", "p50"), "ms");
        double n = report_doc_number(role, "requests");
        double prompt = report_doc_number(role, "prompt_tokens_mean");
        double completion = report_doc_number(role, "completion_tokens_mean");
        report_md_plain(requests, sizeof requests, n, "%.0f");
        report_md_plain(errors, sizeof errors, report_doc_number(role, "errors"), "%.0f");
        report_md_plain(http4, sizeof http4, report_doc_number(role, "errors_http_4xx"), "%.0f");
        report_md_plain(in, sizeof in, prompt, "%.1f");
        report_md_plain(done, sizeof done, completion, "%.1f");
        report_md_plain(ratio, sizeof ratio, completion > 0 ? prompt / completion : NAN, "%.2f");
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %s/%s | %s/%s | %s | %s | %s |\n", value,
                name, requests, ttft, tpot, itl, errors, requests, http4, requests, in, done,
                ratio);
    }
}

/* The scaling report's §4.6, §4.7 and §7 in one table per role and level. */
static void report_md_roles(const json_t *root, FILE *out) {
    fprintf(out,
            "### Per-Role Metrics\n\n| %s | Role | Requests | TTFT p50 | TPOT p50 | ITL p50 "
            "| Errors | 4xx Errors | Prompt Tokens | Completion Tokens | P:D Ratio |\n"
            "|---|------|----------|----------|----------|---------|--------|------------|"
            "---------------|-------------------|-----------|\n",
            report_md_axis_short(root));
    report_md_each_level(root, report_md_roles_rows, NULL, out);
}

static void report_md_agentic(const json_t *root, FILE *out) {
    bool roles = report_md_any(root, report_md_level_roles);
    bool sessions = report_md_any(root, report_md_level_sessions);
    if (!roles && !sessions)
        return;
    fprintf(out, "## Sessions and Roles\n\n");
    if (sessions)
        report_md_critical_path(root, out);
    if (roles)
        report_md_roles(root, out);
    if (roles && sessions)
        report_md_critical_share(root, out);
}

static const json_t *report_md_level_gap(const json_t *level) {
    const json_t *total = json_object_get(json_object_get(level, "gap"), "total");
    return json_is_object(total) ? total : NULL;
}

/* A server p50 estimate with its bucket: "175ms [100ms, 250ms] bucket-limited". */
static void report_md_estimate(char *buf, size_t len, const json_t *g) {
    double v = report_doc_number(g, "server_p50_estimate_ms");
    const json_t *b = json_object_get(g, "server_p50_bounds_ms");
    char value[32], lo[32], hi[32];
    report_doc_figure(value, sizeof value, v, "ms");
    if (isnan(v) || !json_is_array(b)) {
        snprintf(buf, len, "%s", value);
        return;
    }
    report_doc_figure(lo, sizeof lo, json_number_value(json_array_get(b, 0)), "ms");
    if (json_is_number(json_array_get(b, 1)))
        report_doc_figure(hi, sizeof hi, json_number_value(json_array_get(b, 1)), "ms");
    else
        snprintf(hi, sizeof hi, "+Inf");
    snprintf(buf, len, "%s [%s, %s]%s", value, lo, hi,
             json_is_true(json_object_get(g, "server_p50_bucket_limited")) ? " bucket-limited"
                                                                           : "");
}

/* One level's row of the gap table of the metric arg names ("tpot", "ttft"), when it has one. */
static void report_md_gap_row(const json_t *level, const char *value, const void *arg, FILE *out) {
    const json_t *g = json_object_get(report_md_level_gap(level), (const char *)arg);
    if (!g)
        return;
    char client[32], server[32], pct[32], client_p50[32], estimate[128];
    report_doc_figure(client, sizeof client, report_doc_number(g, "client_mean_ms"), "ms");
    report_doc_figure(server, sizeof server, report_doc_number(g, "server_mean_ms"), "ms");
    report_md_pct(pct, sizeof pct, report_doc_number(g, "gap_pct"));
    report_doc_figure(client_p50, sizeof client_p50, report_doc_number(g, "client_p50_ms"), "ms");
    report_md_estimate(estimate, sizeof estimate, g);
    fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", value, client, server, pct, client_p50,
            estimate);
}

/* The scaling report's §6.2, for TPOT and TTFT (level `gap`, docs/metrics.md section 13): the
 * gap between exact means; the server's p50 is an estimate from its buckets, shown with them. */
static void report_md_gap(const json_t *root, FILE *out) {
    if (!report_md_any(root, report_md_level_gap))
        return;
    static const char *const metrics[][2] = {{"tpot", "TPOT"}, {"ttft", "TTFT"}};
    fprintf(out, "## Client vs Server\n\n");
    fprintf(out,
            "Means: the server's are its histograms' exact `_sum`/`_count` deltas. The server's "
            "p50 is an estimate from its buckets, with the bucket it fell in; "
            "*bucket-limited* when that bucket is wider than half its value.\n\n");
    for (size_t m = 0; m < 2; m++) {
        fprintf(out,
                "### Client-Server %s Gap\n\n| %s | Client %s mean | Server %s mean | Gap | "
                "Client %s p50 | Server %s p50 (estimate) |\n"
                "|---|-------------|-------------|-----|-----|-----|\n",
                metrics[m][1], report_md_axis_short(root), metrics[m][1], metrics[m][1],
                metrics[m][1], metrics[m][1]);
        report_md_each_level(root, report_md_gap_row, metrics[m][0], out);
    }
}

static void report_md_valid_runs_row(const json_t *level, const char *value, const void *arg,
                                     FILE *out) {
    (void)arg;
    const char *label = json_string_value(json_object_get(level, "valid_runs_label"));
    fprintf(out, "| %s | %s | ", value, label ? label : "—");
    const json_t *reasons = json_object_get(json_object_get(level, "validity"), "reasons");
    for (size_t k = 0; k < json_array_size(reasons); k++) {
        fputs(k ? "; " : "", out);
        report_md_cell(json_array_get(reasons, k), out);
    }
    fprintf(out, "%s |\n", json_array_size(reasons) ? "" : "—");
}

/* The combined-sweep report's Valid Runs column with its exclusion notes (a sweep's levels). */
static void report_md_valid_runs(const json_t *root, FILE *out) {
    const json_t *levels = report_md_levels(root);
    if (!json_is_string(json_object_get(json_array_get(levels, 0), "valid_runs_label")))
        return;
    fprintf(out, "## Valid Runs\n\n| %s | Valid Runs | Notes |\n|---|------------|-------|\n",
            report_md_axis_short(root));
    report_md_each_level(root, report_md_valid_runs_row, NULL, out);
    if (report_md_any_invalid(root))
        fprintf(out, "† the level was judged invalid (its notes say why): its figures are shown, "
                     "pooled over every repetition when none was valid, as `stampede compare` "
                     "marks them.\n\n");
}

/* "Actual RPS" counts sessions started in the window: a window shorter than the mean session
 * sees few starts and the figure collapses. Says so per level, with the window that fits: the
 * mean session when sessions were complete inside the window, else (none was) the longest span a
 * session was seen to take, a lower bound. */
static void report_md_window_note(const json_t *root, FILE *out) {
    const json_t *levels = report_md_levels(root);
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *level = json_array_get(levels, i);
        const json_t *sessions = json_object_get(level, "sessions");
        double window_s = report_doc_number(level, "duration_s");
        double session_s = report_md_block(sessions, "makespan_ms", "mean") / 1000;
        bool at_least = false;
        if (isnan(session_s) && report_doc_number(sessions, "count") == 0) {
            session_s = report_doc_number(sessions, "closed_span_max_ms") / 1000;
            at_least = true;
        }
        if (isnan(window_s) || isnan(session_s) || session_s <= window_s)
            continue;
        char value[40];
        report_md_level_text(root, level, value, sizeof value);
        char why[160];
        if (at_least)
            snprintf(why, sizeof why,
                     "a session: none was complete inside it, and one took %.1fs or more",
                     session_s);
        else
            snprintf(why, sizeof why, "the mean session (%.1fs)", session_s);
        fprintf(out,
                "**Window shorter than a session at %s %s:** the measured window (%.1fs) is "
                "shorter than %s, so few conversations start inside it and Actual RPS "
                "understates the rate; a window of at least %.0fs (one session; several give a "
                "steadier figure) would fit.\n\n",
                report_md_axis_short(root), value, window_s, why, ceil(session_s));
    }
}

/* The server's own per level (seed-style columns): TTFT and TPOT means, exact _sum/_count deltas
 * of its histograms, and Gen TPS, its generated tokens per second (a counter delta). */
static void report_md_server_row(const json_t *level, FILE *out) {
    const json_t *gap = report_md_level_gap(level);
    char ttft[32], tpot[32], tps[32];
    report_doc_figure(ttft, sizeof ttft,
                      report_doc_number(json_object_get(gap, "ttft"), "server_mean_ms"), "ms");
    report_doc_figure(tpot, sizeof tpot,
                      report_doc_number(json_object_get(gap, "tpot"), "server_mean_ms"), "ms");
    report_md_plain(tps, sizeof tps,
                    report_doc_number(json_object_get(json_object_get(level, "server"), "total"),
                                      "generation_tokens_per_s"),
                    "%.1f");
    fprintf(out, " %s | %s | %s |", ttft, tpot, tps);
}

static void report_md_reference(const json_t *root, FILE *out) {
    const json_t *run = json_object_get(root, "run");
    json_t *doc = json_object();
    json_t *start = json_object_get(run, "start_time");
    json_object_set_new(doc, "generated", start ? json_incref(start) : json_null());
    json_object_set_new(doc, "mode", json_string(report_doc_axis(root)));
    double target = report_md_target_rps(root);
    json_object_set_new(doc, "target_rps", isnan(target) ? json_null() : json_real(target));
    json_t *refs = json_array();
    const json_t *levels = report_md_levels(root);
    for (size_t i = 0; i < json_array_size(levels); i++) {
        json_t *ref = json_object_get(json_array_get(levels, i), "reference");
        if (json_is_object(ref))
            json_array_append(refs, ref);
    }
    json_object_set_new(doc, "levels", refs);
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    fprintf(out, "## Reference Data (JSON)\n\n```json\n%s\n```\n", text ? text : "{}");
    free(text);
    json_decref(doc);
}

void report_md_render(const json_t *root, FILE *out) {
    report_md_title(root, out);
    report_md_methodology(root, out);
    report_md_deployment(root, out);
    report_md_level_table(root, "TPOT -- Time Per Output Token", "TPOT p50 | TPOT p95 | Error %",
                          ":--------:|:--------:|:-------:", report_md_tpot_row, out);
    report_md_level_table(root, "TTFT -- Time to First Token", "TTFT p50 | TTFT p95",
                          ":--------:|:--------:", report_md_ttft_row, out);
    report_md_level_table(root, "End-to-End Latency", "Latency p50 | Latency p95",
                          ":-----------:|:-----------:", report_md_latency_row, out);
    report_md_level_table(root, "Error Rates", "Error %", ":-------:", report_md_error_row, out);
    report_md_level_table(root, "Conversation Starts/s", "Conversation starts/s",
                          ":----------:", report_md_rps_row, out);
    report_md_window_note(root, out);
    if (report_md_any(root, report_md_level_gap))
        report_md_level_table(root, "Server Figures (exact means)",
                              "Server TTFT | Server TPOT | Gen TPS",
                              ":---------:|:---------:|:-------:", report_md_server_row, out);
    report_md_valid_runs(root, out);
    report_md_saturation(root, out);
    report_md_fits(root, out);
    report_md_agentic(root, out);
    report_md_gap(root, out);
    report_md_reference(root, out);
}
