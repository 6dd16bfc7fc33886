/* The mixture distribution: weighted components, each itself a distribution (a spike of short
 * waits plus a Pareto tail, say). A draw picks a component by weight, then draws from it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dist_internal.h"

int dist_set_mixture(dist_t *self, dist_t *components, const double *weights, size_t n, char *err,
                     size_t errlen) {
    for (size_t i = 0; i < n; i++)
        if (!(weights[i] > 0.0) || !isfinite(weights[i])) {
            dist_error(err, errlen, "mixture component %zu needs a weight > 0, got %g", i + 1,
                       weights[i]);
            return -1;
        }
    double *w = dist_dup_array(weights, n);
    dist_t *c = n ? malloc(n * sizeof *c) : NULL;
    if (n && (!w || !c)) {
        free(w);
        free(c);
        dist_error(err, errlen, "out of memory for %zu mixture components", n);
        return -1;
    }
    dist_mixture_free(self->components, self->n_values);
    free(self->weights);
    for (size_t i = 0; i < n; i++) {
        c[i] = components[i];
        dist_init(&components[i]);
    }
    self->components = c;
    self->weights = w;
    self->n_values = n;
    return 0;
}

int dist_mixture_prepare(dist_t *self, char *err, size_t errlen) {
    if (self->n_values == 0 || self->components == NULL) {
        dist_error(err, errlen, "mixture needs components: [{weight: W, dist: KIND, ...}, ...]");
        return -1;
    }
    double *cdf = realloc(self->cdf, self->n_values * sizeof *cdf);
    if (cdf == NULL) {
        dist_error(err, errlen, "out of memory for %zu mixture components", self->n_values);
        return -1;
    }
    self->cdf = cdf;
    double total = 0.0;
    for (size_t i = 0; i < self->n_values; i++) {
        double w = self->weights ? self->weights[i] : 1.0;
        if (!(w > 0.0) || !isfinite(w)) {
            dist_error(err, errlen, "mixture component %zu needs a weight > 0, got %g", i + 1, w);
            return -1;
        }
        total += w;
        cdf[i] = total;
    }
    self->derived[0] = total;
    return 0;
}

double dist_mixture_sample(const dist_t *self, rng_t *rng) {
    double target = rng_next_double(rng) * self->derived[0];
    size_t i = dist_cdf_index(self->cdf, self->n_values - 1, target);
    return dist_sample(&self->components[i], rng);
}

double dist_mixture_mean(const dist_t *self) {
    double sum = 0.0;
    for (size_t i = 0; i < self->n_values; i++)
        sum += (self->weights ? self->weights[i] : 1.0) * dist_mean(&self->components[i]);
    return self->derived[0] > 0.0 ? sum / self->derived[0] : NAN;
}

int dist_mixture_copy(dist_t **out, const dist_t *src, size_t n) {
    *out = NULL;
    if (src == NULL || n == 0)
        return 0;
    dist_t *c = calloc(n, sizeof *c);
    if (c == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (dist_copy(&c[i], &src[i]) < 0) {
            dist_mixture_free(c, i);
            return -1;
        }
    *out = c;
    return 0;
}

void dist_mixture_free(dist_t *components, size_t n) {
    if (components == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        dist_clear(&components[i]);
    free(components);
}
