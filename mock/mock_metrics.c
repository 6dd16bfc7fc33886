#include "mock_metrics.h"

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
    self->model = strdup(model_name);
    int rc = self->model ? 0 : -1;
    rc |= prom_histogram_init(&self->ttft, mock_ttft_bounds, COUNT_OF(mock_ttft_bounds));
    rc |= prom_histogram_init(&self->itl, mock_itl_bounds, COUNT_OF(mock_itl_bounds));
    rc |= prom_histogram_init(&self->tpot, mock_itl_bounds, COUNT_OF(mock_itl_bounds));
    rc |= prom_histogram_init(&self->e2e, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= prom_histogram_init(&self->queue, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= prom_histogram_init(&self->prefill, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= prom_histogram_init(&self->decode, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= prom_histogram_init(&self->inference, mock_latency_bounds, COUNT_OF(mock_latency_bounds));
    rc |= prom_histogram_init(&self->prompt_tokens_hist, token_bounds, n_token_bounds);
    rc |= prom_histogram_init(&self->generation_tokens_hist, token_bounds, n_token_bounds);
    rc |= prom_histogram_init(&self->emission_error, mock_emission_bounds,
                              COUNT_OF(mock_emission_bounds));
    if (rc) {
        mock_metrics_clear(self);
        return -1;
    }
    return 0;
}

void mock_metrics_clear(mock_metrics_t *self) {
    prom_histogram_t *all[] = {&self->ttft,
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
        prom_histogram_clear(all[i]);
    free(self->model);
    self->model = NULL;
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

/* Renders with the labels every series carries: engine="0" and model_name, in alphabetical
 * order as vLLM's multiprocess prometheus_client prints them. */
typedef struct mock_render {
    prom_writer_t w;
    const char *model;
} mock_render_t;

static void mock_render_value(mock_render_t *r, const char *name, const char *type,
                              const char *help, double value) {
    prom_label_t labels[] = {{"engine", "0"}, {"model_name", r->model}};
    prom_family(&r->w, name, type, help);
    prom_sample(&r->w, name, labels, 2, value);
}

/* One sample with a third label, which sorts between engine and model_name. */
static void mock_render_labelled(mock_render_t *r, const char *name, const char *label,
                                 const char *value, double v) {
    prom_label_t labels[] = {{"engine", "0"}, {label, value}, {"model_name", r->model}};
    prom_sample(&r->w, name, labels, 3, v);
}

static void mock_render_histogram(mock_render_t *r, const char *name, const char *help,
                                  const prom_histogram_t *h) {
    prom_label_t labels[] = {{"engine", "0"}, {"model_name", r->model}};
    prom_histogram(&r->w, name, help, labels, 2, h);
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
    prom_family(&r->w, "vllm:request_success_total", "counter",
                "Count of successfully processed requests.");
    for (int i = 0; i < MOCK_FINISH__COUNT; i++)
        mock_render_labelled(r, "vllm:request_success_total", "finished_reason", reasons[i],
                             (double)self->success[i]);
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
    prom_family(&r->w, "stampede_mock_http_responses_total", "counter",
                "HTTP responses sent, by status code.");
    for (int i = 0; i < MOCK_METRICS_STATUS_SLOTS && self->status_codes[i]; i++) {
        char code[16];
        snprintf(code, sizeof(code), "%d", self->status_codes[i]);
        prom_label_t labels[] = {{"code", code}, {"engine", "0"}, {"model_name", r->model}};
        prom_sample(&r->w, "stampede_mock_http_responses_total", labels, 3,
                    (double)self->status_counts[i]);
    }
    prom_family(&r->w, "stampede_mock_faults_injected_total", "counter",
                "Faults injected on purpose (--fail-rate, --reset-after-tokens, "
                "--stall-ms, --malformed-rate).");
    const char *kinds[] = {"fail", "reset", "stall", "malformed"};
    uint64_t counts[] = {self->faults_fail, self->faults_reset, self->faults_stall,
                         self->faults_malformed};
    for (int i = 0; i < 4; i++)
        mock_render_labelled(r, "stampede_mock_faults_injected_total", "kind", kinds[i],
                             (double)counts[i]);
    prom_family(&r->w, "stampede_mock_faults_total", "counter",
                "Faults injected by --faults, by kind (its SPEC name).");
    for (int k = MOCK_FAULT_NONE + 1; k < MOCK_FAULT__COUNT; k++)
        mock_render_labelled(r, "stampede_mock_faults_total", "kind",
                             mock_fault_name((mock_fault_kind_t)k), (double)self->faults[k]);
}

int mock_metrics_render(const mock_metrics_t *self, const mock_metrics_gauges_t *gauges,
                        buffer_t *out) {
    mock_render_t r = {.w = prom_writer(out), .model = self->model};
    mock_render_vllm(&r, self, gauges);
    mock_render_own(&r, self, gauges);
    return r.w.rc;
}
