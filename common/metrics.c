#include "metrics.h"

#include <string.h>

static const char *const names[METRIC__COUNT] = {"ttft",
                                                 "ttfc",
                                                 "tpot",
                                                 "itl",
                                                 "e2e",
                                                 "schedule_lag",
                                                 "ttft_from_intended",
                                                 "e2e_from_intended"};
static const char *const labels[METRIC__COUNT] = {
    "TTFT", "TTFC", "TPOT", "ITL", "E2E", "Schedule lag", "TTFT intended", "E2E intended"};

const char *metrics_name(metrics_kind_t kind) {
    return kind < METRIC__COUNT ? names[kind] : "unknown";
}

const char *metrics_label(metrics_kind_t kind) {
    return kind < METRIC__COUNT ? labels[kind] : "unknown";
}

/* Sets a metric to to - from when both instants exist and are in order. */
static void interval(metrics_t *out, metrics_kind_t kind, int64_t from, int64_t to) {
    if (from != 0 && to != 0 && to >= from) {
        out->has[kind] = true;
        out->value_ns[kind] = (uint64_t)to - (uint64_t)from; /* no signed overflow on junk */
    }
}

static void token_counts(const request_record_t *rec, metrics_t *out) {
    out->chunk_tokens = record_chunk_tokens(rec);
    out->output_from_usage = rec->has_usage;
    out->output_tokens = rec->has_usage ? rec->completion_tokens : out->chunk_tokens;
    out->input_from_usage = rec->has_usage;
    out->input_tokens = rec->has_usage ? rec->prompt_tokens : rec->requested_input_tokens;
    out->output_vs_requested = (int64_t)out->output_tokens - (int64_t)rec->requested_output_tokens;
}

/* Last token chunk - first token chunk (n_chunks >= 2), 0 when out of order. */
static uint64_t chunk_span(const request_record_t *rec) {
    int64_t first = rec->chunk_ns[0], last = rec->chunk_ns[rec->n_chunks - 1];
    return last > first ? (uint64_t)last - (uint64_t)first : 0;
}

/* The mean of the request's ITL samples: the in-order gaps summed over the samples they yield. */
static void itl_summary(const request_record_t *rec, metrics_t *out) {
    uint64_t samples = 0, span = 0;
    for (uint32_t i = 1; i < rec->n_chunks; i++) {
        if (rec->chunk_ns[i] < rec->chunk_ns[i - 1])
            continue; /* out of order: no sample, as metrics_itl */
        samples += metrics_chunk_tokens(rec, i);
        span += (uint64_t)rec->chunk_ns[i] - (uint64_t)rec->chunk_ns[i - 1];
    }
    if (samples == 0)
        return;
    out->itl_samples = samples;
    out->has[METRIC_ITL] = true;
    out->value_ns[METRIC_ITL] = span / samples;
}

/* TPOT needs two chunks: with one, every token arrived at once and decode time is invisible. */
static void tpot(const request_record_t *rec, metrics_t *out) {
    if (out->output_tokens < 2 || rec->n_chunks < 2 ||
        rec->chunk_ns[rec->n_chunks - 1] < rec->chunk_ns[0])
        return;
    out->has[METRIC_TPOT] = true;
    out->value_ns[METRIC_TPOT] = chunk_span(rec) / (out->output_tokens - 1);
}

void metrics_compute(const request_record_t *rec, metrics_t *out) {
    memset(out, 0, sizeof *out);
    out->ok = rec->error == ERROR_NONE;
    out->cancelled = rec->error == ERROR_CANCELLED;
    out->failed = !out->ok && !out->cancelled;

    int64_t first_token = rec->first_token_ns;
    if (first_token == 0 && rec->n_chunks > 0)
        first_token = rec->chunk_ns[0];
    interval(out, METRIC_TTFT, rec->send_ns, first_token);
    interval(out, METRIC_TTFC, rec->send_ns, rec->first_content_ns);
    interval(out, METRIC_E2E, rec->send_ns, rec->end_ns);
    /* a send a little before its intended instant (timer granularity) is no lag at all */
    if (rec->intended_ns != 0 && rec->send_ns != 0) {
        out->has[METRIC_SCHEDULE_LAG] = true;
        out->value_ns[METRIC_SCHEDULE_LAG] =
            rec->send_ns > rec->intended_ns ? (uint64_t)rec->send_ns - (uint64_t)rec->intended_ns
                                            : 0;
    }
    /* from the intended start only for a request that was sent: lag and latency both exist */
    if (out->has[METRIC_SCHEDULE_LAG]) {
        interval(out, METRIC_TTFT_FROM_INTENDED, rec->intended_ns, first_token);
        interval(out, METRIC_E2E_FROM_INTENDED, rec->intended_ns, rec->end_ns);
    }
    token_counts(rec, out);
    itl_summary(rec, out);
    tpot(rec, out);
}
