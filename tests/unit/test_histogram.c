#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <cmocka.h>

#include "unit_main.h"

#include "histogram.h"

#define SAMPLES 1000000
#define TOLERANCE 0.001 /* 0.1 % relative error */

/* splitmix64: a tiny deterministic generator, so the test needs no other module */
static uint64_t rng_state;

static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double next_uniform(void) {
    return ((double)(next_u64() >> 11) + 0.5) / 9007199254740992.0;
}

static double next_normal(void) {
    return sqrt(-2.0 * log(next_uniform())) * cos(2.0 * M_PI * next_uniform());
}

static uint64_t lognormal_ns(double median_ns, double sigma) {
    return (uint64_t)(median_ns * exp(sigma * next_normal()));
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The exact percentile with the histogram's definition: the smallest sample at which the
 * cumulative count reaches p % of all samples. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p) {
    double exact = p / 100.0 * (double)n;
    size_t rank = (size_t)ceil(exact - exact * 1e-12);
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

static void assert_percentiles_close(const histogram_t *h, uint64_t *samples, size_t n) {
    static const double ps[] = {1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99};
    qsort(samples, n, sizeof samples[0], compare_u64);
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        uint64_t expected = exact_percentile(samples, n, ps[i]);
        uint64_t got = histogram_percentile(h, ps[i]);
        double error = fabs((double)got - (double)expected) / (double)expected;
        if (error > TOLERANCE)
            fail_msg("p%g: expected %llu ns within 0.1 %%, got %llu ns (error %.4f %%)", ps[i],
                     (unsigned long long)expected, (unsigned long long)got, error * 100);
    }
}

static void test_histogram_percentiles_within_0_1_percent_on_lognormal(void **state) {
    uint64_t *samples = malloc(SAMPLES * sizeof *samples);
    histogram_t *h = histogram_new();
    assert_non_null(samples);
    assert_non_null(h);
    rng_state = 42;
    for (size_t i = 0; i < SAMPLES; i++) {
        samples[i] = lognormal_ns(50e6, 1.0); /* median 50 ms, heavy right tail */
        histogram_record(h, samples[i]);
    }
    assert_int_equal(histogram_count(h), SAMPLES);
    assert_percentiles_close(h, samples, SAMPLES);
    histogram_destroy(&h);
    assert_null(h);
    free(samples);
}

static void test_histogram_percentiles_within_0_1_percent_on_bimodal(void **state) {
    uint64_t *samples = malloc(SAMPLES * sizeof *samples);
    histogram_t *h = histogram_new();
    rng_state = 7;
    for (size_t i = 0; i < SAMPLES; i++) {
        /* 70 % fast decode steps around 20 ms, 30 % queued requests around 2 s */
        double mean = next_uniform() < 0.7 ? 20e6 : 2e9;
        double v = mean + 0.05 * mean * next_normal();
        samples[i] = v < 1 ? 1 : (uint64_t)v;
        histogram_record(h, samples[i]);
    }
    assert_percentiles_close(h, samples, SAMPLES);
    histogram_destroy(&h);
    free(samples);
}

static void test_histogram_min_max_mean_are_exact(void **state) {
    histogram_t *h = histogram_new();
    uint64_t sum = 0, min = UINT64_MAX, max = 0;
    rng_state = 3;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = lognormal_ns(1e6, 2.0) + 1;
        histogram_record(h, v);
        sum += v;
        min = v < min ? v : min;
        max = v > max ? v : max;
    }
    assert_int_equal(histogram_min(h), min);
    assert_int_equal(histogram_max(h), max);
    assert_true(histogram_mean(h) == (double)sum / 100000.0); /* exact below 2^53 */
    assert_int_equal(histogram_percentile(h, 0), min);
    assert_int_equal(histogram_percentile(h, 100), max);
    histogram_destroy(&h);
}

static void test_histogram_values_below_2048_ns_are_exact(void **state) {
    histogram_t *h = histogram_new();
    for (uint64_t v = 0; v < 2048; v++)
        histogram_record(h, v);
    for (uint64_t v = 0; v < 2048; v++) {
        /* value v is sample number v + 1 of 2048 */
        double p = (double)(v + 1) * 100.0 / 2048.0;
        assert_int_equal(histogram_percentile(h, p), v);
    }
    histogram_destroy(&h);
}

static void test_histogram_empty_reports_zeros(void **state) {
    histogram_t *h = histogram_new();
    assert_int_equal(histogram_count(h), 0);
    assert_int_equal(histogram_min(h), 0);
    assert_int_equal(histogram_max(h), 0);
    assert_int_equal(histogram_percentile(h, 50), 0);
    assert_true(histogram_mean(h) == 0.0);
    histogram_iter_t it = HISTOGRAM_ITER_INIT;
    histogram_bucket_t b;
    assert_false(histogram_next(h, &it, &b));
    histogram_destroy(&h);
}

static void test_histogram_values_above_one_hour_are_clamped_and_counted(void **state) {
    histogram_t *h = histogram_new();
    uint64_t two_hours = 2 * HISTOGRAM_MAX_NS;
    histogram_record(h, 1000);
    histogram_record_n(h, two_hours, 3);
    assert_int_equal(histogram_count(h), 4);
    assert_int_equal(histogram_clamped(h), 3);
    assert_int_equal(histogram_max(h), two_hours);
    assert_true(histogram_mean(h) == (double)(1000 + 3 * two_hours) / 4.0); /* the true sum */
    uint64_t p90 = histogram_percentile(h, 90);
    /* the clamped values sit in the top bucket, within 0.1 % of one hour */
    assert_true(fabs((double)p90 - (double)HISTOGRAM_MAX_NS) <= 0.001 * (double)HISTOGRAM_MAX_NS);
    histogram_destroy(&h);
}

static void fill_lognormal(histogram_t **parts, size_t n_parts, histogram_t *whole, size_t n) {
    rng_state = 11;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = lognormal_ns(30e6, 1.5);
        histogram_record(parts[i % n_parts], v);
        histogram_record(whole, v);
    }
}

static void test_histogram_merge_of_4_parts_equals_whole_bucket_for_bucket(void **state) {
    histogram_t *parts[4], *whole = histogram_new(), *merged = histogram_new();
    for (int i = 0; i < 4; i++)
        parts[i] = histogram_new();
    fill_lognormal(parts, 4, whole, 200000);
    for (int i = 0; i < 4; i++)
        histogram_merge(merged, parts[i]);
    assert_true(histogram_equal(merged, whole));
    histogram_iter_t a = HISTOGRAM_ITER_INIT, b = HISTOGRAM_ITER_INIT;
    histogram_bucket_t ba, bb;
    size_t buckets = 0;
    while (histogram_next(whole, &a, &ba)) {
        assert_true(histogram_next(merged, &b, &bb));
        assert_int_equal(ba.lowest_ns, bb.lowest_ns);
        assert_int_equal(ba.count, bb.count);
        buckets++;
    }
    assert_false(histogram_next(merged, &b, &bb));
    assert_true(buckets > 1000);
    assert_int_equal(histogram_percentile(merged, 99), histogram_percentile(whole, 99));
    for (int i = 0; i < 4; i++)
        histogram_destroy(&parts[i]);
    histogram_destroy(&whole);
    histogram_destroy(&merged);
}

/* A new histogram of n lognormal samples (median_ns, sigma) drawn from the generator at `seed`. */
static histogram_t *lognormal_histogram(uint64_t seed, int n, double median_ns, double sigma) {
    histogram_t *h = histogram_new();
    assert_non_null(h);
    rng_state = seed;
    for (int i = 0; i < n; i++)
        histogram_record(h, lognormal_ns(median_ns, sigma));
    return h;
}

static void test_histogram_iteration_covers_every_count_in_order(void **state) {
    histogram_t *h = lognormal_histogram(5, 50000, 5e6, 1.0);
    histogram_iter_t it = HISTOGRAM_ITER_INIT;
    histogram_bucket_t b;
    uint64_t total = 0, previous_high = 0;
    int first = 1;
    while (histogram_next(h, &it, &b)) {
        assert_true(b.count > 0);
        assert_true(b.lowest_ns <= b.highest_ns);
        /* a bucket is at most 1/1024 of its lowest value wide */
        assert_true((b.highest_ns - b.lowest_ns + 1) * 1024 <= b.lowest_ns || b.lowest_ns < 2048);
        assert_true(first || b.lowest_ns > previous_high);
        first = 0;
        previous_high = b.highest_ns;
        total += b.count;
        assert_int_equal(histogram_count_at_or_below(h, b.highest_ns), total);
    }
    assert_int_equal(total, histogram_count(h));
    histogram_destroy(&h);
}

static void test_histogram_reset_empties_it(void **state) {
    histogram_t *h = histogram_new(), *empty = histogram_new();
    histogram_record(h, 12345);
    histogram_record(h, 99999999);
    histogram_reset(h);
    assert_true(histogram_equal(h, empty));
    histogram_record(h, 5);
    assert_int_equal(histogram_min(h), 5);
    assert_int_equal(histogram_count(h), 1);
    histogram_destroy(&h);
    histogram_destroy(&empty);
}

static void test_histogram_write_read_round_trip(void **state) {
    histogram_t *h = lognormal_histogram(9, 100000, 40e6, 0.5);
    histogram_record_n(h, 3 * HISTOGRAM_MAX_NS, 2);
    static uint8_t buf[65536];
    size_t len = histogram_write(h, buf, sizeof buf);
    assert_int_equal(len, histogram_serialized_size(h));
    histogram_t *back = histogram_new();
    histogram_record(back, 777); /* replaced by the read */
    assert_int_equal(histogram_read(back, buf, len), 0);
    assert_true(histogram_equal(h, back));
    assert_int_equal(histogram_clamped(back), 2);
    assert_int_equal(histogram_percentile(back, 99.9), histogram_percentile(h, 99.9));
    /* a full lognormal histogram fits in a few KB on the wire, not 270 KB */
    assert_true(len < 16384);
    assert_int_equal(histogram_write(h, buf, len - 1), 0);

    histogram_t *empty = histogram_new();
    len = histogram_write(empty, buf, sizeof buf);
    assert_true(len > 0);
    assert_int_equal(histogram_read(back, buf, len), 0);
    assert_true(histogram_equal(empty, back));
    histogram_destroy(&back);
    histogram_destroy(&empty);
    histogram_destroy(&h);
}

static void test_histogram_read_rejects_truncated_and_flipped_bytes(void **state) {
    histogram_t *h = histogram_new();
    for (uint64_t v = 1000; v < 100000000; v = v * 3 / 2)
        histogram_record_n(h, v, v % 7 + 1);
    static uint8_t buf[65536];
    size_t len = histogram_write(h, buf, sizeof buf - 1);
    assert_true(len > 0);
    histogram_t *back = histogram_new();
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(histogram_read(back, buf, cut), -1);
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1 << bit);
            if (histogram_read(back, buf, len) != -1)
                fail_msg("byte %zu bit %d flipped: expected rejection, got a histogram", i, bit);
            buf[i] ^= (uint8_t)(1 << bit);
        }
    }
    buf[len] = 0; /* one trailing byte */
    assert_int_equal(histogram_read(back, buf, len + 1), -1);
    assert_int_equal(histogram_count(back), 0); /* every refusal left it as it was */
    histogram_destroy(&back);
    histogram_destroy(&h);
}

/* Encodes fields as varints with a valid checksum, to reach the structural checks. */
static size_t craft(uint8_t *out, const uint64_t *fields, size_t n) {
    size_t len = 0;
    out[len++] = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = fields[i];
        while (v >= 0x80) {
            out[len++] = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        out[len++] = (uint8_t)v;
    }
    uint32_t sum = XXH32(out, len, 0);
    for (int i = 0; i < 4; i++)
        out[len++] = (uint8_t)(sum >> (8 * i));
    return len;
}

static void test_histogram_read_rejects_inconsistent_encodings(void **state) {
    uint8_t buf[256];
    /* count, clamped, min, max, sum, buckets, then (index gap, count) pairs */
    static const uint64_t valid[] = {2, 0, 5, 6, 11, 2, 5, 1, 1, 1};
    static const uint64_t wrong_total[] = {3, 0, 5, 6, 11, 2, 5, 1, 1, 1};
    static const uint64_t zero_gap[] = {2, 0, 5, 5, 10, 2, 5, 1, 0, 1};
    static const uint64_t min_not_first[] = {2, 0, 4, 6, 11, 2, 5, 1, 1, 1};
    static const uint64_t sum_impossible[] = {2, 0, 5, 6, 100, 2, 5, 1, 1, 1};
    static const uint64_t index_past_end[] = {1, 0, 5, 5, 5, 1, 40000, 1};
    static const uint64_t empty_with_min[] = {0, 0, 1, 0, 0, 0};
    histogram_t *h = histogram_new();
    assert_int_equal(histogram_read(h, buf, craft(buf, valid, 10)), 0);
    assert_int_equal(histogram_count(h), 2);
    assert_int_equal(histogram_percentile(h, 100), 6);
    assert_int_equal(histogram_read(h, buf, craft(buf, zero_gap, 10)), -1);
    assert_int_equal(histogram_read(h, buf, craft(buf, min_not_first, 10)), -1);
    assert_int_equal(histogram_read(h, buf, craft(buf, sum_impossible, 10)), -1);
    assert_int_equal(histogram_read(h, buf, craft(buf, index_past_end, 8)), -1);
    assert_int_equal(histogram_read(h, buf, craft(buf, empty_with_min, 6)), -1);
    /* histogram_read leaves the target untouched when the bytes are bad */
    assert_int_equal(histogram_read(h, buf, craft(buf, wrong_total, 10)), -1);
    assert_int_equal(histogram_count(h), 2);
    histogram_destroy(&h);
}

/* Found by tests/fuzz/fuzz_histogram (corpus/histogram/regression_sum_wrapped): two values near
 * 2^63 wrap the 64-bit sum, and the reader refused the writer's own bytes as "sum < count * min".
 */
static void test_histogram_with_a_wrapped_sum_reads_back(void **state) {
    histogram_t *h = histogram_new();
    histogram_record(h, 18374835657866150535ULL);
    histogram_record(h, 4774450023231553601ULL);
    assert_true(histogram_mean(h) < (double)histogram_min(h)); /* the sum wrapped */
    uint8_t buf[128];
    size_t len = histogram_write(h, buf, sizeof buf);
    assert_true(len > 0);
    histogram_t *back = histogram_new();
    assert_int_equal(histogram_read(back, buf, len), 0);
    assert_true(histogram_equal(h, back));
    /* A sum no wrap explains is still refused: values 5 and 6 sum to 11, and neither 9 nor
     * 2^64 + 9 lies in [2 * 5, 2 * 6]. */
    uint8_t wire[64];
    static const uint64_t below[] = {2, 0, 5, 6, 9, 2, 5, 1, 1, 1};
    assert_int_equal(histogram_read(back, wire, craft(wire, below, 10)), -1);
    histogram_destroy(&back);
    histogram_destroy(&h);
}

UNIT_MAIN(cmocka_unit_test(test_histogram_percentiles_within_0_1_percent_on_lognormal),
          cmocka_unit_test(test_histogram_percentiles_within_0_1_percent_on_bimodal),
          cmocka_unit_test(test_histogram_min_max_mean_are_exact),
          cmocka_unit_test(test_histogram_values_below_2048_ns_are_exact),
          cmocka_unit_test(test_histogram_empty_reports_zeros),
          cmocka_unit_test(test_histogram_values_above_one_hour_are_clamped_and_counted),
          cmocka_unit_test(test_histogram_merge_of_4_parts_equals_whole_bucket_for_bucket),
          cmocka_unit_test(test_histogram_iteration_covers_every_count_in_order),
          cmocka_unit_test(test_histogram_reset_empties_it),
          cmocka_unit_test(test_histogram_write_read_round_trip),
          cmocka_unit_test(test_histogram_read_rejects_truncated_and_flipped_bytes),
          cmocka_unit_test(test_histogram_read_rejects_inconsistent_encodings),
          cmocka_unit_test(test_histogram_with_a_wrapped_sum_reads_back))
