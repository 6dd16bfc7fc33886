#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "message_case.h"
#include "temp_file.h"
#include "unit_main.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"

#define N_SAMPLES 200000

static void parse_ok(const char *spec, dist_t *d) {
    char err[256] = "";
    int rc = dist_parse_spec(spec, d, err, sizeof err);
    if (rc != 0)
        fail_msg("%s: %s", spec, err);
}

typedef struct moments {
    double mean, var, min, max;
} moments_t;

static moments_t sample_moments(const dist_t *d, uint64_t seed, int n) {
    rng_t rng;
    double sum = 0.0, sum_sq = 0.0, shift = NAN;
    moments_t m = {0, 0, INFINITY, -INFINITY};
    for (int i = 0; i < n; i++) {
        /* Every sample from its own coordinate, the way workloads draw. */
        rng_init(&rng, seed, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        double x = dist_sample(d, &rng);
        if (isnan(shift))
            shift = x; /* shifted sums keep the variance exact for large means */
        sum += x - shift;
        sum_sq += (x - shift) * (x - shift);
        m.min = fmin(m.min, x);
        m.max = fmax(m.max, x);
    }
    double mean_shifted = sum / n;
    m.mean = mean_shifted + shift;
    m.var = (sum_sq - n * mean_shifted * mean_shifted) / (n - 1);
    return m;
}

/* Sample mean within 5 standard errors (sd / sqrt(n)) and sample variance within 5 standard
 * errors (var * sqrt((excess kurtosis + 2) / n)) of the analytic values: a correct sampler fails
 * with probability ~1e-6, a wrong mean or shape fails at once. */
static void assert_moments(const char *spec, double mean, double var, double excess_kurtosis) {
    dist_t d;
    parse_ok(spec, &d);
    moments_t m = sample_moments(&d, 2024, N_SAMPLES);
    double se_mean = sqrt(var / N_SAMPLES);
    double se_var = var * sqrt((excess_kurtosis + 2.0) / N_SAMPLES);
    if (fabs(m.mean - mean) > 5.0 * se_mean + 1e-12)
        fail_msg("%s: mean %.6g, expected %.6g +- %.3g", spec, m.mean, mean, 5.0 * se_mean);
    if (fabs(m.var - var) > 5.0 * se_var + 1e-12)
        fail_msg("%s: variance %.6g, expected %.6g +- %.3g", spec, m.var, var, 5.0 * se_var);
    if (fabs(dist_mean(&d) - mean) > 1e-9 * fabs(mean))
        fail_msg("%s: dist_mean %.12g, expected %.12g", spec, dist_mean(&d), mean);
    dist_clear(&d);
}

static void test_dist_fixed_and_uniform_moments(void **state) {
    assert_moments("200", 200.0, 0.0, 0.0);
    assert_moments("fixed:value=3.5", 3.5, 0.0, 0.0);
    /* uniform [a, b): variance (b-a)^2/12, excess kurtosis -6/5 */
    assert_moments("uniform:min=10,max=20", 15.0, 100.0 / 12.0, -1.2);
}

static void test_dist_normal_moments(void **state) {
    assert_moments("normal:mean=100,stddev=15", 100.0, 225.0, 0.0);
}

static void test_dist_lognormal_moments_from_mean_and_from_median(void **state) {
    double s2 = 0.25; /* sigma = 0.5 */
    double kurt = exp(4 * s2) + 2 * exp(3 * s2) + 3 * exp(2 * s2) - 6.0;
    assert_moments("lognormal:mean=200,sigma=0.5", 200.0, 200.0 * 200.0 * (exp(s2) - 1.0), kurt);
    double mean = 100.0 * exp(s2 / 2.0); /* median 100 */
    assert_moments("lognormal:median=100,sigma=0.5", mean, mean * mean * (exp(s2) - 1.0), kurt);
}

static void test_dist_exponential_moments(void **state) {
    assert_moments("exponential:mean=5", 5.0, 25.0, 6.0);
}

static void test_dist_poisson_moments_small_and_large_mean(void **state) {
    /* Knuth below a mean of 10, PTRS above: variance = mean, excess kurtosis 1/mean. */
    assert_moments("poisson:mean=0.5", 0.5, 0.5, 2.0);
    assert_moments("poisson:mean=4", 4.0, 4.0, 0.25);
    assert_moments("poisson:mean=10", 10.0, 10.0, 0.1);
    assert_moments("poisson:mean=50", 50.0, 50.0, 0.02);
    assert_moments("poisson:mean=2000", 2000.0, 2000.0, 0.0005);
}

static void test_dist_poisson_pmf_matches_at_large_mean(void **state) {
    /* Mean and variance can hide a wrong shape: compare P(X = k) near the mode with the pmf. */
    dist_t d;
    parse_ok("poisson:mean=30", &d);
    enum { LO = 20, HI = 40 };
    int counts[HI - LO + 1] = {0};
    rng_t rng;
    for (int i = 0; i < N_SAMPLES; i++) {
        rng_init(&rng, 77, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        double x = dist_sample(&d, &rng);
        assert_true(x == floor(x) && x >= 0.0);
        if (x >= LO && x <= HI)
            counts[(int)x - LO]++;
    }
    for (int k = LO; k <= HI; k++) {
        double p = exp(-30.0 + k * log(30.0) - lgamma(k + 1.0));
        double se = sqrt(p * (1 - p) / N_SAMPLES);
        double observed = (double)counts[k - LO] / N_SAMPLES;
        if (fabs(observed - p) > 5.0 * se)
            fail_msg("P(X=%d) = %.5f, expected %.5f +- %.5f", k, observed, p, 5.0 * se);
    }
}

static void test_dist_gamma_moments_above_and_below_shape_one(void **state) {
    /* shape k = 1/cv^2: variance = (mean cv)^2, excess kurtosis 6/k */
    assert_moments("gamma:mean=10,cv=0.5", 10.0, 25.0, 6.0 * 0.25);
    assert_moments("gamma:mean=10,cv=2", 10.0, 400.0, 6.0 * 4.0);
}

static void test_dist_inverse_gaussian_moments(void **state) {
    /* variance mean^3 / shape, excess kurtosis 15 mean / shape */
    assert_moments("inverse_gaussian:mean=10,shape=20", 10.0, 50.0, 7.5);
    assert_moments("inverse_gaussian:mean=1,shape=0.5", 1.0, 2.0, 30.0);
}

static void test_dist_pareto_moments(void **state) {
    double a = 6.0, xm = 10.0;
    double var = xm * xm * a / ((a - 1) * (a - 1) * (a - 2));
    double kurt = 6.0 * (a * a * a + a * a - 6 * a - 2) / (a * (a - 3) * (a - 4));
    assert_moments("pareto:scale=10,alpha=6", a * xm / (a - 1), var, kurt);
}

static void zipf_exact(double n, double s, double *mean, double *var, double *kurt) {
    double z = 0, m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    for (double k = n; k >= 1; k--) {
        double p = pow(k, -s);
        z += p;
        m1 += k * p;
        m2 += k * k * p;
        m3 += k * k * k * p;
        m4 += k * k * k * k * p;
    }
    m1 /= z, m2 /= z, m3 /= z, m4 /= z;
    *mean = m1;
    *var = m2 - m1 * m1;
    double c4 = m4 - 4 * m1 * m3 + 6 * m1 * m1 * m2 - 3 * m1 * m1 * m1 * m1;
    *kurt = c4 / (*var * *var) - 3.0;
}

static void test_dist_zipf_moments(void **state) {
    double mean, var, kurt;
    zipf_exact(100, 1.2, &mean, &var, &kurt);
    assert_moments("zipf:n=100,exponent=1.2", mean, var, kurt);
    zipf_exact(1000, 0.5, &mean, &var, &kurt);
    assert_moments("zipf:n=1000,exponent=0.5", mean, var, kurt);
    zipf_exact(50, 1.0, &mean, &var, &kurt);
    assert_moments("zipf:n=50,exponent=1", mean, var, kurt);
}

static void test_dist_zipf_frequencies_follow_the_power_law(void **state) {
    dist_t d;
    parse_ok("zipf:n=20,exponent=1.5", &d);
    int counts[21] = {0};
    rng_t rng;
    for (int i = 0; i < N_SAMPLES; i++) {
        rng_init(&rng, 3, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        double k = dist_sample(&d, &rng);
        assert_true(k >= 1 && k <= 20 && k == floor(k));
        counts[(int)k]++;
    }
    double z = 0;
    for (int k = 1; k <= 20; k++)
        z += pow(k, -1.5);
    for (int k = 1; k <= 20; k++) {
        double p = pow(k, -1.5) / z, se = sqrt(p * (1 - p) / N_SAMPLES);
        double observed = (double)counts[k] / N_SAMPLES;
        if (fabs(observed - p) > 5.0 * se)
            fail_msg("P(%d) = %.5f, expected %.5f +- %.5f", k, observed, p, 5.0 * se);
    }
}

static void test_dist_zipf_mean_for_large_n_matches_the_exact_sum(void **state) {
    /* Beyond 2^20 terms dist_mean switches to Euler-Maclaurin: check it against a plain sum. */
    double n = 5e6, s = 1.1, num = 0, den = 0;
    for (double k = n; k >= 1; k--) {
        double p = pow(k, -s);
        den += p;
        num += k * p;
    }
    dist_t d;
    parse_ok("zipf:n=5000000,exponent=1.1", &d);
    assert_float_equal(dist_mean(&d), num / den, 1e-9 * num / den);
}

static void test_dist_empirical_moments_weighted_and_not(void **state) {
    /* values 1,2,3 with weights 1,1,2: mean 9/4, E[X^2] 23/4 */
    double mean = 2.25, var = 5.75 - 2.25 * 2.25;
    double c4 = (pow(1 - mean, 4) + pow(2 - mean, 4) + 2 * pow(3 - mean, 4)) / 4.0;
    assert_moments("empirical:values=1;2;3,weights=1;1;2", mean, var, c4 / (var * var) - 3.0);
    c4 = (1.0 + 0.0 + 1.0) / 3.0;
    assert_moments("empirical:values=1;2;3", 2.0, 2.0 / 3.0, c4 / (4.0 / 9.0) - 3.0);
}

static void test_dist_empirical_zero_weight_values_are_never_drawn(void **state) {
    dist_t d;
    parse_ok("empirical:values=5;6;7;8,weights=0;1;0;0", &d);
    rng_t rng;
    for (int i = 0; i < 10000; i++) {
        rng_init(&rng, 1, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        assert_true(dist_sample(&d, &rng) == 6.0);
    }
    dist_clear(&d);
}

typedef struct clamp_case {
    const char *spec;
    double lo, hi;
    bool lo_is_clamp; /* pareto has no min clamp: its samples are > scale, never equal */
} clamp_case_t;

static void test_dist_clamps_are_respected_and_reached(void **state) {
    static const clamp_case_t cases[] = {
        {"normal:mean=100,stddev=50,min=80,max=120", 80, 120, true},
        {"lognormal:mean=200,sigma=1,min=50,max=400", 50, 400, true},
        {"exponential:mean=5,min=1,max=8", 1, 8, true},
        {"poisson:mean=20,min=15,max=25", 15, 25, true},
        {"gamma:mean=10,cv=1,min=2,max=20", 2, 20, true},
        {"inverse_gaussian:mean=10,shape=5,min=3,max=30", 3, 30, true},
        {"pareto:scale=1,alpha=1,max=10", 1, 10, false},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dist_t d;
        parse_ok(cases[c].spec, &d);
        moments_t m = sample_moments(&d, 5, 20000);
        bool lo_ok = cases[c].lo_is_clamp ? m.min == cases[c].lo : m.min > cases[c].lo;
        if (!lo_ok || m.max != cases[c].hi)
            fail_msg("%s: samples in [%g, %g], expected exactly [%g, %g]", cases[c].spec, m.min,
                     m.max, cases[c].lo, cases[c].hi);
        dist_clear(&d);
    }
}

/* A spec and the exact message its refusal gives. */
static const message_case_t bad_specs[] = {
    {"lognormal:mean=200,sigma=0", "lognormal needs sigma > 0"},
    {"lognormal:mean=200", "lognormal needs sigma"},
    {"lognormal:mean=200,median=100,sigma=1", "lognormal takes mean or median, not both"},
    {"lognormal:sigma=1", "lognormal needs mean or median"},
    {"lognormal:median=-1,sigma=1", "lognormal needs median > 0"},
    {"gamma:mean=10,cv=0", "gamma needs cv > 0"},
    {"gamma:mean=-1,cv=1", "gamma needs mean > 0"},
    {"gamma:mean=10", "gamma needs cv"},
    {"uniform:min=5,max=1", "uniform needs min <= max"},
    {"uniform:min=5", "uniform needs min and max"},
    {"normal:mean=1,stddev=-1", "normal needs stddev >= 0"},
    {"normal:stddev=1", "normal needs mean"},
    {"normal:mean=1,stddev=1,min=5,max=2", "normal needs min <= max"},
    {"exponential:mean=0", "exponential needs mean > 0"},
    {"poisson:mean=-3", "poisson needs mean > 0"},
    {"inverse_gaussian:mean=1,shape=0", "inverse_gaussian needs shape > 0"},
    {"pareto:scale=0,alpha=1", "pareto needs alpha > 0 and scale > 0"},
    {"pareto:scale=1,alpha=-2", "pareto needs alpha > 0 and scale > 0"},
    {"pareto:alpha=2", "pareto needs scale"},
    {"pareto:scale=1,alpha=2,min=3", "pareto does not take min (it takes scale alpha max)"},
    {"zipf:n=0,exponent=1", "zipf needs n >= 1 and exponent > 0"},
    {"zipf:n=10,exponent=0", "zipf needs n >= 1 and exponent > 0"},
    {"zipf:n=2.5,exponent=1", "zipf needs a whole number n <= 2^53, got 2.5"},
    {"empirical:", "empirical needs at least one value"},
    {"empirical:values=1;2,weights=1",
     "empirical weights must match values (1 weights for 2 values)"},
    {"empirical:values=1;2,weights=1;-1", "empirical weights must be >= 0 (weight 2 is -1)"},
    {"empirical:values=1;2,weights=0;0", "empirical weights must not all be zero"},
    {"empirical:values=1;x", "empirical values: expected a number, got 'x'"},
    {"empirical:weights=1", "empirical weights need values"},
    {"empirical:values=1,file=/tmp/x", "empirical takes values or file, not both"},
    {"empirical:mean=3", "empirical does not take mean (it takes values weights file)"},
    {"empirical:file=/nonexistent/dist.txt",
     "/nonexistent/dist.txt: cannot open: No such file or directory"},
    {"uniform:min=1,max=2,mean=3", "uniform does not take mean (it takes min max)"},
    {"normal:mean=1,stddev=1,values=3",
     "normal does not take values (it takes mean stddev min max)"},
    {"lognormal:mean=200,sgma=1",
     "lognormal has no parameter 'sgma' (it takes mean median sigma min max)"},
    {"lognormal:mean=abc,sigma=1", "lognormal: mean needs a number, got 'abc'"},
    {"lognormal:mean=1,mean=2,sigma=1", "lognormal: mean given twice"},
    {"lognormal:mean", "lognormal: expected name=value, got 'mean'"},
    {"normal:mean=1,stddev=inf", "normal: stddev needs a number, got 'inf'"},
    {"fixed", "fixed needs value"},
    {"", "empty distribution (expected a number or kind:name=value,...)"},
    {"lognrmal:mean=1",
     "'lognrmal' is neither a number nor a distribution (known: fixed uniform normal lognormal "
     "exponential poisson gamma inverse_gaussian pareto zipf empirical mixture)"},
};

static void test_dist_bad_parameters_give_exact_messages(void **state) {
    for (size_t c = 0; c < sizeof bad_specs / sizeof bad_specs[0]; c++) {
        dist_t d;
        char err[256] = "";
        if (dist_parse_spec(bad_specs[c].input, &d, err, sizeof err) == 0)
            fail_msg("'%s' was accepted, expected: %s", bad_specs[c].input, bad_specs[c].message);
        if (strcmp(err, bad_specs[c].message) != 0)
            fail_msg("'%s': got \"%s\", expected \"%s\"", bad_specs[c].input, err,
                     bad_specs[c].message);
    }
}

static void test_dist_set_refuses_parameters_the_kind_does_not_take(void **state) {
    dist_t d;
    dist_init(&d);
    d.kind = DIST_GAMMA;
    char err[128];
    assert_int_equal(dist_set(&d, DIST_P_SIGMA, 1.0, err, sizeof err), -1);
    assert_string_equal(err, "gamma does not take sigma (it takes mean cv min max)");
    assert_int_equal(dist_set(&d, DIST_P_MEAN, NAN, err, sizeof err), -1);
    assert_string_equal(err, "gamma needs a finite number for mean");
    assert_int_equal(dist_set(&d, DIST_P_MEAN, 4.0, err, sizeof err), 0);
    assert_int_equal(dist_set(&d, DIST_P_CV, 0.5, err, sizeof err), 0);
    assert_int_equal(dist_prepare(&d, err, sizeof err), 0);
    assert_float_equal(dist_mean(&d), 4.0, 0.0);
    /* A stray bit set behind dist_set's back is caught by prepare. */
    d.given |= 1u << DIST_P_ALPHA;
    assert_int_equal(dist_prepare(&d, err, sizeof err), -1);
    assert_string_equal(err, "gamma does not take alpha (it takes mean cv min max)");
}

static void test_dist_names_round_trip(void **state) {
    for (int k = 0; k < DIST__COUNT; k++) {
        dist_kind_t back;
        assert_int_equal(dist_kind_from_name(dist_kind_name((dist_kind_t)k), &back), 0);
        assert_int_equal(back, k);
    }
    for (int p = 0; p < DIST_P__COUNT; p++) {
        dist_param_t back;
        assert_int_equal(dist_param_from_name(dist_param_name((dist_param_t)p), &back), 0);
        assert_int_equal(back, p);
    }
    dist_kind_t k;
    assert_int_equal(dist_kind_from_name("gaussian", &k), -1);
}

static void assert_same_draws(const dist_t *a, const dist_t *b) {
    rng_t ra, rb;
    for (uint64_t i = 0; i < 1000; i++) {
        rng_init(&ra, 8, RNG_STREAM_TEST, i, 0, 0);
        rng_init(&rb, 8, RNG_STREAM_TEST, i, 0, 0);
        assert_true(dist_sample(a, &ra) == dist_sample(b, &rb));
    }
}

static char *write_temp(const char *content) {
    char *path = strdup("/tmp/test_dist,XXXXXX"); /* a comma: file= takes the rest of the spec */
    temp_file_write(path, content);
    return path;
}

static void test_dist_load_file_reads_values_weights_and_comments(void **state) {
    char *path = write_temp("# token counts from a trace\n"
                            "100 1\n"
                            "\n"
                            "200   3   # most common\n"
                            "  400\t0\n");
    dist_t d;
    char spec[512], err[256] = "";
    snprintf(spec, sizeof spec, "empirical:file=%s", path);
    if (dist_parse_spec(spec, &d, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(d.n_values, 3);
    assert_float_equal(d.values[1], 200.0, 0.0);
    assert_non_null(d.weights);
    assert_float_equal(d.weights[1], 3.0, 0.0);
    assert_float_equal(dist_mean(&d), 175.0, 1e-12);
    dist_clear(&d);
    unlink(path);
    free(path);
}

/* A file's content and the message its refusal gives after the file's path. */
static const message_case_t bad_files[] = {
    {"1\n2\nabc\n", ":3: expected a number, got 'abc'"},
    {"1 2 3\n", ":1: expected \"value\" or \"value weight\", got 3 fields"},
    {"# c\n5 x\n", ":2: expected a weight, got 'x'"},
    {"5 -1\n", ":1: weight must be >= 0, got -1"},
    {"5 1\n6\n", ":2: every line needs a weight once one has (line 1 has one)"},
    {"# nothing\n\n", ": empirical needs at least one value, the file has none"},
};

static void test_dist_load_file_errors_name_file_and_line(void **state) {
    for (size_t c = 0; c < sizeof bad_files / sizeof bad_files[0]; c++) {
        char *path = write_temp(bad_files[c].input);
        char expected[512], err[512] = "";
        snprintf(expected, sizeof expected, "%s%s", path, bad_files[c].message);
        dist_t d;
        dist_init(&d);
        assert_int_equal(dist_load_file(&d, path, err, sizeof err), -1);
        assert_string_equal(err, expected);
        dist_clear(&d);
        unlink(path);
        free(path);
    }
}

static void test_dist_copy_is_deep(void **state) {
    dist_t d, copy;
    parse_ok("empirical:values=1;2;3;4,weights=4;3;2;1", &d);
    assert_int_equal(dist_copy(&copy, &d), 0);
    assert_ptr_not_equal(copy.values, d.values);
    assert_ptr_not_equal(copy.cdf, d.cdf);
    assert_same_draws(&d, &copy);
    double before[100];
    rng_t rng;
    for (int i = 0; i < 100; i++) {
        rng_init(&rng, 1, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        before[i] = dist_sample(&copy, &rng);
    }
    dist_clear(&d); /* the copy must not share anything with the original */
    for (int i = 0; i < 100; i++) {
        rng_init(&rng, 1, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        assert_true(dist_sample(&copy, &rng) == before[i]);
    }
    dist_clear(&copy);
}

static void test_dist_samples_depend_only_on_the_rng_coordinates(void **state) {
    dist_t d;
    parse_ok("gamma:mean=10,cv=3", &d);
    rng_t rng;
    double forwards[500];
    for (int i = 0; i < 500; i++) {
        rng_init(&rng, 4, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        forwards[i] = dist_sample(&d, &rng);
    }
    for (int i = 499; i >= 0; i--) {
        rng_init(&rng, 4, RNG_STREAM_TEST, (uint64_t)i, 0, 0);
        assert_true(dist_sample(&d, &rng) == forwards[i]);
    }
}

/* A spike of short waits (weight 3) and a Pareto tail from 100 ms (weight 1). */
static void make_spike_and_tail(dist_t *d) {
    char err[128];
    dist_t parts[2];
    dist_init(&parts[0]);
    parts[0].kind = DIST_UNIFORM;
    assert_int_equal(dist_set(&parts[0], DIST_P_MIN, 0.001, err, sizeof err), 0);
    assert_int_equal(dist_set(&parts[0], DIST_P_MAX, 0.002, err, sizeof err), 0);
    assert_int_equal(dist_prepare(&parts[0], err, sizeof err), 0);
    dist_init(&parts[1]);
    parts[1].kind = DIST_PARETO;
    assert_int_equal(dist_set(&parts[1], DIST_P_SCALE, 0.1, err, sizeof err), 0);
    assert_int_equal(dist_set(&parts[1], DIST_P_ALPHA, 3.0, err, sizeof err), 0);
    assert_int_equal(dist_prepare(&parts[1], err, sizeof err), 0);
    const double weights[2] = {3.0, 1.0};
    dist_init(d);
    d->kind = DIST_MIXTURE;
    assert_int_equal(dist_set_mixture(d, parts, weights, 2, err, sizeof err), 0);
    assert_int_equal(parts[0].kind, DIST_FIXED); /* moved in */
    assert_int_equal(dist_prepare(d, err, sizeof err), 0);
}

static void test_dist_mixture_draws_components_by_weight(void **state) {
    dist_t d, copy;
    make_spike_and_tail(&d);
    assert_float_equal(dist_mean(&d), (3 * 0.0015 + 1 * 0.15) / 4, 1e-12);
    size_t spike = 0, n = 20000;
    rng_t rng;
    for (uint64_t i = 0; i < n; i++) {
        rng_init(&rng, 3, RNG_STREAM_TEST, i, 0, 0);
        double x = dist_sample(&d, &rng);
        assert_true((x >= 0.001 && x <= 0.002) || x >= 0.1); /* nothing between the parts */
        spike += x <= 0.002;
    }
    assert_true(fabs((double)spike / (double)n - 0.75) < 0.02);
    assert_int_equal(dist_copy(&copy, &d), 0);
    assert_ptr_not_equal(copy.components, d.components);
    assert_same_draws(&d, &copy);
    /* the mixture's own max clamps the tail */
    char err[128];
    assert_int_equal(dist_set(&copy, DIST_P_MAX, 0.5, err, sizeof err), 0);
    assert_int_equal(dist_prepare(&copy, err, sizeof err), 0);
    for (uint64_t i = 0; i < 2000; i++) {
        rng_init(&rng, 3, RNG_STREAM_TEST, i, 0, 0);
        assert_true(dist_sample(&copy, &rng) <= 0.5);
    }
    dist_clear(&copy);
    dist_clear(&d);
}

static void test_dist_mixture_refuses_bad_weights_and_no_components(void **state) {
    char err[128];
    dist_t d, part;
    dist_init(&d);
    d.kind = DIST_MIXTURE;
    assert_int_equal(dist_prepare(&d, err, sizeof err), -1);
    assert_string_equal(err, "mixture needs components: [{weight: W, dist: KIND, ...}, ...]");
    dist_fixed(&part, 1.0);
    const double bad[1] = {-2.0};
    assert_int_equal(dist_set_mixture(&d, &part, bad, 1, err, sizeof err), -1);
    assert_string_equal(err, "mixture component 1 needs a weight > 0, got -2");
    dist_clear(&part);
    dist_clear(&d);
}

UNIT_MAIN(cmocka_unit_test(test_dist_fixed_and_uniform_moments),
          cmocka_unit_test(test_dist_mixture_draws_components_by_weight),
          cmocka_unit_test(test_dist_mixture_refuses_bad_weights_and_no_components),
          cmocka_unit_test(test_dist_normal_moments),
          cmocka_unit_test(test_dist_lognormal_moments_from_mean_and_from_median),
          cmocka_unit_test(test_dist_exponential_moments),
          cmocka_unit_test(test_dist_poisson_moments_small_and_large_mean),
          cmocka_unit_test(test_dist_poisson_pmf_matches_at_large_mean),
          cmocka_unit_test(test_dist_gamma_moments_above_and_below_shape_one),
          cmocka_unit_test(test_dist_inverse_gaussian_moments),
          cmocka_unit_test(test_dist_pareto_moments), cmocka_unit_test(test_dist_zipf_moments),
          cmocka_unit_test(test_dist_zipf_frequencies_follow_the_power_law),
          cmocka_unit_test(test_dist_zipf_mean_for_large_n_matches_the_exact_sum),
          cmocka_unit_test(test_dist_empirical_moments_weighted_and_not),
          cmocka_unit_test(test_dist_empirical_zero_weight_values_are_never_drawn),
          cmocka_unit_test(test_dist_clamps_are_respected_and_reached),
          cmocka_unit_test(test_dist_bad_parameters_give_exact_messages),
          cmocka_unit_test(test_dist_set_refuses_parameters_the_kind_does_not_take),
          cmocka_unit_test(test_dist_names_round_trip),
          cmocka_unit_test(test_dist_load_file_reads_values_weights_and_comments),
          cmocka_unit_test(test_dist_load_file_errors_name_file_and_line),
          cmocka_unit_test(test_dist_copy_is_deep),
          cmocka_unit_test(test_dist_samples_depend_only_on_the_rng_coordinates))
