/* controller/telemetry_stats: the shared-rig guard's threshold. A server that finished more than
 * 10 % and more than 5 requests above what the run sent served someone else; fewer served (the
 * run's failures) or an unknown count never trips it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>

#include "telemetry_stats.h"

static void test_telemetry_stats_guard_needs_ten_percent_and_five_requests_over(void **state) {
    assert_false(telemetry_stats_served_others(110, 100)); /* 10 over: exactly 10 % */
    assert_true(telemetry_stats_served_others(111, 100));
    assert_false(telemetry_stats_served_others(25, 20)); /* 5 over: 25 %, but only 5 */
    assert_true(telemetry_stats_served_others(26, 20));
    assert_true(telemetry_stats_served_others(6, 0)); /* someone else on an idle run */
    assert_false(telemetry_stats_served_others(5, 0));
}

static void test_telemetry_stats_guard_ignores_fewer_served_and_unknown_counts(void **state) {
    assert_false(telemetry_stats_served_others(0, 1000)); /* the run's requests failed */
    assert_false(telemetry_stats_served_others(NAN, 0));  /* the page has no request counter */
}

UNIT_MAIN(cmocka_unit_test(test_telemetry_stats_guard_needs_ten_percent_and_five_requests_over),
          cmocka_unit_test(test_telemetry_stats_guard_ignores_fewer_served_and_unknown_counts))
