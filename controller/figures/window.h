/* A level's measurement window, split into equal snapshots: every request record of a run goes in,
 * and each snapshot (and the whole window) gets its own histograms, so each one's percentiles are
 * exact over its own samples and the window's are never an average of the snapshots'. A record
 * belongs to the snapshot its send time falls in (latencies, outcomes, errors, cache hits); rates
 * count what happened inside each span whatever the record (tokens by chunk arrival, requests by
 * their end, session starts by their first send), as docs/metrics.md section 14 says. Records
 * sent before the window (warm-up) or after it are in no statistic. Pure: no I/O, no clock. */
#ifndef STAMPEDE_WINDOW_H
#define STAMPEDE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "metrics.h"
#include "record.h"

/* The statistics of one span: a snapshot, a whole window, or several pooled. */
typedef struct window_stats {
    histogram_t *latency[METRIC__COUNT]; /* ok requests sent in the span */
    uint64_t ok;                         /* requests sent in the span, by outcome */
    uint64_t failed;
    uint64_t cancelled;
    uint64_t errors[ERROR__COUNT];          /* the failed ones by class (ERROR_CANCELLED stays 0) */
    uint64_t finish_reasons[FINISH__COUNT]; /* the ok ones by finish_reason */
    uint64_t refusals;                      /* the ok ones whose reply was a refusal */
    uint64_t usage_prompt_tokens; /* ok requests with usage sent in the span: prompt tokens */
    uint64_t cached_tokens;       /* ... and of those, cached (the KV / prefix hit rate) */
    uint64_t output_tokens;       /* tokens of chunks received in the span, any outcome */
    uint64_t requests_ended;      /* ok requests that ended in the span */
    uint64_t session_starts;      /* sessions whose first request was sent in the span */
    int64_t duration_ns;          /* the span's length (pooled: the sum) */
} window_stats_t;

typedef struct window window_t;

/* A window opening at start_ns (controller clock) of n_snapshots snapshots of snapshot_ns each;
 * NULL on no memory. The caller destroys it. */
window_t *window_new(int64_t start_ns, int64_t snapshot_ns, uint32_t n_snapshots);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void window_destroy(window_t **self_p);
/* Counts rec (with m = metrics_compute(rec)) into the snapshot it was sent in and into every span
 * its chunks, its end or its session start fall in. */
void window_add(window_t *self, const request_record_t *rec, const metrics_t *m);
/* Number of snapshots, each one's statistics (i < window_snapshots) and the whole window's. */
uint32_t window_snapshots(const window_t *self);
const window_stats_t *window_snapshot(const window_t *self, uint32_t i);
const window_stats_t *window_total(const window_t *self);
/* Start of snapshot i on the controller's clock (i = window_snapshots: the window's end). */
int64_t window_edge_ns(const window_t *self, uint32_t i);

/* Ends the window early at end_ns (a repetition stopped early or interrupted): each span's length
 * is cut to what had elapsed of it by then, so its rates divide by the time it was measured. */
void window_close(window_t *self, int64_t end_ns);

/* The latest end of any record added (0 before the first): where the load stopped when a count
 * limit ended the run before the window did. */
int64_t window_last_end_ns(const window_t *self);

/* Fills *self with empty histograms and zero counts. 0 ok, -1 on no memory (then freed). */
int window_stats_init(window_stats_t *self);
/* Frees the histograms (NULL-safe ones) and zeroes *self. */
void window_stats_free(window_stats_t *self);
/* Adds src into dst: histograms merged bucket by bucket, counts and durations summed, so the
 * pooled percentiles are those of every sample together. */
void window_stats_pool(window_stats_t *dst, const window_stats_t *src);
/* The exact percentile p (0..100) of metric k in ms; negative when the span has no sample. */
double window_stats_percentile_ms(const window_stats_t *self, metrics_kind_t k, double p);
/* failed / (ok + failed) x 100; 0 when nothing finished. */
double window_stats_error_pct(const window_stats_t *self);
/* count per second of the span's length (0 for an empty span). */
double window_stats_per_s(const window_stats_t *self, uint64_t count);
/* cached / prompt tokens x 100 over the ok requests with usage; negative without usage. */
double window_stats_cache_hit_pct(const window_stats_t *self);

#endif
