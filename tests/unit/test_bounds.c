#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "bounds.h"
#include "validity.h"

#define SECOND 1000000000LL

/* A run started at 100 s, 10 s in, grant 64, two endpoints. */
static bounds_t run_at_10s(void) {
    return (bounds_t){.start_ns = 100 * SECOND,
                      .now_ns = 110 * SECOND,
                      .session_limit = 64,
                      .n_endpoints = 2,
                      .retry_max = 5};
}

/* An honest record: session 3, sent at 105 s, HONEST_TOKENS tokens asked, as many received in as
 * many chunks. */
#define HONEST_TOKENS 16
static int64_t chunk_times[HONEST_TOKENS];
static request_record_t honest(void) {
    for (int i = 0; i < HONEST_TOKENS; i++)
        chunk_times[i] = 105 * SECOND + (i + 1) * 10000000LL;
    return (request_record_t){.session = 3,
                              .endpoint = 1,
                              .intended_ns = 105 * SECOND,
                              .send_ns = 105 * SECOND,
                              .headers_ns = 105 * SECOND + 5000000,
                              .first_token_ns = chunk_times[0],
                              .first_content_ns = chunk_times[0],
                              .end_ns = chunk_times[HONEST_TOKENS - 1],
                              .has_usage = true,
                              .prompt_tokens = 100,
                              .cached_tokens = 50,
                              .completion_tokens = HONEST_TOKENS,
                              .requested_input_tokens = 100,
                              .requested_output_tokens = HONEST_TOKENS,
                              .n_chunks = HONEST_TOKENS,
                              .chunk_ns = chunk_times,
                              .content_chunks = HONEST_TOKENS};
}

static void assert_refused_saying(const request_record_t *rec, const char *expected) {
    bounds_t b = run_at_10s();
    char why[160] = "";
    assert_false(bounds_record(&b, rec, why, sizeof why));
    assert_non_null(strstr(why, expected));
}

static void test_bounds_honest_record_passes(void **state) {
    bounds_t b = run_at_10s();
    request_record_t rec = honest();
    char why[160] = "";
    assert_true(bounds_record(&b, &rec, why, sizeof why));
    assert_string_equal(why, "");
}

static void test_bounds_2_31_completion_tokens_refused(void **state) {
    request_record_t rec = honest();
    rec.completion_tokens = 1u << 31;
    assert_refused_saying(&rec, "completion_tokens 2147483648 above the ceiling of 10000000");
}

/* More output than max_tokens is what the server said, not a worker's lie: kept (the
 * output-length check reports it), only the ceiling bounds it. */
static void test_bounds_output_above_max_tokens_is_the_servers_and_kept(void **state) {
    bounds_t b = run_at_10s();
    char why[256];
    request_record_t rec = honest();
    rec.completion_tokens = 17;
    assert_true(bounds_record(&b, &rec, why, sizeof why));
    rec = honest();
    rec.has_usage = false;
    rec.completion_tokens = 0;
    uint16_t tokens[16] = {[3] = 2};
    rec.chunk_tokens = tokens;
    assert_true(bounds_record(&b, &rec, why, sizeof why));
    rec.completion_tokens = 10000001;
    rec.has_usage = true;
    assert_false(bounds_record(&b, &rec, why, sizeof why));
}

static void test_bounds_cached_above_prompt_refused(void **state) {
    request_record_t rec = honest();
    rec.cached_tokens = 101;
    assert_refused_saying(&rec, "cached_tokens 101 above its prompt_tokens 100");
}

static void test_bounds_session_at_the_grant_refused(void **state) {
    request_record_t rec = honest();
    rec.session = 63;
    bounds_t b = run_at_10s();
    char why[160];
    assert_true(bounds_record(&b, &rec, why, sizeof why));
    rec.session = 64;
    assert_refused_saying(&rec, "session 64 at or past the grant 64");
}

static void test_bounds_session_of_another_share_refused(void **state) {
    /* concurrency 8 over 2 workers: worker 1 runs slots 4-7, sessions 4-7, 12-15, ... */
    plan_share_t share = {
        .kind = PLAN_CONCURRENT, .slot_first = 4, .slot_count = 4, .total_slots = 8};
    bounds_t b = run_at_10s();
    b.share = &share;
    request_record_t rec = honest();
    char why[160];
    rec.session = 13;
    assert_true(bounds_record(&b, &rec, why, sizeof why));
    rec.session = 11;
    assert_false(bounds_record(&b, &rec, why, sizeof why));
    assert_string_equal(why, "session 11 is not of this worker's share");
}

static void test_bounds_end_after_now_plus_slack_refused(void **state) {
    request_record_t rec = honest();
    rec.end_ns = 110 * SECOND + BOUNDS_CLOCK_SLACK_NS; /* 10 ms of drift allowance on top */
    bounds_t b = run_at_10s();
    char why[160];
    assert_true(bounds_record(&b, &rec, why, sizeof why));
    rec.end_ns = 112 * SECOND;
    assert_refused_saying(&rec, "its end time lies 12.0 s from the start, outside the run's span");
    rec = honest();
    rec.send_ns = 98 * SECOND;
    assert_refused_saying(&rec, "its send time lies -2.0 s from the start");
}

static void test_bounds_chunk_token_sum_does_not_wrap(void **state) {
    /* 65538 chunks of 65535 tokens: 2^32 + 65534, which a 32-bit sum would wrap to 65534 */
    enum { N = 65538 };
    static int64_t times[N];
    static uint16_t tokens[N];
    for (int i = 0; i < N; i++) {
        times[i] = 105 * SECOND;
        tokens[i] = 65535;
    }
    request_record_t rec = honest();
    rec.has_usage = false;
    rec.requested_output_tokens = 0;
    rec.n_chunks = N;
    rec.chunk_ns = times;
    rec.chunk_tokens = tokens;
    assert_refused_saying(&rec, "tokens in its chunks 4295032830 above the ceiling");
}

static void test_bounds_endpoint_and_retries_refused(void **state) {
    request_record_t rec = honest();
    rec.endpoint = 2;
    assert_refused_saying(&rec, "endpoint 2, the run has 2");
    rec = honest();
    rec.retries = 6;
    assert_refused_saying(&rec, "6 retries after 429s, target.retry_429_max is 5");
}

static void test_bounds_loop_times_within_the_run(void **state) {
    bounds_t b = run_at_10s();
    char why[160] = "";
    assert_true(bounds_loop_times(&b, 2 * SECOND, 10 * SECOND, -1, why, sizeof why));
    assert_false(bounds_loop_times(&b, 2 * SECOND, 1000 * SECOND, 0, why, sizeof why));
    assert_string_equal(why, "its loop wall time of 1000.0 s is outside the run's 12.0 s so far");
    assert_false(bounds_loop_times(&b, -1, SECOND, 0, why, sizeof why));
}

static void test_bounds_refused_numbers_make_the_run_invalid(void **state) {
    validity_worker_t workers[1] = {{.name = "liar",
                                     .refused = 3,
                                     .refused_first = "the record of request 1: completion_tokens "
                                                      "2147483648 above the ceiling"}};
    validity_input_t in = {.requests_ok = 10, .workers = workers, .n_workers = 1};
    validity_t v;
    validity_judge(&in, &v);
    assert_false(v.valid);
    assert_int_equal(v.n_reasons, 1);
    assert_non_null(strstr(v.reasons[0], "worker liar reported 3 numbers outside what the plan "
                                         "allows, refused (the first: the record of request 1"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_honest_record_passes),
        cmocka_unit_test(test_bounds_2_31_completion_tokens_refused),
        cmocka_unit_test(test_bounds_output_above_max_tokens_is_the_servers_and_kept),
        cmocka_unit_test(test_bounds_cached_above_prompt_refused),
        cmocka_unit_test(test_bounds_session_at_the_grant_refused),
        cmocka_unit_test(test_bounds_session_of_another_share_refused),
        cmocka_unit_test(test_bounds_end_after_now_plus_slack_refused),
        cmocka_unit_test(test_bounds_chunk_token_sum_does_not_wrap),
        cmocka_unit_test(test_bounds_endpoint_and_retries_refused),
        cmocka_unit_test(test_bounds_loop_times_within_the_run),
        cmocka_unit_test(test_bounds_refused_numbers_make_the_run_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
