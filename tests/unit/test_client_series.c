#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include "client_series.h"

static void test_client_series_keeps_every_sample_below_the_cap(void **state) {
    client_series_t *s = client_series_new();
    assert_non_null(s);
    client_series_add(s, 1.0, 4, 2.5);
    client_series_add(s, 2.0, 8, 5.0);
    json_t *j = client_series_json(s);
    assert_int_equal(json_array_size(json_object_get(j, "t_s")), 2);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "in_flight"), 1)), 8);
    assert_float_equal(json_real_value(json_array_get(json_object_get(j, "requests_per_s"), 0)),
                       2.5, 1e-12);
    json_decref(j);
    client_series_destroy(&s);
    assert_null(s);
}

static void test_client_series_halves_past_the_cap_and_keeps_the_span(void **state) {
    client_series_t *s = client_series_new();
    /* three times the cap, one a second: the kept samples cover the whole run, evenly spaced */
    size_t offered = 3 * CLIENT_SERIES_MAX;
    for (size_t i = 0; i < offered; i++)
        client_series_add(s, (double)i, (uint32_t)i, 1.0);
    json_t *j = client_series_json(s);
    const json_t *t = json_object_get(j, "t_s");
    size_t n = json_array_size(t);
    assert_true(n <= CLIENT_SERIES_MAX && n >= CLIENT_SERIES_MAX / 2);
    assert_float_equal(json_real_value(json_array_get(t, 0)), 0.0, 1e-12);
    double step = json_real_value(json_array_get(t, 1)) - json_real_value(json_array_get(t, 0));
    assert_float_equal(step, 4.0, 1e-12); /* halved twice */
    for (size_t i = 1; i < n; i++)
        assert_float_equal(json_real_value(json_array_get(t, i)) -
                               json_real_value(json_array_get(t, i - 1)),
                           step, 1e-12);
    assert_true(json_real_value(json_array_get(t, n - 1)) >= (double)offered - step);
    json_decref(j);
    client_series_destroy(&s);
}

UNIT_MAIN(cmocka_unit_test(test_client_series_keeps_every_sample_below_the_cap),
          cmocka_unit_test(test_client_series_halves_past_the_cap_and_keeps_the_span))
