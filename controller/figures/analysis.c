#include "analysis.h"

#include <math.h>

double analysis_t975(size_t dof) {
    static const double table[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                   2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                   2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                   2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof == 0)
        return NAN;
    if (dof < sizeof table / sizeof table[0])
        return table[dof];
    /* Beyond 30: the normal quantile with the first two terms of the Cornish-Fisher expansion. */
    double z = 1.959964, d = (double)dof;
    return z + (z * z * z + z) / (4 * d) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

void analysis_summarise(const double *values, size_t n, analysis_summary_t *out) {
    double sum = 0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(values[i])) {
            sum += values[i];
            used++;
        }
    *out = (analysis_summary_t){.n = used, .mean = NAN, .ci95_low = NAN, .ci95_high = NAN};
    if (used == 0)
        return;
    out->mean = sum / (double)used;
    if (used < 2)
        return;
    double squares = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(values[i]))
            squares += (values[i] - out->mean) * (values[i] - out->mean);
    out->stddev = sqrt(squares / (double)(used - 1));
    double half = analysis_t975(used - 1) * out->stddev / sqrt((double)used);
    out->ci95_low = out->mean - half;
    out->ci95_high = out->mean + half;
}

/* The first index from which every point has errors above the sustained share; -1 if none. */
static int analysis_sustained(const analysis_point_t *points, size_t n) {
    int from = -1;
    for (size_t i = 0; i < n; i++) {
        if (points[i].error_pct > ANALYSIS_SUSTAINED_ERROR_PCT) {
            if (from < 0)
                from = (int)i;
        } else {
            from = -1;
        }
    }
    return from;
}

/* The first index i < n - 1 from which no later TPOT p50 is above TPOT p50 of i by more than the
 * plateau rise, and the mean over those levels; -1 if none. */
static int analysis_plateau(const analysis_point_t *points, size_t n, double *mean) {
    *mean = NAN;
    for (size_t i = 0; i + 1 < n; i++) {
        if (points[i].tpot_p50_ms <= 0)
            continue;
        double limit = points[i].tpot_p50_ms * (1 + ANALYSIS_PLATEAU_RISE), sum = 0;
        bool flat = true;
        size_t count = 0;
        for (size_t j = i; j < n && flat; j++) {
            if (points[j].tpot_p50_ms < 0)
                continue;
            flat = points[j].tpot_p50_ms <= limit;
            sum += points[j].tpot_p50_ms;
            count++;
        }
        if (flat && count >= 2) {
            *mean = sum / (double)count;
            return (int)i;
        }
    }
    return -1;
}

void analysis_saturation(const analysis_point_t *points, size_t n, analysis_saturation_t *out) {
    *out = (analysis_saturation_t){-1, -1, -1, -1, NAN};
    for (size_t i = 0; i < n; i++) {
        if (out->first_errors < 0 && points[i].error_pct > 0)
            out->first_errors = (int)i;
        if (out->ttft_knee < 0 && points[i].ttft_p50_ms > ANALYSIS_TTFT_KNEE_MS)
            out->ttft_knee = (int)i;
    }
    out->sustained_errors = analysis_sustained(points, n);
    out->tpot_plateau = analysis_plateau(points, n, &out->plateau_tpot_ms);
}

void analysis_fit_power(const double *x, const double *y, size_t n, analysis_fit_t *out) {
    *out = (analysis_fit_t){.base = NAN, .exponent = NAN, .r2 = NAN};
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0))
            continue;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
        out->n++;
    }
    double m = (double)out->n, denominator = m * sxx - sx * sx;
    if (out->n < 2 || denominator <= 1e-12 * m * sxx)
        return;
    double slope = (m * sxy - sx * sy) / denominator, intercept = (sy - slope * sx) / m;
    double mean = sy / m, total = 0, residual = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0))
            continue;
        double ly = log(y[i]), fitted = intercept + slope * log(x[i]);
        total += (ly - mean) * (ly - mean);
        residual += (ly - fitted) * (ly - fitted);
    }
    out->ok = true;
    out->exponent = slope;
    out->base = exp(intercept);
    out->r2 = total > 0 ? 1 - residual / total : 1;
}
