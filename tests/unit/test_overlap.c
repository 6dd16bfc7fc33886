#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdlib.h>

#include "overlap.h"

/* Adds n intervals {start, end} and sweeps; returns the most open at once. */
static long sweep(const int64_t (*iv)[2], size_t n, double **share) {
    overlap_t *o = overlap_new();
    assert_non_null(o);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(overlap_add(o, iv[i][0], iv[i][1]), 0);
    long most = overlap_shares(o, share);
    overlap_destroy(&o);
    assert_null(o);
    return most;
}

/* Sweeps n intervals: the most open at once must be `most`, with share[k] exactly want[k]. */
static void assert_shares(const int64_t (*iv)[2], size_t n, long most, const double *want) {
    double *share;
    assert_int_equal(sweep(iv, n, &share), most);
    for (long k = 0; k < most; k++)
        assert_true(share[k] == want[k]);
    free(share);
}

/* [0,10) [5,15) [5,8): 1 open for 0-5 and 10-15 (10), 2 for 8-10 (2), 3 for 5-8 (3); 15 active. */
static void test_overlap_levels_are_duration_weighted(void **state) {
    const int64_t iv[][2] = {{5, 15}, {0, 10}, {5, 8}};
    const double want[] = {1.0, (double)5 / (double)15, (double)3 / (double)15};
    assert_shares(iv, 3, 3, want);
}

/* Time with nothing decoding is not decode-active: it counts in neither part of the share. */
static void test_overlap_gaps_are_not_decode_time(void **state) {
    const int64_t iv[][2] = {{0, 10}, {20, 30}, {25, 26}};
    const double want[] = {1.0, (double)1 / (double)20};
    assert_shares(iv, 3, 2, want);
}

/* One request ending as the next starts: never two at once. */
static void test_overlap_touching_intervals_do_not_overlap(void **state) {
    const int64_t iv[][2] = {{10, 20}, {0, 10}, {20, 35}};
    const double want[] = {1.0};
    assert_shares(iv, 3, 1, want);
}

/* Empty and reversed intervals are ignored; none at all gives no shares. */
static void test_overlap_empty_intervals_are_ignored(void **state) {
    const int64_t iv[][2] = {{10, 10}, {20, 5}};
    double *share = (double *)&share;
    assert_int_equal(sweep(iv, 2, &share), 0);
    assert_null(share);
    overlap_t *o = overlap_new();
    assert_int_equal(overlap_add(o, 3, 3), 0);
    share = (double *)&share;
    assert_int_equal(overlap_shares(o, &share), 0); /* nothing was kept */
    assert_null(share);
    overlap_destroy(&o);
}

/* n nested intervals [j, 2n - j): at least k are open over [k - 1, 2n - k + 1), 2(n - k + 1) of
 * the 2n active ns; this many intervals also grow the arrays past their first size. */
static void test_overlap_nested_staircase(void **state) {
    enum { N = 3000 };
    int64_t(*iv)[2] = calloc(N, sizeof *iv);
    for (size_t i = 0; i < N; i++) {
        size_t j = (i * 7919) % N; /* out of order */
        iv[i][0] = (int64_t)j;
        iv[i][1] = (int64_t)(2 * N - j);
    }
    double *share;
    assert_int_equal(sweep((const int64_t(*)[2])iv, N, &share), N);
    for (size_t k = 1; k <= N; k++)
        assert_true(share[k - 1] == (double)(2 * (N - k + 1)) / (double)(2 * N));
    free(share);
    free(iv);
}

UNIT_MAIN(cmocka_unit_test(test_overlap_levels_are_duration_weighted),
          cmocka_unit_test(test_overlap_gaps_are_not_decode_time),
          cmocka_unit_test(test_overlap_touching_intervals_do_not_overlap),
          cmocka_unit_test(test_overlap_empty_intervals_are_ignored),
          cmocka_unit_test(test_overlap_nested_staircase))
