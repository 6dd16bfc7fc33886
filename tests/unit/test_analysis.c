/* The sweep analysis: the Student-t interval across repetitions, the saturation points of the
 * reference report's Phase 0 table, and the power-law fits in log space. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "analysis.h"
#include "unit_main.h"

static void assert_near(double got, double want, double tolerance) {
    if (!(fabs(got - want) <= tolerance))
        fail_msg("got %.6f, expected %.6f (+- %g)", got, want, tolerance);
}

static void test_analysis_t_quantiles(void **state) {
    assert_near(analysis_t975(1), 12.706, 1e-9);
    assert_near(analysis_t975(2), 4.303, 1e-9);
    assert_near(analysis_t975(30), 2.042, 1e-9);
    assert_near(analysis_t975(60), 2.000, 0.002);   /* tables: 2.000 */
    assert_near(analysis_t975(1000), 1.962, 0.001); /* tables: 1.962 */
    assert_true(isnan(analysis_t975(0)));
}

static void test_analysis_interval_of_three_repetitions(void **state) {
    double values[] = {10, 12, 14};
    analysis_summary_t s;
    analysis_summarise(values, 3, &s);
    assert_int_equal(s.n, 3);
    assert_near(s.mean, 12, 1e-12);
    assert_near(s.stddev, 2, 1e-12);
    double half = 4.303 * 2 / sqrt(3);
    assert_near(s.ci95_low, 12 - half, 1e-9);
    assert_near(s.ci95_high, 12 + half, 1e-9);
}

static void test_analysis_one_value_has_no_interval_and_nan_is_skipped(void **state) {
    double values[] = {NAN, 7, NAN};
    analysis_summary_t s;
    analysis_summarise(values, 3, &s);
    assert_int_equal(s.n, 1);
    assert_near(s.mean, 7, 0);
    assert_near(s.stddev, 0, 0);
    assert_true(isnan(s.ci95_low) && isnan(s.ci95_high));
    analysis_summarise(values, 0, &s);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.mean));
}

/* sweep-combined-50-120.md (Phase 0): TPOT p50, TTFT p50, errors; 120 had 7-8 % errors in the
 * runs that the report's "Sustained >5 % errors: Concurrency 120" counts. */
static void test_analysis_saturation_of_the_reference_table(void **state) {
    double c[] = {50, 60, 70, 80, 90, 100, 110, 120};
    double tpot[] = {44, 47, 56, 59, 67, 79, 83, 84};
    double ttft[] = {174, 186, 206, 222, 231, 258, 2214, 297};
    double errors[] = {0, 0, 0, 0, 0, 0, 1.7, 7.5};
    analysis_point_t points[8];
    for (int i = 0; i < 8; i++)
        points[i] = (analysis_point_t){c[i], errors[i], ttft[i], tpot[i], 1000};
    analysis_saturation_t s;
    analysis_saturation(points, 8, &s);
    assert_int_equal(s.first_errors, 6);     /* 110 (1.7 %) */
    assert_int_equal(s.sustained_errors, 7); /* 120 */
    assert_int_equal(s.ttft_knee, 6);        /* 110 */
    assert_int_equal(s.tpot_plateau, 6);     /* 83 -> 84 ms */
    assert_near(s.plateau_tpot_ms, 83.5, 1e-9);
}

static void test_analysis_errors_that_stop_are_not_sustained(void **state) {
    analysis_point_t points[] = {{10, 0, 100, 10, 1}, {20, 8, 100, 20, 1}, {30, 0, 100, 40, 1}};
    analysis_saturation_t s;
    analysis_saturation(points, 3, &s);
    assert_int_equal(s.first_errors, 1);
    assert_int_equal(s.sustained_errors, -1);
    assert_int_equal(s.ttft_knee, -1);
    assert_int_equal(s.tpot_plateau, -1); /* still rising at the last level */
    assert_true(isnan(s.plateau_tpot_ms));
}

static void test_analysis_fit_recovers_a_power_law(void **state) {
    double x[] = {1, 2, 4, 8, 16, 32};
    double y[6];
    for (int i = 0; i < 6; i++)
        y[i] = 7.91 * pow(x[i], 0.3);
    analysis_fit_t fit;
    analysis_fit_power(x, y, 6, &fit);
    assert_true(fit.ok);
    assert_int_equal(fit.n, 6);
    assert_near(fit.exponent, 0.3, 1e-9);
    assert_near(fit.base, 7.91, 1e-9);
    assert_near(fit.r2, 1, 1e-12);
    /* noise lowers R^2 and moves the exponent a little */
    double noisy[] = {8.5, 9.0, 11.5, 14.0, 18.5, 28.0};
    analysis_fit_power(x, noisy, 6, &fit);
    assert_true(fit.ok && fit.r2 < 1 && fit.r2 > 0.9);
    assert_true(fit.exponent > 0.2 && fit.exponent < 0.45);
}

static void test_analysis_fit_needs_two_positive_distinct_points(void **state) {
    analysis_fit_t fit;
    double x[] = {4, 4, 0, 8};
    double y[] = {10, 12, 5, -1};
    analysis_fit_power(x, y, 4, &fit); /* x = 0 and y < 0 left out: two points at x = 4 */
    assert_false(fit.ok);
    assert_int_equal(fit.n, 2);
    analysis_fit_power(x, y, 1, &fit);
    assert_false(fit.ok);
}

UNIT_MAIN(cmocka_unit_test(test_analysis_t_quantiles),
          cmocka_unit_test(test_analysis_interval_of_three_repetitions),
          cmocka_unit_test(test_analysis_one_value_has_no_interval_and_nan_is_skipped),
          cmocka_unit_test(test_analysis_saturation_of_the_reference_table),
          cmocka_unit_test(test_analysis_errors_that_stop_are_not_sustained),
          cmocka_unit_test(test_analysis_fit_recovers_a_power_law),
          cmocka_unit_test(test_analysis_fit_needs_two_positive_distinct_points))
