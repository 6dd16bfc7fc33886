#include "live_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "live_http.h"
#include "live_window.h"
#include "loop.h"
#include "prom.h"

/* le bounds in seconds (docs/metrics.md, "Live metrics"): log-spaced over what an LLM server
 * gives, first-token and whole-request latencies 5 ms to 2 min (E2E to 10 min), per-token gaps
 * 1 ms to 2 s. */
static const double live_bounds_first[] = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2,
                                           0.3,   0.5,  0.75,  1.0,  1.5,   2.0,  3.0,  5.0,
                                           7.5,   10.0, 15.0,  20.0, 30.0,  60.0, 120.0};
static const double live_bounds_e2e[] = {0.025, 0.05, 0.1,  0.25,  0.5,   1.0,   2.0,
                                         3.0,   5.0,  7.5,  10.0,  15.0,  20.0,  30.0,
                                         45.0,  60.0, 90.0, 120.0, 180.0, 300.0, 600.0};
static const double live_bounds_token[] = {0.001, 0.0025, 0.005, 0.0075, 0.01,  0.015, 0.02,
                                           0.025, 0.03,   0.04,  0.05,   0.075, 0.1,   0.15,
                                           0.2,   0.3,    0.5,   0.75,   1.0,   2.0};
#define LIVE_N(a) (uint32_t)(sizeof(a) / sizeof(a[0]))

/* The latencies exported, in exposition order. */
typedef enum live_kind {
    LIVE_TTFT,
    LIVE_TTFC,
    LIVE_ITL,
    LIVE_TPOT,
    LIVE_E2E,
    LIVE__COUNT
} live_kind_t;

static const struct {
    metrics_kind_t metric;
    const char *name; /* after the prefix, before "_seconds" */
    const char *help;
    const double *bounds;
    uint32_t n_bounds;
} live_kinds[LIVE__COUNT] = {
    {METRIC_TTFT, "ttft", "Time to first token (content, reasoning or tool call)",
     live_bounds_first, LIVE_N(live_bounds_first)},
    {METRIC_TTFC, "ttfc", "Time to first content token", live_bounds_first,
     LIVE_N(live_bounds_first)},
    {METRIC_ITL, "itl", "Inter-token latency, one sample per token of every later chunk",
     live_bounds_token, LIVE_N(live_bounds_token)},
    {METRIC_TPOT, "tpot", "Time per output token after the first, one sample per request",
     live_bounds_token, LIVE_N(live_bounds_token)},
    {METRIC_E2E, "e2e", "End-to-end request latency", live_bounds_e2e, LIVE_N(live_bounds_e2e)},
};

static const double live_quantiles[] = {0.5, 0.9, 0.95, 0.99};

/* One combination of labels and everything counted under it. */
typedef struct live_series {
    char *endpoint, *role, *level;
    uint64_t requests[ERROR__COUNT]; /* by error class; ERROR_NONE: ok */
    uint64_t input_tokens, output_tokens;
    prom_histogram_t hist[LIVE__COUNT];
    live_window_t window[LIVE__COUNT];
} live_series_t;

struct live_metrics {
    char prefix[64];
    bool compat_loadgen;
    live_http_t *http;
    live_series_t **series;
    size_t n_series, cap_series;
    size_t last; /* the series the previous record went to */
    live_gauges_t gauges;
    histogram_t *scratch; /* the windows merged at a scrape */
    /* --metrics-compat loadgen: over every series */
    live_window_t compat_ttft_window;
    prom_histogram_t compat_ttft;
    uint64_t compat_sessions;
    char *results_root; /* live_metrics_serve_results: served under /results/ */
};

static void live_series_destroy(live_series_t **self_p) {
    live_series_t *self = *self_p;
    if (!self)
        return;
    for (int k = 0; k < LIVE__COUNT; k++) {
        prom_histogram_clear(&self->hist[k]);
        live_window_clear(&self->window[k]);
    }
    free(self->endpoint);
    free(self->role);
    free(self->level);
    free(self);
    *self_p = NULL;
}

static live_series_t *live_series_new(const live_labels_t *labels) {
    live_series_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->endpoint = strdup(labels->endpoint);
    self->role = strdup(labels->role);
    self->level = strdup(labels->level);
    bool ok = self->endpoint && self->role && self->level;
    for (int k = 0; k < LIVE__COUNT; k++)
        if (prom_histogram_init(&self->hist[k], live_kinds[k].bounds, live_kinds[k].n_bounds) != 0)
            ok = false;
    if (!ok)
        live_series_destroy(&self);
    return self;
}

static bool live_series_is(const live_series_t *s, const live_labels_t *labels) {
    return strcmp(s->endpoint, labels->endpoint) == 0 && strcmp(s->role, labels->role) == 0 &&
           strcmp(s->level, labels->level) == 0;
}

/* The series of labels, made when new; NULL when out of memory. */
static live_series_t *live_metrics_series(live_metrics_t *self, const live_labels_t *labels) {
    if (self->last < self->n_series && live_series_is(self->series[self->last], labels))
        return self->series[self->last];
    for (size_t i = 0; i < self->n_series; i++)
        if (live_series_is(self->series[i], labels)) {
            self->last = i;
            return self->series[i];
        }
    if (buffer_grow_array(&self->series, &self->cap_series, self->n_series + 1,
                          sizeof *self->series) != 0)
        return NULL;
    live_series_t *s = live_series_new(labels);
    if (!s)
        return NULL;
    self->last = self->n_series;
    self->series[self->n_series++] = s;
    return s;
}

static int live_metrics_serve(void *arg, const char *path, size_t len, buffer_t *out,
                              const char **content_type) {
    live_metrics_t *self = arg;
    if (len == 8 && memcmp(path, "/metrics", 8) == 0)
        return live_metrics_render(self, loop_now_ns(), out) == 0 ? 200 : 500;
    if (len == 1 && path[0] == '/')
        return buffer_appendf(out, "stampede live metrics: GET /metrics%s\n",
                              self->results_root ? ", GET /results/ (the results, read-only)"
                                                 : "") == 0
                   ? 200
                   : 500;
    if (self->results_root && len >= 9 && memcmp(path, "/results/", 9) == 0)
        return live_http_file(self->results_root, path + 9, len - 9, out, content_type);
    if (self->results_root && len == 8 && memcmp(path, "/results", 8) == 0)
        return live_http_file(self->results_root, "", 0, out, content_type);
    return 404;
}

/* A prefix Prometheus accepts without a warning: [a-zA-Z_][a-zA-Z0-9_]*, no ':'. */
static bool live_metrics_prefix_ok(const char *prefix) {
    if (strlen(prefix) >= sizeof(((live_metrics_t *)0)->prefix) - 32)
        return false;
    for (const char *p = prefix; *p; p++) {
        bool letter = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
        if (!letter && !(p > prefix && *p >= '0' && *p <= '9'))
            return false;
    }
    return true;
}

live_metrics_t *live_metrics_new(const char *listen, const live_http_access_t *access,
                                 const char *prefix, const char *compat, const char *who) {
    if (!prefix)
        prefix = "stampede_";
    if (!live_metrics_prefix_ok(prefix)) {
        fprintf(stderr,
                "%s: --metrics-prefix '%s' is not a metric name prefix ([a-zA-Z_][a-zA-Z0-9_]*, "
                "at most 31 characters)\n",
                who, prefix);
        return NULL;
    }
    if (compat && strcmp(compat, "loadgen") != 0) {
        fprintf(stderr, "%s: --metrics-compat knows only 'loadgen', got '%s'\n", who, compat);
        return NULL;
    }
    live_metrics_t *self = calloc(1, sizeof *self);
    if (!self || !(self->scratch = histogram_new()) ||
        prom_histogram_init(&self->compat_ttft, live_bounds_first, LIVE_N(live_bounds_first)) !=
            0) {
        fprintf(stderr, "%s: out of memory for the live metrics\n", who);
        live_metrics_destroy(&self);
        return NULL;
    }
    snprintf(self->prefix, sizeof self->prefix, "%s", prefix);
    self->compat_loadgen = compat != NULL;
    if (listen) {
        char why[512];
        if (!(self->http =
                  live_http_new(listen, access, live_metrics_serve, self, why, sizeof why))) {
            fprintf(stderr, "%s: --metrics-listen: %s\n", who, why);
            live_metrics_destroy(&self);
            return NULL;
        }
        fprintf(stderr, "%s: metrics on http://%s/metrics%s\n", who, live_http_address(self->http),
                access && access->token_file ? " (bearer token required)" : "");
        if (live_http_open_to_all(self->http))
            fprintf(stderr,
                    "%s: warning: --metrics-insecure: any host that reaches %s can read the run's "
                    "figures (and with --linger its results)\n",
                    who, listen);
    }
    return self;
}

void live_metrics_destroy(live_metrics_t **self_p) {
    live_metrics_t *self = *self_p;
    if (!self)
        return;
    live_http_destroy(&self->http);
    free(self->results_root);
    for (size_t i = 0; i < self->n_series; i++)
        live_series_destroy(&self->series[i]);
    free(self->series);
    histogram_destroy(&self->scratch);
    live_window_clear(&self->compat_ttft_window);
    prom_histogram_clear(&self->compat_ttft);
    free(self);
    *self_p = NULL;
}

int live_metrics_fd(const live_metrics_t *self) {
    return self->http ? live_http_fd(self->http) : -1;
}

void live_metrics_poll(live_metrics_t *self) {
    if (self->http)
        live_http_poll(self->http);
}

/* Counts n samples of value_ns into the histogram and the window of kind k. */
static void live_series_observe(live_series_t *s, live_kind_t k, histogram_t *slot,
                                uint64_t value_ns, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        prom_histogram_observe(&s->hist[k], (double)value_ns / 1e9);
    if (slot)
        live_window_record(&s->window[k], slot, value_ns, n);
}

/* The latencies of a successful request outside the warm-up. */
static void live_series_latencies(live_series_t *s, const request_record_t *rec, const metrics_t *m,
                                  int64_t now_ns) {
    for (int k = 0; k < LIVE__COUNT; k++) {
        if (k == LIVE_ITL || !m->has[live_kinds[k].metric])
            continue;
        live_series_observe(s, k, live_window_slot(&s->window[k], now_ns),
                            m->value_ns[live_kinds[k].metric], 1);
    }
    histogram_t *slot = rec->n_chunks > 1 ? live_window_slot(&s->window[LIVE_ITL], now_ns) : NULL;
    for (uint32_t i = 1; i < rec->n_chunks; i++) {
        uint32_t n;
        uint64_t itl = metrics_itl(rec, i, &n);
        live_series_observe(s, LIVE_ITL, slot, itl, n);
    }
}

void live_metrics_record(live_metrics_t *self, const request_record_t *rec, const metrics_t *m,
                         const live_labels_t *labels, int64_t now_ns) {
    live_series_t *s = live_metrics_series(self, labels);
    if (!s)
        return; /* out of memory: the live view misses it, the run's results do not */
    s->requests[rec->error < ERROR__COUNT ? rec->error : ERROR_PROTOCOL]++;
    s->input_tokens += m->input_tokens;
    s->output_tokens += m->output_tokens;
    if (rec->node == 0)
        self->compat_sessions++;
    if (!m->ok || rec->warmup)
        return;
    live_series_latencies(s, rec, m, now_ns);
    if (self->compat_loadgen && m->has[METRIC_TTFT]) {
        uint64_t v = m->value_ns[METRIC_TTFT];
        prom_histogram_observe(&self->compat_ttft, (double)v / 1e9);
        histogram_t *slot = live_window_slot(&self->compat_ttft_window, now_ns);
        if (slot)
            live_window_record(&self->compat_ttft_window, slot, v, 1);
    }
}

void live_metrics_set_gauges(live_metrics_t *self, const live_gauges_t *gauges) {
    self->gauges = *gauges;
}

/* The series' labels, then room for one more (le, quantile, outcome, error_class). */
static size_t live_series_labels(const live_series_t *s, prom_label_t labels[6]) {
    labels[0] = (prom_label_t){"endpoint", s->endpoint};
    labels[1] = (prom_label_t){"level", s->level};
    labels[2] = (prom_label_t){"role", s->role};
    return 3;
}

static void live_render_requests(live_metrics_t *self, prom_writer_t *w) {
    char name[128];
    snprintf(name, sizeof name, "%srequests_total", self->prefix);
    prom_family(w, name, "counter",
                "Requests ended, by outcome (ok, failed, cancelled) and error class");
    for (size_t i = 0; i < self->n_series; i++) {
        prom_label_t labels[6];
        size_t n = live_series_labels(self->series[i], labels);
        for (int e = 0; e < ERROR__COUNT; e++) {
            labels[n] = (prom_label_t){"error_class", error_class_name((error_class_t)e)};
            labels[n + 1] = (prom_label_t){"outcome", e == ERROR_NONE        ? "ok"
                                                      : e == ERROR_CANCELLED ? "cancelled"
                                                                             : "failed"};
            prom_sample(w, name, labels, n + 2, (double)self->series[i]->requests[e]);
        }
    }
    static const char *const which[2] = {"input", "output"};
    for (int t = 0; t < 2; t++) {
        snprintf(name, sizeof name, "%s%s_tokens_total", self->prefix, which[t]);
        prom_family(w, name, "counter",
                    t ? "Output tokens (usage.completion_tokens, else counted from the chunks)"
                      : "Input tokens (usage.prompt_tokens, else the prompt words sent)");
        for (size_t i = 0; i < self->n_series; i++) {
            prom_label_t labels[6];
            size_t n = live_series_labels(self->series[i], labels);
            live_series_t *s = self->series[i];
            prom_sample(w, name, labels, n, (double)(t ? s->output_tokens : s->input_tokens));
        }
    }
}

/* The bucket, count and sum lines of h under name (HELP and TYPE already written). */
static void live_render_buckets(prom_writer_t *w, const char *name, prom_label_t *labels, size_t n,
                                const prom_histogram_t *h) {
    char sample[160], le[48];
    snprintf(sample, sizeof sample, "%s_bucket", name);
    uint64_t cumulative = 0;
    for (uint32_t b = 0; b <= h->n_bounds; b++) {
        cumulative += h->counts[b];
        prom_number(le, sizeof le, b < h->n_bounds ? h->bounds[b] : INFINITY);
        labels[n] = (prom_label_t){"le", le};
        prom_sample(w, sample, labels, n + 1, (double)cumulative);
    }
    snprintf(sample, sizeof sample, "%s_count", name);
    prom_sample(w, sample, labels, n, (double)h->count);
    snprintf(sample, sizeof sample, "%s_sum", name);
    prom_sample(w, sample, labels, n, h->sum);
}

/* The quantile, sum and count lines of window under name (HELP and TYPE already written). */
static void live_render_quantiles(live_metrics_t *self, prom_writer_t *w, const char *name,
                                  prom_label_t *labels, size_t n, live_window_t *window,
                                  int64_t now_ns) {
    histogram_reset(self->scratch);
    live_window_merge(window, now_ns, self->scratch);
    bool empty = histogram_count(self->scratch) == 0;
    char q[16], sample[160];
    for (size_t i = 0; i < sizeof live_quantiles / sizeof live_quantiles[0]; i++) {
        prom_number(q, sizeof q, live_quantiles[i]);
        labels[n] = (prom_label_t){"quantile", q};
        double v = empty
                       ? NAN
                       : (double)histogram_percentile(self->scratch, live_quantiles[i] * 100) / 1e9;
        prom_sample(w, name, labels, n + 1, v);
    }
    snprintf(sample, sizeof sample, "%s_count", name);
    prom_sample(w, sample, labels, n, (double)window->count);
    snprintf(sample, sizeof sample, "%s_sum", name);
    prom_sample(w, sample, labels, n, window->sum_s);
}

static void live_render_latencies(live_metrics_t *self, prom_writer_t *w, int64_t now_ns) {
    char name[128], help[256];
    for (int k = 0; k < LIVE__COUNT; k++) {
        snprintf(name, sizeof name, "%s%s_seconds", self->prefix, live_kinds[k].name);
        prom_family(w, name, "histogram", live_kinds[k].help);
        for (size_t i = 0; i < self->n_series; i++) {
            prom_label_t labels[6];
            size_t n = live_series_labels(self->series[i], labels);
            live_render_buckets(w, name, labels, n, &self->series[i]->hist[k]);
        }
    }
    for (int k = 0; k < LIVE__COUNT; k++) {
        snprintf(name, sizeof name, "%s%s_window_seconds", self->prefix, live_kinds[k].name);
        snprintf(help, sizeof help,
                 "%s: quantiles over the last %d s (NaN when empty); count and sum over the "
                 "whole process",
                 live_kinds[k].help, LIVE_WINDOW_SECONDS);
        prom_family(w, name, "summary", help);
        for (size_t i = 0; i < self->n_series; i++) {
            prom_label_t labels[6];
            size_t n = live_series_labels(self->series[i], labels);
            live_render_quantiles(self, w, name, labels, n, &self->series[i]->window[k], now_ns);
        }
    }
}

static void live_render_gauge(prom_writer_t *w, const char *prefix, const char *suffix,
                              const char *help, double value) {
    char name[128];
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    prom_family(w, name, "gauge", help);
    prom_sample(w, name, NULL, 0, value);
}

static void live_render_gauges(live_metrics_t *self, prom_writer_t *w) {
    const live_gauges_t *g = &self->gauges;
    live_render_gauge(w, self->prefix, "in_flight_requests",
                      "Requests in flight, from the workers' last heartbeats",
                      (double)g->in_flight);
    live_render_gauge(w, self->prefix, "level",
                      "The sweep level being run (sessions in flight or per second); 0 outside a "
                      "sweep",
                      g->level);
    live_render_gauge(w, self->prefix, "workers_connected", "Workers registered and answering",
                      (double)g->workers_connected);
    live_render_gauge(w, self->prefix, "workers_lost", "Workers that went silent or left the run",
                      (double)g->workers_lost);
}

/* The reference names (--metrics-compat loadgen), over every series. */
static void live_render_compat(live_metrics_t *self, prom_writer_t *w, int64_t now_ns) {
    prom_label_t labels[1];
    prom_family(w, "loadgen_ttft_all_seconds", "summary",
                "Time to first token: quantiles over the last 60 s (stampede's TTFT)");
    live_render_quantiles(self, w, "loadgen_ttft_all_seconds", labels, 0, &self->compat_ttft_window,
                          now_ns);
    prom_family(w, "loadgen_ttft_seconds", "histogram", "Time to first token (stampede's TTFT)");
    live_render_buckets(w, "loadgen_ttft_seconds", labels, 0, &self->compat_ttft);
    prom_family(w, "loadgen_requests_total", "counter",
                "Sessions (conversations) started, counted at their first request's end");
    prom_sample(w, "loadgen_requests_total", NULL, 0, (double)self->compat_sessions);
}

int live_metrics_render(live_metrics_t *self, int64_t now_ns, buffer_t *out) {
    prom_writer_t w = prom_writer(out);
    live_render_requests(self, &w);
    live_render_latencies(self, &w, now_ns);
    live_render_gauges(self, &w);
    if (self->compat_loadgen)
        live_render_compat(self, &w, now_ns);
    return w.rc;
}

int live_metrics_serve_results(live_metrics_t *self, const char *dir) {
    char *copy = strdup(dir);
    if (!copy)
        return -1;
    free(self->results_root);
    self->results_root = copy;
    return 0;
}

const char *live_metrics_address(const live_metrics_t *self) {
    return self->http ? live_http_address(self->http) : NULL;
}
