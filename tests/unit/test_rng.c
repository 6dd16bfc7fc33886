#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define SESSIONS 1000
#define DRAWS 4

static void draw_session(uint64_t seed, uint64_t session, uint64_t out[DRAWS]) {
    rng_t rng;
    rng_init(&rng, seed, RNG_STREAM_WORKLOAD, session, 3, RNG_FIELD_INPUT_TOKENS);
    for (int d = 0; d < DRAWS; d++)
        out[d] = rng_next_u64(&rng);
}

static void test_rng_draws_are_identical_whatever_the_session_order(void **state) {
    static uint64_t forwards[SESSIONS][DRAWS], backwards[SESSIONS][DRAWS],
        scattered[SESSIONS][DRAWS];
    for (uint64_t s = 0; s < SESSIONS; s++)
        draw_session(42, s, forwards[s]);
    for (uint64_t s = SESSIONS; s-- > 0;)
        draw_session(42, s, backwards[s]);
    /* 7 is coprime with 1000, so s -> 7s mod 1000 visits every session once, out of order. */
    for (uint64_t k = 0; k < SESSIONS; k++)
        draw_session(42, (k * 7) % SESSIONS, scattered[(k * 7) % SESSIONS]);
    assert_memory_equal(forwards, backwards, sizeof forwards);
    assert_memory_equal(forwards, scattered, sizeof forwards);
}

static void test_rng_interleaved_generators_do_not_disturb_each_other(void **state) {
    rng_t a, b, alone;
    rng_init(&a, 7, RNG_STREAM_PROMPT, 1, 0, RNG_FIELD_TEXT);
    rng_init(&b, 7, RNG_STREAM_PROMPT, 2, 0, RNG_FIELD_TEXT);
    rng_init(&alone, 7, RNG_STREAM_PROMPT, 1, 0, RNG_FIELD_TEXT);
    for (int i = 0; i < 1000; i++) {
        uint64_t x = rng_next_u64(&a);
        (void)rng_next_u64(&b);
        assert_int_equal(x, rng_next_u64(&alone));
    }
}

/* Pins the mixing function: changing it silently changes every workload ever generated. */
static void test_rng_known_answer_for_fixed_coordinates(void **state) {
    rng_t rng;
    rng_init(&rng, 1, RNG_STREAM_WORKLOAD, 0, 0, RNG_FIELD_TURNS);
    uint64_t first = rng_next_u64(&rng);
    uint64_t second = rng_next_u64(&rng);
    assert_int_equal(first, 0x863eb69a3f0b2c0dULL);
    assert_int_equal(second, 0x0994419af9dfbb12ULL);
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_rng_every_coordinate_changes_the_stream(void **state) {
    /* 5 coordinates x 2,000 values each, plus the counter: no two first draws may collide. */
    enum { PER = 2000 };
    uint64_t *firsts = malloc(5 * PER * sizeof *firsts);
    assert_non_null(firsts);
    size_t n = 0;
    rng_t rng;
    for (uint32_t v = 0; v < PER; v++) {
        rng_init(&rng, 1000 + v, 1, 0, 0, 0);
        firsts[n++] = rng_next_u64(&rng);
        rng_init(&rng, 0, 1000 + v, 0, 0, 0);
        firsts[n++] = rng_next_u64(&rng);
        rng_init(&rng, 0, 0, 1000 + v, 0, 0);
        firsts[n++] = rng_next_u64(&rng);
        rng_init(&rng, 0, 0, 0, 1000 + v, 0);
        firsts[n++] = rng_next_u64(&rng);
        rng_init(&rng, 0, 0, 0, 0, 1000 + v);
        firsts[n++] = rng_next_u64(&rng);
    }
    qsort(firsts, n, sizeof *firsts, compare_u64);
    for (size_t i = 1; i < n; i++)
        assert_true(firsts[i] != firsts[i - 1]);
    free(firsts);
}

/* Pearson's statistic over equal-probability buckets. */
static double chi_square(const uint64_t *counts, size_t buckets, uint64_t total) {
    double expected = (double)total / (double)buckets, chi = 0.0;
    for (size_t b = 0; b < buckets; b++) {
        double d = (double)counts[b] - expected;
        chi += d * d / expected;
    }
    return chi;
}

/* For k degrees of freedom the statistic has mean k and sd sqrt(2k); 6 sd either side fails a
 * correct generator with probability ~1e-9 and catches any gross bias (or suspicious perfection).
 */
static void assert_chi_square_plausible(double chi, double dof) {
    double sd = sqrt(2.0 * dof);
    assert_true(chi > dof - 6.0 * sd);
    assert_true(chi < dof + 6.0 * sd);
}

static void test_rng_double_is_uniform_within_a_stream(void **state) {
    enum { BUCKETS = 256, N = 1000000 };
    uint64_t counts[BUCKETS] = {0};
    rng_t rng;
    rng_init(&rng, 5, RNG_STREAM_TEST, 0, 0, 0);
    for (int i = 0; i < N; i++) {
        double u = rng_next_double(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        counts[(int)(u * BUCKETS)]++;
    }
    assert_chi_square_plausible(chi_square(counts, BUCKETS, N), BUCKETS - 1);
}

/* Workloads take one or two draws from each of millions of coordinates: those must be uniform. */
static void test_rng_first_draws_are_uniform_across_sessions(void **state) {
    enum { BUCKETS = 256, N = 1000000 };
    uint64_t counts[BUCKETS] = {0}, low_bits[BUCKETS] = {0};
    rng_t rng;
    for (uint64_t s = 0; s < N; s++) {
        rng_init(&rng, 5, RNG_STREAM_WORKLOAD, s, 0, RNG_FIELD_TURNS);
        uint64_t x = rng_next_u64(&rng);
        counts[x >> 56]++;
        low_bits[x & 0xff]++;
    }
    assert_chi_square_plausible(chi_square(counts, BUCKETS, N), BUCKETS - 1);
    assert_chi_square_plausible(chi_square(low_bits, BUCKETS, N), BUCKETS - 1);
}

static void test_rng_open_interval_excludes_both_ends(void **state) {
    rng_t rng;
    rng_init(&rng, 9, RNG_STREAM_TEST, 0, 0, 0);
    for (int i = 0; i < 1000000; i++) {
        double u = rng_next_open(&rng);
        assert_true(u > 0.0 && u < 1.0);
    }
}

static void test_rng_below_is_unbiased_and_in_range(void **state) {
    enum { BOUND = 1000, N = 2000000 };
    static uint64_t counts[BOUND];
    memset(counts, 0, sizeof counts);
    rng_t rng;
    rng_init(&rng, 11, RNG_STREAM_TEST, 0, 0, 0);
    for (int i = 0; i < N; i++) {
        uint64_t k = rng_next_below(&rng, BOUND);
        assert_true(k < BOUND);
        counts[k]++;
    }
    assert_chi_square_plausible(chi_square(counts, BOUND, N), BOUND - 1);
    /* A bound just above 2^63 rejects almost half the raw draws: results stay in range. */
    uint64_t big = (1ULL << 63) + 12345;
    for (int i = 0; i < 10000; i++)
        assert_true(rng_next_below(&rng, big) < big);
    assert_int_equal(rng_next_below(&rng, 1), 0);
}

UNIT_MAIN(cmocka_unit_test(test_rng_draws_are_identical_whatever_the_session_order),
          cmocka_unit_test(test_rng_interleaved_generators_do_not_disturb_each_other),
          cmocka_unit_test(test_rng_known_answer_for_fixed_coordinates),
          cmocka_unit_test(test_rng_every_coordinate_changes_the_stream),
          cmocka_unit_test(test_rng_double_is_uniform_within_a_stream),
          cmocka_unit_test(test_rng_first_draws_are_uniform_across_sessions),
          cmocka_unit_test(test_rng_open_interval_excludes_both_ends),
          cmocka_unit_test(test_rng_below_is_unbiased_and_in_range))
