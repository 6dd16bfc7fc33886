#include "report_requests_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "live_window.h"
#include "report_requests.h"
#include "report_svg.h"

#define REQUESTS_HTML_MAX_DOTS 4096  /* dots drawn per chart */
#define REQUESTS_HTML_MAX_BINS 4096  /* in-flight points drawn */
#define REQUESTS_HTML_MIN_MEDIAN 200 /* fewer points get no moving median */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Every k-th of points (sorted by x), so that at most REQUESTS_HTML_MAX_DOTS are drawn: a page of
 * tens of thousands of dots is megabytes and shows no more. Into *x, *y (the caller frees); how
 * many. */
static size_t report_requests_html_dots(const report_points_t *points, double **x, double **y) {
    size_t every = (points->n + REQUESTS_HTML_MAX_DOTS - 1) / REQUESTS_HTML_MAX_DOTS, n = 0;
    *x = malloc((points->n ? points->n : 1) * sizeof **x);
    *y = malloc((points->n ? points->n : 1) * sizeof **y);
    if (!*x || !*y || every == 0)
        return 0;
    for (size_t i = 0; i < points->n; i += every) {
        (*x)[n] = points->x[i];
        (*y)[n++] = points->y[i];
    }
    return n;
}

/* A metric of every request over time (a dot each) with the p50 and p99 of the trailing
 * LIVE_WINDOW_SECONDS, the window of the live /metrics summaries. */
static size_t report_requests_html_over_time(report_points_t *points, const char *title,
                                             const char *what, buffer_t *out) {
    enum { AT = 200 };
    static const double qs[] = {0.5, 0.99};
    double at_x[AT], at_y[2 * AT];
    if (points->n == 0 ||
        report_requests_rolling(points, LIVE_WINDOW_SECONDS, qs, 2, AT, at_x, at_y) != 0)
        return 0;
    char p50[64], p99[64];
    snprintf(p50, sizeof p50, "p50, last %d s", LIVE_WINDOW_SECONDS);
    snprintf(p99, sizeof p99, "p99, last %d s", LIVE_WINDOW_SECONDS);
    double *dot_x, *dot_y;
    size_t n_dots = report_requests_html_dots(points, &dot_x, &dot_y);
    report_svg_series_t s[3] = {
        /* the lines first: the dots are drawn over them */
        {.name = p50, .n = AT, .x = at_x, .y = at_y},
        {.name = p99, .n = AT, .x = at_x, .y = at_y + AT},
        {.name = what, .n = n_dots, .x = dot_x, .y = dot_y, .dots = true},
    };
    report_svg_chart_t chart = {title, "seconds since the run's start", "milliseconds", false};
    size_t marks = report_svg_chart(out, &chart, s, 3);
    free(dot_x);
    free(dot_y);
    return marks;
}

/* A metric of every request against a figure of the request (a dot each) and, with enough
 * points, the p50 of those within the last 1/20 of the axis. */
static size_t report_requests_html_against(report_points_t *points, const char *title,
                                           const char *x_label, const char *what, buffer_t *out) {
    enum { AT = 100 };
    static const double q = 0.5;
    double at_x[AT], at_y[AT];
    if (points->n == 0)
        return 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < points->n; i++) {
        lo = fmin(lo, points->x[i]);
        hi = fmax(hi, points->x[i]);
    }
    if (report_requests_rolling(points, fmax((hi - lo) / 20, 1), &q, 1, AT, at_x, at_y) != 0)
        return 0;
    double *dot_x, *dot_y;
    size_t n_dots = report_requests_html_dots(points, &dot_x, &dot_y);
    /* a moving median of a few dozen points is noise; the line first, the dots over it */
    bool median = points->n >= REQUESTS_HTML_MIN_MEDIAN;
    report_svg_series_t s[2] = {
        {.name = "p50 of the last 1/20", .n = AT, .x = at_x, .y = at_y},
        {.name = what, .n = n_dots, .x = dot_x, .y = dot_y, .dots = true},
    };
    report_svg_chart_t chart = {title, x_label, "milliseconds", false};
    size_t marks = report_svg_chart(out, &chart, median ? s : s + 1, median ? 2 : 1);
    free(dot_x);
    free(dot_y);
    return marks;
}

/* Requests in flight over time (every request sent, from its send to its end), the mean of each
 * bin of REPORT_REQUESTS_BIN_S, bins merged to at most REQUESTS_HTML_MAX_BINS. */
static size_t report_requests_html_in_flight(const report_requests_t *requests, buffer_t *out) {
    size_t merge = (requests->n_bins + REQUESTS_HTML_MAX_BINS - 1) / REQUESTS_HTML_MAX_BINS;
    if (merge == 0)
        return 0;
    size_t n = (requests->n_bins + merge - 1) / merge;
    double *x = malloc(n * sizeof *x), *y = calloc(n, sizeof *y);
    size_t marks = 0;
    if (x && y) {
        double width = REPORT_REQUESTS_BIN_S * (double)merge;
        for (size_t b = 0; b < requests->n_bins; b++)
            y[b / merge] += requests->busy_s[b] / width;
        for (size_t i = 0; i < n; i++)
            x[i] = width * (double)i + width / 2;
        char name[64];
        snprintf(name, sizeof name, "mean over %g s", width);
        report_svg_series_t s = {.name = name, .n = n, .x = x, .y = y};
        report_svg_chart_t chart = {"Requests in flight", "seconds since the run's start",
                                    "requests", false};
        marks = report_svg_chart(out, &chart, &s, 1);
    }
    free(x);
    free(y);
    return marks;
}

int report_requests_html(const char *dir, bool sweep, buffer_t *out) {
    report_requests_t requests = {0};
    char err[512] = "";
    int loaded = dir ? report_requests_load(&requests, dir, err, sizeof err) : 0;
    int charts = 0;
    buffer_appendf(out, "<h2>Requests over time</h2>\n");
    if (loaded <= 0 || requests.requests == 0) {
        buffer_appendf(out, "<p class=\"empty\">");
        if (loaded < 0)
            report_svg_text(out, err);
        else if (loaded == 0 && sweep) /* its traces are its repetitions' */
            buffer_appendf(out, "Per-request charts are drawn for one repetition: stampede report "
                                "OUT/levels/NN-LEVEL/rep-R (of a sweep run with --trace).");
        else if (loaded == 0)
            buffer_appendf(out, "Per-request charts (TTFT, ITL and E2E over time, TTFT against "
                                "prompt length, ITL against token position) are drawn from "
                                "requests.jsonl: run with --trace to get them.");
        else
            buffer_appendf(out, "requests.jsonl holds no ok, measured request.");
        buffer_appendf(out, "</p>\n");
        report_requests_clear(&requests);
        return 0;
    }
    if (requests.requests > REQUESTS_HTML_MAX_DOTS || requests.itl.seen > REQUESTS_HTML_MAX_DOTS)
        buffer_appendf(
            out,
            "<p>%zu ok requests, %zu token gaps; the dots are an even sample of at most "
            "%d per chart, the percentile lines are from %s.</p>\n",
            requests.requests, requests.itl.seen, REQUESTS_HTML_MAX_DOTS,
            requests.itl.seen > requests.itl.n || requests.ttft.seen > requests.ttft.n
                ? "an even sample of at most " STR(REPORT_REQUESTS_MAX_POINTS) " points per chart"
                : "every point");
    buffer_appendf(out, "<div class=\"charts\">");
    charts += report_requests_html_in_flight(&requests, out) > 0;
    charts +=
        report_requests_html_over_time(&requests.ttft, "TTFT per request", "requests", out) > 0;
    charts += report_requests_html_over_time(&requests.itl, "ITL per token gap", "gaps", out) > 0;
    charts += report_requests_html_over_time(&requests.e2e, "E2E latency per request", "requests",
                                             out) > 0;
    buffer_appendf(out, "</div>\n<h2>Latency against the request</h2>\n<div class=\"charts\">");
    charts += report_requests_html_against(&requests.ttft_prompt, "TTFT against prompt length",
                                           "prompt tokens", "requests", out) > 0;
    charts += report_requests_html_against(&requests.itl_position, "ITL against token position",
                                           "output token position", "gaps", out) > 0;
    buffer_appendf(out, "</div>\n");
    report_requests_clear(&requests);
    return charts;
}
