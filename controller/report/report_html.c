#include "report_html.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_doc.h"
#include "report_requests_html.h"
#include "report_svg.h"

/* More levels than this get no per-level chart (CDF lines, time series, roles): the page would
 * be unreadable; the tables and the charts against the level still show every level. */
#define HTML_MAX_LEVEL_LINES 16
#define HTML_MAX_POINTS 4096
#define HTML_MAX_PAGES 8 /* server pages drawn per level */

static const char report_html_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}figure.chart{margin:0;width:640px;"
    "max-width:100%}svg{width:100%;height:auto;background:#fff}"
    "svg .title{font-size:14px;font-weight:600}svg .tick{font-size:11px;fill:#444}"
    "svg .axis-label{font-size:12px;fill:#222}svg .grid{stroke:#e4e4e4}svg .axis{stroke:#444}"
    "svg .legend text{font-size:11px;fill:#222;stroke:none}svg polyline{stroke-width:1.5}"
    "svg .legend rect{stroke:none}.bad{color:#b00020}"
    "@media print{body{margin:0;font-size:11px}figure.chart{width:48%;break-inside:avoid}"
    "h2{break-after:avoid}table{break-inside:avoid}}";

/* A number from o[key] (integer or real), NAN when absent or null. */
static double report_html_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* o[block][key], e.g. the p95 of ttft_ms. */
static double report_html_block(const json_t *o, const char *block, const char *key) {
    return report_html_num(json_object_get(o, block), key);
}

/* The level's position on the x axis and that axis's name. */
static double report_html_level_x(const json_t *level, size_t index, const char **axis) {
    double c = report_html_num(level, "concurrency");
    if (isfinite(c)) {
        *axis = "concurrency (sessions in flight)";
        return c;
    }
    const json_t *rate = json_object_get(level, "rate");
    double r = json_is_object(rate) ? report_html_num(rate, "requested_per_s")
                                    : report_html_num(level, "rate");
    if (isfinite(r)) {
        *axis = "rate (sessions/s)";
        return r;
    }
    *axis = "level";
    return (double)index + 1;
}

/* A short name for the level in legends: "c=16", "r=2.5", "level 3". */
static void report_html_level_name(const json_t *level, size_t index, char *name, size_t size) {
    const char *axis;
    double x = report_html_level_x(level, index, &axis);
    if (axis[0] == 'c')
        snprintf(name, size, "c=%g", x);
    else if (axis[0] == 'r')
        snprintf(name, size, "r=%g/s", x);
    else
        snprintf(name, size, "level %zu", index + 1);
}

static void report_html_cell(buffer_t *out, double v, const char *fmt) {
    if (isfinite(v))
        buffer_appendf(out, fmt, v);
    else
        buffer_appendf(out, "<td>–</td>");
}

static void report_html_header(const json_t *root, buffer_t *out) {
    const json_t *run = json_object_get(root, "run");
    const char *kind = json_string_value(json_object_get(root, "kind"));
    const char *config = json_string_value(json_object_get(run, "config"));
    buffer_appendf(out, "<h1>stampede %s report", kind ? kind : "run");
    if (config) {
        buffer_appendf(out, ": ");
        report_svg_text(out, config);
    }
    buffer_appendf(out, "</h1>\n<table>");
    char simulation_text[256];
    const char *simulation = report_doc_simulation(root, simulation_text, sizeof simulation_text);
    const char *simulated = report_doc_simulated(root);
    if (simulation) {
        buffer_appendf(out, "<tr><th>server</th><td class=\"bad\">SIMULATED: ");
        report_svg_text(out, simulation);
        buffer_appendf(out, " (stampede simulate): no server was measured</td></tr>");
    } else if (simulated) {
        buffer_appendf(out, "<tr><th>server</th><td class=\"bad\">simulated server (profile ");
        report_svg_text(out, simulated);
        buffer_appendf(out, "): stampede's embedded mock, not an inference server</td></tr>");
    }
    const char *replicas = report_doc_replicas(root);
    if (replicas) {
        buffer_appendf(out, "<tr><th>replicas</th><td class=\"bad\">");
        report_svg_text(out, replicas);
        buffer_appendf(out, "</td></tr>");
    }
    static const char *const keys[] = {"run_id", "start_time", "stop_reason", "seed", "workers"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(run, keys[i]);
        if (!v || json_is_null(v))
            continue;
        char *text = json_is_string(v) ? strdup(json_string_value(v))
                                       : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        buffer_appendf(out, "<tr><th>%s</th><td>", keys[i]);
        report_svg_text(out, text ? text : "");
        buffer_appendf(out, "</td></tr>");
        free(text);
    }
    const json_t *validity = json_object_get(root, "validity");
    if (json_is_object(validity)) {
        bool valid = json_is_true(json_object_get(validity, "valid"));
        buffer_appendf(out, "<tr><th>valid</th><td class=\"%s\">%s", valid ? "" : "bad",
                       valid ? "yes" : "no");
        size_t i;
        const json_t *reason;
        json_array_foreach(json_object_get(validity, "reasons"), i, reason) {
            buffer_appendf(out, "%s", i ? "; " : ": ");
            report_svg_text(out, json_string_value(reason));
        }
        buffer_appendf(out, "</td></tr>");
    }
    if (json_is_true(json_object_get(root, "partial")))
        buffer_appendf(out, "<tr><th>partial</th><td class=\"bad\">yes</td></tr>");
    buffer_appendf(out, "</table>\n");
}

/* One row per level: the figures the reference reports print. */
static void report_html_table(const json_t *levels, buffer_t *out) {
    buffer_appendf(out, "<h2>Levels</h2>\n<table><tr><th>level</th><th>ok</th><th>failed</th>"
                        "<th>error %%</th><th>TTFT p50 ms</th><th>TTFT p95 ms</th>"
                        "<th>TPOT p50 ms</th><th>TPOT p95 ms</th><th>E2E p50 ms</th>"
                        "<th>E2E p95 ms</th><th>output tok/s</th><th>req/s</th></tr>\n");
    size_t i;
    const json_t *level;
    json_array_foreach(levels, i, level) {
        char name[64];
        report_html_level_name(level, i, name, sizeof name);
        double tops = report_html_num(level, "output_tokens_per_s");
        if (!isfinite(tops))
            tops = report_html_num(level, "tops");
        buffer_appendf(out, "<tr><td>%s</td>", name);
        report_html_cell(out, report_html_num(level, "requests_ok"), "<td>%.0f</td>");
        report_html_cell(out, report_html_num(level, "requests_failed"), "<td>%.0f</td>");
        report_html_cell(out, report_html_num(level, "error_pct"), "<td>%.2f</td>");
        static const char *const blocks[] = {"ttft_ms", "tpot_ms", "e2e_ms"};
        for (size_t b = 0; b < 3; b++) {
            report_html_cell(out, report_html_block(level, blocks[b], "p50"), "<td>%.2f</td>");
            report_html_cell(out, report_html_block(level, blocks[b], "p95"), "<td>%.2f</td>");
        }
        report_html_cell(out, tops, "<td>%.1f</td>");
        report_html_cell(out, report_html_num(level, "requests_per_s"), "<td>%.2f</td>");
        buffer_appendf(out, "</tr>\n");
    }
    buffer_appendf(out, "</table>\n");
}

/* x of every level, for the charts against the level. */
typedef struct {
    size_t n;
    double *x;
    const char *axis;
    bool log2; /* the levels double (1, 2, 4, ...): a log2 axis spaces them evenly */
} report_html_levels_t;

/* Three levels or more, each twice the one before (within 5 %). */
static bool report_html_doubling(const report_html_levels_t *lv) {
    if (lv->n < 3)
        return false;
    for (size_t i = 1; i < lv->n; i++) {
        double ratio = lv->x[i] / lv->x[i - 1];
        if (!(lv->x[i - 1] > 0) || !(ratio > 1.9 && ratio < 2.1))
            return false;
    }
    return true;
}

/* A chart of series against the level. */
static size_t report_html_against_level(buffer_t *out, const report_html_levels_t *lv,
                                        const char *title, const char *y_label,
                                        const report_svg_series_t *s, size_t n) {
    report_svg_chart_t chart = {title, lv->axis, y_label, lv->log2};
    return report_svg_chart(out, &chart, s, n);
}

/* A metric's p50, p95 and p99 against the level. */
static size_t report_html_percentiles(const json_t *levels, const report_html_levels_t *lv,
                                      const char *block, const char *title, buffer_t *out) {
    static const char *const keys[] = {"p50", "p95", "p99"};
    double *y = malloc(3 * lv->n * sizeof *y);
    if (!y)
        return 0;
    report_svg_series_t s[3];
    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < lv->n; i++)
            y[k * lv->n + i] = report_html_block(json_array_get(levels, i), block, keys[k]);
        s[k] = (report_svg_series_t){.name = keys[k], .n = lv->n, .x = lv->x, .y = y + k * lv->n};
    }
    size_t marks = report_html_against_level(out, lv, title, "milliseconds", s, 3);
    free(y);
    return marks;
}

/* One figure of every level against the level (first of the keys the level has). */
static size_t report_html_figure(const json_t *levels, const report_html_levels_t *lv,
                                 const char *key, const char *alt_key, const char *title,
                                 const char *unit, buffer_t *out) {
    double *y = malloc(lv->n * sizeof *y);
    if (!y)
        return 0;
    for (size_t i = 0; i < lv->n; i++) {
        const json_t *level = json_array_get(levels, i);
        y[i] = report_html_num(level, key);
        if (!isfinite(y[i]) && alt_key)
            y[i] = report_html_num(level, alt_key);
    }
    report_svg_series_t s = {.name = title, .n = lv->n, .x = lv->x, .y = y};
    size_t marks = report_html_against_level(out, lv, title, unit, &s, 1);
    free(y);
    return marks;
}

/* The failure classes of a level's "errors" object, in the table's order. */
static const char *const classes[] = {"refused",
                                      "connect",
                                      "timeout",
                                      "http_4xx",
                                      "http_429",
                                      "context_length",
                                      "http_500",
                                      "http_503",
                                      "http_529",
                                      "http_5xx",
                                      "reset_before_headers",
                                      "reset_mid_stream",
                                      "truncated_json",
                                      "malformed_sse",
                                      "no_done",
                                      "server_error_event",
                                      "not_sse",
                                      "incomplete",
                                      "protocol",
                                      "client_fd_limit"};
enum { N_CLASSES = sizeof classes / sizeof classes[0] };

/* True when some level failed a request (its count, its error share or a class above 0). */
static bool report_html_any_failed(const json_t *levels) {
    size_t i;
    const json_t *level;
    json_array_foreach(levels, i, level) {
        if (report_html_num(level, "requests_failed") > 0 ||
            report_html_num(level, "error_pct") > 0)
            return true;
        for (size_t c = 0; c < N_CLASSES; c++)
            if (report_html_num(json_object_get(level, "errors"), classes[c]) > 0)
                return true;
    }
    return false;
}

/* Failed requests of each class some level counts, as a share of the finished ones, against the
 * level (one level: a bar per class); the total error_pct alone when the levels carry no classes
 * (a results.json written before they did). No failure at all: one line of text, no chart. */
static size_t report_html_errors(const json_t *levels, const report_html_levels_t *lv,
                                 buffer_t *out) {
    if (!report_html_any_failed(levels)) {
        buffer_appendf(out, "<p class=\"empty\">Errors by class: no request failed.</p>\n");
        return 0;
    }
    double *y = malloc((N_CLASSES + 1) * lv->n * sizeof *y);
    if (!y)
        return 0;
    report_svg_series_t s[N_CLASSES + 1];
    const char *names[N_CLASSES + 1];
    double bars[N_CLASSES + 1];
    size_t n_series = 0;
    bool classed = false;
    for (size_t c = 0; c < N_CLASSES; c++) {
        double *row = y + n_series * lv->n;
        bool seen = false;
        for (size_t i = 0; i < lv->n; i++) {
            const json_t *level = json_array_get(levels, i);
            const json_t *errors = json_object_get(level, "errors");
            double done =
                report_html_num(level, "requests_ok") + report_html_num(level, "requests_failed");
            double n = report_html_num(errors, classes[c]);
            row[i] = json_is_object(errors) && done > 0 ? 100 * n / done : NAN;
            classed |= json_is_object(errors);
            seen |= n > 0;
        }
        if (seen) { /* a class no level counts would be one more line at zero */
            names[n_series] = classes[c];
            bars[n_series] = row[0];
            s[n_series++] =
                (report_svg_series_t){.name = classes[c], .n = lv->n, .x = lv->x, .y = row};
        }
    }
    if (!classed || n_series == 0) {
        for (size_t i = 0; i < lv->n; i++)
            y[i] = report_html_num(json_array_get(levels, i), "error_pct");
        names[0] = "all classes";
        bars[0] = y[0];
        s[0] = (report_svg_series_t){.name = "all classes", .n = lv->n, .x = lv->x, .y = y};
        n_series = 1;
    }
    size_t marks = lv->n == 1 ? report_svg_bars(out, "Errors by class", "% of finished requests",
                                                names, bars, n_series)
                              : report_html_against_level(out, lv, "Errors by class",
                                                          "% of finished requests", s, n_series);
    free(y);
    return marks;
}

/* The CDF of one level's metric into x, y: from its histogram buckets ([[upper_ms, count],
 * ...]) when results.json keeps them, else the percentile points of the metric block. */
static size_t report_html_cdf_points(const json_t *block, double *x, double *y, size_t max) {
    const json_t *buckets = json_object_get(block, "buckets");
    size_t n = 0;
    if (json_is_array(buckets) && json_array_size(buckets) > 0) {
        double total = 0, seen = 0;
        size_t i;
        const json_t *b;
        json_array_foreach(buckets, i, b) total += json_number_value(json_array_get(b, 1));
        json_array_foreach(buckets, i, b) {
            if (n >= max || !(total > 0))
                break;
            seen += json_number_value(json_array_get(b, 1));
            x[n] = json_number_value(json_array_get(b, 0));
            y[n++] = 100 * seen / total;
        }
        return n;
    }
    static const char *const keys[] = {"min", "p50", "p90", "p95", "p99", "p99_9", "max"};
    static const double at[] = {0, 50, 90, 95, 99, 99.9, 100};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && n < max; k++) {
        x[n] = report_html_num(block, keys[k]);
        y[n] = at[k];
        if (isfinite(x[n]))
            n++;
    }
    return n;
}

/* The latency CDF of a metric, one line per level. */
static size_t report_html_cdf(const json_t *levels, const char *block, const char *title,
                              buffer_t *out) {
    size_t n_levels = json_array_size(levels);
    if (n_levels > HTML_MAX_LEVEL_LINES)
        n_levels = HTML_MAX_LEVEL_LINES;
    double *x = malloc(n_levels * HTML_MAX_POINTS * sizeof *x);
    double *y = malloc(n_levels * HTML_MAX_POINTS * sizeof *y);
    char(*names)[64] = malloc(n_levels * sizeof *names);
    report_svg_series_t *s = malloc(n_levels * sizeof *s);
    size_t marks = 0;
    if (x && y && names && s && n_levels > 0) {
        for (size_t i = 0; i < n_levels; i++) {
            const json_t *level = json_array_get(levels, i);
            report_html_level_name(level, i, names[i], sizeof names[i]);
            size_t n =
                report_html_cdf_points(json_object_get(level, block), x + i * HTML_MAX_POINTS,
                                       y + i * HTML_MAX_POINTS, HTML_MAX_POINTS);
            s[i] = (report_svg_series_t){.name = names[i],
                                         .n = n,
                                         .x = x + i * HTML_MAX_POINTS,
                                         .y = y + i * HTML_MAX_POINTS};
        }
        marks =
            report_svg_lines(out, title, "milliseconds", "% of requests at or below", s, n_levels);
    }
    free(x);
    free(y);
    free(names);
    free(s);
    return marks;
}

/* Series named keys[] of a {"t_s": [...], key: [...]} object, over time. */
static size_t report_html_series(const json_t *series, const char *const *keys, size_t n_keys,
                                 const char *title, const char *unit, buffer_t *out) {
    const json_t *t = json_object_get(series, "t_s");
    size_t n = json_array_size(t);
    if (n == 0 || n_keys > 4)
        return 0;
    double *x = malloc(n * sizeof *x), *y = malloc(n_keys * n * sizeof *y);
    report_svg_series_t s[4];
    size_t n_series = 0, marks = 0;
    if (x && y) {
        for (size_t i = 0; i < n; i++)
            x[i] = json_number_value(json_array_get(t, i));
        for (size_t k = 0; k < n_keys; k++) {
            const json_t *v = json_object_get(series, keys[k]);
            if (!json_is_array(v))
                continue;
            double *row = y + n_series * n;
            for (size_t i = 0; i < n; i++) {
                const json_t *e = json_array_get(v, i);
                row[i] = json_is_number(e) ? json_number_value(e) : NAN;
            }
            s[n_series++] = (report_svg_series_t){.name = keys[k], .n = n, .x = x, .y = row};
        }
        marks = report_svg_lines(out, title, "seconds", unit, s, n_series);
    }
    free(x);
    free(y);
    return marks;
}

/* Decode overlap (share of decoding time with at least k requests decoding) of one level. */
static size_t report_html_overlap(const json_t *level, const char *name, buffer_t *out) {
    const json_t *overlap = json_object_get(level, "decode_overlap");
    size_t n = json_array_size(overlap);
    if (n == 0)
        return 0;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    size_t marks = 0;
    if (x && y) {
        for (size_t i = 0; i < n; i++) {
            x[i] = report_html_num(json_array_get(overlap, i), "k");
            y[i] = 100 * report_html_num(json_array_get(overlap, i), "share");
        }
        report_svg_series_t s = {.name = name, .n = n, .x = x, .y = y};
        char title[128];
        snprintf(title, sizeof title, "Decode overlap (%s)", name);
        marks = report_svg_lines(out, title, "k (requests decoding at once)",
                                 "% of decoding time with ≥ k", &s, 1);
    }
    free(x);
    free(y);
    return marks;
}

/* Bars of one figure of every role of a level (e.g. TTFT p50). */
static size_t report_html_roles(const json_t *level, const char *level_name, const char *block,
                                const char *label, buffer_t *out) {
    const json_t *roles = json_object_get(level, "roles");
    size_t n = json_object_size(roles);
    if (n < 2) /* one role's bar says no more than the summary table */
        return 0;
    const char **names = malloc(n * sizeof *names);
    double *values = malloc(n * sizeof *values);
    size_t i = 0, marks = 0;
    if (names && values) {
        const char *name;
        const json_t *role;
        json_object_foreach((json_t *)roles, name, role) {
            names[i] = name;
            values[i++] = report_html_block(role, block, "p50");
        }
        char title[160];
        snprintf(title, sizeof title, "%s p50 per role (%s)", label, level_name);
        marks = report_svg_bars(out, title, "milliseconds", names, values, n);
    }
    free(names);
    free(values);
    return marks;
}

/* One level's own charts (time series, decode overlap, roles) appended to out; how many. */
static int report_html_level_charts(const json_t *level, const char *name, buffer_t *out) {
    static const char *const client[] = {"in_flight", "requests_per_s"};
    static const char *const server[] = {"running", "waiting"};
    static const char *const kv[] = {"kv_usage_pct"};
    int charts = 0;
    char title[192];
    snprintf(title, sizeof title, "Client: in flight and requests/s (%s)", name);
    charts += report_html_series(json_object_get(level, "client_series"), client, 2, title,
                                 "requests, requests/s", out) > 0;
    /* the servers' total when it has a series, else each page's own */
    const json_t *server_json = json_object_get(level, "server");
    const json_t *total = json_object_get(json_object_get(server_json, "total"), "series");
    const json_t *pages = json_object_get(server_json, "pages");
    size_t n_pages = total ? 1 : json_array_size(pages);
    for (size_t p = 0; p < n_pages && p < HTML_MAX_PAGES; p++) {
        const json_t *series = total ? total : json_object_get(json_array_get(pages, p), "series");
        char page_name[32] = "";
        if (n_pages > 1)
            snprintf(page_name, sizeof page_name, " page %zu", p + 1);
        snprintf(title, sizeof title, "Server%s: running and waiting (%s)", page_name, name);
        charts += report_html_series(series, server, 2, title, "requests", out) > 0;
        snprintf(title, sizeof title, "Server%s: KV cache usage (%s)", page_name, name);
        charts += report_html_series(series, kv, 1, title, "%", out) > 0;
    }
    charts += report_html_overlap(level, name, out) > 0;
    charts += report_html_roles(level, name, "ttft_ms", "TTFT", out) > 0;
    charts += report_html_roles(level, name, "tpot_ms", "TPOT", out) > 0;
    return charts;
}

/* A section per level that has charts of its own (a sweep's level: its client series from one
 * repetition, its roles and decode overlap pooled over its valid ones). */
static int report_html_per_level(const json_t *levels, buffer_t *out) {
    int charts = 0;
    buffer_t section;
    buffer_init(&section);
    size_t n_levels = json_array_size(levels);
    for (size_t i = 0; i < n_levels && i < HTML_MAX_LEVEL_LINES; i++) {
        const json_t *level = json_array_get(levels, i);
        char name[64];
        report_html_level_name(level, i, name, sizeof name);
        buffer_reset(&section);
        int drawn = report_html_level_charts(level, name, &section);
        if (drawn == 0)
            continue;
        buffer_appendf(out, "<h2>Level %s</h2>\n<div class=\"charts\">", name);
        buffer_append(out, buffer_head(&section), buffer_pending(&section));
        buffer_appendf(out, "</div>\n");
        charts += drawn;
    }
    buffer_clear(&section);
    return charts;
}

/* A level's output tokens/s ("tops" in a sweep's results.json written before the rename). */
static double report_html_tokens_per_s(const json_t *level) {
    double v = report_html_num(level, "output_tokens_per_s");
    return isfinite(v) ? v : report_html_num(level, "tops");
}

/* A latency's p50 against output tokens/s, one labelled point per level, and the Pareto front:
 * the levels no other level beats on both counts (as many tokens/s or more at a lower latency). */
static size_t report_html_pareto(const json_t *levels, const char *block, const char *title,
                                 buffer_t *out) {
    size_t n = json_array_size(levels), n_front = 0;
    double *x = malloc((n ? n : 1) * 4 * sizeof *x);
    char(*names)[64] = malloc((n ? n : 1) * sizeof *names);
    const char **labels = malloc((n ? n : 1) * sizeof *labels);
    size_t marks = 0;
    if (!x || !names || !labels)
        goto done;
    double *y = x + n, *front_x = x + 2 * n, *front_y = x + 3 * n;
    for (size_t i = 0; i < n; i++) {
        const json_t *level = json_array_get(levels, i);
        x[i] = report_html_tokens_per_s(level);
        y[i] = report_html_block(level, block, "p50");
        report_html_level_name(level, i, names[i], sizeof names[i]);
        labels[i] = names[i];
    }
    /* walked by tokens/s from the lowest: a level is on the front when no level with as many
     * tokens/s or more has a lower latency */
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            continue;
        bool beaten = false;
        for (size_t j = 0; j < n && !beaten; j++)
            beaten = j != i && isfinite(x[j]) && isfinite(y[j]) && x[j] >= x[i] && y[j] <= y[i] &&
                     (x[j] > x[i] || y[j] < y[i]);
        if (beaten)
            continue;
        size_t k = n_front++; /* insertion by tokens/s */
        for (; k > 0 && front_x[k - 1] > x[i]; k--) {
            front_x[k] = front_x[k - 1];
            front_y[k] = front_y[k - 1];
        }
        front_x[k] = x[i];
        front_y[k] = y[i];
    }
    report_svg_series_t s[2] = {
        /* the front first: the levels' labelled dots are drawn over it */
        {.name = "Pareto front", .n = n_front, .x = front_x, .y = front_y},
        {.name = "levels", .n = n, .x = x, .y = y, .dots = true, .labels = labels},
    };
    report_svg_chart_t chart = {title, "output tokens/s", "milliseconds (p50)", false};
    marks = report_svg_chart(out, &chart, s, 2);
done:
    free(x);
    free(names);
    free(labels);
    return marks;
}

/* Ends a section's row of charts; a section that drew none says so in one line rather than
 * stand empty under its heading. */
static int report_html_end_section(buffer_t *out, int drawn, const char *what) {
    buffer_appendf(out, "</div>\n");
    if (drawn == 0)
        buffer_appendf(out, "<p class=\"empty\">%s: nothing to draw (no ok request).</p>\n", what);
    return drawn;
}

/* A single run's page: its requests over time (from the trace), its load over time, its errors
 * and its latency CDFs; no chart against the level, which would hold one dot. */
static int report_html_single(const json_t *root, const json_t *levels,
                              const report_html_levels_t *lv, const char *dir, buffer_t *out) {
    const json_t *level = json_array_get(levels, 0);
    int charts = report_requests_html(dir, json_object_get(root, "sweep") != NULL, out);
    char name[64];
    report_html_level_name(level, 0, name, sizeof name);
    buffer_t section;
    buffer_init(&section);
    int drawn = report_html_level_charts(level, name, &section);
    if (drawn > 0) {
        buffer_appendf(out, "<h2>Load over time</h2>\n<div class=\"charts\">");
        buffer_append(out, buffer_head(&section), buffer_pending(&section));
        buffer_appendf(out, "</div>\n");
        charts += drawn;
    }
    buffer_clear(&section);
    buffer_appendf(out, "<h2>Errors</h2>\n<div class=\"charts\">");
    charts += report_html_errors(levels, lv, out) > 0;
    buffer_appendf(out, "</div>\n<h2>Latency distribution</h2>\n<div class=\"charts\">");
    drawn = report_html_cdf(levels, "ttft_ms", "TTFT CDF", out) > 0;
    drawn += report_html_cdf(levels, "itl_ms", "ITL CDF", out) > 0;
    drawn += report_html_cdf(levels, "e2e_ms", "E2E latency CDF", out) > 0;
    return charts + report_html_end_section(out, drawn, "Latency distribution");
}

/* A sweep's page: every figure against the level, latency against throughput, the CDFs one line
 * per level, and a section per level. */
static int report_html_sweep(const json_t *levels, const report_html_levels_t *lv, buffer_t *out) {
    int charts = 0, drawn;
    buffer_appendf(out, "<h2>Latency against the level</h2>\n<div class=\"charts\">");
    drawn = report_html_percentiles(levels, lv, "ttft_ms", "TTFT", out) > 0;
    drawn += report_html_percentiles(levels, lv, "tpot_ms", "TPOT", out) > 0;
    drawn += report_html_percentiles(levels, lv, "itl_ms", "ITL", out) > 0;
    drawn += report_html_percentiles(levels, lv, "e2e_ms", "E2E latency", out) > 0;
    charts += report_html_end_section(out, drawn, "Latency against the level");
    buffer_appendf(out, "<h2>Latency against throughput</h2>\n<div class=\"charts\">");
    drawn = report_html_pareto(levels, "ttft_ms", "TTFT p50 against output tokens/s", out) > 0;
    drawn += report_html_pareto(levels, "tpot_ms", "TPOT p50 against output tokens/s", out) > 0;
    charts += report_html_end_section(out, drawn, "Latency against throughput");
    buffer_appendf(out, "<h2>Throughput and errors</h2>\n<div class=\"charts\">");
    charts += report_html_figure(levels, lv, "output_tokens_per_s", "tops", "Output tokens/s",
                                 "tokens/s", out) > 0;
    charts +=
        report_html_figure(levels, lv, "requests_per_s", NULL, "Requests/s", "requests/s", out) > 0;
    charts += report_html_errors(levels, lv, out) > 0;
    buffer_appendf(out, "</div>\n<h2>Latency distribution</h2>\n<div class=\"charts\">");
    drawn = report_html_cdf(levels, "ttft_ms", "TTFT CDF per level", out) > 0;
    drawn += report_html_cdf(levels, "e2e_ms", "E2E latency CDF per level", out) > 0;
    charts += report_html_end_section(out, drawn, "Latency distribution");
    charts += report_html_per_level(levels, out);
    return charts;
}

int report_html_render(const json_t *root, const char *dir, buffer_t *out) {
    const json_t *levels = json_object_get(root, "levels");
    if (!json_is_object(root) || !json_is_array(levels))
        return -1;
    report_html_levels_t lv = {json_array_size(levels), NULL, "level", false};
    lv.x = malloc((lv.n ? lv.n : 1) * sizeof *lv.x);
    if (!lv.x)
        return -1;
    for (size_t i = 0; i < lv.n; i++)
        lv.x[i] = report_html_level_x(json_array_get(levels, i), i, &lv.axis);
    lv.log2 = report_html_doubling(&lv);
    buffer_appendf(out,
                   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<title>stampede report</title><style>%s</style></head><body>\n",
                   report_html_css);
    report_html_header(root, out);
    report_html_table(levels, out);
    int charts = lv.n == 1  ? report_html_single(root, levels, &lv, dir, out)
                 : lv.n > 1 ? report_html_sweep(levels, &lv, out)
                            : 0;
    buffer_appendf(out, "<p>Generated by stampede from results.json (docs/report-html.md)."
                        "</p>\n</body></html>\n");
    free(lv.x);
    return charts;
}

int report_html_emit(const json_t *root, const char *dir, FILE *out, char *err, size_t err_len) {
    buffer_t page;
    buffer_init(&page);
    int rc = -1;
    if (report_html_render(root, dir, &page) < 0)
        snprintf(err, err_len, "%s/results.json: not a stampede results document (no levels)", dir);
    else if (fwrite(buffer_head(&page), 1, buffer_pending(&page), out) != buffer_pending(&page))
        snprintf(err, err_len, "%s/report.html: %s", dir, strerror(errno));
    else
        rc = 0;
    buffer_clear(&page);
    return rc;
}
