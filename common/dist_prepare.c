/* dist_prepare: a distribution's parameters checked once, and the constants its sampler needs. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dist_internal.h"

static int dist_prepare_empirical(dist_t *self, char *err, size_t errlen) {
    if (self->n_values == 0 || self->values == NULL) {
        dist_error(err, errlen, "empirical needs at least one value");
        return -1;
    }
    for (size_t i = 0; i < self->n_values; i++) {
        if (!isfinite(self->values[i])) {
            dist_error(err, errlen, "empirical value %zu is not a finite number", i + 1);
            return -1;
        }
    }
    free(self->cdf);
    self->cdf = NULL;
    double total = 0.0, weighted = 0.0;
    size_t last_positive = 0;
    if (self->weights) {
        double *cdf = malloc(self->n_values * sizeof *cdf);
        if (cdf == NULL) {
            dist_error(err, errlen, "out of memory for %zu empirical weights", self->n_values);
            return -1;
        }
        for (size_t i = 0; i < self->n_values; i++) {
            double w = self->weights[i];
            if (!(w >= 0.0) || !isfinite(w)) {
                free(cdf);
                dist_error(err, errlen, "empirical weights must be >= 0 (weight %zu is %g)", i + 1,
                           w);
                return -1;
            }
            total += w;
            weighted += w * self->values[i];
            cdf[i] = total;
            if (w > 0.0)
                last_positive = i;
        }
        if (!(total > 0.0)) {
            free(cdf);
            dist_error(err, errlen, "empirical weights must not all be zero");
            return -1;
        }
        self->cdf = cdf;
    } else {
        for (size_t i = 0; i < self->n_values; i++)
            weighted += self->values[i];
        total = (double)self->n_values;
    }
    self->derived[0] = weighted / total;
    self->derived[1] = total;
    self->derived[2] = (double)last_positive;
    return 0;
}

/* Checks that every parameter in `need` is given; names the first one missing. */
static int dist_require(const dist_t *self, unsigned need, char *err, size_t errlen) {
    for (int p = 0; p < DIST_P__COUNT; p++) {
        if ((need & DIST_BIT(p)) && !(self->given & DIST_BIT(p))) {
            dist_error(err, errlen, "%s needs %s", dist_kind_name(self->kind),
                       dist_param_name((dist_param_t)p));
            return -1;
        }
    }
    return 0;
}

/* A strictly positive parameter; the message reads "gamma needs cv > 0". */
static int dist_positive(const dist_t *self, dist_param_t p, char *err, size_t errlen) {
    if (self->param[p] > 0.0)
        return 0;
    dist_error(err, errlen, "%s needs %s > 0", dist_kind_name(self->kind), dist_param_name(p));
    return -1;
}

static int dist_prepare_lognormal(dist_t *self, char *err, size_t errlen) {
    const double *p = self->param;
    bool has_mean = self->given & DIST_BIT(DIST_P_MEAN),
         has_median = self->given & DIST_BIT(DIST_P_MEDIAN);
    if (has_mean && has_median) {
        dist_error(err, errlen, "lognormal takes mean or median, not both");
        return -1;
    }
    if (!has_mean && !has_median) {
        dist_error(err, errlen, "lognormal needs mean or median");
        return -1;
    }
    if (dist_require(self, DIST_BIT(DIST_P_SIGMA), err, errlen) != 0 ||
        dist_positive(self, DIST_P_SIGMA, err, errlen) != 0 ||
        dist_positive(self, has_mean ? DIST_P_MEAN : DIST_P_MEDIAN, err, errlen) != 0)
        return -1;
    double sigma = p[DIST_P_SIGMA];
    self->derived[0] = has_mean ? log(p[DIST_P_MEAN]) - sigma * sigma / 2.0 : log(p[DIST_P_MEDIAN]);
    return 0;
}

static int dist_prepare_poisson(dist_t *self, char *err, size_t errlen) {
    double *d = self->derived;
    if (dist_require(self, DIST_BIT(DIST_P_MEAN), err, errlen) != 0 ||
        dist_positive(self, DIST_P_MEAN, err, errlen) != 0)
        return -1;
    double mean = self->param[DIST_P_MEAN];
    if (mean < DIST_POISSON_PTRS_FROM) {
        d[0] = exp(-mean);
    } else { /* PTRS constants (Hoermann 1993, "The transformed rejection method...") */
        d[0] = 0.931 + 2.53 * sqrt(mean);      /* b */
        d[1] = -0.059 + 0.02483 * d[0];        /* a */
        d[2] = 1.1239 + 1.1328 / (d[0] - 3.4); /* 1 / alpha */
        d[3] = 0.9277 - 3.6224 / (d[0] - 2.0); /* v_r */
    }
    return 0;
}

static int dist_prepare_gamma(dist_t *self, char *err, size_t errlen) {
    double *d = self->derived;
    if (dist_require(self, DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_CV), err, errlen) != 0 ||
        dist_positive(self, DIST_P_MEAN, err, errlen) != 0 ||
        dist_positive(self, DIST_P_CV, err, errlen) != 0)
        return -1;
    double cv = self->param[DIST_P_CV];
    double shape = 1.0 / (cv * cv);
    d[0] = shape;
    d[1] = self->param[DIST_P_MEAN] / shape;
    /* Marsaglia-Tsang needs shape >= 1; below it, draw shape + 1 and scale by U^(1/shape). */
    d[2] = (shape < 1.0 ? shape + 1.0 : shape) - 1.0 / 3.0;
    d[3] = 1.0 / sqrt(9.0 * d[2]);
    return 0;
}

static int dist_prepare_kind(dist_t *self, char *err, size_t errlen) {
    const double *p = self->param;
    switch (self->kind) {
    case DIST_FIXED:
        return dist_require(self, DIST_BIT(DIST_P_VALUE), err, errlen);
    case DIST_UNIFORM:
        if ((self->given & DIST_CLAMP) != DIST_CLAMP) {
            dist_error(err, errlen, "uniform needs min and max");
            return -1;
        }
        return 0;
    case DIST_NORMAL:
        if (dist_require(self, DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_STDDEV), err, errlen) != 0)
            return -1;
        if (!(p[DIST_P_STDDEV] >= 0.0)) {
            dist_error(err, errlen, "normal needs stddev >= 0");
            return -1;
        }
        return 0;
    case DIST_LOGNORMAL:
        return dist_prepare_lognormal(self, err, errlen);
    case DIST_EXPONENTIAL:
        return dist_require(self, DIST_BIT(DIST_P_MEAN), err, errlen) ||
                       dist_positive(self, DIST_P_MEAN, err, errlen)
                   ? -1
                   : 0;
    case DIST_POISSON:
        return dist_prepare_poisson(self, err, errlen);
    case DIST_GAMMA:
        return dist_prepare_gamma(self, err, errlen);
    case DIST_INVERSE_GAUSSIAN:
        if (dist_require(self, DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_SHAPE), err, errlen) != 0 ||
            dist_positive(self, DIST_P_MEAN, err, errlen) != 0 ||
            dist_positive(self, DIST_P_SHAPE, err, errlen) != 0)
            return -1;
        return 0;
    case DIST_PARETO:
        if (dist_require(self, DIST_BIT(DIST_P_SCALE) | DIST_BIT(DIST_P_ALPHA), err, errlen) != 0)
            return -1;
        if (!(p[DIST_P_ALPHA] > 0.0) || !(p[DIST_P_SCALE] > 0.0)) {
            dist_error(err, errlen, "pareto needs alpha > 0 and scale > 0");
            return -1;
        }
        self->derived[0] = 1.0 / p[DIST_P_ALPHA];
        return 0;
    case DIST_ZIPF:
        if (dist_require(self, DIST_BIT(DIST_P_N) | DIST_BIT(DIST_P_EXPONENT), err, errlen) != 0)
            return -1;
        return dist_zipf_prepare(self, err, errlen);
    case DIST_EMPIRICAL:
        return dist_prepare_empirical(self, err, errlen);
    case DIST_MIXTURE:
        return dist_mixture_prepare(self, err, errlen);
    default:
        dist_error(err, errlen, "unknown distribution kind %d", (int)self->kind);
        return -1;
    }
}

int dist_prepare(dist_t *self, char *err, size_t errlen) {
    if ((unsigned)self->kind >= DIST__COUNT) {
        dist_error(err, errlen, "unknown distribution kind %d", (int)self->kind);
        return -1;
    }
    unsigned stray = self->given & ~dist_kind_accepts(self->kind);
    for (int p = 0; p < DIST_P__COUNT; p++) {
        if (stray & DIST_BIT(p)) {
            dist_error(err, errlen, "%s does not take %s (it takes %s)", dist_kind_name(self->kind),
                       dist_param_name((dist_param_t)p), dist_kind_params(self->kind));
            return -1;
        }
    }
    if ((self->given & DIST_CLAMP) == DIST_CLAMP &&
        !(self->param[DIST_P_MIN] <= self->param[DIST_P_MAX])) {
        dist_error(err, errlen, "%s needs min <= max", dist_kind_name(self->kind));
        return -1;
    }
    memset(self->derived, 0, sizeof self->derived);
    return dist_prepare_kind(self, err, errlen);
}

/* The weighted mean of the components. */
static double dist_mixture_mean(const dist_t *self) {
    double sum = 0.0;
    for (size_t i = 0; i < self->n_values; i++)
        sum += (self->weights ? self->weights[i] : 1.0) * dist_mean(&self->components[i]);
    return self->derived[0] > 0.0 ? sum / self->derived[0] : NAN;
}

double dist_mean(const dist_t *self) {
    const double *p = self->param;
    switch (self->kind) {
    case DIST_FIXED:
        return p[DIST_P_VALUE];
    case DIST_UNIFORM:
        return (p[DIST_P_MIN] + p[DIST_P_MAX]) / 2.0;
    case DIST_LOGNORMAL:
        if (self->given & DIST_BIT(DIST_P_MEDIAN))
            return p[DIST_P_MEDIAN] * exp(p[DIST_P_SIGMA] * p[DIST_P_SIGMA] / 2.0);
        return p[DIST_P_MEAN];
    case DIST_NORMAL:
    case DIST_EXPONENTIAL:
    case DIST_POISSON:
    case DIST_GAMMA:
    case DIST_INVERSE_GAUSSIAN:
        return p[DIST_P_MEAN];
    case DIST_PARETO:
        return p[DIST_P_ALPHA] > 1.0 ? p[DIST_P_ALPHA] * p[DIST_P_SCALE] / (p[DIST_P_ALPHA] - 1.0)
                                     : INFINITY;
    case DIST_ZIPF:
        return self->derived[3];
    case DIST_EMPIRICAL:
        return self->derived[0];
    case DIST_MIXTURE:
        return dist_mixture_mean(self);
    default:
        return NAN;
    }
}
