/* Shared by the dist_*.c files only (the dist_t value, its preparation, samplers, zipf, files and
 * specs); not part of the dist API, which is common/dist.h. */
#ifndef STAMPEDE_DIST_INTERNAL_H
#define STAMPEDE_DIST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dist.h"
#include "rng.h"

#define DIST_BIT(p) (1u << (p))
#define DIST_CLAMP (DIST_BIT(DIST_P_MIN) | DIST_BIT(DIST_P_MAX))

/* Below this mean Knuth's product method is cheap (mean + 1 uniforms); above it PTRS is O(1). */
#define DIST_POISSON_PTRS_FROM 10.0

/* Appends one value (and weight) to growing arrays; weights stay NULL until one is given. */
typedef struct dist_builder {
    double *values;
    double *weights;
    size_t n, cap;
} dist_builder_t;

/* Formats a message into err (nothing when err is NULL or errlen is 0). */
void dist_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A malloc'd copy of n doubles; NULL when src is NULL, n is 0 or memory is short. */
double *dist_dup_array(const double *src, size_t n);
/* The bits (DIST_BIT of dist_param_t) of the parameters the kind takes; 0 for an unknown kind. */
unsigned dist_kind_accepts(dist_kind_t kind);
/* Parses one number that must fill [s, end) apart from surrounding blanks; false if it does not. */
bool dist_parse_number(const char *s, const char *end, double *out);
/* Appends value (and weight when has_weight); 0, or -1 when memory is short. A weight must come
 * with the first value or never: the weights of values pushed before it are left undefined. */
int dist_builder_push(dist_builder_t *b, double value, bool has_weight, double weight);
/* Frees the builder's arrays and zeroes it. */
void dist_builder_free(dist_builder_t *b);

/* Checks n and exponent of a zipf and fills derived[] (rejection-inversion constants, mean). */
int dist_zipf_prepare(dist_t *self, char *err, size_t errlen);
/* One zipf draw in 1..n; self prepared by dist_zipf_prepare. */
double dist_zipf_sample(const dist_t *self, rng_t *rng);

/* Checks a mixture (components, weights) and fills its cumulative weights. */
int dist_mixture_prepare(dist_t *self, char *err, size_t errlen);
/* Clears and frees a mixture's n components (dist.c). */
void dist_components_free(struct dist *components, size_t n);

#endif
