/* What a sweep reports, from its windows' statistics: the headline figures of a span, the
 * results.json objects of a snapshot, a repetition and a level (with its `reference` object in
 * the reports' "Reference Data (JSON)" keys), the `analysis` object, and the table printed after
 * the sweep. Schema in docs/results.md, definitions in docs/sweeps.md. */
#ifndef STAMPEDE_SWEEP_REPORT_H
#define STAMPEDE_SWEEP_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "analysis.h"
#include "sweep.h"
#include "window.h"

/* The headline figures of a span, in results.json order (a figure not measured is NaN). */
typedef enum {
    SWEEP_FIG_TTFT_P50,
    SWEEP_FIG_TTFT_P95,
    SWEEP_FIG_TPOT_P50,
    SWEEP_FIG_TPOT_P95,
    SWEEP_FIG_LATENCY_P50, /* E2E */
    SWEEP_FIG_LATENCY_P95,
    SWEEP_FIG_ITL_P50,
    SWEEP_FIG_ITL_P95,
    SWEEP_FIG_ERROR_PCT,
    SWEEP_FIG_ACTUAL_RPS, /* session (conversation) starts per second */
    SWEEP_FIG_REQUESTS_PER_S,
    SWEEP_FIG_TOPS, /* output tokens per second */
    SWEEP_FIG_KV_HIT_PCT,
    SWEEP_FIG__COUNT
} sweep_figure_t;

/* One level's figures as the analysis and the table read them. */
typedef struct sweep_report_level {
    const level_spec_t *spec;
    double figures[SWEEP_FIG__COUNT]; /* pooled over the valid repetitions */
    uint32_t repetitions;
    uint32_t valid;
    bool interrupted;
    /* The server's own, from its page (the level's `gap` and `server`): exact means of its
     * _sum/_count deltas and Gen TPS, a counter delta; NAN without a scrape. */
    double server_ttft_mean_ms, server_tpot_mean_ms, server_gen_tps;
} sweep_report_level_t;

/* Every figure of s into out. */
void sweep_report_figures(const window_stats_t *s, double out[SWEEP_FIG__COUNT]);
/* A span's object: every figure, the metric blocks (ttft_ms, ttfc_ms, tpot_ms, itl_ms, e2e_ms),
 * the outcome counts and duration_s. */
json_t *sweep_report_stats_json(const window_stats_t *s);
/* The level's `reference` object: exactly the reports' keys, from the pooled window. */
json_t *sweep_report_reference_json(const level_spec_t *spec, const window_stats_t *pooled);
/* The same from figures already computed (a plain run's, from its merge; NaN: null). */
json_t *sweep_report_reference_of(const level_spec_t *spec, const double f[SWEEP_FIG__COUNT]);
/* {figure: {"n","mean","stddev","ci95_low","ci95_high"}} over n rows of figures. */
json_t *sweep_report_across_json(const double (*rows)[SWEEP_FIG__COUNT], size_t n);
/* {figure: mean} over n rows (the reports' averaged snapshots); nulls without rows. */
json_t *sweep_report_mean_json(const double (*rows)[SWEEP_FIG__COUNT], size_t n);
/* {"ttft_p50_ms", "tpot_p50_ms", "latency_p50_ms"}: max - min over n snapshot rows. */
json_t *sweep_report_stability_json(const double (*rows)[SWEEP_FIG__COUNT], size_t n);
/* The level value's key and JSON number: "concurrency": 50 or "rate": 2.5. */
const char *sweep_report_axis_key(const level_spec_t *spec);
json_t *sweep_report_value_json(double value);
/* The analysis of the complete levels (interrupted ones left out): saturation and fits, in
 * results.json's form ({"saturation": {...}, "fits": {...}}). */
json_t *sweep_report_analysis_json(const sweep_report_level_t *levels, size_t n);
/* The server columns of l from a level's {"server", "gap"} (NULL: none scraped). */
void sweep_report_server_figures(sweep_report_level_t *l, const json_t *server_and_gap);
/* The table after the sweep: a row per level (with the server's TTFT and TPOT means and Gen TPS
 * when a level has them), then the saturation points and the fits. */
void sweep_report_print(FILE *out, const sweep_report_level_t *levels, size_t n);

#endif
