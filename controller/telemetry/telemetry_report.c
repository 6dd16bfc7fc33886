#include "telemetry_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The most samples of one gauge written to results.json (a day at 1 s is 86 400). */
#define TELEMETRY_REPORT_SERIES_MAX 100000

/* A figure or null. */
static json_t *telemetry_report_number(double v) {
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static double telemetry_report_ms(double seconds) {
    return seconds * 1000;
}

/* A share b/a - 1 in percent; NAN when a is not positive. */
static double telemetry_report_pct(double client, double server) {
    return client > 0 && !isnan(server) ? (client - server) / client * 100 : NAN;
}

static double telemetry_report_client_p50_ms(const merge_stats_t *c, metrics_kind_t k) {
    if (!c || !histogram_count(c->latency[k]))
        return NAN;
    return (double)histogram_percentile(c->latency[k], 50) / 1e6;
}

static double telemetry_report_client_mean_ms(const merge_stats_t *c, metrics_kind_t k) {
    if (!c || !histogram_count(c->latency[k]))
        return NAN;
    return histogram_mean(c->latency[k]) / 1e6;
}

static void telemetry_report_gap_latency_of(const merge_stats_t *client, metrics_kind_t k,
                                            const telemetry_histogram_delta_t *server,
                                            telemetry_gap_latency_t *out) {
    out->client_p50_ms = telemetry_report_client_p50_ms(client, k);
    out->server_p50_ms = telemetry_report_ms(server->p50_s);
    out->server_p50_bounds_ms[0] = telemetry_report_ms(server->bounds_s[0][0]);
    out->server_p50_bounds_ms[1] = telemetry_report_ms(server->bounds_s[0][1]);
    out->client_mean_ms = telemetry_report_client_mean_ms(client, k);
    out->server_mean_ms = telemetry_report_ms(server->mean_s);
    out->gap_ms = out->client_mean_ms - out->server_mean_ms;
    out->gap_pct = telemetry_report_pct(out->client_mean_ms, out->server_mean_ms);
}

void telemetry_report_gap(const telemetry_delta_t *server, const telemetry_client_counts_t *counts,
                          const merge_stats_t *client, telemetry_gap_t *out) {
    const telemetry_histogram_delta_t *ttft = &server->histogram[TELEMETRY_H_TTFT];
    const telemetry_histogram_delta_t *tpot = &server->histogram[TELEMETRY_H_TPOT];
    out->server_tpot_from = "tpot";
    if (isnan(tpot->mean_s)) { /* SGLang and Dynamo have only the per-token histogram */
        tpot = &server->histogram[TELEMETRY_H_ITL];
        out->server_tpot_from = isnan(tpot->mean_s) ? NULL : "itl";
    }
    telemetry_report_gap_latency_of(client, METRIC_TTFT, ttft, &out->ttft);
    telemetry_report_gap_latency_of(client, METRIC_TPOT, tpot, &out->tpot);
    out->client_requests = counts ? (double)counts->requests : NAN;
    out->server_requests = server->counter[TELEMETRY_C_REQUESTS];
    out->client_output_tokens = counts ? (double)counts->output_tokens : NAN;
    out->server_output_tokens = server->counter[TELEMETRY_C_GENERATION_TOKENS];
    out->output_tokens_gap_pct =
        telemetry_report_pct(out->client_output_tokens, out->server_output_tokens);
    out->client_prompt_tokens = counts ? (double)counts->prompt_tokens : NAN;
    out->server_prompt_tokens = server->counter[TELEMETRY_C_PROMPT_TOKENS];
    out->client_queue_ms = telemetry_report_client_mean_ms(client, METRIC_SCHEDULE_LAG);
    out->network_ms = out->ttft.gap_ms;
    out->server_queue_ms = telemetry_report_ms(server->histogram[TELEMETRY_H_QUEUE].mean_s);
    out->prefill_ms = telemetry_report_ms(server->histogram[TELEMETRY_H_PREFILL].mean_s);
    out->server_other_ms = out->ttft.server_mean_ms - out->server_queue_ms - out->prefill_ms;
    out->ttft_from_intended_ms = telemetry_report_client_mean_ms(client, METRIC_TTFT_FROM_INTENDED);
}

/* [lo, hi] in ms; an unbounded hi (+Inf) is null. */
static json_t *telemetry_report_bounds_json(double lo_ms, double hi_ms) {
    if (isnan(lo_ms))
        return json_null();
    return json_pack("[o, o]", telemetry_report_number(lo_ms), telemetry_report_number(hi_ms));
}

/* pNN_estimate_ms, pNN_bounds_ms and pNN_bucket_limited of one estimated percentile. */
static void telemetry_report_estimate_into(json_t *o, const char *prefix, double value_ms,
                                           double lo_ms, double hi_ms) {
    char k[48];
    snprintf(k, sizeof k, "%s_estimate_ms", prefix);
    json_object_set_new(o, k, telemetry_report_number(value_ms));
    snprintf(k, sizeof k, "%s_bounds_ms", prefix);
    json_object_set_new(o, k, telemetry_report_bounds_json(lo_ms, hi_ms));
    snprintf(k, sizeof k, "%s_bucket_limited", prefix);
    json_object_set_new(o, k, json_boolean(telemetry_read_bucket_limited(value_ms, lo_ms, hi_ms)));
}

static json_t *telemetry_report_histogram_json(const telemetry_histogram_delta_t *h) {
    if (isnan(h->count))
        return json_null();
    static const char *const names[TELEMETRY_READ_N_PERCENTILES] = {"p50", "p90", "p95", "p99"};
    const double values[TELEMETRY_READ_N_PERCENTILES] = {h->p50_s, h->p90_s, h->p95_s, h->p99_s};
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer((json_int_t)h->count));
    json_object_set_new(o, "mean_ms", telemetry_report_number(telemetry_report_ms(h->mean_s)));
    for (size_t i = 0; i < TELEMETRY_READ_N_PERCENTILES; i++)
        telemetry_report_estimate_into(o, names[i], telemetry_report_ms(values[i]),
                                       telemetry_report_ms(h->bounds_s[i][0]),
                                       telemetry_report_ms(h->bounds_s[i][1]));
    json_object_set_new(o, "p99_at_least", json_boolean(h->p99_at_least));
    json_object_set_new(o, "percentiles",
                        json_string(h->delta.layout_mismatch
                                        ? "absent: bucket layouts differ"
                                        : "estimates: linear within the bucket"));
    return o;
}

static json_t *telemetry_report_gauge_json(const telemetry_gauge_span_t *g) {
    if (!g->samples)
        return json_null();
    return json_pack("{s:o, s:o, s:I}", "mean", telemetry_report_number(g->mean), "max",
                     telemetry_report_number(g->max), "samples", (json_int_t)g->samples);
}

static double telemetry_report_rate(double count, double window_s) {
    return window_s > 0 ? count / window_s : NAN;
}

/* The figures of one delta (a page, an endpoint or the total). */
static void telemetry_report_delta_into(json_t *o, const telemetry_delta_t *d, double window_s) {
    for (size_t c = 0; c < TELEMETRY_C__COUNT; c++)
        if (c != TELEMETRY_C_GPU_ENERGY_MJ)
            json_object_set_new(o, telemetry_read_counter_key((telemetry_counter_t)c),
                                telemetry_report_number(d->counter[c]));
    json_object_set_new(o, "generation_tokens_per_s",
                        telemetry_report_number(telemetry_report_rate(
                            d->counter[TELEMETRY_C_GENERATION_TOKENS], window_s)));
    json_object_set_new(o, "prompt_tokens_per_s",
                        telemetry_report_number(telemetry_report_rate(
                            d->counter[TELEMETRY_C_PROMPT_TOKENS], window_s)));
    double queries = d->counter[TELEMETRY_C_PREFIX_QUERIES];
    json_object_set_new(
        o, "prefix_cache_hit_rate",
        telemetry_report_number(queries > 0 ? d->counter[TELEMETRY_C_PREFIX_HITS] / queries : NAN));
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++)
        json_object_set_new(o, telemetry_read_histogram_key((telemetry_histogram_t)h),
                            telemetry_report_histogram_json(&d->histogram[h]));
    json_object_set_new(o, "restarted", json_boolean(d->restarted));
    json_object_set_new(o, "restart_reason",
                        d->restarted ? json_string(d->restart_why) : json_null());
}

static json_t *telemetry_report_series_json(const telemetry_t *t, size_t page, telemetry_mark_t a,
                                            telemetry_mark_t b) {
    double *ts = malloc(TELEMETRY_REPORT_SERIES_MAX * sizeof *ts);
    double *values = malloc(TELEMETRY_REPORT_SERIES_MAX * sizeof *values);
    json_t *o = json_object();
    if (!ts || !values) {
        free(ts);
        free(values);
        return o;
    }
    for (size_t g = TELEMETRY_G_RUNNING; g <= TELEMETRY_G_GPU_FB_USED_MIB; g++) {
        size_t n = telemetry_stats_series(t, page, (telemetry_gauge_t)g, a, b, ts, values,
                                          TELEMETRY_REPORT_SERIES_MAX);
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any |= !isnan(values[i]);
        if (!any)
            continue;
        if (!json_object_get(o, "t_s")) {
            json_t *times = json_array();
            for (size_t i = 0; i < n; i++)
                json_array_append_new(times, json_real(ts[i]));
            json_object_set_new(o, "t_s", times);
        }
        json_t *v = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(v, telemetry_report_number(values[i]));
        json_object_set_new(o, telemetry_read_gauge_key((telemetry_gauge_t)g), v);
    }
    free(ts);
    free(values);
    return o;
}

static json_t *telemetry_report_page_json(const telemetry_t *t, const telemetry_stats_t *s,
                                          size_t i, telemetry_mark_t a, telemetry_mark_t b,
                                          const char *const *endpoint_urls) {
    const telemetry_page_stats_t *p = &s->pages[i];
    json_t *o = json_object();
    json_object_set_new(o, "metrics_url", json_string(p->url));
    json_object_set_new(o, "endpoint",
                        p->endpoint >= 0 ? json_string(endpoint_urls[p->endpoint]) : json_null());
    json_object_set_new(o, "dialect", p->dialect ? json_string(p->dialect) : json_null());
    /* an endpoint's /metrics that is not there is an absence, not an error */
    json_object_set_new(o, "error",
                        p->error[0] && !p->absent ? json_string(p->error) : json_null());
    json_object_set_new(o, "absent", p->absent ? json_string(p->error) : json_null());
    json_object_set_new(o, "scrape_failures", json_integer((json_int_t)p->scrape_failures));
    bool gpu = i >= s->n_server_pages;
    if (!gpu)
        telemetry_report_delta_into(o, &p->delta, s->window_s);
    else
        json_object_set_new(
            o, "energy_j",
            telemetry_report_number(p->delta.counter[TELEMETRY_C_GPU_ENERGY_MJ] / 1000));
    size_t first = gpu ? TELEMETRY_G_GPU_UTIL : TELEMETRY_G_RUNNING;
    size_t last = gpu ? TELEMETRY_G_GPU_FB_USED_MIB : TELEMETRY_G_KV_USAGE;
    for (size_t g = first; g <= last; g++)
        json_object_set_new(o, telemetry_read_gauge_key((telemetry_gauge_t)g),
                            telemetry_report_gauge_json(&p->gauge[g]));
    json_object_set_new(o, "series", telemetry_report_series_json(t, i, a, b));
    return o;
}

json_t *telemetry_report_server_json(const telemetry_t *t, const telemetry_stats_t *s,
                                     telemetry_mark_t a, telemetry_mark_t b,
                                     const char *const *endpoint_urls) {
    json_t *o = json_object();
    json_object_set_new(o, "from_mark", json_string(telemetry_mark_label(t, a)));
    json_object_set_new(o, "to_mark", json_string(telemetry_mark_label(t, b)));
    json_object_set_new(o, "window_s", telemetry_report_number(s->window_s));
    json_object_set_new(o, "scrape_interval_s", json_real(telemetry_scrape_interval_s(t)));
    json_t *pages = json_array(), *gpus = json_array();
    for (size_t i = 0; i < s->n_pages; i++)
        json_array_append_new(i < s->n_server_pages ? pages : gpus,
                              telemetry_report_page_json(t, s, i, a, b, endpoint_urls));
    json_object_set_new(o, "pages", pages);
    json_t *endpoints = json_array();
    for (size_t e = 0; e < s->n_endpoints; e++) {
        json_t *ep = json_object();
        json_object_set_new(ep, "url", json_string(endpoint_urls[e]));
        telemetry_report_delta_into(ep, &s->endpoint[e], s->window_s);
        json_array_append_new(endpoints, ep);
    }
    json_object_set_new(o, "endpoints", endpoints);
    json_t *total = json_object();
    telemetry_report_delta_into(total, &s->total, s->window_s);
    for (size_t g = TELEMETRY_G_RUNNING; g <= TELEMETRY_G_KV_USAGE; g++)
        json_object_set_new(total, telemetry_read_gauge_key((telemetry_gauge_t)g),
                            telemetry_report_gauge_json(&s->total_gauge[g]));
    json_object_set_new(o, "total", total);
    json_t *gpu = json_object();
    json_object_set_new(gpu, "pages", gpus);
    for (size_t g = TELEMETRY_G_GPU_UTIL; g <= TELEMETRY_G_GPU_FB_USED_MIB; g++)
        json_object_set_new(gpu, telemetry_read_gauge_key((telemetry_gauge_t)g),
                            telemetry_report_gauge_json(&s->total_gauge[g]));
    json_object_set_new(gpu, "energy_j", telemetry_report_number(s->gpu_energy_j));
    json_object_set_new(gpu, "output_tokens", telemetry_report_number(s->output_tokens));
    json_object_set_new(gpu, "output_tokens_from", json_string(s->output_tokens_from));
    json_object_set_new(gpu, "joules_per_output_token",
                        telemetry_report_number(s->joules_per_output_token));
    json_object_set_new(o, "gpu", gpu);
    json_t *guard = json_object();
    json_object_set_new(guard, "shared", json_boolean(s->shared));
    json_object_set_new(guard, "shared_reason",
                        s->shared ? json_string(s->shared_why) : json_null());
    json_object_set_new(guard, "restarted", json_boolean(s->restarted));
    json_object_set_new(guard, "restarted_reason",
                        s->restarted ? json_string(s->restarted_why) : json_null());
    json_object_set_new(o, "guard", guard);
    return o;
}

static json_t *telemetry_report_pair(double client, double server, double gap, double gap_pct,
                                     const char *unit) {
    char k[32];
    json_t *o = json_object();
    snprintf(k, sizeof k, "client%s", unit);
    json_object_set_new(o, k, telemetry_report_number(client));
    snprintf(k, sizeof k, "server%s", unit);
    json_object_set_new(o, k, telemetry_report_number(server));
    snprintf(k, sizeof k, "gap%s", unit);
    json_object_set_new(o, k, telemetry_report_number(gap));
    json_object_set_new(o, "gap_pct", telemetry_report_number(gap_pct));
    return o;
}

/* One latency of the gap: the means and their gap, then the p50s (the server's an estimate). */
static json_t *telemetry_report_gap_latency(const telemetry_gap_latency_t *l) {
    json_t *o = telemetry_report_pair(l->client_mean_ms, l->server_mean_ms, l->gap_ms, l->gap_pct,
                                      "_mean_ms");
    json_object_set_new(o, "client_p50_ms", telemetry_report_number(l->client_p50_ms));
    telemetry_report_estimate_into(o, "server_p50", l->server_p50_ms, l->server_p50_bounds_ms[0],
                                   l->server_p50_bounds_ms[1]);
    return o;
}

static json_t *telemetry_report_gap_one(const telemetry_gap_t *g) {
    json_t *o = json_object();
    json_object_set_new(o, "ttft", telemetry_report_gap_latency(&g->ttft));
    json_t *tpot = telemetry_report_gap_latency(&g->tpot);
    json_object_set_new(tpot, "server_from",
                        g->server_tpot_from ? json_string(g->server_tpot_from) : json_null());
    json_object_set_new(o, "tpot", tpot);
    json_object_set_new(
        o, "requests",
        telemetry_report_pair(g->client_requests, g->server_requests,
                              g->client_requests - g->server_requests,
                              telemetry_report_pct(g->client_requests, g->server_requests), ""));
    json_object_set_new(o, "output_tokens",
                        telemetry_report_pair(g->client_output_tokens, g->server_output_tokens,
                                              g->client_output_tokens - g->server_output_tokens,
                                              g->output_tokens_gap_pct, ""));
    json_object_set_new(o, "prompt_tokens",
                        telemetry_report_pair(
                            g->client_prompt_tokens, g->server_prompt_tokens,
                            g->client_prompt_tokens - g->server_prompt_tokens,
                            telemetry_report_pct(g->client_prompt_tokens, g->server_prompt_tokens),
                            ""));
    json_t *a = json_object();
    json_object_set_new(a, "ttft_from_intended_mean_ms",
                        telemetry_report_number(g->ttft_from_intended_ms));
    json_object_set_new(a, "client_queue_ms", telemetry_report_number(g->client_queue_ms));
    json_object_set_new(a, "network_ms", telemetry_report_number(g->network_ms));
    json_object_set_new(a, "server_queue_ms", telemetry_report_number(g->server_queue_ms));
    json_object_set_new(a, "prefill_ms", telemetry_report_number(g->prefill_ms));
    json_object_set_new(a, "server_other_ms", telemetry_report_number(g->server_other_ms));
    json_object_set_new(o, "ttft_attribution", a);
    return o;
}

/* Whether endpoint e has a server page of its own. */
static bool telemetry_report_has_page(const telemetry_stats_t *s, size_t e) {
    for (size_t i = 0; i < s->n_server_pages; i++)
        if (s->pages[i].endpoint == (int)e && s->pages[i].read)
            return true;
    return false;
}

json_t *telemetry_report_gap_json(const telemetry_stats_t *s, const merge_t *merge) {
    json_t *o = json_object(), *endpoints = json_array();
    telemetry_gap_t g;
    for (size_t e = 0; e < s->n_endpoints && e < merge_endpoint_count(merge); e++) {
        if (!telemetry_report_has_page(s, e))
            continue;
        telemetry_report_gap(&s->endpoint[e], &s->client[e], merge_endpoint(merge, e), &g);
        json_t *one = telemetry_report_gap_one(&g);
        json_object_set_new(one, "url", json_string(merge_endpoint_url(merge, e)));
        json_array_append_new(endpoints, one);
    }
    json_object_set_new(o, "endpoints", endpoints);
    telemetry_report_gap(&s->total, &s->client_total, merge_overall(merge), &g);
    json_object_set_new(o, "total", telemetry_report_gap_one(&g));
    return o;
}

/* v with its unit, or "—". */
static const char *telemetry_report_cell(char *buf, size_t len, double v, const char *fmt) {
    if (isnan(v) || isinf(v))
        snprintf(buf, len, "—");
    else
        snprintf(buf, len, fmt, v);
    return buf;
}

/* An estimated p50 (ms) with " b" when it is bucket-limited. */
static const char *telemetry_report_estimate_cell(char *buf, size_t len,
                                                  const telemetry_histogram_delta_t *h) {
    double v = h->p50_s * 1000;
    telemetry_report_cell(buf, len, v, "%.2f");
    if (telemetry_read_bucket_limited(v, h->bounds_s[0][0] * 1000, h->bounds_s[0][1] * 1000)) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, " b");
    }
    return buf;
}

static void telemetry_report_print_row(FILE *out, const char *name, const telemetry_delta_t *d,
                                       const telemetry_gauge_span_t *gauges, double window_s) {
    char c[13][32];
    double queries = d->counter[TELEMETRY_C_PREFIX_QUERIES];
    fprintf(out, "  %-34s %8s %9s %9s %6s %9s %10s %10s %10s %9s %7s %7s %6s\n", name,
            telemetry_report_cell(c[0], 32, d->counter[TELEMETRY_C_REQUESTS], "%.0f"),
            telemetry_report_cell(
                c[1], 32,
                telemetry_report_rate(d->counter[TELEMETRY_C_GENERATION_TOKENS], window_s), "%.1f"),
            telemetry_report_cell(
                c[2], 32, telemetry_report_rate(d->counter[TELEMETRY_C_PROMPT_TOKENS], window_s),
                "%.1f"),
            telemetry_report_cell(
                c[3], 32, queries > 0 ? d->counter[TELEMETRY_C_PREFIX_HITS] / queries * 100 : NAN,
                "%.1f"),
            telemetry_report_cell(c[4], 32, d->histogram[TELEMETRY_H_TTFT].mean_s * 1000, "%.2f"),
            telemetry_report_estimate_cell(c[5], 32, &d->histogram[TELEMETRY_H_TTFT]),
            telemetry_report_estimate_cell(c[6], 32, &d->histogram[TELEMETRY_H_ITL]),
            telemetry_report_estimate_cell(c[7], 32, &d->histogram[TELEMETRY_H_E2E]),
            telemetry_report_cell(c[8], 32, d->histogram[TELEMETRY_H_QUEUE].mean_s * 1000, "%.2f"),
            telemetry_report_cell(c[9], 32, gauges[TELEMETRY_G_RUNNING].mean, "%.1f"),
            telemetry_report_cell(c[10], 32, gauges[TELEMETRY_G_WAITING].mean, "%.1f"),
            telemetry_report_cell(c[11], 32, gauges[TELEMETRY_G_KV_USAGE].mean, "%.1f"));
}

/* "p50~ 175.00 [100.00, 250.00] bucket-limited" of one server estimate. */
static const char *telemetry_report_bounded(char *buf, size_t len, double v, const double b[2]) {
    char x[3][32];
    snprintf(buf, len, "%s [%s, %s]%s", telemetry_report_cell(x[0], 32, v, "%.2f"),
             telemetry_report_cell(x[1], 32, b[0], "%.2f"),
             isinf(b[1]) ? "+Inf" : telemetry_report_cell(x[2], 32, b[1], "%.2f"),
             telemetry_read_bucket_limited(v, b[0], b[1]) ? " bucket-limited" : "");
    return buf;
}

static void telemetry_report_print_gap(FILE *out, const char *name, const telemetry_gap_t *g) {
    char c[10][128];
    fprintf(out, "  %-34s %9s %9s %8s %9s %9s %8s %9s %9s\n", name,
            telemetry_report_cell(c[0], 32, g->ttft.client_mean_ms, "%.2f"),
            telemetry_report_cell(c[1], 32, g->ttft.server_mean_ms, "%.2f"),
            telemetry_report_cell(c[2], 32, g->ttft.gap_pct, "%+.1f%%"),
            telemetry_report_cell(c[3], 32, g->tpot.client_mean_ms, "%.2f"),
            telemetry_report_cell(c[4], 32, g->tpot.server_mean_ms, "%.2f"),
            telemetry_report_cell(c[5], 32, g->tpot.gap_pct, "%+.1f%%"),
            telemetry_report_cell(c[6], 32, g->client_output_tokens, "%.0f"),
            telemetry_report_cell(c[7], 32, g->server_output_tokens, "%.0f"));
    fprintf(
        out, "  %-34s server p50 estimates (bucket): TTFT %s, TPOT %s\n", "",
        telemetry_report_bounded(c[8], 128, g->ttft.server_p50_ms, g->ttft.server_p50_bounds_ms),
        telemetry_report_bounded(c[9], 128, g->tpot.server_p50_ms, g->tpot.server_p50_bounds_ms));
    fprintf(out,
            "  %-34s TTFT from intended %s ms = client queue %s + network %s + server queue %s + "
            "prefill %s + other %s\n",
            "", telemetry_report_cell(c[0], 32, g->ttft_from_intended_ms, "%.2f"),
            telemetry_report_cell(c[1], 32, g->client_queue_ms, "%.2f"),
            telemetry_report_cell(c[2], 32, g->network_ms, "%.2f"),
            telemetry_report_cell(c[3], 32, g->server_queue_ms, "%.2f"),
            telemetry_report_cell(c[4], 32, g->prefill_ms, "%.2f"),
            telemetry_report_cell(c[5], 32, g->server_other_ms, "%.2f"));
}

void telemetry_report_print(FILE *out, const telemetry_stats_t *s, const merge_t *merge) {
    char c[6][32];
    fprintf(out, "\nServer metrics (%s s between marks; — = not exposed)\n",
            telemetry_report_cell(c[0], 32, s->window_s, "%.1f"));
    if (s->n_server_pages) {
        fprintf(out, "  %-34s %8s %9s %9s %6s %9s %10s %10s %10s %9s %7s %7s %6s\n", "page",
                "requests", "gen tok/s", "prm tok/s", "hit %", "TTFT mean", "TTFT p50~", "ITL p50~",
                "E2E p50~", "queue ms", "running", "waiting", "KV %");
        for (size_t i = 0; i < s->n_server_pages; i++) {
            const telemetry_page_stats_t *p = &s->pages[i];
            if (p->error[0])
                fprintf(out, "  %-34s %s\n", p->url, p->error);
            else
                telemetry_report_print_row(out, p->url, &p->delta, p->gauge, s->window_s);
        }
        if (s->n_server_pages > 1)
            telemetry_report_print_row(out, "total", &s->total, s->total_gauge, s->window_s);
        fprintf(out,
                "  (~ estimated from the server's buckets; b = bucket-limited: its bucket is wider "
                "than half its value; means are exact _sum/_count deltas)\n");
        fprintf(out, "\nClient vs server (means, ms; gap = (client - server) / client)\n");
        fprintf(out, "  %-34s %9s %9s %8s %9s %9s %8s %9s %9s\n", "endpoint", "TTFT cli",
                "TTFT srv", "gap", "TPOT cli", "TPOT srv", "gap", "out cli", "out srv");
        telemetry_gap_t g;
        for (size_t e = 0; e < s->n_endpoints && e < merge_endpoint_count(merge); e++) {
            if (!telemetry_report_has_page(s, e))
                continue;
            telemetry_report_gap(&s->endpoint[e], &s->client[e], merge_endpoint(merge, e), &g);
            telemetry_report_print_gap(out, merge_endpoint_url(merge, e), &g);
        }
        telemetry_report_gap(&s->total, &s->client_total, merge_overall(merge), &g);
        telemetry_report_print_gap(out, "total", &g);
    }
    if (s->n_pages > s->n_server_pages)
        fprintf(
            out,
            "  GPU: util %s %%, power %s W, memory %s MiB, energy %s J, %s J per output "
            "token (%s tokens)\n",
            telemetry_report_cell(c[0], 32, s->total_gauge[TELEMETRY_G_GPU_UTIL].mean, "%.1f"),
            telemetry_report_cell(c[1], 32, s->total_gauge[TELEMETRY_G_GPU_POWER_W].mean, "%.1f"),
            telemetry_report_cell(c[2], 32, s->total_gauge[TELEMETRY_G_GPU_FB_USED_MIB].mean,
                                  "%.0f"),
            telemetry_report_cell(c[3], 32, s->gpu_energy_j, "%.1f"),
            telemetry_report_cell(c[4], 32, s->joules_per_output_token, "%.4f"),
            s->output_tokens_from);
    if (s->shared)
        fprintf(out, "  %s\n", s->shared_why);
    if (s->restarted)
        fprintf(out, "  %s\n", s->restarted_why);
}
