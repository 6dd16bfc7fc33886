/* Per-request metrics as defined in docs/metrics.md: pure functions of one request_record_t whose
 * timestamps are all on one clock. Nothing here decides what enters the statistics (failed and
 * warm-up requests are the merge's business); these only say what the record measured. */
#ifndef STAMPEDE_METRICS_H
#define STAMPEDE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

/* The latency metrics kept as histograms, in report order. */
typedef enum metrics_kind {
    METRIC_TTFT,         /* send -> first token of any kind (content, reasoning, tool call) */
    METRIC_TTFC,         /* send -> first content token */
    METRIC_TPOT,         /* (last chunk - first chunk) / (output tokens - 1), one per request */
    METRIC_ITL,          /* every gap between token chunks, split over the later chunk's tokens */
    METRIC_E2E,          /* send -> end of the transfer */
    METRIC_SCHEDULE_LAG, /* intended start -> send (coordinated omission made visible) */
    /* intended start -> first token / end of the transfer: TTFT and E2E with the schedule lag in
     * (wrk2's correction of coordinated omission) */
    METRIC_TTFT_FROM_INTENDED,
    METRIC_E2E_FROM_INTENDED,
    METRIC__COUNT
} metrics_kind_t;

/* What one record measured. A has_* flag is false when the record lacks what the metric needs. */
typedef struct metrics {
    bool ok;        /* error == ERROR_NONE */
    bool cancelled; /* error == ERROR_CANCELLED: neither ok nor failed */
    bool failed;    /* any other error class */
    bool has[METRIC__COUNT];
    uint64_t value_ns[METRIC__COUNT]; /* for METRIC_ITL: the mean per-token gap of the request */
    uint64_t itl_samples;   /* ITL samples the request yields (tokens of later chunks in order) */
    uint32_t output_tokens; /* usage.completion_tokens, else counted from chunks */
    bool output_from_usage;
    uint32_t chunk_tokens; /* tokens counted from the chunks alone */
    uint32_t input_tokens; /* usage.prompt_tokens, else the prompt words we sent */
    bool input_from_usage;
    /* output_tokens - requested_output_tokens; meaningful only when requested_output_tokens > 0 */
    int64_t output_vs_requested;
} metrics_t;

/* "ttft", "ttfc", "tpot", "itl", "e2e", "schedule_lag", "ttft_from_intended",
 * "e2e_from_intended". */
const char *metrics_name(metrics_kind_t kind);
/* Human label for tables: "TTFT", "TTFC", "TPOT", "ITL", "E2E", "Schedule lag", "TTFT intended",
 * "E2E intended". */
const char *metrics_label(metrics_kind_t kind);
/* Computes every metric of rec into *out (whatever its error class). */
void metrics_compute(const request_record_t *rec, metrics_t *out);

/* Tokens chunk i carried: chunk_tokens[i], or 1 when the record does not say (chunk_tokens NULL)
 * or says 0 (a token-carrying chunk carries at least one; see docs/metrics.md section 2). */
static inline uint32_t metrics_chunk_tokens(const request_record_t *rec, uint32_t i) {
    return rec->chunk_tokens && rec->chunk_tokens[i] > 1 ? rec->chunk_tokens[i] : 1;
}

/* ITL of chunk i (1 <= i < n_chunks): the gap since chunk i-1 divided by the k tokens chunk i
 * carried; *samples = k, the number of samples of that value the chunk contributes. A gap that
 * runs backwards (impossible on one clock) is out of order and yields no sample (*samples = 0). */
static inline uint64_t metrics_itl(const request_record_t *rec, uint32_t i, uint32_t *samples) {
    int64_t from = rec->chunk_ns[i - 1], to = rec->chunk_ns[i];
    if (to < from) {
        *samples = 0;
        return 0;
    }
    uint32_t k = metrics_chunk_tokens(rec, i);
    *samples = k;
    return ((uint64_t)to - (uint64_t)from) / k;
}

#endif
