/* The simulated server's Prometheus metrics, under vLLM V1's names and buckets (labels engine
 * and model_name) so scrapers written for vLLM read the mock unchanged, plus the mock's own
 * stampede_mock_* series (chiefly its emission error: how late each chunk left). */
#ifndef STAMPEDE_MOCK_METRICS_H
#define STAMPEDE_MOCK_METRICS_H

#include <stdint.h>

#include "buffer.h"
#include "mock_faults.h"
#include "prom.h"

typedef enum mock_finish {
    MOCK_FINISH_STOP,
    MOCK_FINISH_LENGTH,
    MOCK_FINISH_ABORT,
    MOCK_FINISH__COUNT
} mock_finish_t;

/* Status codes counted one by one in stampede_mock_http_responses_total. */
#define MOCK_METRICS_STATUS_SLOTS 16

typedef struct mock_metrics {
    char *model; /* the model_name label's value, owned */
    /* Per request (vLLM names). */
    prom_histogram_t ttft, itl, tpot, e2e, queue, prefill, decode, inference;
    prom_histogram_t prompt_tokens_hist, generation_tokens_hist;
    uint64_t prompt_tokens, generation_tokens;
    uint64_t success[MOCK_FINISH__COUNT];
    /* The mock's own. */
    prom_histogram_t emission_error;
    uint64_t chunks_sent, connections_accepted;
    int status_codes[MOCK_METRICS_STATUS_SLOTS];
    uint64_t status_counts[MOCK_METRICS_STATUS_SLOTS];
    uint64_t faults_fail, faults_reset, faults_stall, faults_malformed;
    uint64_t faults[MOCK_FAULT__COUNT]; /* --faults, by kind, as injected */
    double token_bounds[32];            /* vLLM's build_1_2_5_buckets(max_model_len) */
} mock_metrics_t;

/* Engine state sampled when /metrics is rendered. */
typedef struct mock_metrics_gauges {
    uint32_t running, waiting;
    double kv_usage;
    uint64_t prefix_queries, prefix_hits, preemptions, steps;
    uint32_t connections_open;
} mock_metrics_gauges_t;

/* Initialises every series at zero; max_model_len bounds the token-count buckets (vLLM's
 * 1-2-5 series). 0 ok, -1 out of memory. */
int mock_metrics_init(mock_metrics_t *self, const char *model_name, uint32_t max_model_len);
/* Frees what init allocated. */
void mock_metrics_clear(mock_metrics_t *self);
/* Counts one HTTP response by status. */
void mock_metrics_count_status(mock_metrics_t *self, int status);
/* Appends the text exposition (format 0.0.4) to out. 0 or -1 on allocation failure. */
int mock_metrics_render(const mock_metrics_t *self, const mock_metrics_gauges_t *gauges,
                        buffer_t *out);

#endif
