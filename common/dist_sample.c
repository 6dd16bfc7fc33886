/* One draw of a prepared distribution, clamped to its min and max. */
#include <math.h>

#include "dist.h"
#include "dist_internal.h"

static double dist_mixture_sample(const dist_t *self, rng_t *rng);

static double dist_standard_normal(rng_t *rng) {
    /* Box-Muller, keeping the cosine branch only: two uniforms per draw, no state to carry. */
    double r = sqrt(-2.0 * log(rng_next_open(rng)));
    return r * cos(2.0 * M_PI * rng_next_double(rng));
}

static double dist_sample_poisson(const dist_t *self, rng_t *rng) {
    double mean = self->param[DIST_P_MEAN];
    const double *d = self->derived;
    if (mean < DIST_POISSON_PTRS_FROM) {
        double product = rng_next_open(rng);
        double k = 0.0;
        while (product > d[0]) {
            product *= rng_next_open(rng);
            k++;
        }
        return k;
    }
    double b = d[0], a = d[1], inv_alpha = d[2], vr = d[3], log_mean = log(mean);
    for (;;) {
        double u = rng_next_double(rng) - 0.5;
        double v = rng_next_open(rng);
        double us = 0.5 - fabs(u);
        double k = floor((2.0 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return k;
        if (k < 0.0 || (us < 0.013 && v > us))
            continue;
        int sign;
        if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <=
            -mean + k * log_mean - lgamma_r(k + 1.0, &sign))
            return k;
    }
}

static double dist_sample_gamma(const dist_t *self, rng_t *rng) {
    double shape = self->derived[0], scale = self->derived[1];
    double d = self->derived[2], c = self->derived[3];
    double x, v;
    for (;;) {
        x = dist_standard_normal(rng);
        v = 1.0 + c * x;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        double u = rng_next_open(rng);
        if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            break;
    }
    double g = d * v;
    if (shape < 1.0)
        g *= pow(rng_next_open(rng), 1.0 / shape);
    return g * scale;
}

static double dist_sample_inverse_gaussian(const dist_t *self, rng_t *rng) {
    /* Michael, Schucany and Haas (1976); the root is written in a form free of cancellation. */
    double mu = self->param[DIST_P_MEAN], lambda = self->param[DIST_P_SHAPE];
    double z = dist_standard_normal(rng);
    double y = mu * z * z;
    double root = sqrt(y * (4.0 * lambda + y));
    double x = 4.0 * mu * lambda * y / ((y + root) * (y + root));
    if (!(x > 0.0))
        return mu; /* z = 0 exactly: the smaller root is mu itself */
    if (rng_next_double(rng) * (mu + x) <= mu)
        return x;
    return mu * mu / x;
}

/* The first index in [0, last] whose cumulative weight cdf[i] is above target (target drawn in
 * [0, cdf[last]) ): the draw of a weighted choice, by bisection. */
static size_t dist_cdf_index(const double *cdf, size_t last, double target) {
    size_t lo = 0, hi = last; /* the answer is in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static double dist_sample_empirical(const dist_t *self, rng_t *rng) {
    if (self->cdf == NULL)
        return self->values[rng_next_below(rng, self->n_values)];
    double target = rng_next_double(rng) * self->derived[1];
    return self->values[dist_cdf_index(self->cdf, (size_t)self->derived[2], target)];
}

static double dist_sample_raw(const dist_t *self, rng_t *rng) {
    const double *p = self->param;
    switch (self->kind) {
    case DIST_FIXED:
        return p[DIST_P_VALUE];
    case DIST_UNIFORM:
        return p[DIST_P_MIN] + (p[DIST_P_MAX] - p[DIST_P_MIN]) * rng_next_double(rng);
    case DIST_NORMAL:
        return p[DIST_P_MEAN] + p[DIST_P_STDDEV] * dist_standard_normal(rng);
    case DIST_LOGNORMAL:
        return exp(self->derived[0] + p[DIST_P_SIGMA] * dist_standard_normal(rng));
    case DIST_EXPONENTIAL:
        return -p[DIST_P_MEAN] * log(rng_next_open(rng));
    case DIST_POISSON:
        return dist_sample_poisson(self, rng);
    case DIST_GAMMA:
        return dist_sample_gamma(self, rng);
    case DIST_INVERSE_GAUSSIAN:
        return dist_sample_inverse_gaussian(self, rng);
    case DIST_PARETO:
        return p[DIST_P_SCALE] / pow(rng_next_open(rng), self->derived[0]);
    case DIST_ZIPF:
        return dist_zipf_sample(self, rng);
    case DIST_EMPIRICAL:
        return dist_sample_empirical(self, rng);
    case DIST_MIXTURE:
        return dist_mixture_sample(self, rng);
    default:
        return 0.0;
    }
}

/* One mixture draw: a component by weight, then that component's draw. */
static double dist_mixture_sample(const dist_t *self, rng_t *rng) {
    double target = rng_next_double(rng) * self->derived[0];
    size_t i = dist_cdf_index(self->cdf, self->n_values - 1, target);
    return dist_sample(&self->components[i], rng);
}

double dist_sample(const dist_t *self, rng_t *rng) {
    double x = dist_sample_raw(self, rng);
    if ((self->given & DIST_BIT(DIST_P_MIN)) && x < self->param[DIST_P_MIN])
        x = self->param[DIST_P_MIN];
    if ((self->given & DIST_BIT(DIST_P_MAX)) && x > self->param[DIST_P_MAX])
        x = self->param[DIST_P_MAX];
    return x;
}
