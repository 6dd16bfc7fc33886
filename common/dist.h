/* Named probability distributions for every random quantity of a workload. A dist_t is filled
 * parameter by parameter (from YAML by common/config, or from a "kind:k=v,..." spec on a command
 * line), validated once by dist_prepare, then sampled with a counter-based rng_t.
 *
 * dist.c holds the value, its names and parameters; dist_prepare.c the validation and derived
 * constants; dist_sample.c and dist_zipf.c the samplers; dist_file.c and dist_spec.c the file and
 * command-line forms. */
#ifndef STAMPEDE_DIST_H
#define STAMPEDE_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

typedef enum dist_kind {
    DIST_FIXED,            /* value */
    DIST_UNIFORM,          /* min, max */
    DIST_NORMAL,           /* mean, stddev; optional min/max clamp */
    DIST_LOGNORMAL,        /* (mean | median), sigma; optional min/max clamp */
    DIST_EXPONENTIAL,      /* mean; optional min/max clamp */
    DIST_POISSON,          /* mean; optional min/max clamp */
    DIST_GAMMA,            /* mean, cv; optional min/max clamp */
    DIST_INVERSE_GAUSSIAN, /* mean, shape; optional min/max clamp */
    DIST_PARETO,           /* scale (x_m), alpha; optional max clamp */
    DIST_ZIPF,             /* n, exponent: integers 1..n with P(k) ∝ k^-exponent */
    DIST_EMPIRICAL,        /* values (+ optional weights), or file (one value per line) */
    DIST_MIXTURE,          /* weighted components (other distributions); optional min/max clamp */
    DIST__COUNT
} dist_kind_t;

/* Parameter names; the bit (1u << DIST_P_x) marks a parameter as given in dist_t.given. */
typedef enum dist_param {
    DIST_P_VALUE,
    DIST_P_MIN,
    DIST_P_MAX,
    DIST_P_MEAN,
    DIST_P_MEDIAN,
    DIST_P_STDDEV,
    DIST_P_SIGMA,
    DIST_P_CV,
    DIST_P_SHAPE,
    DIST_P_SCALE,
    DIST_P_ALPHA,
    DIST_P_N,
    DIST_P_EXPONENT,
    DIST_P__COUNT
} dist_param_t;

typedef struct dist {
    dist_kind_t kind;
    unsigned given;              /* bitmask of (1u << dist_param_t) */
    double param[DIST_P__COUNT]; /* indexed by dist_param_t */
    double *values;              /* empirical: owned, freed by dist_clear */
    double *weights;             /* empirical: optional, owned; NULL = equal weights */
    size_t n_values;
    char *file;              /* empirical: source file if any, owned */
    struct dist *components; /* mixture: n_values prepared components, owned; weights[] theirs */
    /* Filled by dist_prepare: derived constants and the empirical cumulative table. */
    double derived[4];
    double *cdf; /* owned */
} dist_t;

/* Zeroes *self as a fixed 0 distribution. */
void dist_init(dist_t *self);
/* A fixed distribution of the given value, already prepared. */
void dist_fixed(dist_t *self, double value);
/* Frees what *self owns and re-initialises it. */
void dist_clear(dist_t *self);
/* Deep copy (prepared state included); 0 or -1 on allocation failure. */
int dist_copy(dist_t *dst, const dist_t *src);

/* "lognormal" -> DIST_LOGNORMAL; 0 ok, -1 unknown. */
int dist_kind_from_name(const char *name, dist_kind_t *out);
/* DIST_LOGNORMAL -> "lognormal"; "unknown" for a kind out of range. */
const char *dist_kind_name(dist_kind_t kind);
/* "mean" -> DIST_P_MEAN; 0 ok, -1 unknown. */
int dist_param_from_name(const char *name, dist_param_t *out);
/* DIST_P_MEAN -> "mean"; "unknown" for a parameter out of range. */
const char *dist_param_name(dist_param_t param);
/* Space-separated parameter names the kind accepts (for error messages and did-you-mean). */
const char *dist_kind_params(dist_kind_t kind);
/* Sets a parameter; -1 with a message in err when the kind does not take it. */
int dist_set(dist_t *self, dist_param_t param, double value, char *err, size_t errlen);
/* Empirical values; copies the arrays. weights may be NULL. */
int dist_set_values(dist_t *self, const double *values, const double *weights, size_t n, char *err,
                    size_t errlen);
/* Empirical weights for the values already set; -1 ("empirical weights must match values ...")
 * when n differs from the number of values. Copies the array. */
int dist_set_weights(dist_t *self, const double *weights, size_t n, char *err, size_t errlen);
/* Mixture components: takes the n dists (prepared; *components is moved in, each left zeroed)
 * and copies their n weights (> 0, finite). -1 with a message naming the component on a bad
 * weight or no memory (then the components are still the caller's). */
int dist_set_mixture(dist_t *self, dist_t *components, const double *weights, size_t n, char *err,
                     size_t errlen);
/* Empirical values from a file, one number (optionally "value weight") per line; '#' starts a
 * comment, blank lines are skipped. Errors name "path:line". */
int dist_load_file(dist_t *self, const char *path, char *err, size_t errlen);

/* Validates parameters (missing, out of range, contradictory) and computes derived constants.
 * 0 ok; -1 with a human message naming the parameter, e.g. "lognormal needs sigma > 0". */
int dist_prepare(dist_t *self, char *err, size_t errlen);
/* One draw; deterministic in (self, rng state). self must be prepared. */
double dist_sample(const dist_t *self, rng_t *rng);
/* The distribution's mean after clamping is ignored (for planning and tests). */
double dist_mean(const dist_t *self);

/* Parses a command-line spec into *out (initialised here); the result is prepared.
 *   SPEC  := NUMBER                       a fixed value: "200"
 *          | KIND ":" PARAM ("," PARAM)*  "uniform:min=10,max=20", "lognormal:mean=200,sigma=0.5"
 *   PARAM := NAME "=" NUMBER              names as listed by dist_kind_params()
 *          | "values=" LIST               empirical: "empirical:values=1;2;3"
 *          | "weights=" LIST              empirical, one per value: "...,weights=1;1;2"
 *          | "file=" PATH                 empirical: the rest of the spec is the path
 *   LIST  := NUMBER (";" NUMBER)*
 * Spaces around names, numbers and separators are ignored. 0 ok; -1 with a message in err. */
int dist_parse_spec(const char *spec, dist_t *out, char *err, size_t errlen);

#endif
