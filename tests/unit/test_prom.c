/* common/prom: the text exposition format as Prometheus parses it: HELP/TYPE, escaped label
 * values and help text, cumulative buckets with an inclusive le placed in label order, and
 * Python's float repr for numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <string.h>

#include "prom.h"

/* The rendered text, NUL-terminated, owned by out. */
static const char *text_of(buffer_t *out) {
    assert_int_equal(buffer_append(out, "", 1), 0);
    out->len--;
    return buffer_head(out);
}

static void test_prom_number_prints_python_float_repr(void **state) {
    char buf[48];
    struct {
        double v;
        const char *want;
    } cases[] = {{0, "0.0"},         {80, "80.0"},
                 {0.25, "0.25"},     {0.1, "0.1"},
                 {1e-6, "1e-06"},    {2560, "2560.0"},
                 {INFINITY, "+Inf"}, {-INFINITY, "-Inf"},
                 {NAN, "NaN"},       {1.0 / 3, "0.3333333333333333"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        prom_number(buf, sizeof(buf), cases[i].v);
        assert_string_equal(buf, cases[i].want);
    }
}

static void test_prom_counter_has_help_type_and_escaped_labels(void **state) {
    buffer_t out;
    buffer_init(&out);
    prom_writer_t w = prom_writer(&out);
    prom_label_t labels[] = {{"model_name", "a\"b\\c\nd"}};
    prom_family(&w, "jobs_total", "counter", "Jobs done\\ or\nnot.");
    prom_sample(&w, "jobs_total", labels, 1, 3);
    prom_sample(&w, "bare", NULL, 0, 0.5);
    assert_int_equal(w.rc, 0);
    assert_string_equal(text_of(&out), "# HELP jobs_total Jobs done\\\\ or\\nnot.\n"
                                       "# TYPE jobs_total counter\n"
                                       "jobs_total{model_name=\"a\\\"b\\\\c\\nd\"} 3.0\n"
                                       "bare 0.5\n");
    buffer_clear(&out);
}

static void test_prom_histogram_buckets_are_cumulative_and_le_inclusive(void **state) {
    static const double bounds[] = {0.1, 1, 10};
    prom_histogram_t h;
    assert_int_equal(prom_histogram_init(&h, bounds, 3), 0);
    prom_histogram_observe(&h, 0.05);
    prom_histogram_observe(&h, 0.1); /* on the bound: counts in le="0.1" */
    prom_histogram_observe(&h, 5);
    prom_histogram_observe(&h, 50); /* only in +Inf */
    buffer_t out;
    buffer_init(&out);
    prom_writer_t w = prom_writer(&out);
    prom_label_t labels[] = {{"engine", "0"}, {"model_name", "m"}};
    prom_histogram(&w, "lat_seconds", "Latency.", labels, 2, &h);
    assert_int_equal(w.rc, 0);
    assert_string_equal(text_of(&out),
                        "# HELP lat_seconds Latency.\n"
                        "# TYPE lat_seconds histogram\n"
                        "lat_seconds_bucket{engine=\"0\",le=\"0.1\",model_name=\"m\"} 2.0\n"
                        "lat_seconds_bucket{engine=\"0\",le=\"1.0\",model_name=\"m\"} 2.0\n"
                        "lat_seconds_bucket{engine=\"0\",le=\"10.0\",model_name=\"m\"} 3.0\n"
                        "lat_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 4.0\n"
                        "lat_seconds_count{engine=\"0\",model_name=\"m\"} 4.0\n"
                        "lat_seconds_sum{engine=\"0\",model_name=\"m\"} 55.15\n");
    buffer_clear(&out);
    prom_histogram_clear(&h);
}

static void test_prom_le_goes_last_when_every_label_sorts_before_it(void **state) {
    static const double bounds[] = {1};
    prom_histogram_t h;
    assert_int_equal(prom_histogram_init(&h, bounds, 1), 0);
    buffer_t out;
    buffer_init(&out);
    prom_writer_t w = prom_writer(&out);
    prom_label_t labels[] = {{"code", "200"}};
    prom_histogram(&w, "x", "X.", labels, 1, &h);
    prom_histogram(&w, "y", "Y.", NULL, 0, &h);
    const char *text = text_of(&out);
    assert_non_null(strstr(text, "x_bucket{code=\"200\",le=\"1.0\"} 0.0\n"));
    assert_non_null(strstr(text, "y_bucket{le=\"+Inf\"} 0.0\n"));
    assert_non_null(strstr(text, "y_count 0.0\n"));
    buffer_clear(&out);
    prom_histogram_clear(&h);
}

UNIT_MAIN(cmocka_unit_test(test_prom_number_prints_python_float_repr),
          cmocka_unit_test(test_prom_counter_has_help_type_and_escaped_labels),
          cmocka_unit_test(test_prom_histogram_buckets_are_cumulative_and_le_inclusive),
          cmocka_unit_test(test_prom_le_goes_last_when_every_label_sorts_before_it))
