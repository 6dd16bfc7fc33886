/* The measurement window's arithmetic on synthetic records: which snapshot a record belongs to
 * (its send time, half-open spans), what is excluded (warm-up, after the window, failed and
 * cancelled from the latencies), rates by the time things happened, pooled against averaged
 * percentiles, and a window cut short. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "unit_main.h"
#include "window.h"

#define MS 1000000LL
#define S 1000000000LL
#define START (100 * S) /* the window opens here (run start + warm-up) */

/* A one-node session request sent at send, first token after ttft, n_chunks one-token chunks
 * gap apart. chunks must hold n_chunks. */
static request_record_t record(int64_t send, int64_t ttft, uint32_t n_chunks, int64_t gap,
                               int64_t *chunks) {
    request_record_t rec = {0};
    rec.send_ns = send;
    rec.intended_ns = send;
    rec.first_token_ns = rec.first_content_ns = send + ttft;
    for (uint32_t i = 0; i < n_chunks; i++)
        chunks[i] = send + ttft + (int64_t)i * gap;
    rec.n_chunks = n_chunks;
    rec.chunk_ns = chunks;
    rec.end_ns = chunks[n_chunks - 1] + MS;
    rec.content_chunks = n_chunks;
    rec.session_end = true;
    return rec;
}

static void add(window_t *w, request_record_t *rec) {
    metrics_t m;
    metrics_compute(rec, &m);
    window_add(w, rec, &m);
}

static void test_window_record_goes_to_the_snapshot_it_was_sent_in(void **state) {
    window_t *w = window_new(START, 10 * S, 3);
    assert_non_null(w);
    int64_t chunks[2];
    int64_t sends[] = {START - 1,      START,          START + 10 * S - 1,
                       START + 10 * S, START + 29 * S, START + 30 * S};
    for (size_t i = 0; i < sizeof sends / sizeof sends[0]; i++) {
        request_record_t rec = record(sends[i], 50 * MS, 2, 10 * MS, chunks);
        add(w, &rec);
    }
    /* before the window (warm-up) and at its end (after): in no snapshot */
    assert_int_equal(window_snapshot(w, 0)->ok, 2);
    assert_int_equal(window_snapshot(w, 1)->ok, 1);
    assert_int_equal(window_snapshot(w, 2)->ok, 1);
    assert_int_equal(window_total(w)->ok, 4);
    assert_int_equal(window_total(w)->session_starts, 4);
    assert_int_equal(histogram_count(window_total(w)->latency[METRIC_TTFT]), 4);
    assert_true(window_edge_ns(w, 1) == START + 10 * S);
    assert_true(window_edge_ns(w, 3) == START + 30 * S);
    assert_true(window_total(w)->duration_ns == 30 * S);
    window_destroy(&w);
    assert_null(w);
}

static void test_window_failed_and_cancelled_stay_out_of_the_latencies(void **state) {
    window_t *w = window_new(START, 10 * S, 1);
    int64_t chunks[3];
    request_record_t ok = record(START + S, 40 * MS, 3, 5 * MS, chunks);
    add(w, &ok);
    request_record_t failed = record(START + 2 * S, 900 * MS, 1, 0, chunks);
    failed.error = ERROR_HTTP_5XX;
    add(w, &failed);
    request_record_t cancelled = record(START + 3 * S, 900 * MS, 1, 0, chunks);
    cancelled.error = ERROR_CANCELLED;
    add(w, &cancelled);
    const window_stats_t *t = window_total(w);
    assert_int_equal(t->ok, 1);
    assert_int_equal(t->failed, 1);
    assert_int_equal(t->cancelled, 1);
    assert_int_equal(histogram_count(t->latency[METRIC_TTFT]), 1);
    assert_true(fabs(window_stats_percentile_ms(t, METRIC_TTFT, 50) - 40) < 0.05);
    /* ITL: every per-token gap of the ok request */
    assert_int_equal(histogram_count(t->latency[METRIC_ITL]), 2);
    assert_true(fabs(window_stats_error_pct(t) - 50) < 1e-9);
    assert_true(window_stats_percentile_ms(window_snapshot(w, 0), METRIC_E2E, 50) > 0);
    window_destroy(&w);
}

static void test_window_rates_count_tokens_when_they_arrived(void **state) {
    window_t *w = window_new(START, 10 * S, 2);
    int64_t chunks[4];
    /* sent in the warm-up, its tokens arrive in snapshot 0 and 1: they count there */
    request_record_t rec = record(START - S, 500 * MS, 4, 4 * S, chunks);
    add(w, &rec);
    /* chunks at START-0.5s, +3.5s, +7.5s, +11.5s */
    assert_int_equal(window_snapshot(w, 0)->output_tokens, 2);
    assert_int_equal(window_snapshot(w, 1)->output_tokens, 1);
    assert_int_equal(window_total(w)->output_tokens, 3);
    assert_int_equal(window_snapshot(w, 1)->requests_ended, 1);
    assert_true(window_last_end_ns(w) == rec.end_ns);
    assert_int_equal(window_total(w)->ok, 0); /* sent before the window */
    assert_int_equal(window_total(w)->session_starts, 0);
    assert_true(fabs(window_stats_per_s(window_total(w), window_total(w)->output_tokens) - 0.15) <
                1e-9);
    window_destroy(&w);
}

static void test_window_pooled_percentile_is_not_the_mean_of_snapshots(void **state) {
    window_t *w = window_new(START, 10 * S, 2);
    int64_t chunks[2];
    /* snapshot 0: nine requests at 100 ms TTFT; snapshot 1: one at 1000 ms */
    for (int i = 0; i < 9; i++) {
        request_record_t rec = record(START + i * 100 * MS, 100 * MS, 2, MS, chunks);
        add(w, &rec);
    }
    request_record_t slow = record(START + 15 * S, 1000 * MS, 2, MS, chunks);
    add(w, &slow);
    double p0 = window_stats_percentile_ms(window_snapshot(w, 0), METRIC_TTFT, 50);
    double p1 = window_stats_percentile_ms(window_snapshot(w, 1), METRIC_TTFT, 50);
    double whole = window_stats_percentile_ms(window_total(w), METRIC_TTFT, 50);
    assert_true(fabs(p0 - 100) < 0.1);
    assert_true(fabs(p1 - 1000) < 1);
    assert_true(fabs(whole - 100) < 0.1);       /* exact over the ten samples */
    assert_true(fabs((p0 + p1) / 2 - 550) < 1); /* what averaging the snapshots would say */

    /* pooling two windows equals one window holding every sample */
    window_stats_t pooled;
    assert_int_equal(window_stats_init(&pooled), 0);
    window_stats_pool(&pooled, window_snapshot(w, 0));
    window_stats_pool(&pooled, window_snapshot(w, 1));
    assert_true(
        histogram_equal(pooled.latency[METRIC_TTFT], window_total(w)->latency[METRIC_TTFT]));
    assert_int_equal(pooled.ok, 10);
    assert_true(pooled.duration_ns == 20 * S);
    window_stats_free(&pooled);
    window_destroy(&w);
}

static void test_window_closed_early_divides_by_the_time_measured(void **state) {
    window_t *w = window_new(START, 10 * S, 3);
    window_close(w, START + 15 * S);
    assert_true(window_snapshot(w, 0)->duration_ns == 10 * S);
    assert_true(window_snapshot(w, 1)->duration_ns == 5 * S);
    assert_true(window_snapshot(w, 2)->duration_ns == 0);
    assert_true(window_total(w)->duration_ns == 15 * S);
    assert_true(window_stats_per_s(window_snapshot(w, 2), 10) == 0);
    window_destroy(&w);
}

static void test_window_refuses_an_empty_window(void **state) {
    assert_null(window_new(START, 0, 3));
    assert_null(window_new(START, S, 0));
}

/* Finish reasons and refusals are counted over the ok requests of the span, and pool by adding. */
static void test_window_counts_finish_reasons_and_refusals_of_ok_requests(void **state) {
    window_t *w = window_new(START, 10 * S, 2);
    int64_t chunks[2];
    request_record_t rec = record(START + S, 40 * MS, 2, 5 * MS, chunks);
    rec.finish_reason = FINISH_LENGTH;
    add(w, &rec);
    rec = record(START + 11 * S, 40 * MS, 2, 5 * MS, chunks);
    rec.finish_reason = FINISH_STOP;
    rec.refusal = true;
    add(w, &rec);
    rec = record(START + 12 * S, 40 * MS, 2, 5 * MS, chunks);
    rec.finish_reason = FINISH_STOP;
    rec.refusal = true;
    rec.error = ERROR_HTTP_5XX; /* failed: counted nowhere here */
    add(w, &rec);
    assert_int_equal(window_snapshot(w, 0)->finish_reasons[FINISH_LENGTH], 1);
    assert_int_equal(window_snapshot(w, 1)->finish_reasons[FINISH_STOP], 1);
    const window_stats_t *t = window_total(w);
    assert_int_equal(t->finish_reasons[FINISH_LENGTH], 1);
    assert_int_equal(t->finish_reasons[FINISH_STOP], 1);
    assert_int_equal(t->refusals, 1);
    window_stats_t pooled;
    assert_int_equal(window_stats_init(&pooled), 0);
    window_stats_pool(&pooled, t);
    window_stats_pool(&pooled, t);
    assert_int_equal(pooled.finish_reasons[FINISH_STOP], 2);
    assert_int_equal(pooled.refusals, 2);
    window_stats_free(&pooled);
    window_destroy(&w);
}

UNIT_MAIN(cmocka_unit_test(test_window_record_goes_to_the_snapshot_it_was_sent_in),
          cmocka_unit_test(test_window_failed_and_cancelled_stay_out_of_the_latencies),
          cmocka_unit_test(test_window_rates_count_tokens_when_they_arrived),
          cmocka_unit_test(test_window_pooled_percentile_is_not_the_mean_of_snapshots),
          cmocka_unit_test(test_window_closed_early_divides_by_the_time_measured),
          cmocka_unit_test(test_window_refuses_an_empty_window),
          cmocka_unit_test(test_window_counts_finish_reasons_and_refusals_of_ok_requests))
