/* The dist_t value: initialisation, copies, kind and parameter names, and parameters set one by
 * one (with the helpers the other dist_*.c files share). */
#include "dist.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "dist_internal.h"

static const char *const dist_kind_names[DIST__COUNT] = {
    "fixed", "uniform",          "normal", "lognormal", "exponential", "poisson",
    "gamma", "inverse_gaussian", "pareto", "zipf",      "empirical",   "mixture",
};

static const char *const dist_param_names[DIST_P__COUNT] = {
    "value", "min",   "max",   "mean",  "median", "stddev",   "sigma",
    "cv",    "shape", "scale", "alpha", "n",      "exponent",
};

static const unsigned dist_kind_accepted[DIST__COUNT] = {
    [DIST_FIXED] = DIST_BIT(DIST_P_VALUE),
    [DIST_UNIFORM] = DIST_CLAMP,
    [DIST_NORMAL] = DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_STDDEV) | DIST_CLAMP,
    [DIST_LOGNORMAL] =
        DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_MEDIAN) | DIST_BIT(DIST_P_SIGMA) | DIST_CLAMP,
    [DIST_EXPONENTIAL] = DIST_BIT(DIST_P_MEAN) | DIST_CLAMP,
    [DIST_POISSON] = DIST_BIT(DIST_P_MEAN) | DIST_CLAMP,
    [DIST_GAMMA] = DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_CV) | DIST_CLAMP,
    [DIST_INVERSE_GAUSSIAN] = DIST_BIT(DIST_P_MEAN) | DIST_BIT(DIST_P_SHAPE) | DIST_CLAMP,
    [DIST_PARETO] = DIST_BIT(DIST_P_SCALE) | DIST_BIT(DIST_P_ALPHA) | DIST_BIT(DIST_P_MAX),
    [DIST_ZIPF] = DIST_BIT(DIST_P_N) | DIST_BIT(DIST_P_EXPONENT),
    [DIST_EMPIRICAL] = 0,
    [DIST_MIXTURE] = DIST_CLAMP,
};

static const char *const dist_kind_param_lists[DIST__COUNT] = {
    [DIST_FIXED] = "value",
    [DIST_UNIFORM] = "min max",
    [DIST_NORMAL] = "mean stddev min max",
    [DIST_LOGNORMAL] = "mean median sigma min max",
    [DIST_EXPONENTIAL] = "mean min max",
    [DIST_POISSON] = "mean min max",
    [DIST_GAMMA] = "mean cv min max",
    [DIST_INVERSE_GAUSSIAN] = "mean shape min max",
    [DIST_PARETO] = "scale alpha max",
    [DIST_ZIPF] = "n exponent",
    [DIST_EMPIRICAL] = "values weights file",
    [DIST_MIXTURE] = "components min max",
};

void dist_error(char *err, size_t errlen, const char *fmt, ...) {
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void dist_init(dist_t *self) {
    memset(self, 0, sizeof *self);
    self->kind = DIST_FIXED;
}

void dist_fixed(dist_t *self, double value) {
    dist_init(self);
    self->param[DIST_P_VALUE] = value;
    self->given = DIST_BIT(DIST_P_VALUE);
}

void dist_components_free(dist_t *components, size_t n) {
    if (components == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        dist_clear(&components[i]);
    free(components);
}

/* Deep copies of the n components into *out; 0 or -1 (nothing allocated) on no memory. */
static int dist_components_copy(dist_t **out, const dist_t *src, size_t n) {
    *out = NULL;
    if (src == NULL || n == 0)
        return 0;
    dist_t *c = calloc(n, sizeof *c);
    if (c == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (dist_copy(&c[i], &src[i]) < 0) {
            dist_components_free(c, i);
            return -1;
        }
    *out = c;
    return 0;
}

void dist_clear(dist_t *self) {
    if (self->kind == DIST_MIXTURE)
        dist_components_free(self->components, self->n_values);
    free(self->values);
    free(self->weights);
    free(self->file);
    free(self->cdf);
    dist_init(self);
}

double *dist_dup_array(const double *src, size_t n) {
    if (src == NULL || n == 0)
        return NULL;
    double *copy = malloc(n * sizeof *copy);
    if (copy != NULL)
        memcpy(copy, src, n * sizeof *copy);
    return copy;
}

int dist_copy(dist_t *dst, const dist_t *src) {
    dist_t tmp = *src;
    tmp.values = dist_dup_array(src->values, src->n_values);
    tmp.weights = dist_dup_array(src->weights, src->n_values);
    tmp.cdf = dist_dup_array(src->cdf, src->n_values);
    tmp.file = src->file ? strdup(src->file) : NULL;
    tmp.components = NULL;
    if (src->kind == DIST_MIXTURE &&
        dist_components_copy(&tmp.components, src->components, src->n_values) < 0) {
        tmp.kind = DIST_FIXED; /* nothing of the components to free */
        dist_clear(&tmp);
        return -1;
    }
    if ((src->values && src->n_values && !tmp.values) ||
        (src->weights && src->n_values && !tmp.weights) ||
        (src->cdf && src->n_values && !tmp.cdf) || (src->file && !tmp.file)) {
        dist_clear(&tmp);
        return -1;
    }
    *dst = tmp;
    return 0;
}

/* The index of name among the n names, or -1. */
static int dist_name_index(const char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

int dist_kind_from_name(const char *name, dist_kind_t *out) {
    int k = dist_name_index(dist_kind_names, DIST__COUNT, name);
    if (k >= 0)
        *out = (dist_kind_t)k;
    return k < 0 ? -1 : 0;
}

const char *dist_kind_name(dist_kind_t kind) {
    return (unsigned)kind < DIST__COUNT ? dist_kind_names[kind] : "unknown";
}

int dist_param_from_name(const char *name, dist_param_t *out) {
    int p = dist_name_index(dist_param_names, DIST_P__COUNT, name);
    if (p >= 0)
        *out = (dist_param_t)p;
    return p < 0 ? -1 : 0;
}

const char *dist_param_name(dist_param_t param) {
    return (unsigned)param < DIST_P__COUNT ? dist_param_names[param] : "unknown";
}

const char *dist_kind_params(dist_kind_t kind) {
    return (unsigned)kind < DIST__COUNT ? dist_kind_param_lists[kind] : "";
}

unsigned dist_kind_accepts(dist_kind_t kind) {
    return (unsigned)kind < DIST__COUNT ? dist_kind_accepted[kind] : 0;
}

int dist_set(dist_t *self, dist_param_t param, double value, char *err, size_t errlen) {
    const char *kind = dist_kind_name(self->kind);
    if ((unsigned)param >= DIST_P__COUNT || !(dist_kind_accepts(self->kind) & DIST_BIT(param))) {
        dist_error(err, errlen, "%s does not take %s (it takes %s)", kind, dist_param_name(param),
                   dist_kind_params(self->kind));
        return -1;
    }
    if (!isfinite(value)) {
        dist_error(err, errlen, "%s needs a finite number for %s", kind, dist_param_name(param));
        return -1;
    }
    self->param[param] = value;
    self->given |= DIST_BIT(param);
    return 0;
}

int dist_set_values(dist_t *self, const double *values, const double *weights, size_t n, char *err,
                    size_t errlen) {
    double *v = dist_dup_array(values, n);
    double *w = dist_dup_array(weights, n);
    if ((n && !v) || (weights && n && !w)) {
        free(v);
        free(w);
        dist_error(err, errlen, "out of memory for %zu empirical values", n);
        return -1;
    }
    free(self->values);
    free(self->weights);
    free(self->file);
    free(self->cdf);
    self->kind = DIST_EMPIRICAL;
    self->values = v;
    self->weights = w;
    self->n_values = n;
    self->file = NULL;
    self->cdf = NULL;
    return 0;
}

int dist_set_weights(dist_t *self, const double *weights, size_t n, char *err, size_t errlen) {
    if (n != self->n_values) {
        dist_error(err, errlen, "empirical weights must match values (%zu weights for %zu values)",
                   n, self->n_values);
        return -1;
    }
    double *w = dist_dup_array(weights, n);
    if (n && !w) {
        dist_error(err, errlen, "out of memory for %zu empirical weights", n);
        return -1;
    }
    free(self->weights);
    free(self->cdf);
    self->weights = w;
    self->cdf = NULL;
    return 0;
}

bool dist_parse_number(const char *s, const char *end, double *out) {
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    if (s == end || (size_t)(end - s) >= 64)
        return false;
    char tmp[64];
    memcpy(tmp, s, (size_t)(end - s));
    tmp[end - s] = '\0';
    char *stop;
    errno = 0;
    double v = strtod(tmp, &stop);
    if (*stop != '\0' || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int dist_builder_push(dist_builder_t *b, double value, bool has_weight, double weight) {
    if (b->n == b->cap) {
        size_t need = b->cap ? b->n + 1 : 64;
        int rc = b->weights ? buffer_grow_pair(&b->values, sizeof *b->values, &b->weights,
                                               sizeof *b->weights, &b->cap, need)
                            : buffer_grow_array(&b->values, &b->cap, need, sizeof *b->values);
        if (rc < 0)
            return -1;
    }
    if (has_weight && b->weights == NULL) {
        b->weights = malloc(b->cap * sizeof *b->weights);
        if (b->weights == NULL)
            return -1;
    }
    b->values[b->n] = value;
    if (b->weights)
        b->weights[b->n] = weight;
    b->n++;
    return 0;
}

void dist_builder_free(dist_builder_t *b) {
    free(b->values);
    free(b->weights);
    memset(b, 0, sizeof *b);
}
