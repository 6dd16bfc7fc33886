/* The --faults SPEC parser and picker of the mock: every kind, schedules before probabilities,
 * refused on connections only, and the exact error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mock_faults.h"

static void test_mock_faults_parse_kinds_probabilities_schedules_delays(void **state) {
    mock_faults_t f;
    char err[512] = "";
    assert_int_equal(mock_faults_parse(&f,
                                       "500:0.02,429:0.01,reset-mid:0.01,not-sse@50,stall@7/2500,"
                                       "slow-headers@4,context-length:0",
                                       err, sizeof(err)),
                     0);
    assert_int_equal(f.n_rules, 7);
    assert_int_equal(f.rules[0].kind, MOCK_FAULT_500);
    assert_true(f.rules[0].probability == 0.02);
    assert_int_equal(f.rules[3].kind, MOCK_FAULT_NOT_SSE);
    assert_int_equal(f.rules[3].every, 50);
    assert_int_equal(f.rules[4].kind, MOCK_FAULT_STALL);
    assert_true(f.rules[4].delay_ms == 2500);
    assert_int_equal(f.rules[5].kind, MOCK_FAULT_SLOW_HEADERS);
    assert_int_equal(f.rules[5].every, 4);
    assert_true(f.rules[5].delay_ms == 1000); /* the default delay */
    for (int k = MOCK_FAULT_NONE + 1; k < MOCK_FAULT__COUNT; k++) {
        assert_int_equal(
            mock_faults_parse(&f, mock_fault_name((mock_fault_kind_t)k), err, sizeof(err)), 0);
        assert_int_equal(f.rules[0].kind, k);
        assert_true(f.rules[0].probability == 1); /* a bare KIND hits every request */
    }
}

static void expect_error(const char *spec, const char *message) {
    mock_faults_t f = {.n_rules = 3};
    char err[512] = "";
    assert_int_equal(mock_faults_parse(&f, spec, err, sizeof(err)), -1);
    assert_string_equal(err, message);
    assert_int_equal(f.n_rules, 3); /* untouched on error */
}

static void test_mock_faults_parse_errors_name_the_entry(void **state) {
    expect_error("", "--faults: empty SPEC (e.g. 500:0.02,reset-mid@10)");
    expect_error("500:0.1,,429", "--faults: empty entry in '500:0.1,,429'");
    expect_error("502:0.1",
                 "--faults: unknown kind '502' in '502:0.1' (kinds: 500 503 429 context-length "
                 "refused reset-headers reset-mid stall malformed truncated no-done slow-headers "
                 "event-error not-sse)");
    expect_error("500:1.5", "--faults: '500:1.5': expected KIND:P with P in [0, 1] or KIND@N "
                            "with N an integer >= 1");
    expect_error("500@0", "--faults: '500@0': expected KIND:P with P in [0, 1] or KIND@N with N "
                          "an integer >= 1");
    expect_error("500@2.5", "--faults: '500@2.5': expected KIND:P with P in [0, 1] or KIND@N "
                            "with N an integer >= 1");
    expect_error("500/10", "--faults: '500/10': only stall and slow-headers take a /MS delay");
    expect_error("stall@3/x", "--faults: 'stall@3/x': expected a delay in ms >= 0 after '/'");
    expect_error("500:0.6,503:0.5", "--faults: the probabilities add up to 1.1, more than 1 (one "
                                    "draw per request picks at most one fault)");
}

static void test_mock_faults_pick_schedules_then_one_draw(void **state) {
    mock_faults_t f;
    char err[512];
    assert_int_equal(
        mock_faults_parse(&f, "500:0.25,429:0.25,not-sse@10,refused@3", err, sizeof(err)), 0);
    assert_int_equal(mock_faults_pick(&f, 10, 0.1, 0)->kind, MOCK_FAULT_NOT_SSE);
    assert_int_equal(mock_faults_pick(&f, 20, 0.9, 0)->kind, MOCK_FAULT_NOT_SSE);
    assert_int_equal(mock_faults_pick(&f, 11, 0.1, 0)->kind, MOCK_FAULT_500);
    assert_int_equal(mock_faults_pick(&f, 11, 0.3, 0)->kind, MOCK_FAULT_429);
    assert_null(mock_faults_pick(&f, 11, 0.5, 0));
    assert_null(mock_faults_pick(&f, 3, 0.9, 0)); /* refused counts connections, not requests */
    assert_int_equal(mock_faults_pick(&f, 3, 0.9, 1)->kind, MOCK_FAULT_REFUSED);
    assert_null(mock_faults_pick(&f, 10, 0.1, 1)); /* request kinds never hit a connection */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mock_faults_parse_kinds_probabilities_schedules_delays),
        cmocka_unit_test(test_mock_faults_parse_errors_name_the_entry),
        cmocka_unit_test(test_mock_faults_pick_schedules_then_one_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
