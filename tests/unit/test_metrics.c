#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include "metrics.h"
#include "record.h"

#define MS 1000000LL
#define T0 (1000 * MS) /* send instant of every hand-built record */

/* A record sent at T0 whose chunks arrive at the given offsets (ms after the send). */
static request_record_t stream(int64_t *chunk_ns, const int64_t *offsets_ms, uint32_t n) {
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.send_ns = T0;
    rec.intended_ns = T0;
    for (uint32_t i = 0; i < n; i++)
        chunk_ns[i] = T0 + offsets_ms[i] * MS;
    rec.n_chunks = n;
    rec.chunk_ns = chunk_ns;
    rec.first_token_ns = n ? chunk_ns[0] : 0;
    rec.first_content_ns = rec.first_token_ns;
    rec.content_chunks = n;
    rec.end_ns = n ? chunk_ns[n - 1] + 1 * MS : T0 + 5 * MS;
    return rec;
}

static metrics_t metrics_of(const request_record_t *rec) {
    metrics_t m;
    metrics_compute(rec, &m);
    return m;
}

static void test_metrics_single_token_chunks_with_usage(void **state) {
    int64_t chunks[4];
    request_record_t rec = stream(chunks, (const int64_t[]){50, 60, 70, 80}, 4);
    rec.intended_ns = T0 - 2 * MS;
    rec.has_usage = true;
    rec.completion_tokens = 4;
    rec.prompt_tokens = 100;
    rec.requested_output_tokens = 4;
    metrics_t m = metrics_of(&rec);
    assert_true(m.ok);
    assert_false(m.failed);
    assert_int_equal(m.value_ns[METRIC_TTFT], 50 * MS);
    assert_int_equal(m.value_ns[METRIC_TTFC], 50 * MS);
    assert_int_equal(m.value_ns[METRIC_TPOT], 10 * MS); /* 30 ms over 3 tokens after the first */
    assert_int_equal(m.value_ns[METRIC_E2E], 81 * MS);
    assert_int_equal(m.value_ns[METRIC_SCHEDULE_LAG], 2 * MS);
    /* from the intended start: the 2 ms lag included */
    assert_int_equal(m.value_ns[METRIC_TTFT_FROM_INTENDED], 52 * MS);
    assert_int_equal(m.value_ns[METRIC_E2E_FROM_INTENDED], 83 * MS);
    assert_int_equal(m.itl_samples, 3);
    for (uint32_t i = 1; i < 4; i++) {
        uint32_t k;
        assert_int_equal(metrics_itl(&rec, i, &k), 10 * MS);
        assert_int_equal(k, 1);
    }
    assert_int_equal(m.output_tokens, 4);
    assert_true(m.output_from_usage);
    assert_int_equal(m.input_tokens, 100);
    assert_int_equal(m.output_vs_requested, 0);
}

static void test_metrics_multi_token_chunk_splits_its_gap_over_its_tokens(void **state) {
    static uint16_t tokens[] = {1, 3, 2};
    int64_t chunks[3];
    request_record_t rec = stream(chunks, (const int64_t[]){100, 130, 150}, 3);
    rec.chunk_tokens = tokens;
    rec.has_usage = true;
    rec.completion_tokens = 6;
    metrics_t m = metrics_of(&rec);
    uint32_t k;
    /* 30 ms carrying 3 tokens: three samples of 10 ms; 20 ms carrying 2: two of 10 ms */
    assert_int_equal(metrics_itl(&rec, 1, &k), 10 * MS);
    assert_int_equal(k, 3);
    assert_int_equal(metrics_itl(&rec, 2, &k), 10 * MS);
    assert_int_equal(k, 2);
    assert_int_equal(m.itl_samples, 5);
    assert_int_equal(m.value_ns[METRIC_ITL], 10 * MS);
    assert_int_equal(m.value_ns[METRIC_TPOT], 10 * MS); /* 50 ms over 6 - 1 tokens */
    assert_int_equal(m.chunk_tokens, 6);
    assert_int_equal(record_chunk_tokens(&rec), 6);
}

static void test_metrics_stream_without_usage_counts_tokens_from_chunks(void **state) {
    int64_t chunks[5];
    request_record_t rec = stream(chunks, (const int64_t[]){20, 40, 60, 80, 100}, 5);
    rec.requested_input_tokens = 250;
    rec.requested_output_tokens = 8;
    metrics_t m = metrics_of(&rec);
    bool from_usage = true;
    assert_int_equal(record_output_tokens(&rec, &from_usage), 5);
    assert_false(from_usage);
    assert_int_equal(m.output_tokens, 5);
    assert_false(m.output_from_usage);
    assert_int_equal(m.input_tokens, 250);
    assert_false(m.input_from_usage);
    assert_int_equal(m.output_vs_requested, -3);
    assert_int_equal(m.value_ns[METRIC_TPOT], 20 * MS); /* 80 ms over 4 */
}

static void test_metrics_reasoning_first_stream_separates_ttft_from_ttfc(void **state) {
    int64_t chunks[5];
    request_record_t rec = stream(chunks, (const int64_t[]){40, 45, 50, 300, 310}, 5);
    rec.reasoning_chunks = 3;
    rec.content_chunks = 2;
    rec.first_content_ns = chunks[3];
    metrics_t m = metrics_of(&rec);
    assert_int_equal(m.value_ns[METRIC_TTFT], 40 * MS);
    assert_int_equal(m.value_ns[METRIC_TTFC], 300 * MS);
    /* the gap from the last reasoning token to the first content token is an ITL sample */
    uint32_t k;
    assert_int_equal(metrics_itl(&rec, 3, &k), 250 * MS);
    assert_int_equal(m.value_ns[METRIC_TPOT], 270 * MS / 4);
}

static void test_metrics_first_token_falls_back_to_first_chunk(void **state) {
    int64_t chunks[2];
    request_record_t rec = stream(chunks, (const int64_t[]){70, 80}, 2);
    rec.first_token_ns = 0;
    rec.first_content_ns = 0;
    metrics_t m = metrics_of(&rec);
    assert_true(m.has[METRIC_TTFT]);
    assert_int_equal(m.value_ns[METRIC_TTFT], 70 * MS);
    assert_false(m.has[METRIC_TTFC]);
}

static void test_metrics_tpot_needs_two_tokens_and_two_chunks(void **state) {
    int64_t chunks[1];
    request_record_t rec = stream(chunks, (const int64_t[]){30}, 1);
    metrics_t m = metrics_of(&rec);
    assert_false(m.has[METRIC_TPOT]);
    assert_false(m.has[METRIC_ITL]);
    assert_int_equal(m.itl_samples, 0);
    /* one chunk carrying every token: decode time is invisible */
    rec.has_usage = true;
    rec.completion_tokens = 40;
    m = metrics_of(&rec);
    assert_false(m.has[METRIC_TPOT]);
    assert_true(m.has[METRIC_TTFT]);
}

static void test_metrics_error_classes_ok_failed_cancelled(void **state) {
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.error = ERROR_HTTP_5XX;
    metrics_t m = metrics_of(&rec);
    assert_true(m.failed);
    assert_false(m.ok);
    assert_false(m.cancelled);
    rec.error = ERROR_CANCELLED;
    m = metrics_of(&rec);
    assert_true(m.cancelled);
    assert_false(m.failed);
    assert_false(m.ok);
    static const struct {
        error_class_t error;
        const char *name;
    } names[] = {
        {ERROR_CONNECT, "connect"},
        {ERROR_TIMEOUT, "timeout"},
        {ERROR_HTTP_4XX, "http_4xx"},
        {ERROR_HTTP_5XX, "http_5xx"},
        {ERROR_INCOMPLETE, "incomplete"},
        {ERROR_PROTOCOL, "protocol"},
        {ERROR_CANCELLED, "cancelled"},
        {ERROR_HTTP_429, "http_429"},
        {ERROR_CONTEXT_LENGTH, "context_length"},
        {ERROR_SERVER_ERROR_EVENT, "server_error_event"},
        {ERROR_NOT_SSE, "not_sse"},
        {ERROR_NO_DONE, "no_done"},
        {ERROR_NONE, "none"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_string_equal(error_class_name(names[i].error), names[i].name);
}

static void test_metrics_schedule_lag_never_negative_and_needs_intended(void **state) {
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.send_ns = T0;
    rec.intended_ns = T0 + 1000; /* sent 1 us early */
    metrics_t m = metrics_of(&rec);
    assert_true(m.has[METRIC_SCHEDULE_LAG]);
    assert_int_equal(m.value_ns[METRIC_SCHEDULE_LAG], 0);
    assert_false(m.has[METRIC_TTFT_FROM_INTENDED]); /* no token, no end */
    assert_false(m.has[METRIC_E2E_FROM_INTENDED]);
    rec.end_ns = T0 + 5 * MS;
    m = metrics_of(&rec);
    assert_int_equal(m.value_ns[METRIC_E2E_FROM_INTENDED], 5 * MS - 1000);
    rec.intended_ns = 0;
    m = metrics_of(&rec);
    assert_false(m.has[METRIC_SCHEDULE_LAG]);
    assert_false(m.has[METRIC_E2E_FROM_INTENDED]);
    assert_false(m.has[METRIC_TTFT]);
}

/* A token-carrying chunk that says it carried 0 tokens counts as 1 everywhere: in the output
 * token count as in the ITL samples, so that samples = tokens - 1 still holds. */
static void test_metrics_chunk_of_zero_tokens_counts_as_one_token(void **state) {
    static uint16_t tokens[] = {0, 0, 2};
    int64_t chunks[3];
    request_record_t rec = stream(chunks, (const int64_t[]){10, 30, 50}, 3);
    rec.chunk_tokens = tokens;
    uint32_t k;
    assert_int_equal(metrics_itl(&rec, 1, &k), 20 * MS);
    assert_int_equal(k, 1);
    assert_int_equal(record_chunk_tokens(&rec), 1 + 1 + 2);
    metrics_t m = metrics_of(&rec);
    assert_int_equal(m.output_tokens, 4);
    assert_int_equal(m.chunk_tokens, 4);
    assert_int_equal(m.itl_samples, 4 - 1);
    assert_int_equal(m.value_ns[METRIC_ITL], 40 * MS / 3);
}

/* A chunk received before the one it follows (impossible on one clock) leaves that gap out: no
 * ITL sample at all, never a sample of 0. The chunk's token still counts. */
static void test_metrics_backwards_gap_yields_no_itl_sample(void **state) {
    int64_t chunks[4];
    request_record_t rec = stream(chunks, (const int64_t[]){10, 30, 25, 45}, 4);
    uint32_t k = 99;
    assert_int_equal(metrics_itl(&rec, 2, &k), 0);
    assert_int_equal(k, 0);
    assert_int_equal(metrics_itl(&rec, 3, &k), 20 * MS);
    assert_int_equal(k, 1);
    metrics_t m = metrics_of(&rec);
    assert_int_equal(m.itl_samples, 2);
    assert_true(m.has[METRIC_ITL]);
    assert_int_equal(m.value_ns[METRIC_ITL], 20 * MS); /* (20 + 20) / 2, the backwards gap out */
    assert_int_equal(m.output_tokens, 4);
    /* one chunk pair, and it runs backwards: no ITL at all */
    rec = stream(chunks, (const int64_t[]){30, 10}, 2); /* backwards */
    m = metrics_of(&rec);
    assert_false(m.has[METRIC_ITL]);
    assert_int_equal(m.itl_samples, 0);
    assert_false(m.has[METRIC_TPOT]);
}

/* Records arrive from the network: junk timestamps must give junk values, never undefined
 * behaviour (UBSan aborts this test on a signed overflow). */
static void test_metrics_extreme_timestamps_do_not_overflow(void **state) {
    int64_t chunks[2] = {INT64_MIN + 1, INT64_MAX};
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.send_ns = INT64_MIN + 1;
    rec.intended_ns = INT64_MIN + 1;
    rec.first_token_ns = INT64_MAX;
    rec.end_ns = INT64_MAX;
    rec.n_chunks = 2;
    rec.chunk_ns = chunks;
    metrics_t m = metrics_of(&rec);
    assert_int_equal(m.value_ns[METRIC_TTFT], UINT64_MAX - 1);
    uint32_t k;
    assert_int_equal(metrics_itl(&rec, 1, &k), UINT64_MAX - 1);
    rec.send_ns = INT64_MAX;
    m = metrics_of(&rec);
    assert_int_equal(m.value_ns[METRIC_SCHEDULE_LAG], UINT64_MAX - 1);
}

static void test_metrics_names_and_labels(void **state) {
    static const struct {
        metrics_kind_t kind;
        const char *name;
    } names[] = {{METRIC_TTFT, "ttft"},
                 {METRIC_SCHEDULE_LAG, "schedule_lag"},
                 {METRIC_TTFT_FROM_INTENDED, "ttft_from_intended"},
                 {METRIC_E2E_FROM_INTENDED, "e2e_from_intended"},
                 {METRIC__COUNT, "unknown"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_string_equal(metrics_name(names[i].kind), names[i].name);
    assert_string_equal(metrics_label(METRIC_ITL), "ITL");
}

UNIT_MAIN(cmocka_unit_test(test_metrics_single_token_chunks_with_usage),
          cmocka_unit_test(test_metrics_multi_token_chunk_splits_its_gap_over_its_tokens),
          cmocka_unit_test(test_metrics_stream_without_usage_counts_tokens_from_chunks),
          cmocka_unit_test(test_metrics_reasoning_first_stream_separates_ttft_from_ttfc),
          cmocka_unit_test(test_metrics_first_token_falls_back_to_first_chunk),
          cmocka_unit_test(test_metrics_tpot_needs_two_tokens_and_two_chunks),
          cmocka_unit_test(test_metrics_error_classes_ok_failed_cancelled),
          cmocka_unit_test(test_metrics_schedule_lag_never_negative_and_needs_intended),
          cmocka_unit_test(test_metrics_chunk_of_zero_tokens_counts_as_one_token),
          cmocka_unit_test(test_metrics_backwards_gap_yields_no_itl_sample),
          cmocka_unit_test(test_metrics_extreme_timestamps_do_not_overflow),
          cmocka_unit_test(test_metrics_names_and_labels))
