#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "merge.h"

#define MS 1000000LL
#define S (1000 * MS)

static char *urls[] = {"http://10.0.0.1:8000", "http://10.0.0.2:8000", "http://10.0.0.3:8000"};

/* A run over three endpoints; a merge keeps a pointer to its config, so this one lives on. */
static const config_t three = {.target = {.endpoints = urls, .n_endpoints = 3}};

typedef struct fixture {
    request_record_t rec;
    int64_t chunk_ns[16];
    uint16_t chunk_tokens[16];
} fixture_t;

/* An ok request sent at `send`, TTFT ttft_ms, then n_chunks - 1 chunks every itl_ms. */
static request_record_t *make(fixture_t *f, int64_t send, int64_t ttft_ms, uint32_t n_chunks,
                              int64_t itl_ms) {
    memset(f, 0, sizeof *f);
    request_record_t *rec = &f->rec;
    rec->send_ns = send;
    rec->intended_ns = send;
    for (uint32_t i = 0; i < n_chunks; i++) {
        f->chunk_ns[i] = send + ttft_ms * MS + i * itl_ms * MS;
        f->chunk_tokens[i] = 1;
    }
    rec->n_chunks = n_chunks;
    rec->chunk_ns = f->chunk_ns;
    rec->first_token_ns = n_chunks ? f->chunk_ns[0] : 0;
    rec->first_content_ns = rec->first_token_ns;
    rec->end_ns = n_chunks ? f->chunk_ns[n_chunks - 1] : send + 10 * MS;
    return rec;
}

/* An ok request sent at send_ms whose n chunks (one token each) arrive at the given instants (ms
 * on the controller's clock); it ends 1 ms after the last chunk. */
static request_record_t *at(fixture_t *f, int64_t send_ms, const int64_t *chunk_ms, uint32_t n) {
    memset(f, 0, sizeof *f);
    request_record_t *rec = &f->rec;
    rec->send_ns = send_ms * MS;
    for (uint32_t i = 0; i < n; i++)
        f->chunk_ns[i] = chunk_ms[i] * MS;
    rec->n_chunks = n;
    rec->chunk_ns = f->chunk_ns;
    rec->first_token_ns = rec->first_content_ns = f->chunk_ns[0];
    rec->end_ns = f->chunk_ns[n - 1] + MS;
    return rec;
}

static void test_merge_counts_requests_per_endpoint(void **state) {
    merge_t *m = merge_new(&three);
    assert_non_null(m);
    fixture_t f;
    for (int i = 0; i < 30; i++) {
        request_record_t *rec = make(&f, 10 * S + i * MS, 50 + i % 3, 4, 10);
        rec->endpoint = (uint32_t)(i % 3);
        merge_add(m, rec);
    }
    assert_int_equal(merge_endpoint_count(m), 3);
    for (size_t e = 0; e < 3; e++) {
        assert_string_equal(merge_endpoint_url(m, e), urls[e]);
        assert_int_equal(merge_endpoint_sent(m, e), 10);
        assert_int_equal(merge_endpoint(m, e)->requests, 10);
        assert_int_equal(merge_endpoint(m, e)->ok, 10);
        /* endpoint e saw only TTFT 50 + e ms */
        assert_int_equal(histogram_percentile(merge_endpoint(m, e)->latency[METRIC_TTFT], 50),
                         (50 + e) * MS);
    }
    assert_int_equal(merge_overall(m)->requests, 30);
    assert_int_equal(histogram_count(merge_overall(m)->latency[METRIC_TTFT]), 30);
    assert_int_equal(merge_unplaced(m), 0);
    merge_destroy(&m);
    assert_null(m);
}

static void test_merge_excludes_warmup_from_statistics(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    for (int i = 0; i < 5; i++) {
        request_record_t *rec = make(&f, S, 9000, 3, 10); /* a 9 s TTFT must not show */
        rec->warmup = true;
        rec->error = i == 0 ? ERROR_HTTP_5XX : ERROR_NONE;
        merge_add(m, rec);
    }
    for (int i = 0; i < 10; i++)
        merge_add(m, make(&f, 20 * S, 100, 3, 10));
    const merge_stats_t *all = merge_overall(m);
    assert_int_equal(merge_warmup(m), 5);
    assert_int_equal(merge_warmup_failed(m), 1);
    assert_int_equal(merge_records(m), 15);
    assert_int_equal(all->requests, 10);
    assert_int_equal(all->failed, 0);
    assert_int_equal(histogram_max(all->latency[METRIC_TTFT]), 100 * MS);
    assert_int_equal(histogram_count(all->latency[METRIC_ITL]), 20);
    /* the routing balance counts every request sent, warm-up included */
    assert_int_equal(merge_endpoint_sent(m, 0), 15);
    merge_destroy(&m);
}

static void test_merge_counts_errors_by_class_outside_latency(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    static const error_class_t outcomes[] = {ERROR_NONE,      ERROR_HTTP_5XX,  ERROR_HTTP_5XX,
                                             ERROR_TIMEOUT,   ERROR_CANCELLED, ERROR_CANCELLED,
                                             ERROR_CANCELLED, ERROR_NONE,      ERROR_CONNECT};
    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++) {
        request_record_t *rec = make(&f, S, 40, 3, 10);
        rec->error = outcomes[i];
        rec->endpoint = 1;
        merge_add(m, rec);
    }
    const merge_stats_t *all = merge_overall(m);
    assert_int_equal(all->requests, 9);
    assert_int_equal(all->ok, 2);
    assert_int_equal(all->failed, 4);
    assert_int_equal(all->cancelled, 3);
    assert_int_equal(all->errors[ERROR_HTTP_5XX], 2);
    assert_int_equal(all->errors[ERROR_TIMEOUT], 1);
    assert_int_equal(all->errors[ERROR_CONNECT], 1);
    assert_int_equal(all->errors[ERROR_CANCELLED], 3);
    assert_int_equal(all->errors[ERROR_NONE], 0);
    for (int k = 0; k < METRIC__COUNT; k++)
        if (k != METRIC_ITL && k != METRIC_TPOT && k != METRIC_SCHEDULE_LAG)
            assert_int_equal(histogram_count(all->latency[k]), 2);
    assert_int_equal(histogram_count(all->latency[METRIC_ITL]), 4);
    /* how late a send was counts for the failed sends too (2 ok + 4 failed), never the cancelled */
    assert_int_equal(histogram_count(all->latency[METRIC_SCHEDULE_LAG]), 6);
    assert_int_equal(merge_endpoint(m, 1)->failed, 4);
    assert_int_equal(merge_endpoint(m, 0)->requests, 0);
    merge_destroy(&m);
}

static void test_merge_records_every_itl_sample_in_every_slice(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    request_record_t *rec = make(&f, S, 30, 4, 12);
    f.chunk_tokens[1] = 3; /* 12 ms carrying 3 tokens: three samples of 4 ms */
    f.chunk_tokens[2] = 2; /* two samples of 6 ms */
    rec->chunk_tokens = f.chunk_tokens;
    rec->role = 2;
    rec->endpoint = 2;
    merge_add(m, rec);
    const histogram_t *slices[] = {merge_overall(m)->latency[METRIC_ITL],
                                   merge_endpoint(m, 2)->latency[METRIC_ITL],
                                   merge_role(m, 2)->latency[METRIC_ITL]};
    for (int s = 0; s < 3; s++) {
        assert_int_equal(histogram_count(slices[s]), 6);
        assert_int_equal(histogram_min(slices[s]), 4 * MS);
        assert_int_equal(histogram_max(slices[s]), 12 * MS);
        assert_true(histogram_mean(slices[s]) == (double)(3 * 4 * MS + 2 * 6 * MS + 12 * MS) / 6.0);
    }
    assert_int_equal(merge_role_count(m), 3);
    assert_null(merge_role(m, 0));
    assert_null(merge_role(m, 1));
    merge_destroy(&m);
}

static void test_merge_counts_tokens_and_their_source(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    request_record_t *rec = make(&f, S, 30, 5, 10);
    rec->has_usage = true;
    rec->completion_tokens = 5;
    rec->prompt_tokens = 200;
    rec->cached_tokens = 128;
    rec->requested_output_tokens = 5;
    merge_add(m, rec);
    rec = make(&f, S, 30, 3, 10); /* no usage: 3 tokens counted from chunks, 4 requested */
    rec->requested_input_tokens = 90;
    rec->requested_output_tokens = 4;
    merge_add(m, rec);
    rec = make(&f, S, 30, 2, 10); /* usage says 7 over 2 chunks */
    rec->has_usage = true;
    rec->completion_tokens = 7;
    rec->prompt_tokens = 10;
    merge_add(m, rec);
    const merge_stats_t *all = merge_overall(m);
    assert_int_equal(all->output_tokens, 5 + 3 + 7);
    assert_int_equal(all->input_tokens, 200 + 90 + 10);
    assert_int_equal(all->cached_tokens, 128);
    assert_int_equal(all->usage_prompt_tokens, 210);
    assert_int_equal(all->output_from_usage, 2);
    assert_int_equal(all->output_from_chunks, 1);
    assert_int_equal(all->usage_chunks_differ, 1);
    assert_int_equal(all->requested_checked, 2);
    assert_int_equal(all->requested_output_tokens, 9);
    assert_int_equal(all->received_output_tokens, 8);
    assert_int_equal(all->output_mismatched, 1);
    merge_destroy(&m);
}

/* Per finish_reason and refusal counts are over the ok requests; with exact lengths asked, a
 * `stop` short of max_tokens is counted as stopped early, and a reply counted from its chunks
 * that ended on `length` reached the length (its events carried several tokens). */
static void test_merge_counts_finish_reasons_refusals_and_early_stops(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    request_record_t *rec = make(&f, S, 30, 5, 10); /* usage 3 of 8 asked, stop: early */
    rec->has_usage = true;
    rec->completion_tokens = 3;
    rec->requested_output_tokens = 8;
    rec->finish_reason = FINISH_STOP;
    merge_add(m, rec);
    rec = make(&f, S, 30, 4, 10); /* chunks 4 of 8 asked, length: reached, no mismatch */
    rec->requested_output_tokens = 8;
    rec->finish_reason = FINISH_LENGTH;
    merge_add(m, rec);
    rec = make(&f, S, 30, 4, 10); /* chunks 4 of 8 asked, stop: early and a mismatch */
    rec->requested_output_tokens = 8;
    rec->finish_reason = FINISH_STOP;
    merge_add(m, rec);
    rec = make(&f, S, 30, 2, 10); /* a refusal, tool_calls, unchecked */
    rec->refusal = true;
    rec->finish_reason = FINISH_TOOL_CALLS;
    merge_add(m, rec);
    rec = make(&f, S, 30, 2, 10); /* failed: in no count */
    rec->error = ERROR_HTTP_500;
    rec->refusal = true;
    rec->finish_reason = FINISH_STOP;
    merge_add(m, rec);
    const merge_stats_t *all = merge_overall(m);
    assert_int_equal(all->finish_reasons[FINISH_STOP], 2);
    assert_int_equal(all->finish_reasons[FINISH_LENGTH], 1);
    assert_int_equal(all->finish_reasons[FINISH_TOOL_CALLS], 1);
    assert_int_equal(all->finish_reasons[FINISH_NONE], 0);
    assert_int_equal(all->refusals, 1);
    assert_int_equal(all->requested_checked, 3);
    assert_int_equal(all->output_mismatched, 2);
    assert_int_equal(all->stopped_early, 2);
    merge_stats_t *pooled = merge_stats_new();
    merge_stats_pool(pooled, all);
    merge_stats_pool(pooled, all);
    assert_int_equal(pooled->finish_reasons[FINISH_STOP], 4);
    assert_int_equal(pooled->refusals, 2);
    assert_int_equal(pooled->stopped_early, 4);
    merge_stats_destroy(&pooled);
    merge_destroy(&m);
}

static void test_merge_digest_is_a_wrapping_sum_independent_of_split(void **state) {
    merge_t *whole = merge_new(&three), *a = merge_new(&three), *b = merge_new(&three);
    fixture_t f;
    uint64_t expected = 0;
    for (uint64_t i = 0; i < 100; i++) {
        request_record_t *rec = make(&f, S, 30, 2, 10);
        rec->workload_hash = UINT64_MAX / 3 * (i + 1) + i;
        rec->warmup = i < 10;
        rec->error = i % 7 == 0 ? ERROR_CANCELLED : ERROR_NONE;
        expected += rec->workload_hash;
        merge_add(whole, rec);
        merge_add(i % 2 ? a : b, rec);
    }
    assert_int_equal(merge_digest(whole), expected);
    assert_int_equal(merge_digest(a) + merge_digest(b), expected);
    merge_destroy(&whole);
    merge_destroy(&a);
    merge_destroy(&b);
}

static void test_merge_duration_and_sessions(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    for (int i = 0; i < 6; i++) {
        request_record_t *rec = make(&f, 10 * S + i * S, 100, 2, 100); /* ends 200 ms later */
        rec->session_end = i % 2 == 1;
        merge_add(m, rec);
    }
    assert_int_equal(merge_overall(m)->sessions_ended, 3);
    /* no window set: from the first send (10 s) to the last end (15.2 s) */
    assert_true(merge_duration_s(m) > 5.2 - 1e-9 && merge_duration_s(m) < 5.2 + 1e-9);
    merge_set_run_window(m, 9 * S, 19 * S);
    /* open, or closed by a count limit: up to the last end */
    assert_true(merge_duration_s(m) > 6.2 - 1e-9 && merge_duration_s(m) < 6.2 + 1e-9);
    merge_close_run_window(m, false);
    assert_true(merge_duration_s(m) > 6.2 - 1e-9 && merge_duration_s(m) < 6.2 + 1e-9);
    /* the duration ran out: up to its limit, however early the last request ended */
    merge_close_run_window(m, true);
    assert_true(merge_duration_s(m) == 10.0);
    const char *reason = NULL;
    assert_false(merge_partial(m, &reason));
    merge_mark_partial(m, "interrupted (SIGINT)");
    assert_true(merge_partial(m, &reason));
    assert_string_equal(reason, "interrupted (SIGINT)");
    merge_destroy(&m);
}

/* The rates' window arithmetic with hand-built records straddling W0 = 10 s and W1 = 20 s: tokens
 * count by chunk receive time from every record (warm-up and failed included), requests, input
 * tokens and sessions by end time; the latency statistics still leave the warm-up out. */
static void test_merge_window_counts_tokens_by_chunk_time_and_requests_by_end(void **state) {
    merge_t *m = merge_new(&three);
    merge_set_run_window(m, 10 * S, 20 * S);
    fixture_t f;
    /* A: warm-up, chunks 8.5 s .. 13.0 s every 0.5 s: 7 of its 10 tokens arrive from 10.0 s on,
     * and it ends inside (13.001 s), so it is one of the window's completions */
    static const int64_t a[] = {8500, 9000, 9500, 10000, 10500, 11000, 11500, 12000, 12500, 13000};
    request_record_t *rec = at(&f, 8000, a, 10);
    rec->warmup = true;
    rec->endpoint = 1;
    rec->requested_input_tokens = 50;
    merge_add(m, rec);
    /* B: chunks 18.5 .. 23.0 s: 18.5, 19.0, 19.5 and 20.0 (inclusive) count; it ends after W1 */
    static const int64_t b[] = {18500, 19000, 19500, 20000, 20500,
                                21000, 21500, 22000, 22500, 23000};
    rec = at(&f, 18000, b, 10);
    rec->session_end = true;
    rec->requested_input_tokens = 1000;
    merge_add(m, rec);
    /* C: inside, three chunks carrying 2, 3 and 1 tokens; ends a session inside */
    static const int64_t c[] = {11100, 11200, 11300};
    rec = at(&f, 11000, c, 3);
    f.chunk_tokens[0] = 2;
    f.chunk_tokens[1] = 3;
    f.chunk_tokens[2] = 1;
    rec->chunk_tokens = f.chunk_tokens;
    rec->session_end = true;
    rec->requested_input_tokens = 30;
    merge_add(m, rec);
    /* D: cut at 20.2 s (incomplete): its 2 tokens before W1 were delivered in the window */
    static const int64_t d[] = {19600, 19800, 20200};
    rec = at(&f, 19000, d, 3);
    rec->error = ERROR_INCOMPLETE;
    merge_add(m, rec);
    /* E: warm-up over before W0: nothing */
    static const int64_t e[] = {5000, 5500, 6000};
    rec = at(&f, 4000, e, 3);
    rec->warmup = true;
    rec->session_end = true;
    merge_add(m, rec);
    /* F: usage says 8 tokens over 4 chunks, 2 of them inside: the window gets half, 4 */
    static const int64_t g[] = {19000, 19500, 20500, 21000};
    rec = at(&f, 18900, g, 4);
    rec->has_usage = true;
    rec->completion_tokens = 8;
    rec->prompt_tokens = 64;
    merge_add(m, rec);
    /* G: cancelled by the run ending inside the window: its token counts, its session did not
     * finish */
    static const int64_t h[] = {15000};
    rec = at(&f, 14000, h, 1);
    rec->error = ERROR_CANCELLED;
    rec->session_end = true;
    merge_add(m, rec);
    merge_close_run_window(m, true);

    const merge_stats_t *all = merge_overall(m);
    assert_int_equal(all->window_output_tokens, 7 + 4 + 6 + 2 + 0 + 4 + 1);
    assert_int_equal(all->window_requests, 2);           /* A and C ended inside, ok */
    assert_int_equal(all->window_input_tokens, 50 + 30); /* theirs */
    assert_int_equal(all->window_sessions, 1); /* C (B ended after, E before, G cancelled) */
    assert_true(merge_duration_s(m) == 10.0);
    /* each slice counts its own records: A went to endpoint 1 */
    assert_int_equal(merge_endpoint(m, 1)->window_output_tokens, 7);
    assert_int_equal(merge_endpoint(m, 1)->window_requests, 1);
    assert_int_equal(merge_endpoint(m, 0)->window_output_tokens, 4 + 6 + 2 + 4 + 1);
    /* latency and totals: measured records only (B, C, D, F, G), warm-up apart */
    assert_int_equal(all->requests, 5);
    assert_int_equal(all->ok, 3);
    assert_int_equal(all->output_tokens, 10 + 6 + 8);
    assert_int_equal(histogram_count(all->latency[METRIC_TTFT]), 3);
    assert_int_equal(merge_warmup(m), 2);

    /* a count limit (or an interrupt) ends the window at the last end, here B's 23.001 s, no
     * later than its limit: still 20 s */
    merge_close_run_window(m, false);
    assert_true(merge_duration_s(m) == 10.0);
    merge_destroy(&m);

    /* no duration limit: nothing is cut at the end, the window closes at the last end */
    m = merge_new(&three);
    merge_set_run_window(m, 10 * S, 0);
    merge_add(m, at(&f, 18000, b, 10));
    merge_close_run_window(m, false);
    assert_int_equal(merge_overall(m)->window_output_tokens, 10);
    assert_int_equal(merge_overall(m)->window_requests, 1);
    assert_true(merge_duration_s(m) > 13.001 - 1e-9 && merge_duration_s(m) < 13.001 + 1e-9);
    merge_destroy(&m);
}

/* A chunk received before the one it follows gives no ITL sample, never a sample of 0. */
static void test_merge_leaves_backwards_gaps_out_of_itl(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    static const int64_t chunks[] = {1000, 1020, 1010, 1030};
    merge_add(m, at(&f, 900, chunks, 4));
    const histogram_t *itl = merge_overall(m)->latency[METRIC_ITL];
    assert_int_equal(histogram_count(itl), 2);
    assert_int_equal(histogram_min(itl), 20 * MS);
    assert_int_equal(merge_overall(m)->output_tokens, 4);
    merge_destroy(&m);
}

static void test_merge_places_out_of_range_ids_in_the_whole_run_only(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    request_record_t *rec = make(&f, S, 30, 2, 10);
    rec->endpoint = 7;
    merge_add(m, rec);
    rec->endpoint = 0;
    rec->role = MERGE_MAX_ROLES;
    merge_add(m, rec);
    assert_int_equal(merge_overall(m)->requests, 2);
    assert_int_equal(merge_unplaced(m), 2);
    assert_int_equal(merge_endpoint(m, 0)->requests, 1);
    merge_destroy(&m);
    merge_t *none = merge_new(NULL);
    assert_non_null(none);
    merge_add(none, rec);
    assert_int_equal(merge_endpoint_count(none), 0);
    assert_int_equal(merge_overall(none)->requests, 1);
    merge_destroy(&none);
}

static void test_merge_live_window_covers_the_last_five_seconds(void **state) {
    merge_t *m = merge_new(&three);
    merge_set_run_window(m, 100 * S, 0);
    fixture_t f;
    /* 10 requests ending in second 101 (outside the window at now = 110.5 s), TTFT 900 ms */
    for (int i = 0; i < 10; i++)
        merge_add(m, make(&f, 100 * S, 900, 2, 100));
    /* 20 ending in seconds 106..110, TTFT 50 ms, 2 tokens each */
    for (int i = 0; i < 20; i++)
        merge_add(m, make(&f, 106 * S + i * 200 * MS, 50, 2, 10));
    request_record_t *failed = make(&f, 108 * S, 50, 0, 0);
    failed->error = ERROR_HTTP_4XX;
    merge_add(m, failed);
    live_t live;
    merge_live(m, 110 * S + 500 * MS, 7, &live);
    assert_int_equal(live.in_flight, 7);
    assert_int_equal(live.requests_ok, 30);
    assert_int_equal(live.requests_failed, 1);
    assert_true(live.elapsed_s > 10.5 - 1e-9 && live.elapsed_s < 10.5 + 1e-9);
    /* window: seconds 106..110 up to 110.5 s, i.e. 4.5 s */
    assert_true(live.requests_per_s > 20 / 4.5 - 1e-6 && live.requests_per_s < 20 / 4.5 + 1e-6);
    assert_true(live.output_tokens_per_s > 40 / 4.5 - 1e-6);
    assert_true(live.ttft_p50_ms > 50 - 0.05 && live.ttft_p50_ms < 50 + 0.05);
    merge_live(m, 200 * S, 0, &live);
    assert_true(live.requests_per_s == 0.0);
    assert_true(live.ttft_p50_ms < 0);
    merge_destroy(&m);
}

/* Phases go into every slice for the ok requests that have them; the reuse count follows. */
static void test_merge_http_phases_and_connection_reuse_of_ok_requests(void **state) {
    merge_t *m = merge_new(&three);
    fixture_t f;
    for (int i = 0; i < 4; i++) {
        request_record_t *rec = make(&f, (1 + i) * S, 50, 3, 10);
        rec->endpoint = 2;
        rec->has_phases = true;
        for (int p = 0; p < RECORD_PHASE__COUNT; p++)
            rec->phase_ns[p] = (p + 1) * MS;
        rec->phase_ns[RECORD_PHASE_WAITING] = (100 + i) * MS;
        rec->connection_reused = i > 0; /* the first opened the connection */
        rec->tls_version = 13;
        rec->tls_resumed = true; /* counted only where a connection was opened */
        merge_add(m, rec);
    }
    request_record_t *failed = make(&f, 9 * S, 50, 3, 10); /* failed: kept out */
    failed->error = ERROR_HTTP_5XX;
    failed->has_phases = true;
    merge_add(m, failed);
    merge_add(m, make(&f, 10 * S, 50, 3, 10)); /* ok without phases: not measured */
    const merge_stats_t *all = merge_overall(m);
    assert_int_equal(all->phases_measured, 4);
    assert_int_equal(all->connection_reused, 3);
    assert_int_equal(histogram_count(all->phase[RECORD_PHASE_WAITING]), 4);
    assert_int_equal(histogram_min(all->phase[RECORD_PHASE_WAITING]), 100 * MS);
    assert_int_equal(histogram_max(all->phase[RECORD_PHASE_WAITING]), 103 * MS);
    assert_int_equal(histogram_max(all->phase[RECORD_PHASE_BLOCKED]), 1 * MS);
    assert_int_equal(merge_endpoint(m, 2)->connection_reused, 3);
    assert_int_equal(merge_endpoint(m, 0)->phases_measured, 0);
    assert_int_equal(all->tls_version[3], 4); /* TLS 1.3 on every measured request */
    assert_int_equal(all->tls_version[2], 0);
    assert_int_equal(all->tls_connections, 1);
    assert_int_equal(all->tls_resumed, 1);
    merge_destroy(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_counts_requests_per_endpoint),
        cmocka_unit_test(test_merge_excludes_warmup_from_statistics),
        cmocka_unit_test(test_merge_counts_errors_by_class_outside_latency),
        cmocka_unit_test(test_merge_records_every_itl_sample_in_every_slice),
        cmocka_unit_test(test_merge_counts_tokens_and_their_source),
        cmocka_unit_test(test_merge_counts_finish_reasons_refusals_and_early_stops),
        cmocka_unit_test(test_merge_digest_is_a_wrapping_sum_independent_of_split),
        cmocka_unit_test(test_merge_duration_and_sessions),
        cmocka_unit_test(test_merge_window_counts_tokens_by_chunk_time_and_requests_by_end),
        cmocka_unit_test(test_merge_leaves_backwards_gaps_out_of_itl),
        cmocka_unit_test(test_merge_places_out_of_range_ids_in_the_whole_run_only),
        cmocka_unit_test(test_merge_live_window_covers_the_last_five_seconds),
        cmocka_unit_test(test_merge_http_phases_and_connection_reuse_of_ok_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
