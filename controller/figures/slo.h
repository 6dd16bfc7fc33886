/* Service-level objectives judged on a run or a level (docs/slo.md): each SLO of the file's `slo:`
 * section measured on the run's histograms (exact percentiles, never averages of percentiles),
 * passed or failed, with its margin; the binding SLO (the one with the least margin); and goodput,
 * the requests (and their output tokens) per second that met every per-request SLO, as AIPerf and
 * DistServe define it. Also the early verdict of a level already lost. Pure: no I/O but the
 * printing and JSON functions' own output. */
#ifndef STAMPEDE_SLO_H
#define STAMPEDE_SLO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "histogram.h"
#include "metrics.h"
#include "record.h"
#include "window.h"

/* Per-request counts for goodput; zero-initialise, then slo_goodput_add every record. */
typedef struct slo_goodput {
    uint64_t checked;     /* ok or failed outside the warm-up (not cancelled) */
    uint64_t good;        /* of those, ok and within every per-request bound */
    uint64_t window_good; /* good requests that ended in the measured window, warm-up included */
    uint64_t window_good_output_tokens; /* their output tokens */
} slo_goodput_t;

/* What an evaluation reads: one run's or level's statistics, warm-up excluded. */
typedef struct slo_input {
    histogram_t *const *latency; /* METRIC__COUNT histograms of the ok requests */
    uint64_t ok;                 /* requests by outcome (cancelled ones are neither) */
    uint64_t failed;
    const slo_goodput_t *goodput; /* NULL: no goodput (the level had no per-request check) */
    double window_s;              /* the measured window, for the goodput rates */
} slo_input_t;

/* One SLO judged. */
typedef struct slo_check {
    config_slo_item_t spec;
    bool measured; /* false: nothing to measure (no ok request, no request at all) */
    double value;  /* ms for a latency, percent for errors */
    double bound;  /* same unit */
    bool pass;     /* measured and value <= bound */
    double margin; /* (bound - value) / bound: the share of headroom left, negative when failed */
} slo_check_t;

typedef struct slo_result {
    slo_check_t checks[CONFIG_MAX_SLOS];
    size_t n;
    bool pass;   /* every SLO passed (true when there is none) */
    int binding; /* index of the check with the least margin; -1 without SLOs */
    bool has_goodput;
    uint64_t good_requests; /* ok and within every per-request bound */
    uint64_t checked_requests;
    double attainment_pct;         /* good / checked x 100 */
    double goodput_requests_per_s; /* good requests ended in the window per second */
    double goodput_output_tokens_per_s;
} slo_result_t;

/* The per-request bound of metric k (ns), or 0 when no SLO is on k: the bound of its tail-most
 * statistic (max, else the highest percentile, else the mean). */
int64_t slo_request_bound_ns(const config_slo_t *slo, metrics_kind_t k);
/* True when the request m measured is ok and each of its metrics with an SLO is within its
 * per-request bound (ITL: the request's mean gap per token; a metric it lacks is not held
 * against it). */
bool slo_request_meets(const config_slo_t *slo, const metrics_t *m);
/* Counts one record (cancelled ones are skipped): in_window says it ended inside the measured
 * window, where a good one counts in the rates whenever it was sent (as the request rate counts);
 * the attainment (checked, good) leaves the warm-up out. */
void slo_goodput_add(slo_goodput_t *self, const config_slo_t *slo, const request_record_t *rec,
                     const metrics_t *m, bool in_window);

/* Adds src's counts into dst (the repetitions of a level pooled). */
void slo_goodput_pool(slo_goodput_t *dst, const slo_goodput_t *src);

/* Judges every SLO of slo on in into *out. */
void slo_evaluate(const config_slo_t *slo, const slo_input_t *in, slo_result_t *out);
/* "TTFC p95 <= 750 ms", "errors <= 2 %" into buf. */
void slo_label(const config_slo_item_t *spec, char *buf, size_t len);

/* Whether a level in progress has already lost an SLO whatever its remaining requests do: a max
 * exceeded, or (percentiles and errors) more misses than the whole level may have, projecting the
 * level's total from its count so far over progress (0 < progress <= 1: the share of the level
 * done), with a safety factor for that projection and at least SLO_LOST_MIN_MISSES misses. The
 * reason goes to why. The mean is never judged early. */
#define SLO_LOST_MIN_MISSES 10
#define SLO_LOST_SAFETY 1.5
bool slo_clearly_lost(const config_slo_t *slo, const slo_input_t *in, double progress, char *why,
                      size_t len);

/* analysis.slo of results.json: {pass, binding, checks: [...], goodput: {...}}; NULL on no
 * memory. The caller owns the reference. */
json_t *slo_json(const slo_result_t *r);
/* A sweep level's SLOs judged on its pooled window, with goodput from the same repetitions
 * (NULL: none) over the window's length: level (its results.json object) gets "slo" (as
 * slo_json) when slo has any. */
void slo_level_json(json_t *level, const config_slo_t *slo, const window_stats_t *pooled,
                    const slo_goodput_t *goodput);
/* A sweep's analysis.slo: each level's "slo" in order, with the level's "concurrency" or "rate";
 * left as it is when no level has one. */
void slo_analysis_json(json_t *analysis, json_t *levels);
/* A sweep's terminal block: one line per level with an "slo" in levels (pass or fail, the binding
 * SLO and its margin, goodput). Nothing when no level has one. */
void slo_print_levels(FILE *out, json_t *levels);
/* The terminal block: one line per SLO (value, bound, margin, PASS/FAIL), the binding SLO and
 * goodput. Nothing when there is no SLO. */
void slo_print(FILE *out, const slo_result_t *r);

#endif
