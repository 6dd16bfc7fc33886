/* Each dialect is a table of candidate names per quantity (the first one a page has wins: the
 * current name first, then the older one). A page is read as the first dialect whose prefix it
 * carries, in the order Dynamo, vLLM, SGLang (a Dynamo frontend page may pass engine names
 * through; the frontend is what the client talks to); DCGM names are read from any page. */
#include "telemetry_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TELEMETRY_READ_CANDIDATES 3
#define TELEMETRY_READ_N_QUANTITIES (TELEMETRY_H__COUNT + TELEMETRY_C__COUNT + TELEMETRY_G__COUNT)

typedef enum { TELEMETRY_READ_SUM, TELEMETRY_READ_MEAN } telemetry_read_combine_t;

typedef struct telemetry_read_dialect {
    const char *name;
    const char *prefix;
    const char *histogram[TELEMETRY_H__COUNT][TELEMETRY_READ_CANDIDATES];
    const char *counter[TELEMETRY_C__COUNT][TELEMETRY_READ_CANDIDATES];
    const char *gauge[TELEMETRY_G__COUNT][TELEMETRY_READ_CANDIDATES];
    double kv_scale; /* the KV gauge's unit to percent */
} telemetry_read_dialect_t;

static const telemetry_read_dialect_t telemetry_read_dialects[] = {
    {.name = "dynamo",
     .prefix = "dynamo_frontend_",
     .histogram = {[TELEMETRY_H_TTFT] = {"dynamo_frontend_time_to_first_token_seconds"},
                   [TELEMETRY_H_ITL] = {"dynamo_frontend_inter_token_latency_seconds"},
                   [TELEMETRY_H_E2E] = {"dynamo_frontend_request_duration_seconds"}},
     .counter = {[TELEMETRY_C_REQUESTS] = {"dynamo_frontend_requests_total",
                                           "dynamo_frontend_request_duration_seconds_count"},
                 [TELEMETRY_C_PROMPT_TOKENS] = {"dynamo_frontend_input_sequence_tokens_sum"},
                 [TELEMETRY_C_GENERATION_TOKENS] = {"dynamo_frontend_output_tokens_total",
                                                    "dynamo_frontend_output_sequence_tokens_sum"}},
     .gauge = {[TELEMETRY_G_RUNNING] = {"dynamo_frontend_inflight_requests"},
               [TELEMETRY_G_WAITING] = {"dynamo_frontend_queued_requests"}},
     .kv_scale = 1},
    {.name = "vllm",
     .prefix = "vllm:",
     .histogram = {[TELEMETRY_H_TTFT] = {"vllm:time_to_first_token_seconds"},
                   [TELEMETRY_H_ITL] = {"vllm:inter_token_latency_seconds",
                                        "vllm:time_per_output_token_seconds"},
                   [TELEMETRY_H_TPOT] = {"vllm:request_time_per_output_token_seconds"},
                   [TELEMETRY_H_E2E] = {"vllm:e2e_request_latency_seconds"},
                   [TELEMETRY_H_QUEUE] = {"vllm:request_queue_time_seconds"},
                   [TELEMETRY_H_PREFILL] = {"vllm:request_prefill_time_seconds"}},
     .counter = {[TELEMETRY_C_REQUESTS] = {"vllm:request_success_total",
                                           "vllm:e2e_request_latency_seconds_count"},
                 [TELEMETRY_C_PROMPT_TOKENS] = {"vllm:prompt_tokens_total"},
                 [TELEMETRY_C_GENERATION_TOKENS] = {"vllm:generation_tokens_total"},
                 [TELEMETRY_C_PREFIX_QUERIES] = {"vllm:prefix_cache_queries_total",
                                                 "vllm:gpu_prefix_cache_queries_total"},
                 [TELEMETRY_C_PREFIX_HITS] = {"vllm:prefix_cache_hits_total",
                                              "vllm:gpu_prefix_cache_hits_total"}},
     .gauge = {[TELEMETRY_G_RUNNING] = {"vllm:num_requests_running"},
               [TELEMETRY_G_WAITING] = {"vllm:num_requests_waiting"},
               [TELEMETRY_G_KV_USAGE] = {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}},
     .kv_scale = 100},
    {.name = "sglang",
     .prefix = "sglang:",
     .histogram = {[TELEMETRY_H_TTFT] = {"sglang:time_to_first_token_seconds"},
                   [TELEMETRY_H_ITL] = {"sglang:inter_token_latency_seconds",
                                        "sglang:time_per_output_token_seconds"},
                   [TELEMETRY_H_E2E] = {"sglang:e2e_request_latency_seconds"}},
     /* SGLang 0.4 has no num_requests_total: each finished request is one e2e observation */
     .counter = {[TELEMETRY_C_REQUESTS] = {"sglang:num_requests_total",
                                           "sglang:e2e_request_latency_seconds_count"},
                 [TELEMETRY_C_PROMPT_TOKENS] = {"sglang:prompt_tokens_total"},
                 [TELEMETRY_C_GENERATION_TOKENS] = {"sglang:generation_tokens_total"},
                 /* hit rate = Δcached_tokens / Δprompt_tokens, not the windowed gauge */
                 [TELEMETRY_C_PREFIX_QUERIES] = {"sglang:prompt_tokens_total"},
                 [TELEMETRY_C_PREFIX_HITS] = {"sglang:cached_tokens_total"}},
     .gauge = {[TELEMETRY_G_RUNNING] = {"sglang:num_running_reqs"},
               [TELEMETRY_G_WAITING] = {"sglang:num_queue_reqs"},
               [TELEMETRY_G_KV_USAGE] = {"sglang:token_usage"}},
     .kv_scale = 100},
};

static const char *const telemetry_read_histogram_keys[TELEMETRY_H__COUNT] = {
    "ttft", "itl", "tpot", "e2e", "queue", "prefill"};
static const char *const telemetry_read_counter_keys[TELEMETRY_C__COUNT] = {
    "requests",       "prompt_tokens", "generation_tokens",
    "prefix_queries", "prefix_hits",   "gpu_energy_mj"};
static const char *const telemetry_read_gauge_keys[TELEMETRY_G__COUNT] = {
    "running", "waiting", "kv_usage_pct", "gpu_util_pct", "gpu_power_w", "gpu_fb_used_mib"};

const char *telemetry_read_histogram_key(telemetry_histogram_t h) {
    return telemetry_read_histogram_keys[h];
}

const char *telemetry_read_counter_key(telemetry_counter_t c) {
    return telemetry_read_counter_keys[c];
}

const char *telemetry_read_gauge_key(telemetry_gauge_t g) {
    return telemetry_read_gauge_keys[g];
}

const char *telemetry_read_name(const telemetry_reading_t *r, size_t quantity) {
    return quantity < TELEMETRY_READ_N_QUANTITIES ? r->names[quantity] : NULL;
}

/* The samples named name combined (summed or averaged over their series); NAN when none. */
static double telemetry_read_scalar(const prom_page_t *page, const char *name,
                                    telemetry_read_combine_t how) {
    double total = 0;
    size_t n = 0;
    for (size_t i = 0; i < page->n_samples; i++)
        if (strcmp(page->samples[i].name, name) == 0 && !isnan(page->samples[i].value)) {
            total += page->samples[i].value;
            n++;
        }
    if (n == 0)
        return NAN;
    return how == TELEMETRY_READ_MEAN ? total / (double)n : total;
}

/* The first candidate the page has: its value, and its name in *used. */
static double telemetry_read_first(const prom_page_t *page, const char *const *candidates,
                                   telemetry_read_combine_t how, const char **used) {
    for (size_t i = 0; i < TELEMETRY_READ_CANDIDATES && candidates[i]; i++) {
        double v = telemetry_read_scalar(page, candidates[i], how);
        if (!isnan(v)) {
            *used = candidates[i];
            return v;
        }
    }
    return NAN;
}

static bool telemetry_read_is(const char *name, const char *base, const char *suffix) {
    size_t n = strlen(base);
    return strncmp(name, base, n) == 0 && strcmp(name + n, suffix) == 0;
}

/* Orders the buckets by le (insertion sort: at most TELEMETRY_MAX_BUCKETS). */
static void telemetry_read_sort(telemetry_buckets_t *b) {
    for (uint32_t i = 1; i < b->n; i++)
        for (uint32_t j = i; j > 0 && b->le[j - 1] > b->le[j]; j--) {
            double le = b->le[j], c = b->cumulative[j];
            b->le[j] = b->le[j - 1];
            b->cumulative[j] = b->cumulative[j - 1];
            b->le[j - 1] = le;
            b->cumulative[j - 1] = c;
        }
}

/* Histogram base summed over its series into *out; false when the page has no base_count. */
static bool telemetry_read_histogram(const prom_page_t *page, const char *base,
                                     telemetry_buckets_t *out) {
    memset(out, 0, sizeof *out);
    size_t bucket_samples = 0, series = 0;
    for (size_t i = 0; i < page->n_samples; i++) {
        const prom_parsed_sample_t *s = &page->samples[i];
        if (telemetry_read_is(s->name, base, "_count")) {
            out->count += s->value;
            series++;
        } else if (telemetry_read_is(s->name, base, "_sum")) {
            out->sum += s->value;
        } else if (telemetry_read_is(s->name, base, "_bucket")) {
            const char *le_text = prom_sample_label(s, "le");
            char *end;
            double le = le_text ? strtod(le_text, &end) : NAN;
            if (!le_text || *end || isnan(le)) {
                out->layout_mismatch = true;
                continue;
            }
            bucket_samples++;
            uint32_t k = 0;
            while (k < out->n && out->le[k] != le)
                k++;
            if (k == out->n) {
                if (out->n == TELEMETRY_MAX_BUCKETS) {
                    out->layout_mismatch = true;
                    continue;
                }
                out->le[out->n++] = le;
            }
            out->cumulative[k] += s->value;
        }
    }
    if (series == 0)
        return false;
    out->present = true;
    telemetry_read_sort(out);
    /* Every series must carry every le, ending in +Inf, or the sums mean nothing. */
    if (bucket_samples != (size_t)out->n * series || out->n == 0 || !isinf(out->le[out->n - 1]))
        out->layout_mismatch = true;
    return true;
}

static void telemetry_read_clear(telemetry_reading_t *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < TELEMETRY_C__COUNT; i++)
        out->counter[i] = NAN;
    for (size_t i = 0; i < TELEMETRY_G__COUNT; i++)
        out->gauge[i] = NAN;
    out->process_start_s = NAN;
}

static const telemetry_read_dialect_t *telemetry_read_dialect_of(const prom_page_t *page) {
    size_t n = sizeof telemetry_read_dialects / sizeof telemetry_read_dialects[0];
    for (size_t d = 0; d < n; d++) {
        size_t len = strlen(telemetry_read_dialects[d].prefix);
        for (size_t i = 0; i < page->n_samples; i++)
            if (strncmp(page->samples[i].name, telemetry_read_dialects[d].prefix, len) == 0)
                return &telemetry_read_dialects[d];
    }
    return NULL;
}

static void telemetry_read_engine(const prom_page_t *page, const telemetry_read_dialect_t *d,
                                  telemetry_reading_t *out) {
    out->dialect = d->name;
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++)
        for (size_t k = 0; k < TELEMETRY_READ_CANDIDATES && d->histogram[h][k]; k++)
            if (telemetry_read_histogram(page, d->histogram[h][k], &out->histogram[h])) {
                out->names[h] = d->histogram[h][k];
                break;
            }
    for (size_t c = 0; c < TELEMETRY_C__COUNT; c++)
        out->counter[c] = telemetry_read_first(page, d->counter[c], TELEMETRY_READ_SUM,
                                               &out->names[TELEMETRY_H__COUNT + c]);
    for (size_t g = 0; g < TELEMETRY_G__COUNT; g++) {
        bool kv = g == TELEMETRY_G_KV_USAGE;
        out->gauge[g] =
            telemetry_read_first(page, d->gauge[g], kv ? TELEMETRY_READ_MEAN : TELEMETRY_READ_SUM,
                                 &out->names[TELEMETRY_H__COUNT + TELEMETRY_C__COUNT + g]);
        if (kv)
            out->gauge[g] *= d->kv_scale;
    }
}

/* DCGM's "no value" sentinels (dcgm_structs.h DCGM_BLANK_VALUES): each type's blank and the 15
 * codes above it (not found, not supported, not permissioned, ...). The int64 ones all read as
 * 2^63 once parsed into a double. An int32 blank is a plausible energy reading (2.1 MJ), so the
 * energy counter is checked against the int64 and fp64 ones only. */
#define TELEMETRY_READ_DCGM_INT32_BLANK 2147483632.0     /* 0x7ffffff0 */
#define TELEMETRY_READ_DCGM_FP64_BLANK 140737488355328.0 /* 2^47 */
#define TELEMETRY_READ_DCGM_INT64_BLANK 9223372036854775792.0

static bool telemetry_read_dcgm_blank(double v, bool energy) {
    if (v >= TELEMETRY_READ_DCGM_INT64_BLANK)
        return true;
    if (v >= TELEMETRY_READ_DCGM_FP64_BLANK && v <= TELEMETRY_READ_DCGM_FP64_BLANK + 15)
        return true;
    return !energy && v >= TELEMETRY_READ_DCGM_INT32_BLANK &&
           v <= TELEMETRY_READ_DCGM_INT32_BLANK + 15;
}

#define TELEMETRY_READ_MAX_GPUS 512

/* The GPU a DCGM series belongs to: its host (`Hostname=` from older exporters, `hostname=`
 * from newer ones), its UUID (else its index `gpu=`) and, when per_instance, its MIG instance
 * (`GPU_I_ID=`), hashed (FNV-1a). */
static uint64_t telemetry_read_gpu_key(const prom_parsed_sample_t *s, bool per_instance) {
    const char *parts[3] = {prom_sample_label(s, "Hostname"), prom_sample_label(s, "UUID"),
                            per_instance ? prom_sample_label(s, "GPU_I_ID") : NULL};
    if (!parts[0])
        parts[0] = prom_sample_label(s, "hostname");
    if (!parts[1])
        parts[1] = prom_sample_label(s, "gpu");
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < 3; i++) {
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL; /* a separator no label value holds */
    }
    return h;
}

/* One DCGM field over the page's GPUs: each GPU counted once (a MIG GPU's instances repeat its
 * device-wide fields, so only a per_instance field is taken per GPU_I_ID), summed or averaged.
 * NAN when no GPU gives it or any gives a blank sentinel: a sum over some GPUs only would look
 * like a reading of all of them. */
static double telemetry_read_dcgm_field(const prom_page_t *page, const char *name,
                                        telemetry_read_combine_t how, bool per_instance,
                                        bool energy) {
    uint64_t seen[TELEMETRY_READ_MAX_GPUS];
    size_t n = 0;
    double total = 0;
    for (size_t i = 0; i < page->n_samples; i++) {
        const prom_parsed_sample_t *s = &page->samples[i];
        if (strcmp(s->name, name) != 0 || isnan(s->value))
            continue;
        if (telemetry_read_dcgm_blank(s->value, energy))
            return NAN;
        uint64_t key = telemetry_read_gpu_key(s, per_instance);
        size_t k = 0;
        while (k < n && seen[k] != key)
            k++;
        if (k < n || n == TELEMETRY_READ_MAX_GPUS)
            continue;
        seen[n++] = key;
        total += s->value;
    }
    if (n == 0)
        return NAN;
    return how == TELEMETRY_READ_MEAN ? total / (double)n : total;
}

typedef struct telemetry_read_dcgm_source {
    const char *name;
    telemetry_read_combine_t how;
    bool per_instance; /* MIG instances each have their own */
    double scale;      /* to stampede's unit */
} telemetry_read_dcgm_source_t;

/* Per gauge, the fields tried in order: a page of profiling fields only (DCGM_FI_PROF_*, e.g.
 * an exporter on a MIG GPU, where DEV_GPU_UTIL is unsupported) gives utilisation as the graphics
 * engine's active ratio, per instance. */
static const telemetry_read_dcgm_source_t telemetry_read_gpu_gauge[TELEMETRY_G__COUNT][2] = {
    [TELEMETRY_G_GPU_UTIL] = {{"DCGM_FI_DEV_GPU_UTIL", TELEMETRY_READ_MEAN, false, 1},
                              {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", TELEMETRY_READ_MEAN, true, 100}},
    [TELEMETRY_G_GPU_POWER_W] = {{"DCGM_FI_DEV_POWER_USAGE", TELEMETRY_READ_SUM, false, 1}},
    [TELEMETRY_G_GPU_FB_USED_MIB] = {{"DCGM_FI_DEV_FB_USED", TELEMETRY_READ_SUM, true, 1}}};

static void telemetry_read_gpu(const prom_page_t *page, telemetry_reading_t *out) {
    const char *energy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
    out->counter[TELEMETRY_C_GPU_ENERGY_MJ] =
        telemetry_read_dcgm_field(page, energy, TELEMETRY_READ_SUM, false, true);
    if (!isnan(out->counter[TELEMETRY_C_GPU_ENERGY_MJ]))
        out->names[TELEMETRY_H__COUNT + TELEMETRY_C_GPU_ENERGY_MJ] = energy;
    for (size_t g = 0; g < TELEMETRY_G__COUNT; g++)
        for (size_t k = 0; k < 2 && telemetry_read_gpu_gauge[g][k].name; k++) {
            const telemetry_read_dcgm_source_t *src = &telemetry_read_gpu_gauge[g][k];
            /* a field the page has decides, even when it is blank: no fallback past a blank */
            if (isnan(telemetry_read_scalar(page, src->name, TELEMETRY_READ_SUM)))
                continue;
            out->gauge[g] =
                telemetry_read_dcgm_field(page, src->name, src->how, src->per_instance, false) *
                src->scale;
            if (!isnan(out->gauge[g]))
                out->names[TELEMETRY_H__COUNT + TELEMETRY_C__COUNT + g] = src->name;
            break;
        }
    for (size_t i = 0; !out->dialect && i < page->n_samples; i++)
        if (strncmp(page->samples[i].name, "DCGM_FI_", 8) == 0)
            out->dialect = "dcgm";
}

void telemetry_read_page(const prom_page_t *page, telemetry_reading_t *out) {
    telemetry_read_clear(out);
    const telemetry_read_dialect_t *d = telemetry_read_dialect_of(page);
    if (d)
        telemetry_read_engine(page, d, out);
    telemetry_read_gpu(page, out);
    /* Several processes (multiprocess mode) each give one: the newest start is the restart. */
    for (size_t i = 0; i < page->n_samples; i++)
        if (strcmp(page->samples[i].name, "process_start_time_seconds") == 0 &&
            (isnan(out->process_start_s) || page->samples[i].value > out->process_start_s))
            out->process_start_s = page->samples[i].value;
}

double telemetry_read_quantile_bounded(const telemetry_buckets_t *b, double q, bool *at_least,
                                       double *lo, double *hi) {
    *at_least = false;
    *lo = *hi = NAN;
    if (!b->present || b->layout_mismatch || b->n == 0)
        return NAN;
    double total = b->cumulative[b->n - 1];
    if (!(total > 0))
        return NAN;
    double rank = q * total;
    uint32_t i = 0;
    while (i < b->n - 1 && b->cumulative[i] < rank)
        i++;
    double lower = i > 0 ? b->le[i - 1] : 0, below = i > 0 ? b->cumulative[i - 1] : 0;
    *lo = lower;
    *hi = b->le[i];
    if (isinf(b->le[i])) { /* in +Inf: the largest finite bound, as a lower bound */
        *at_least = true;
        return i > 0 ? b->le[i - 1] : NAN;
    }
    if (i == 0 && b->le[0] <= 0) {
        *lo = b->le[0];
        return b->le[0];
    }
    double in_bucket = b->cumulative[i] - below;
    if (in_bucket <= 0)
        return b->le[i];
    return lower + (b->le[i] - lower) * (rank - below) / in_bucket;
}

bool telemetry_read_bucket_limited(double value, double lo, double hi) {
    return !isnan(value) && !isnan(lo) && !isnan(hi) && hi - lo > value / 2;
}

/* Count, mean and percentiles of d from its buckets. */
static void telemetry_read_figures(telemetry_histogram_delta_t *d) {
    const telemetry_buckets_t *b = &d->delta;
    static const double q[TELEMETRY_READ_N_PERCENTILES] = {0.50, 0.90, 0.95, 0.99};
    double *p[TELEMETRY_READ_N_PERCENTILES] = {&d->p50_s, &d->p90_s, &d->p95_s, &d->p99_s};
    d->count = d->mean_s = NAN;
    d->p99_at_least = false;
    for (size_t i = 0; i < TELEMETRY_READ_N_PERCENTILES; i++)
        *p[i] = d->bounds_s[i][0] = d->bounds_s[i][1] = NAN;
    if (!b->present)
        return;
    d->count = b->count;
    d->mean_s = b->count > 0 ? b->sum / b->count : NAN;
    for (size_t i = 0; i < TELEMETRY_READ_N_PERCENTILES; i++) {
        bool at_least;
        *p[i] = telemetry_read_quantile_bounded(b, q[i], &at_least, &d->bounds_s[i][0],
                                                &d->bounds_s[i][1]);
        if (i == TELEMETRY_READ_N_PERCENTILES - 1)
            d->p99_at_least = at_least;
    }
}

void telemetry_read_delta_init(telemetry_delta_t *out) {
    memset(out, 0, sizeof *out);
    for (size_t c = 0; c < TELEMETRY_C__COUNT; c++)
        out->counter[c] = NAN;
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++)
        telemetry_read_figures(&out->histogram[h]);
}

static void telemetry_read_note_restart(telemetry_delta_t *out, const char *what, double a,
                                        double b) {
    if (out->restarted)
        return;
    out->restarted = true;
    snprintf(out->restart_why, sizeof out->restart_why, "%s went from %.0f to %.0f", what, a, b);
}

static bool telemetry_read_same_layout(const telemetry_buckets_t *a, const telemetry_buckets_t *b) {
    if (a->layout_mismatch || b->layout_mismatch || a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->le[i] != b->le[i])
            return false;
    return true;
}

void telemetry_read_delta(const telemetry_reading_t *a, const telemetry_reading_t *b,
                          telemetry_delta_t *out) {
    telemetry_read_delta_init(out);
    if (!isnan(a->process_start_s) && !isnan(b->process_start_s) &&
        b->process_start_s != a->process_start_s) {
        out->restarted = true;
        snprintf(out->restart_why, sizeof out->restart_why,
                 "process_start_time_seconds moved by %.0f s",
                 b->process_start_s - a->process_start_s);
    }
    for (size_t c = 0; c < TELEMETRY_C__COUNT; c++) {
        if (isnan(a->counter[c]) || isnan(b->counter[c]))
            continue;
        out->counter[c] = b->counter[c] - a->counter[c];
        if (out->counter[c] < 0) {
            telemetry_read_note_restart(out, b->names[TELEMETRY_H__COUNT + c], a->counter[c],
                                        b->counter[c]);
            out->counter[c] = b->counter[c];
        }
    }
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++) {
        const telemetry_buckets_t *ha = &a->histogram[h], *hb = &b->histogram[h];
        telemetry_histogram_delta_t *d = &out->histogram[h];
        if (!ha->present || !hb->present)
            continue;
        d->delta = *hb;
        if (hb->count < ha->count) {
            char what[160];
            snprintf(what, sizeof what, "%s_count", b->names[h]);
            telemetry_read_note_restart(out, what, ha->count, hb->count);
        } else if (telemetry_read_same_layout(ha, hb)) {
            d->delta.count = hb->count - ha->count;
            d->delta.sum = hb->sum - ha->sum;
            for (uint32_t i = 0; i < hb->n; i++)
                d->delta.cumulative[i] = hb->cumulative[i] - ha->cumulative[i];
        } else {
            d->delta.count = hb->count - ha->count;
            d->delta.sum = hb->sum - ha->sum;
            d->delta.layout_mismatch = true;
        }
    }
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++)
        telemetry_read_figures(&out->histogram[h]);
}

void telemetry_read_add(telemetry_delta_t *sum, const telemetry_delta_t *d) {
    if (d->restarted && !sum->restarted) {
        sum->restarted = true;
        snprintf(sum->restart_why, sizeof sum->restart_why, "%s", d->restart_why);
    }
    for (size_t c = 0; c < TELEMETRY_C__COUNT; c++)
        if (!isnan(d->counter[c]))
            sum->counter[c] =
                isnan(sum->counter[c]) ? d->counter[c] : sum->counter[c] + d->counter[c];
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++) {
        telemetry_buckets_t *s = &sum->histogram[h].delta;
        const telemetry_buckets_t *x = &d->histogram[h].delta;
        if (!x->present)
            continue;
        if (!s->present) {
            *s = *x;
            continue;
        }
        bool same = telemetry_read_same_layout(s, x);
        s->count += x->count;
        s->sum += x->sum;
        if (!same) {
            s->layout_mismatch = true;
            continue;
        }
        for (uint32_t i = 0; i < s->n; i++)
            s->cumulative[i] += x->cumulative[i];
    }
}

void telemetry_read_finish(telemetry_delta_t *sum) {
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++)
        telemetry_read_figures(&sum->histogram[h]);
}
