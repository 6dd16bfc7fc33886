/* What a sweep's levels say together, as the reference reports read them: the spread of a figure
 * across repetitions (mean, standard deviation, Student-t 95 % interval), the saturation points
 * (first errors, sustained errors, TTFT p50 above 1 s, the TPOT plateau) and the scaling fits
 * TPOT(c) = base x c^alpha and throughput = base x c^beta (least squares in log space, R^2).
 * Pure functions over plain arrays; docs/sweeps.md gives every definition. */
#ifndef STAMPEDE_ANALYSIS_H
#define STAMPEDE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

/* Above this error share a level "has sustained errors" (the reports' "> 5 % errors"). */
#define ANALYSIS_SUSTAINED_ERROR_PCT 5.0
/* TTFT p50 above this (ms) marks the TTFT knee. */
#define ANALYSIS_TTFT_KNEE_MS 1000.0
/* A TPOT plateau: every later level's TPOT p50 within this share above the level's. */
#define ANALYSIS_PLATEAU_RISE 0.05

/* A figure across repetitions. With n < 2 the stddev is 0 and the interval is unknown (NaN). */
typedef struct analysis_summary {
    size_t n;
    double mean;
    double stddev;   /* sample standard deviation (n - 1) */
    double ci95_low; /* mean -/+ t(0.975, n - 1) x stddev / sqrt(n) */
    double ci95_high;
} analysis_summary_t;

/* One level as the saturation analysis reads it (a negative figure: not measured). */
typedef struct analysis_point {
    double level; /* concurrency, or sessions/s */
    double error_pct;
    double ttft_p50_ms;
    double tpot_p50_ms;
    double output_tokens_per_s;
} analysis_point_t;

/* Indexes into the points (-1: not reached), as the reports' "Saturation Point" table. */
typedef struct analysis_saturation {
    int first_errors;     /* first level with any error */
    int sustained_errors; /* first level from which every level has > 5 % errors */
    int ttft_knee;        /* first level with TTFT p50 > 1 s */
    int tpot_plateau;     /* first level from which TPOT p50 rises no more (needs a later level) */
    double plateau_tpot_ms; /* mean TPOT p50 over the plateau's levels; NaN without a plateau */
} analysis_saturation_t;

/* y = base x x^exponent fitted by least squares on (ln x, ln y); r2 in log space. */
typedef struct analysis_fit {
    size_t n; /* points used (x and y > 0); the fit needs 2 distinct x */
    bool ok;
    double base;
    double exponent;
    double r2;
} analysis_fit_t;

/* The two-sided 95 % Student-t quantile for dof degrees of freedom (dof >= 1). */
double analysis_t975(size_t dof);
/* Mean, standard deviation and 95 % interval of n values (NaN values are skipped). */
void analysis_summarise(const double *values, size_t n, analysis_summary_t *out);
/* The saturation points of n levels in increasing order. */
void analysis_saturation(const analysis_point_t *points, size_t n, analysis_saturation_t *out);
/* The power-law fit of y over x (points with x <= 0 or y <= 0 are left out). */
void analysis_fit_power(const double *x, const double *y, size_t n, analysis_fit_t *out);

#endif
