/* The mixture distribution: weighted components, each itself a distribution (a spike of short
 * waits plus a Pareto tail, say). A draw picks a component by weight, then draws from it. Setting
 * and checking one are here; copying, freeing, the mean and a draw recurse into the components, so
 * each lives beside the operation it is a case of (dist.c, dist_prepare.c, dist_sample.c) and no
 * two of these files call each other. */
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
    dist_components_free(self->components, self->n_values);
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
