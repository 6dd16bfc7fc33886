/* What a server's or a GPU exporter's /metrics page says, in stampede's terms, and what changed
 * between two pages. A page is recognised by its names: vLLM (`vllm:*`), SGLang (`sglang:*`),
 * the Dynamo frontend (`dynamo_frontend_*`) and NVIDIA DCGM (`DCGM_FI_*`); the names are in
 * research/distributed-mechanics.md §6. Series of one name are summed over their labels (model,
 * engine, DP rank, GPU), histogram buckets by identical `le`. A quantity a page does not expose
 * stays absent: NAN in every figure, never 0. Pure functions: no I/O, no clock. */
#ifndef STAMPEDE_TELEMETRY_READ_H
#define STAMPEDE_TELEMETRY_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prom_parse.h"

typedef enum {
    TELEMETRY_H_TTFT,    /* time to first token */
    TELEMETRY_H_ITL,     /* inter-token latency (per token) */
    TELEMETRY_H_TPOT,    /* time per output token, per request */
    TELEMETRY_H_E2E,     /* request latency */
    TELEMETRY_H_QUEUE,   /* waiting before the first schedule */
    TELEMETRY_H_PREFILL, /* scheduled to first token */
    TELEMETRY_H__COUNT
} telemetry_histogram_t;

typedef enum {
    TELEMETRY_C_REQUESTS,          /* requests the server finished */
    TELEMETRY_C_PROMPT_TOKENS,     /* prompt tokens it processed */
    TELEMETRY_C_GENERATION_TOKENS, /* tokens it generated */
    TELEMETRY_C_PREFIX_QUERIES,    /* prompt tokens looked up in the prefix cache */
    TELEMETRY_C_PREFIX_HITS,       /* of those, found */
    TELEMETRY_C_GPU_ENERGY_MJ,     /* DCGM total energy since boot, millijoules, all GPUs */
    TELEMETRY_C__COUNT
} telemetry_counter_t;

typedef enum {
    TELEMETRY_G_RUNNING,         /* requests running (summed over engines) */
    TELEMETRY_G_WAITING,         /* requests waiting */
    TELEMETRY_G_KV_USAGE,        /* KV-cache usage, percent (mean over engines) */
    TELEMETRY_G_GPU_UTIL,        /* GPU utilisation, percent (mean over GPUs) */
    TELEMETRY_G_GPU_POWER_W,     /* power draw, watts (summed over GPUs) */
    TELEMETRY_G_GPU_FB_USED_MIB, /* frame buffer used, MiB (summed over GPUs) */
    TELEMETRY_G__COUNT
} telemetry_gauge_t;

#define TELEMETRY_MAX_BUCKETS 64
/* The percentiles estimated from buckets: p50, p90, p95, p99. */
#define TELEMETRY_READ_N_PERCENTILES 4

/* One histogram summed over its series: cumulative counts by ascending le (+Inf last). */
typedef struct telemetry_buckets {
    bool present;
    bool layout_mismatch; /* its series have different le sets: no percentiles */
    uint32_t n;
    double le[TELEMETRY_MAX_BUCKETS];
    double cumulative[TELEMETRY_MAX_BUCKETS];
    double count;
    double sum;
} telemetry_buckets_t;

/* One page, recognised. Absent quantities are NAN. */
typedef struct telemetry_reading {
    const char *dialect; /* "vllm", "sglang", "dynamo", "dcgm", or NULL (none recognised) */
    const char *names[TELEMETRY_H__COUNT + TELEMETRY_C__COUNT + TELEMETRY_G__COUNT]; /* used */
    double counter[TELEMETRY_C__COUNT];
    double gauge[TELEMETRY_G__COUNT];
    telemetry_buckets_t histogram[TELEMETRY_H__COUNT];
    double process_start_s; /* process_start_time_seconds, NAN when absent */
} telemetry_reading_t;

/* Reads page into *out (every quantity absent first). */
void telemetry_read_page(const prom_page_t *page, telemetry_reading_t *out);
/* The metric name a quantity was read from (NULL when absent): index a histogram by h, a counter
 * by TELEMETRY_H__COUNT + c, a gauge by TELEMETRY_H__COUNT + TELEMETRY_C__COUNT + g. */
const char *telemetry_read_name(const telemetry_reading_t *r, size_t quantity);
/* The stampede name of each quantity, for results.json: "ttft", "requests", "running", ... */
const char *telemetry_read_histogram_key(telemetry_histogram_t h);
const char *telemetry_read_counter_key(telemetry_counter_t c);
const char *telemetry_read_gauge_key(telemetry_gauge_t g);

/* A histogram's change between two readings (b later than a). */
typedef struct telemetry_histogram_delta {
    double count; /* NAN when absent */
    double mean_s;
    /* Estimates, interpolated in their bucket; NAN when absent or the layouts differ. */
    double p50_s, p90_s, p95_s, p99_s;
    /* The bucket each of p50, p90, p95, p99 fell in: [lower bound, le] (le +Inf past the last
     * finite bound); what the page actually knows of the percentile. */
    double bounds_s[TELEMETRY_READ_N_PERCENTILES][2];
    bool p99_at_least; /* its rank fell in +Inf: p99_s is the largest finite le, a lower bound */
    telemetry_buckets_t delta; /* for summing endpoints; present only when percentiles are */
} telemetry_histogram_delta_t;

/* What changed between two readings of one page. */
typedef struct telemetry_delta {
    bool restarted; /* a counter went backwards, or the process start time moved */
    char restart_why[200];
    double counter[TELEMETRY_C__COUNT]; /* b - a (b alone after a restart); NAN when absent */
    telemetry_histogram_delta_t histogram[TELEMETRY_H__COUNT];
} telemetry_delta_t;

/* b - a, with a restart flagged when any counter of a exceeds b's (then b's own values count,
 * as Prometheus' rate() does on a counter reset). */
void telemetry_read_delta(const telemetry_reading_t *a, const telemetry_reading_t *b,
                          telemetry_delta_t *out);
/* Adds d's counters and histogram deltas into *sum (absent + present = present; histograms of
 * different layouts make the sum's percentiles absent). Call telemetry_read_finish after. */
void telemetry_read_add(telemetry_delta_t *sum, const telemetry_delta_t *d);
/* An empty sum for telemetry_read_add: every quantity absent. */
void telemetry_read_delta_init(telemetry_delta_t *out);
/* Recomputes the means and percentiles of a sum from its bucket deltas. */
void telemetry_read_finish(telemetry_delta_t *sum);
/* Quantile q (0..1) of cumulative bucket counts as Prometheus' histogram_quantile computes it:
 * linear within the bucket, 0 as the first bucket's lower bound; a rank in +Inf gives the
 * largest finite le with *at_least set. NAN when the histogram is empty. The bucket it fell in
 * goes to [*lo, *hi] (NAN when the quantile is). */
double telemetry_read_quantile_bounded(const telemetry_buckets_t *b, double q, bool *at_least,
                                       double *lo, double *hi);
/* A bucket-limited estimate: its bucket [lo, hi] is wider than half of value (an unbounded one
 * always is), so the interpolation, not the data, decides most of it. */
bool telemetry_read_bucket_limited(double value, double lo, double hi);

#endif
