#include "mock_metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* vLLM V1 (vllm/v1/metrics/loggers.py) bucket layouts, so histogram deltas line up with a real
 * server's. */
static const double mock_ttft_bounds[] = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
static const double mock_itl_bounds[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
static const double mock_latency_bounds[] = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                             5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                             60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
/* Fine enough below 100 us to tell whether the p99 emission error meets its target. */
static const double mock_emission_bounds[] = {
    1e-6,  2e-6,   5e-6,   10e-6,  20e-6,  30e-6,  40e-6,  50e-6,  60e-6,  70e-6,  80e-6,
    90e-6, 100e-6, 125e-6, 150e-6, 200e-6, 250e-6, 300e-6, 400e-6, 500e-6, 750e-6, 1e-3,
    2e-3,  5e-3,   10e-3,  25e-3,  50e-3,  100e-3, 250e-3, 500e-3, 1.0};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static int mock_histogram_init(mock_histogram_t *self, const double *bounds, uint32_t n) {
    self->bounds = bounds;
    self->n_bounds = n;
    self->count = 0;
    self->sum = 0;
    self->counts = calloc(n + 1, sizeof(*self->counts));
    return self->counts ? 0 : -1;
}

static void mock_histogram_free(mock_histogram_t *self) {
    free(self->counts);
    self->counts = NULL;
}

void mock_histogram_observe(mock_histogram_t *self, double value) {
    uint32_t lo = 0, hi = self->n_bounds; /* first bound >= value, or n_bounds for +Inf */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (self->bounds[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    self->counts[lo]++;
    self->count++;
    self->sum += value;
}

static char *mock_metrics_escape_label(const char *s) {
    char *out = malloc(strlen(s) * 2 + 1), *o = out;
    if (!out)
        return NULL;
    for (; *s; s++) {
        if (*s == '\\' || *s == '"') {
            *o++ = '\\';
            *o++ = *s;
        } else if (*s == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

int mock_metrics_init(mock_metrics_t *self, const char *model_name, uint32_t max_model_len) {
    memset(self, 0, sizeof(*self));
    double *token_bounds = self->token_bounds;
    uint32_t n_token_bounds = 0;
    for (double decade = 1; n_token_bounds + 3 <= COUNT_OF(self->token_bounds); decade *= 10) {
        static const double steps[] = {1, 2, 5};
        bool done = false;
        for (int i = 0; i < 3; i++) {
            double v = steps[i] * decade;
            if (v > max_model_len) {
                done = true;
                break;
            }
            token_bounds[n_token_bounds++] = v;
        }
        if (done)
            break;
    }
    self->model_label = mock_metrics_escape_label(model_name);
    int rc = self->model_label ? 0 : -1;
    rc |= mock_histogram_init(&self->ttft, mock_ttft_bounds, COUNT_OF(mock_ttft_bounds));
    rc |= mock_histogram_init(&self->itl, mock_itl_bounds, COUNT_OF(mock_itl_bounds));
    rc |= mock_histogram_init(&self->tpot, mock_itl_bounds, COUNT_OF(mock_itl_bounds));
    rc |= mock_histogram_init(&self->e2e, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= mock_histogram_init(&self->queue, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= mock_histogram_init(&self->prefill, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= mock_histogram_init(&self->decode, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= mock_histogram_init(&self->inference, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= mock_histogram_init(&self->prompt_tokens_hist, token_bounds, n_token_bounds);
    rc |= mock_histogram_init(&self->generation_tokens_hist, token_bounds, n_token_bounds);
    rc |= mock_histogram_init(&self->emission_error, mock_emission_bounds,
                              COUNT_OF(mock_emission_bounds));
    if (rc) {
        mock_metrics_clear(self);
        return -1;
    }
    return 0;
}

void mock_metrics_clear(mock_metrics_t *self) {
    mock_histogram_t *all[] = {&self->ttft,
                               &self->itl,
                               &self->tpot,
                               &self->e2e,
                               &self->queue,
                               &self->prefill,
                               &self->decode,
                               &self->inference,
                               &self->prompt_tokens_hist,
                               &self->generation_tokens_hist,
                               &self->emission_error};
    for (size_t i = 0; i < COUNT_OF(all); i++)
        mock_histogram_free(all[i]);
    free(self->model_label);
    self->model_label = NULL;
}

void mock_metrics_count_status(mock_metrics_t *self, int status) {
    for (int i = 0; i < MOCK_METRICS_STATUS_SLOTS; i++) {
        if (self->status_codes[i] == status || self->status_codes[i] == 0) {
            self->status_codes[i] = status;
            self->status_counts[i]++;
            return;
        }
    }
}

/* Python's float repr for the values we print: integral values keep a ".0", others use the
 * shortest form that reads back exactly. */
static void mock_metrics_number(char *buf, size_t cap, double v) {
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.1f", v);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

typedef struct mock_render {
    buffer_t *out;
    const char *labels; /* engine="0",model_name="..." */
    const char *model;
    int rc;
} mock_render_t;

static void mock_render_head(mock_render_t *r, const char *name, const char *type,
                             const char *help) {
    r->rc |= buffer_appendf(r->out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void mock_render_value(mock_render_t *r, const char *name, const char *type,
                              const char *help, double value) {
    char num[48];
    mock_metrics_number(num, sizeof(num), value);
    mock_render_head(r, name, type, help);
    r->rc |= buffer_appendf(r->out, "%s{%s} %s\n", name, r->labels, num);
}

static void mock_render_histogram(mock_render_t *r, const char *name, const char *help,
                                  const mock_histogram_t *h) {
    char num[48], le[48];
    mock_render_head(r, name, "histogram", help);
    uint64_t cumulative = 0;
    for (uint32_t i = 0; i <= h->n_bounds; i++) {
        cumulative += h->counts[i];
        if (i < h->n_bounds)
            mock_metrics_number(le, sizeof(le), h->bounds[i]);
        else
            snprintf(le, sizeof(le), "+Inf");
        mock_metrics_number(num, sizeof(num), (double)cumulative);
        r->rc |= buffer_appendf(r->out, "%s_bucket{engine=\"0\",le=\"%s\",model_name=\"%s\"} %s\n",
                                name, le, r->model, num);
    }
    mock_metrics_number(num, sizeof(num), (double)h->count);
    r->rc |= buffer_appendf(r->out, "%s_count{%s} %s\n", name, r->labels, num);
    mock_metrics_number(num, sizeof(num), h->sum);
    r->rc |= buffer_appendf(r->out, "%s_sum{%s} %s\n", name, r->labels, num);
}

static void mock_render_vllm(mock_render_t *r, const mock_metrics_t *self,
                             const mock_metrics_gauges_t *g) {
    mock_render_value(r, "vllm:num_requests_running", "gauge",
                      "Number of requests in model execution batches.", g->running);
    mock_render_value(r, "vllm:num_requests_waiting", "gauge",
                      "Number of requests waiting to be processed.", g->waiting);
    mock_render_value(r, "vllm:kv_cache_usage_perc", "gauge",
                      "KV-cache usage. 1 means 100 percent usage.", g->kv_usage);
    mock_render_value(r, "vllm:prefix_cache_queries_total", "counter",
                      "Prefix cache queries, in terms of number of queried tokens.",
                      (double)g->prefix_queries);
    mock_render_value(r, "vllm:prefix_cache_hits_total", "counter",
                      "Prefix cache hits, in terms of number of cached tokens.",
                      (double)g->prefix_hits);
    mock_render_value(r, "vllm:num_preemptions_total", "counter",
                      "Cumulative number of preemption from the engine.", (double)g->preemptions);
    mock_render_value(r, "vllm:prompt_tokens_total", "counter",
                      "Number of prefill tokens processed.", (double)self->prompt_tokens);
    mock_render_value(r, "vllm:generation_tokens_total", "counter",
                      "Number of generation tokens processed.", (double)self->generation_tokens);
    static const char *reasons[MOCK_FINISH__COUNT] = {"stop", "length", "abort"};
    mock_render_head(r, "vllm:request_success_total", "counter",
                     "Count of successfully processed requests.");
    for (int i = 0; i < MOCK_FINISH__COUNT; i++) {
        char num[48];
        mock_metrics_number(num, sizeof(num), (double)self->success[i]);
        r->rc |= buffer_appendf(
            r->out,
            "vllm:request_success_total{engine=\"0\",finished_reason=\"%s\",model_name=\"%s\"} "
            "%s\n",
            reasons[i], r->model, num);
    }
    mock_render_histogram(r, "vllm:request_prompt_tokens", "Number of prefill tokens processed.",
                          &self->prompt_tokens_hist);
    mock_render_histogram(r, "vllm:request_generation_tokens",
                          "Number of generation tokens processed.", &self->generation_tokens_hist);
    mock_render_histogram(r, "vllm:time_to_first_token_seconds",
                          "Histogram of time to first token in seconds.", &self->ttft);
    mock_render_histogram(r, "vllm:inter_token_latency_seconds",
                          "Histogram of inter-token latency in seconds.", &self->itl);
    mock_render_histogram(r, "vllm:request_time_per_output_token_seconds",
                          "Histogram of time_per_output_token_seconds per request.", &self->tpot);
    mock_render_histogram(r, "vllm:e2e_request_latency_seconds",
                          "Histogram of e2e request latency in seconds.", &self->e2e);
    mock_render_histogram(r, "vllm:request_queue_time_seconds",
                          "Histogram of time spent in WAITING phase for request.", &self->queue);
    mock_render_histogram(r, "vllm:request_inference_time_seconds",
                          "Histogram of time spent in RUNNING phase for request.",
                          &self->inference);
    mock_render_histogram(r, "vllm:request_prefill_time_seconds",
                          "Histogram of time spent in PREFILL phase for request.", &self->prefill);
    mock_render_histogram(r, "vllm:request_decode_time_seconds",
                          "Histogram of time spent in DECODE phase for request.", &self->decode);
}

static void mock_render_own(mock_render_t *r, const mock_metrics_t *self,
                            const mock_metrics_gauges_t *g) {
    mock_render_histogram(r, "stampede_mock_emission_error_seconds",
                          "Delay of each streamed chunk's write (its sent_ns) past the instant "
                          "the simulation scheduled it.",
                          &self->emission_error);
    mock_render_value(r, "stampede_mock_chunks_sent_total", "counter",
                      "Streamed token chunks written.", (double)self->chunks_sent);
    mock_render_value(r, "stampede_mock_engine_steps_total", "counter",
                      "Simulated engine steps run.", (double)g->steps);
    mock_render_value(r, "stampede_mock_connections", "gauge", "Open client connections.",
                      g->connections_open);
    mock_render_value(r, "stampede_mock_connections_accepted_total", "counter",
                      "Client connections accepted.", (double)self->connections_accepted);
    mock_render_head(r, "stampede_mock_http_responses_total", "counter",
                     "HTTP responses sent, by status code.");
    for (int i = 0; i < MOCK_METRICS_STATUS_SLOTS && self->status_codes[i]; i++)
        r->rc |= buffer_appendf(r->out,
                                "stampede_mock_http_responses_total{code=\"%d\",engine=\"0\","
                                "model_name=\"%s\"} %llu\n",
                                self->status_codes[i], r->model,
                                (unsigned long long)self->status_counts[i]);
    mock_render_head(r, "stampede_mock_faults_injected_total", "counter",
                     "Faults injected on purpose (--fail-rate, --reset-after-tokens, "
                     "--stall-ms, --malformed-rate).");
    const char *kinds[] = {"fail", "reset", "stall", "malformed"};
    uint64_t counts[] = {self->faults_fail, self->faults_reset, self->faults_stall,
                         self->faults_malformed};
    for (int i = 0; i < 4; i++)
        r->rc |= buffer_appendf(r->out,
                                "stampede_mock_faults_injected_total{engine=\"0\",kind=\"%s\","
                                "model_name=\"%s\"} %llu\n",
                                kinds[i], r->model, (unsigned long long)counts[i]);
}

int mock_metrics_render(const mock_metrics_t *self, const mock_metrics_gauges_t *gauges,
                        buffer_t *out) {
    char labels[512];
    snprintf(labels, sizeof(labels), "engine=\"0\",model_name=\"%s\"", self->model_label);
    mock_render_t r = {.out = out, .labels = labels, .model = self->model_label, .rc = 0};
    mock_render_vllm(&r, self, gauges);
    mock_render_own(&r, self, gauges);
    return r.rc ? -1 : 0;
}
