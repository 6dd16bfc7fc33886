/* Zipf over 1..n by rejection-inversion (Hoermann and Derflinger 1996): O(1) per draw for any n,
 * no table. h(x) = x^-s is the unnormalised density, H its integral, and derived[] holds
 * H(1.5) - 1, H(n + 0.5), the acceptance shift and the exact mean. */
#include <math.h>

#include "dist.h"
#include "dist_internal.h"

/* The zipf mean sums this many terms exactly and the rest by Euler-Maclaurin. */
#define DIST_ZIPF_EXACT_TERMS 1048576.0

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

int dist_zipf_prepare(dist_t *self, char *err, size_t errlen) {
    double n = self->param[DIST_P_N], s = self->param[DIST_P_EXPONENT];
    if (!(n >= 1.0) || !(s > 0.0)) {
        dist_error(err, errlen, "zipf needs n >= 1 and exponent > 0");
        return -1;
    }
    if (n != floor(n) || n > 9007199254740992.0) {
        dist_error(err, errlen, "zipf needs a whole number n <= 2^53, got %g", n);
        return -1;
    }
    self->derived[0] = dist_zipf_H(1.5, s) - 1.0;
    self->derived[1] = dist_zipf_H(n + 0.5, s);
    self->derived[2] = 2.0 - dist_zipf_H_inverse(dist_zipf_H(2.5, s) - dist_zipf_h(2.0, s), s);
    self->derived[3] = dist_power_sum(n, s - 1.0) / dist_power_sum(n, s);
    return 0;
}

double dist_zipf_sample(const dist_t *self, rng_t *rng) {
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
