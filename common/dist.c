#include "dist.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(p) (1u << (p))
#define CLAMP (BIT(DIST_P_MIN) | BIT(DIST_P_MAX))

/* Below this mean Knuth's product method is cheap (mean + 1 uniforms); above it PTRS is O(1). */
#define DIST_POISSON_PTRS_FROM 10.0
/* The zipf mean sums this many terms exactly and the rest by Euler-Maclaurin. */
#define DIST_ZIPF_EXACT_TERMS 1048576.0

static const char *const dist_kind_names[DIST__COUNT] = {
    "fixed", "uniform",          "normal", "lognormal", "exponential", "poisson",
    "gamma", "inverse_gaussian", "pareto", "zipf",      "empirical",
};

static const char *const dist_param_names[DIST_P__COUNT] = {
    "value", "min",   "max",   "mean",  "median", "stddev",   "sigma",
    "cv",    "shape", "scale", "alpha", "n",      "exponent",
};

static const unsigned dist_kind_accepts[DIST__COUNT] = {
    [DIST_FIXED] = BIT(DIST_P_VALUE),
    [DIST_UNIFORM] = CLAMP,
    [DIST_NORMAL] = BIT(DIST_P_MEAN) | BIT(DIST_P_STDDEV) | CLAMP,
    [DIST_LOGNORMAL] = BIT(DIST_P_MEAN) | BIT(DIST_P_MEDIAN) | BIT(DIST_P_SIGMA) | CLAMP,
    [DIST_EXPONENTIAL] = BIT(DIST_P_MEAN) | CLAMP,
    [DIST_POISSON] = BIT(DIST_P_MEAN) | CLAMP,
    [DIST_GAMMA] = BIT(DIST_P_MEAN) | BIT(DIST_P_CV) | CLAMP,
    [DIST_INVERSE_GAUSSIAN] = BIT(DIST_P_MEAN) | BIT(DIST_P_SHAPE) | CLAMP,
    [DIST_PARETO] = BIT(DIST_P_SCALE) | BIT(DIST_P_ALPHA) | BIT(DIST_P_MAX),
    [DIST_ZIPF] = BIT(DIST_P_N) | BIT(DIST_P_EXPONENT),
    [DIST_EMPIRICAL] = 0,
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
};

static void dist_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void dist_error(char *err, size_t errlen, const char *fmt, ...) {
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
    self->given = BIT(DIST_P_VALUE);
}

void dist_clear(dist_t *self) {
    free(self->values);
    free(self->weights);
    free(self->file);
    free(self->cdf);
    dist_init(self);
}

static double *dist_dup_array(const double *src, size_t n) {
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
    if ((src->values && src->n_values && !tmp.values) ||
        (src->weights && src->n_values && !tmp.weights) ||
        (src->cdf && src->n_values && !tmp.cdf) || (src->file && !tmp.file)) {
        dist_clear(&tmp);
        return -1;
    }
    *dst = tmp;
    return 0;
}

int dist_kind_from_name(const char *name, dist_kind_t *out) {
    for (int k = 0; k < DIST__COUNT; k++) {
        if (strcmp(name, dist_kind_names[k]) == 0) {
            *out = (dist_kind_t)k;
            return 0;
        }
    }
    return -1;
}

const char *dist_kind_name(dist_kind_t kind) {
    return (unsigned)kind < DIST__COUNT ? dist_kind_names[kind] : "unknown";
}

int dist_param_from_name(const char *name, dist_param_t *out) {
    for (int p = 0; p < DIST_P__COUNT; p++) {
        if (strcmp(name, dist_param_names[p]) == 0) {
            *out = (dist_param_t)p;
            return 0;
        }
    }
    return -1;
}

const char *dist_param_name(dist_param_t param) {
    return (unsigned)param < DIST_P__COUNT ? dist_param_names[param] : "unknown";
}

const char *dist_kind_params(dist_kind_t kind) {
    return (unsigned)kind < DIST__COUNT ? dist_kind_param_lists[kind] : "";
}

int dist_set(dist_t *self, dist_param_t param, double value, char *err, size_t errlen) {
    const char *kind = dist_kind_name(self->kind);
    if ((unsigned)param >= DIST_P__COUNT || !(dist_kind_accepts[self->kind] & BIT(param))) {
        dist_error(err, errlen, "%s does not take %s (it takes %s)", kind, dist_param_name(param),
                   dist_kind_params(self->kind));
        return -1;
    }
    if (!isfinite(value)) {
        dist_error(err, errlen, "%s needs a finite number for %s", kind, dist_param_name(param));
        return -1;
    }
    self->param[param] = value;
    self->given |= BIT(param);
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

/* Parses one number that must fill [s, end) apart from surrounding blanks. */
static bool dist_parse_number(const char *s, const char *end, double *out) {
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

/* Appends one value (and weight) to growing arrays; weights stay NULL until one is given. */
typedef struct dist_builder {
    double *values;
    double *weights;
    size_t n, cap;
} dist_builder_t;

static int dist_builder_push(dist_builder_t *b, double value, bool has_weight, double weight) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        double *v = realloc(b->values, cap * sizeof *v);
        if (v == NULL)
            return -1;
        b->values = v;
        if (b->weights) {
            double *w = realloc(b->weights, cap * sizeof *w);
            if (w == NULL)
                return -1;
            b->weights = w;
        }
        b->cap = cap;
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

static void dist_builder_free(dist_builder_t *b) {
    free(b->values);
    free(b->weights);
    memset(b, 0, sizeof *b);
}

/* Splits a line at blanks or commas into at most 3 fields; returns the field count. */
static int dist_split_fields(char *line, char **fields, int max) {
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n,", &save); tok;
         tok = strtok_r(NULL, " \t\r\n,", &save)) {
        if (n < max)
            fields[n] = tok;
        n++;
    }
    return n;
}

int dist_load_file(dist_t *self, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        dist_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    dist_builder_t b = {0};
    char *line = NULL;
    size_t linecap = 0;
    int lineno = 0, rc = 0;
    int weighted_line = 0, unweighted_line = 0;
    while (rc == 0 && getline(&line, &linecap, f) != -1) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *fields[2];
        int n = dist_split_fields(line, fields, 2);
        double value, weight = 1.0;
        if (n == 0)
            continue;
        if (n > 2) {
            dist_error(err, errlen, "%s:%d: expected \"value\" or \"value weight\", got %d fields",
                       path, lineno, n);
            rc = -1;
        } else if (!dist_parse_number(fields[0], fields[0] + strlen(fields[0]), &value)) {
            dist_error(err, errlen, "%s:%d: expected a number, got '%s'", path, lineno, fields[0]);
            rc = -1;
        } else if (n == 2 &&
                   !dist_parse_number(fields[1], fields[1] + strlen(fields[1]), &weight)) {
            dist_error(err, errlen, "%s:%d: expected a weight, got '%s'", path, lineno, fields[1]);
            rc = -1;
        } else if (n == 2 && weight < 0) {
            dist_error(err, errlen, "%s:%d: weight must be >= 0, got %g", path, lineno, weight);
            rc = -1;
        } else if ((n == 2 && unweighted_line) || (n == 1 && weighted_line)) {
            dist_error(err, errlen, "%s:%d: every line needs a weight once one has (line %d %s)",
                       path, lineno, n == 2 ? unweighted_line : weighted_line,
                       n == 2 ? "has none" : "has one");
            rc = -1;
        } else if (dist_builder_push(&b, value, n == 2, weight) != 0) {
            dist_error(err, errlen, "%s:%d: out of memory", path, lineno);
            rc = -1;
        } else if (n == 2 && !weighted_line) {
            weighted_line = lineno;
        } else if (n == 1 && !unweighted_line) {
            unweighted_line = lineno;
        }
    }
    if (rc == 0 && ferror(f)) {
        dist_error(err, errlen, "%s: read error: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    if (rc == 0 && b.n == 0) {
        dist_error(err, errlen, "%s: empirical needs at least one value, the file has none", path);
        rc = -1;
    }
    char *file = rc == 0 ? strdup(path) : NULL;
    if (rc == 0 && file == NULL) {
        dist_error(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    if (rc != 0) {
        dist_builder_free(&b);
        return -1;
    }
    dist_clear(self);
    self->kind = DIST_EMPIRICAL;
    self->values = b.values;
    self->weights = b.weights;
    self->n_values = b.n;
    self->file = file;
    return 0;
}

static double dist_zipf_h(double x, double s) {
    return exp(-s * log(x));
}

/* expm1(t)/t and log1p(t)/t, continuous at t = 0: the s = 1 case of the zipf integrals. */
static double dist_expm1_ratio(double t) {
    return fabs(t) > 1e-8 ? expm1(t) / t : 1.0 + t / 2.0;
}

static double dist_log1p_ratio(double t) {
    return fabs(t) > 1e-8 ? log1p(t) / t : 1.0 - t / 2.0;
}

/* H(x) = integral of h from 1 to x, shifted by a constant: (x^(1-s) - 1) / (1 - s), or log x. */
static double dist_zipf_H(double x, double s) {
    double lx = log(x);
    return dist_expm1_ratio((1.0 - s) * lx) * lx;
}

static double dist_zipf_H_inverse(double y, double s) {
    double t = y * (1.0 - s);
    if (t < -1.0)
        t = -1.0; /* rounding can push y past the end of the domain */
    return exp(dist_log1p_ratio(t) * y);
}

/* sum_{k=1}^{n} k^-p: exact up to DIST_ZIPF_EXACT_TERMS, Euler-Maclaurin for the tail. */
static double dist_power_sum(double n, double p) {
    double a = n < DIST_ZIPF_EXACT_TERMS ? n : DIST_ZIPF_EXACT_TERMS;
    double sum = 0.0;
    for (double k = a; k >= 1.0; k--) /* smallest terms first for accuracy */
        sum += pow(k, -p);
    if (n > a) {
        double integral = pow(a, 1.0 - p) * dist_expm1_ratio((1.0 - p) * log(n / a)) * log(n / a);
        double fa = pow(a, -p), fn = pow(n, -p);
        double da = -p * pow(a, -p - 1.0), dn = -p * pow(n, -p - 1.0);
        sum += integral + (fn - fa) / 2.0 + (dn - da) / 12.0;
    }
    return sum;
}

static int dist_prepare_zipf(dist_t *self, char *err, size_t errlen) {
    double n = self->param[DIST_P_N], s = self->param[DIST_P_EXPONENT];
    if (!(n >= 1.0) || !(s > 0.0)) {
        dist_error(err, errlen, "zipf needs n >= 1 and exponent > 0");
        return -1;
    }
    if (n != floor(n) || n > 9007199254740992.0) {
        dist_error(err, errlen, "zipf needs a whole number n <= 2^53, got %g", n);
        return -1;
    }
    /* Rejection-inversion (Hoermann and Derflinger 1996): O(1) per draw for any n, no table. */
    self->derived[0] = dist_zipf_H(1.5, s) - 1.0;
    self->derived[1] = dist_zipf_H(n + 0.5, s);
    self->derived[2] = 2.0 - dist_zipf_H_inverse(dist_zipf_H(2.5, s) - dist_zipf_h(2.0, s), s);
    self->derived[3] = dist_power_sum(n, s - 1.0) / dist_power_sum(n, s);
    return 0;
}

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
        if ((need & BIT(p)) && !(self->given & BIT(p))) {
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

static int dist_prepare_kind(dist_t *self, char *err, size_t errlen) {
    const double *p = self->param;
    double *d = self->derived;
    switch (self->kind) {
    case DIST_FIXED:
        return dist_require(self, BIT(DIST_P_VALUE), err, errlen);
    case DIST_UNIFORM:
        if ((self->given & CLAMP) != CLAMP) {
            dist_error(err, errlen, "uniform needs min and max");
            return -1;
        }
        return 0;
    case DIST_NORMAL:
        if (dist_require(self, BIT(DIST_P_MEAN) | BIT(DIST_P_STDDEV), err, errlen) != 0)
            return -1;
        if (!(p[DIST_P_STDDEV] >= 0.0)) {
            dist_error(err, errlen, "normal needs stddev >= 0");
            return -1;
        }
        return 0;
    case DIST_LOGNORMAL: {
        bool has_mean = self->given & BIT(DIST_P_MEAN),
             has_median = self->given & BIT(DIST_P_MEDIAN);
        if (has_mean && has_median) {
            dist_error(err, errlen, "lognormal takes mean or median, not both");
            return -1;
        }
        if (!has_mean && !has_median) {
            dist_error(err, errlen, "lognormal needs mean or median");
            return -1;
        }
        if (dist_require(self, BIT(DIST_P_SIGMA), err, errlen) != 0 ||
            dist_positive(self, DIST_P_SIGMA, err, errlen) != 0 ||
            dist_positive(self, has_mean ? DIST_P_MEAN : DIST_P_MEDIAN, err, errlen) != 0)
            return -1;
        double sigma = p[DIST_P_SIGMA];
        d[0] = has_mean ? log(p[DIST_P_MEAN]) - sigma * sigma / 2.0 : log(p[DIST_P_MEDIAN]);
        return 0;
    }
    case DIST_EXPONENTIAL:
        return dist_require(self, BIT(DIST_P_MEAN), err, errlen) ||
                       dist_positive(self, DIST_P_MEAN, err, errlen)
                   ? -1
                   : 0;
    case DIST_POISSON: {
        if (dist_require(self, BIT(DIST_P_MEAN), err, errlen) != 0 ||
            dist_positive(self, DIST_P_MEAN, err, errlen) != 0)
            return -1;
        double mean = p[DIST_P_MEAN];
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
    case DIST_GAMMA: {
        if (dist_require(self, BIT(DIST_P_MEAN) | BIT(DIST_P_CV), err, errlen) != 0 ||
            dist_positive(self, DIST_P_MEAN, err, errlen) != 0 ||
            dist_positive(self, DIST_P_CV, err, errlen) != 0)
            return -1;
        double cv = p[DIST_P_CV];
        double shape = 1.0 / (cv * cv);
        d[0] = shape;
        d[1] = p[DIST_P_MEAN] / shape;
        /* Marsaglia-Tsang needs shape >= 1; below it, draw shape + 1 and scale by U^(1/shape). */
        d[2] = (shape < 1.0 ? shape + 1.0 : shape) - 1.0 / 3.0;
        d[3] = 1.0 / sqrt(9.0 * d[2]);
        return 0;
    }
    case DIST_INVERSE_GAUSSIAN:
        if (dist_require(self, BIT(DIST_P_MEAN) | BIT(DIST_P_SHAPE), err, errlen) != 0 ||
            dist_positive(self, DIST_P_MEAN, err, errlen) != 0 ||
            dist_positive(self, DIST_P_SHAPE, err, errlen) != 0)
            return -1;
        return 0;
    case DIST_PARETO:
        if (dist_require(self, BIT(DIST_P_SCALE) | BIT(DIST_P_ALPHA), err, errlen) != 0)
            return -1;
        if (!(p[DIST_P_ALPHA] > 0.0) || !(p[DIST_P_SCALE] > 0.0)) {
            dist_error(err, errlen, "pareto needs alpha > 0 and scale > 0");
            return -1;
        }
        d[0] = 1.0 / p[DIST_P_ALPHA];
        return 0;
    case DIST_ZIPF:
        if (dist_require(self, BIT(DIST_P_N) | BIT(DIST_P_EXPONENT), err, errlen) != 0)
            return -1;
        return dist_prepare_zipf(self, err, errlen);
    case DIST_EMPIRICAL:
        return dist_prepare_empirical(self, err, errlen);
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
    unsigned stray = self->given & ~dist_kind_accepts[self->kind];
    for (int p = 0; p < DIST_P__COUNT; p++) {
        if (stray & BIT(p)) {
            dist_error(err, errlen, "%s does not take %s (it takes %s)", dist_kind_name(self->kind),
                       dist_param_name((dist_param_t)p), dist_kind_params(self->kind));
            return -1;
        }
    }
    if ((self->given & CLAMP) == CLAMP && !(self->param[DIST_P_MIN] <= self->param[DIST_P_MAX])) {
        dist_error(err, errlen, "%s needs min <= max", dist_kind_name(self->kind));
        return -1;
    }
    memset(self->derived, 0, sizeof self->derived);
    return dist_prepare_kind(self, err, errlen);
}

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

static double dist_sample_zipf(const dist_t *self, rng_t *rng) {
    double s = self->param[DIST_P_EXPONENT], n = self->param[DIST_P_N];
    double h_x1 = self->derived[0], h_n = self->derived[1], shift = self->derived[2];
    for (;;) {
        double u = h_n + rng_next_double(rng) * (h_x1 - h_n);
        double x = dist_zipf_H_inverse(u, s);
        double k = floor(x + 0.5);
        if (k < 1.0)
            k = 1.0;
        else if (k > n)
            k = n;
        if (k - x <= shift || u >= dist_zipf_H(k + 0.5, s) - dist_zipf_h(k, s))
            return k;
    }
}

static double dist_sample_empirical(const dist_t *self, rng_t *rng) {
    if (self->cdf == NULL)
        return self->values[rng_next_below(rng, self->n_values)];
    double target = rng_next_double(rng) * self->derived[1];
    size_t lo = 0, hi = (size_t)self->derived[2]; /* the answer is in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (self->cdf[mid] > target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return self->values[lo];
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
        return dist_sample_zipf(self, rng);
    case DIST_EMPIRICAL:
        return dist_sample_empirical(self, rng);
    default:
        return 0.0;
    }
}

double dist_sample(const dist_t *self, rng_t *rng) {
    double x = dist_sample_raw(self, rng);
    if ((self->given & BIT(DIST_P_MIN)) && x < self->param[DIST_P_MIN])
        x = self->param[DIST_P_MIN];
    if ((self->given & BIT(DIST_P_MAX)) && x > self->param[DIST_P_MAX])
        x = self->param[DIST_P_MAX];
    return x;
}

double dist_mean(const dist_t *self) {
    const double *p = self->param;
    switch (self->kind) {
    case DIST_FIXED:
        return p[DIST_P_VALUE];
    case DIST_UNIFORM:
        return (p[DIST_P_MIN] + p[DIST_P_MAX]) / 2.0;
    case DIST_LOGNORMAL:
        if (self->given & BIT(DIST_P_MEDIAN))
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
    default:
        return NAN;
    }
}

/* A list of numbers separated by ';' into a malloc'd array. */
static int dist_parse_list(const char *s, const char *end, double **out, size_t *n_out,
                           const char *what, char *err, size_t errlen) {
    dist_builder_t b = {0};
    while (s <= end) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        const char *stop = semi ? semi : end;
        double v;
        if (!dist_parse_number(s, stop, &v)) {
            dist_error(err, errlen, "empirical %s: expected a number, got '%.*s'", what,
                       (int)(stop - s), s);
            dist_builder_free(&b);
            return -1;
        }
        if (dist_builder_push(&b, v, false, 0.0) != 0) {
            dist_error(err, errlen, "out of memory for empirical %s", what);
            dist_builder_free(&b);
            return -1;
        }
        s = stop + 1;
    }
    free(*out);
    *out = b.values;
    *n_out = b.n;
    return 0;
}

static const char *dist_trim(const char **end, const char *s) {
    while (s < *end && isspace((unsigned char)*s))
        s++;
    while (*end > s && isspace((unsigned char)(*end)[-1]))
        (*end)--;
    return s;
}

static bool dist_token_is(const char *s, const char *end, const char *word) {
    size_t n = strlen(word);
    return (size_t)(end - s) == n && memcmp(s, word, n) == 0;
}

/* The parts of an empirical spec, gathered before they are applied (weights may come first). */
typedef struct dist_spec_lists {
    double *values, *weights;
    size_t n_values, n_weights;
    char *file;
} dist_spec_lists_t;

static int dist_parse_param(dist_t *out, const char *s, const char *end, dist_spec_lists_t *lists,
                            char *err, size_t errlen) {
    const char *kind = dist_kind_name(out->kind);
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (eq == NULL) {
        const char *e = end, *t = dist_trim(&e, s);
        dist_error(err, errlen, "%s: expected name=value, got '%.*s'", kind, (int)(e - t), t);
        return -1;
    }
    const char *name_end = eq, *name = dist_trim(&name_end, s);
    bool list = dist_token_is(name, name_end, "values") || dist_token_is(name, name_end, "weights");
    if (list || dist_token_is(name, name_end, "file")) {
        if (out->kind != DIST_EMPIRICAL) {
            dist_error(err, errlen, "%s does not take %.*s (it takes %s)", kind,
                       (int)(name_end - name), name, dist_kind_params(out->kind));
            return -1;
        }
        if (name[0] == 'v')
            return dist_parse_list(eq + 1, end, &lists->values, &lists->n_values, "values", err,
                                   errlen);
        if (name[0] == 'w')
            return dist_parse_list(eq + 1, end, &lists->weights, &lists->n_weights, "weights", err,
                                   errlen);
        const char *path_end = end, *path = dist_trim(&path_end, eq + 1);
        free(lists->file);
        lists->file = strndup(path, (size_t)(path_end - path));
        if (lists->file == NULL || lists->file[0] == '\0') {
            dist_error(err, errlen, "empirical: file needs a path");
            return -1;
        }
        return 0;
    }
    char pname[32];
    snprintf(pname, sizeof pname, "%.*s", (int)(name_end - name), name);
    dist_param_t param;
    if ((size_t)(name_end - name) >= sizeof pname || dist_param_from_name(pname, &param) != 0) {
        dist_error(err, errlen, "%s has no parameter '%.*s' (it takes %s)", kind,
                   (int)(name_end - name), name, dist_kind_params(out->kind));
        return -1;
    }
    if (out->given & BIT(param)) {
        dist_error(err, errlen, "%s: %s given twice", kind, pname);
        return -1;
    }
    double value;
    if (!dist_parse_number(eq + 1, end, &value)) {
        const char *e = end, *t = dist_trim(&e, eq + 1);
        dist_error(err, errlen, "%s: %s needs a number, got '%.*s'", kind, pname, (int)(e - t), t);
        return -1;
    }
    return dist_set(out, param, value, err, errlen);
}

static int dist_apply_lists(dist_t *out, dist_spec_lists_t *lists, char *err, size_t errlen) {
    if (lists->file && (lists->values || lists->weights)) {
        dist_error(err, errlen, "empirical takes values or file, not both");
        return -1;
    }
    if (lists->file)
        return dist_load_file(out, lists->file, err, errlen);
    if (lists->weights && !lists->values) {
        dist_error(err, errlen, "empirical weights need values");
        return -1;
    }
    if (dist_set_values(out, lists->values, NULL, lists->n_values, err, errlen) != 0)
        return -1;
    if (lists->weights)
        return dist_set_weights(out, lists->weights, lists->n_weights, err, errlen);
    return 0;
}

static int dist_parse_params(dist_t *out, const char *s, const char *end, char *err,
                             size_t errlen) {
    dist_spec_lists_t lists = {0};
    int rc = 0;
    while (rc == 0 && s < end) {
        const char *e = end, *t = dist_trim(&e, s);
        bool is_file =
            (size_t)(e - t) > 4 && strncmp(t, "file", 4) == 0 && *dist_trim(&e, t + 4) == '=';
        /* A path may hold commas, so file= takes the rest of the spec. */
        const char *comma = is_file ? NULL : memchr(s, ',', (size_t)(end - s));
        const char *stop = comma ? comma : end;
        rc = dist_parse_param(out, s, stop, &lists, err, errlen);
        s = stop + 1;
    }
    if (rc == 0 && out->kind == DIST_EMPIRICAL)
        rc = dist_apply_lists(out, &lists, err, errlen);
    free(lists.values);
    free(lists.weights);
    free(lists.file);
    return rc;
}

static void dist_known_kinds(char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < DIST__COUNT && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? " " : "", dist_kind_names[k]);
}

int dist_parse_spec(const char *spec, dist_t *out, char *err, size_t errlen) {
    dist_init(out);
    const char *end = spec + strlen(spec), *s = dist_trim(&end, spec);
    if (s == end) {
        dist_error(err, errlen, "empty distribution (expected a number or kind:name=value,...)");
        return -1;
    }
    const char *colon = memchr(s, ':', (size_t)(end - s));
    const char *kind_end = colon ? colon : end;
    double value;
    if (!colon && dist_parse_number(s, end, &value)) {
        dist_fixed(out, value);
        return 0;
    }
    const char *kind_start = dist_trim(&kind_end, s);
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(kind_end - kind_start), kind_start);
    dist_kind_t kind;
    if ((size_t)(kind_end - kind_start) >= sizeof name || dist_kind_from_name(name, &kind) != 0) {
        char known[160];
        dist_known_kinds(known, sizeof known);
        dist_error(err, errlen, "'%.*s' is neither a number nor a distribution (known: %s)",
                   (int)(kind_end - kind_start), kind_start, known);
        return -1;
    }
    out->kind = kind;
    if ((colon && dist_parse_params(out, colon + 1, end, err, errlen) != 0) ||
        dist_prepare(out, err, errlen) != 0) {
        dist_clear(out);
        return -1;
    }
    return 0;
}

/* The shortest decimal that reads back to exactly v. */
static int dist_format_number(char *buf, size_t len, double v) {
    if (v == trunc(v) && fabs(v) < 1e15)
        return snprintf(buf, len, "%.0f", v); /* "200", never "2e+02" */
    int n = 0;
    for (int precision = 1; precision <= 17; precision++) {
        n = snprintf(buf, len, "%.*g", precision, v);
        if (n < 0 || (size_t)n >= len || strtod(buf, NULL) == v)
            break;
    }
    return n;
}

typedef struct dist_out {
    char *buf;
    size_t len, used;
    bool overflow;
} dist_out_t;

static void dist_out_str(dist_out_t *o, const char *s) {
    size_t n = strlen(s);
    if (o->overflow || o->used + n >= o->len) {
        o->overflow = true;
        return;
    }
    memcpy(o->buf + o->used, s, n + 1);
    o->used += n;
}

static void dist_out_number(dist_out_t *o, double v) {
    char num[40];
    dist_format_number(num, sizeof num, v);
    dist_out_str(o, num);
}

static void dist_out_list(dist_out_t *o, const double *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i)
            dist_out_str(o, ";");
        dist_out_number(o, v[i]);
    }
}

int dist_format_spec(const dist_t *self, char *buf, size_t len) {
    dist_out_t o = {buf, len, 0, len == 0};
    if (len)
        buf[0] = '\0';
    if (self->kind == DIST_FIXED) {
        dist_out_number(&o, self->param[DIST_P_VALUE]);
    } else if (self->kind == DIST_EMPIRICAL && self->file) {
        dist_out_str(&o, "empirical:file=");
        dist_out_str(&o, self->file);
    } else if (self->kind == DIST_EMPIRICAL) {
        dist_out_str(&o, "empirical:values=");
        dist_out_list(&o, self->values, self->n_values);
        if (self->weights) {
            dist_out_str(&o, ",weights=");
            dist_out_list(&o, self->weights, self->n_values);
        }
    } else {
        dist_out_str(&o, dist_kind_name(self->kind));
        const char *sep = ":";
        /* The shape parameters first, then the clamps: "normal:mean=1,stddev=2,min=0". */
        static const dist_param_t order[DIST_P__COUNT] = {
            DIST_P_VALUE,    DIST_P_MEAN,  DIST_P_MEDIAN, DIST_P_STDDEV, DIST_P_SIGMA,
            DIST_P_CV,       DIST_P_SHAPE, DIST_P_SCALE,  DIST_P_ALPHA,  DIST_P_N,
            DIST_P_EXPONENT, DIST_P_MIN,   DIST_P_MAX,
        };
        for (int i = 0; i < DIST_P__COUNT; i++) {
            dist_param_t p = order[i];
            if (!(self->given & BIT(p)))
                continue;
            dist_out_str(&o, sep);
            dist_out_str(&o, dist_param_names[p]);
            dist_out_str(&o, "=");
            dist_out_number(&o, self->param[p]);
            sep = ",";
        }
    }
    return o.overflow ? -1 : 0;
}
