#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit_main.h"

#include "report.h"
#include "support.h"

#define MS 1000000LL
#define S (1000 * MS)
#define RUN_START (100 * S)

static char *urls[] = {"http://127.0.0.1:8001", "http://127.0.0.1:8002"};

typedef struct fixture {
    request_record_t rec;
    int64_t chunk_ns[16];
} fixture_t;

/* Request i of the known set: TTFT (10 + 10 i) ms, 11 chunks 20 ms apart, usage 11 tokens. */
static request_record_t *known(fixture_t *f, int i) {
    memset(f, 0, sizeof *f);
    request_record_t *rec = &f->rec;
    rec->request_id = (uint64_t)i;
    rec->session = (uint64_t)i / 2;
    rec->node = (uint32_t)i % 2;
    rec->endpoint = (uint32_t)i % 2;
    rec->intended_ns = RUN_START + i * S;
    rec->send_ns = rec->intended_ns + 100000; /* 0.1 ms lag */
    for (int c = 0; c < 11; c++)
        f->chunk_ns[c] = rec->send_ns + (10 + 10 * i) * MS + c * 20 * MS;
    rec->n_chunks = 11;
    rec->chunk_ns = f->chunk_ns;
    rec->first_token_ns = f->chunk_ns[0];
    rec->first_content_ns = f->chunk_ns[0];
    rec->end_ns = f->chunk_ns[10];
    rec->http_status = 200;
    rec->has_usage = true;
    rec->completion_tokens = 11;
    rec->prompt_tokens = 100;
    rec->requested_output_tokens = 11;
    rec->workload_hash = 0x1000 + (uint64_t)i;
    rec->session_end = i % 2 == 1;
    rec->has_phases = true;
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        rec->phase_ns[p] = p * MS / 10;  /* blocked 0, dns 0.1 ms, ... receiving 0.6 ms */
    rec->connection_reused = i % 5 != 0; /* requests 0 and 5 opened a connection */
    return rec;
}

/* An empty merge of the two endpoints over a 10 s window. The merge keeps the config it is given
 * (its sessions regenerate each session's graph from it), so the config outlives every merge. */
static merge_t *window_merge(void) {
    static config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.target.endpoints = urls;
    cfg.target.n_endpoints = 2;
    merge_t *m = merge_new(&cfg);
    merge_set_run_window(m, RUN_START, RUN_START + 10 * S);
    return m;
}

/* 10 ok requests, 2 HTTP 5xx, 1 cancelled (these three after the window), over a 10 s window. */
static merge_t *known_merge(void) {
    merge_t *m = window_merge();
    fixture_t f;
    for (int i = 0; i < 10; i++)
        merge_add(m, known(&f, i));
    for (int i = 0; i < 3; i++) {
        request_record_t *rec = known(&f, 20 + i);
        rec->error = i < 2 ? ERROR_HTTP_5XX : ERROR_CANCELLED;
        rec->http_status = i < 2 ? 503 : 0;
        rec->workload_hash = 0;
        merge_add(m, rec);
    }
    merge_close_run_window(m, true);
    return m;
}

static void assert_close(double got, double expected, double tolerance, const char *what) {
    if (fabs(got - expected) > tolerance)
        fail_msg("%s: expected %.6f +- %g, got %.6f", what, expected, tolerance, got);
}

static double number(json_t *o, const char *path) {
    json_t *v = o;
    char copy[128];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *save, *key = strtok_r(copy, ".", &save); key; key = strtok_r(NULL, ".", &save))
        v = json_object_get(v, key);
    if (!json_is_number(v))
        fail_msg("%s: expected a number", path);
    return json_number_value(v);
}

/* One number of a JSON document: its dotted path, the value expected and the tolerance. */
typedef struct json_field {
    const char *path;
    double expected, tolerance;
} json_field_t;

static void assert_fields(json_t *o, const json_field_t *fields, size_t n) {
    for (size_t i = 0; i < n; i++)
        assert_close(number(o, fields[i].path), fields[i].expected, fields[i].tolerance,
                     fields[i].path);
}

static void test_report_json_parses_back_with_the_known_numbers(void **state) {
    merge_t *m = known_merge();
    fixture_t f; /* three warm-up requests, one failed: counted apart, in no statistic */
    for (int i = 0; i < 3; i++) {
        request_record_t *rec = known(&f, 40 + i);
        rec->warmup = true;
        rec->error = i == 0 ? ERROR_HTTP_5XX : ERROR_NONE;
        rec->workload_hash = 0; /* the digest below is the known records' */
        merge_add(m, rec);
    }
    char path[] = "/tmp/stampede-report-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    report_worker_clock_t clocks[] = {{0, 1500000, 400000}, {1, -2000000, 900000}};
    report_meta_t meta = {.level_kind = "concurrency",
                          .level_value = 50,
                          .workers = 2,
                          .clocks = clocks,
                          .n_clocks = 2,
                          .start_unix_ns = 1771942429000000000LL,
                          .stop_reason = "duration reached",
                          .seed = 7};
    report_level_t one = {.merge = m};
    assert_int_equal(report_write_json_levels(&one, 1, path, &meta), 0);
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    if (!root)
        fail_msg("results.json does not parse: %s at line %d", error.text, error.line);
    assert_int_equal(number(root, "schema_version"), 2);
    assert_true(json_is_false(json_object_get(root, "partial")));
    json_t *run = json_object_get(root, "run");
    assert_int_equal(number(run, "workers"), 2);
    assert_string_equal(json_string_value(json_object_get(run, "start_time")),
                        "2026-02-24T14:13:49Z");
    assert_close(number(run, "clock_error_bound_ms"), 0.45, 1e-9, "clock error bound");
    assert_int_equal(json_array_size(json_object_get(run, "clock")), 2);

    json_t *level = json_array_get(json_object_get(root, "levels"), 0);
    static const json_field_t counts[] = {
        {"concurrency", 50, 0},       {"requests_ok", 10, 0},    {"requests_failed", 2, 0},
        {"requests_cancelled", 1, 0}, {"requests_warmup", 3, 0}, {"requests_warmup_failed", 1, 0},
        {"errors.http_5xx", 2, 0},    {"errors.timeout", 0, 0},
    };
    assert_fields(level, counts, sizeof counts / sizeof *counts);
    assert_close(number(level, "error_pct"), 100.0 * 2 / 12, 1e-9, "error %");
    /* TTFT 10, 20, ..., 100 ms: exact mean 55, p50 50, p90 90, p99 100 (0.05 % bucket error) */
    assert_int_equal(number(level, "ttft_ms.count"), 10);
    assert_close(number(level, "ttft_ms.mean"), 55.0, 1e-9, "ttft mean");
    assert_close(number(level, "ttft_ms.p50"), 50.0, 0.025, "ttft p50");
    assert_close(number(level, "ttft_ms.p90"), 90.0, 0.045, "ttft p90");
    assert_close(number(level, "ttft_ms.p99"), 100.0, 0.05, "ttft p99");
    assert_close(number(level, "ttft_ms.min"), 10.0, 1e-9, "ttft min");
    assert_close(number(level, "ttft_ms.max"), 100.0, 1e-9, "ttft max");
    assert_close(number(level, "tpot_ms.p50"), 20.0, 0.01, "tpot p50");
    assert_int_equal(number(level, "itl_ms.count"), 100);
    assert_close(number(level, "itl_ms.mean"), 20.0, 1e-9, "itl mean");
    assert_close(number(level, "schedule_lag_ms.p99"), 0.1, 1e-9, "lag p99");
    /* from the intended start: TTFT and E2E with the 0.1 ms lag in */
    assert_int_equal(number(level, "ttft_from_intended_ms.count"), 10);
    assert_close(number(level, "ttft_from_intended_ms.mean"), 55.1, 1e-9, "ttft from intended");
    assert_close(number(level, "e2e_from_intended_ms.min"), 210.1, 1e-9, "e2e from intended");
    assert_true(json_is_false(json_object_get(level, "schedule_lag_warning")));
    assert_close(number(level, "duration_s"), 10.0, 1e-9, "duration");
    assert_close(number(level, "output_tokens_per_s"), 11.0, 1e-9, "output tok/s");
    assert_close(number(level, "input_tokens_per_s"), 100.0, 1e-9, "input tok/s");
    assert_close(number(level, "requests_per_s"), 1.0, 1e-9, "req/s");
    /* the cancelled request that ended a session ended after the window: 5 sessions in 10 s */
    assert_close(number(level, "sessions_per_s"), 0.5, 1e-9, "sessions/s");
    assert_int_equal(number(level, "window.output_tokens"), 110);
    assert_int_equal(number(level, "window.requests"), 10);
    assert_int_equal(number(level, "window.input_tokens"), 1000);
    assert_int_equal(number(level, "window.sessions"), 5);
    assert_int_equal(number(level, "sessions_completed"), 6);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(level, "token_source"), "output")),
        "usage");
    assert_int_equal(number(level, "output_vs_requested.mismatched_requests"), 0);
    json_t *endpoints = json_object_get(level, "endpoints");
    /* every request sent, warm-up included (two of the three warm-ups went to the first) */
    assert_int_equal(json_integer_value(json_object_get(endpoints, urls[0])), 9);
    assert_int_equal(json_integer_value(json_object_get(endpoints, urls[1])), 7);
    json_t *ep = json_object_get(json_object_get(level, "per_endpoint"), urls[1]);
    assert_int_equal(number(ep, "requests_ok"), 5);
    assert_int_equal(number(ep, "ttft_ms.count"), 5);
    assert_close(number(ep, "ttft_ms.mean"), 60.0, 1e-9, "endpoint 2 ttft mean");
    assert_string_equal(json_string_value(json_object_get(level, "workload_digest")),
                        "000000000000a02d");
    assert_close(number(level, "http_ms.dns.p50"), 0.1, 1e-4, "dns p50");
    assert_close(number(level, "http_ms.receiving.mean"), 0.6, 1e-9, "receiving mean");
    assert_close(number(level, "http_ms.blocked.p99"), 0.0, 1e-9, "blocked p99");
    assert_close(number(level, "connection_reused"), 0.8, 1e-9, "connection reused share");
    assert_close(number(ep, "connection_reused"), 0.8, 1e-9, "endpoint reuse share");
    json_decref(root);
    unlink(path);
    merge_destroy(&m);
}

/* A request of 2 hours lies above the histograms' range (1 hour): its metric blocks count it in
 * "clamped", the others say 0. */
static void test_report_json_counts_samples_above_one_hour_as_clamped(void **state) {
    static config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.target.endpoints = urls;
    cfg.target.n_endpoints = 2;
    merge_t *m = merge_new(&cfg);
    merge_set_run_window(m, RUN_START, RUN_START + 3 * 3600 * S);
    fixture_t f;
    merge_add(m, known(&f, 0));
    request_record_t *rec = known(&f, 1);
    f.chunk_ns[10] = rec->send_ns + 2 * 3600 * S;
    rec->end_ns = f.chunk_ns[10];
    merge_add(m, rec);
    merge_close_run_window(m, true);
    char path[] = "/tmp/stampede-report-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    report_meta_t meta = {.level_kind = "concurrency", .level_value = 1, .workers = 1};
    report_level_t one = {.merge = m};
    assert_int_equal(report_write_json_levels(&one, 1, path, &meta), 0);
    json_t *root = json_load_file(path, 0, NULL);
    assert_non_null(root);
    json_t *level = json_array_get(json_object_get(root, "levels"), 0);
    assert_int_equal(number(level, "e2e_ms.count"), 2);
    assert_int_equal(number(level, "e2e_ms.clamped"), 1);
    assert_close(number(level, "e2e_ms.max"), 2 * 3600 * 1000.0, 1e-6, "e2e max");
    assert_int_equal(number(level, "ttft_ms.clamped"), 0);
    json_decref(root);
    unlink(path);
    merge_destroy(&m);
}

static void test_report_json_marks_partial_and_holds_every_level(void **state) {
    merge_t *a = known_merge(), *b = known_merge();
    merge_mark_partial(b, "interrupted by SIGINT");
    report_level_t levels[] = {{a, "concurrency", 50}, {b, "concurrency", 60}};
    json_t *root = report_json(levels, 2, NULL);
    assert_non_null(root);
    assert_true(json_is_true(json_object_get(root, "partial")));
    json_t *array = json_object_get(root, "levels");
    assert_int_equal(json_array_size(array), 2);
    assert_int_equal(number(json_array_get(array, 1), "concurrency"), 60);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(array, 1), "partial_reason")),
        "interrupted by SIGINT");
    assert_true(json_is_false(json_object_get(json_array_get(array, 0), "partial")));
    json_decref(root);
    merge_destroy(&a);
    merge_destroy(&b);
}

static void test_report_json_refuses_an_unwritable_path(void **state) {
    merge_t *m = known_merge();
    report_level_t level = {.merge = m};
    assert_int_equal(report_write_json_levels(&level, 1, "/nonexistent-dir/results.json", NULL),
                     -1);
    merge_destroy(&m);
}

static char *print_table(const merge_t *m, const report_meta_t *meta) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    report_print(m, meta, out);
    fclose(out);
    return text;
}

static void assert_contains(const char *text, const char *expected) {
    if (!strstr(text, expected))
        fail_msg("expected the table to contain \"%s\"; it was:\n%s", expected, text);
}

static void test_report_table_has_the_expected_lines(void **state) {
    merge_t *m = known_merge();
    report_meta_t meta = {.level_kind = "concurrency", .level_value = 50, .workers = 2};
    char *text = print_table(m, &meta);
    assert_contains(text, "stampede results - concurrency 50 - 10.0 s measured - 2 workers");
    assert_contains(text, "requests      10 ok, 2 failed (16.67 %), 1 cancelled, 0 warm-up");
    assert_contains(text, "errors        http_5xx 2 (16.67 %)");
    assert_contains(text, "latency (ms)        mean       p50       p90       p95       p99");
    /* bucket midpoints: within 0.05 % of 50, 90, 100 ms */
    assert_contains(text,
                    "TTFT               55.00     49.99     90.01     99.98     99.98          10");
    assert_contains(text,
                    "ITL                20.00     20.00     20.00     20.00     20.00         100");
    assert_contains(text, "throughput    11.0 output tok/s, 100.0 input tok/s, 1.00 req/s, 0.500 "
                          "sessions/s (in the measured window");
    assert_contains(text, "counts from usage");
    assert_contains(text, "schedule lag  p99 0.100 ms");
    assert_null(strstr(text, "TTFT intended")); /* lag p99 0.1 ms: nothing to correct */
    assert_contains(text, "http://127.0.0.1:8002                    6         5       1");
    assert_contains(text, "workload digest 000000000000a02d");
    assert_null(strstr(text, "WARNING"));
    assert_null(strstr(text, "PARTIAL"));
    assert_null(strstr(text, "HTTP (ms)")); /* only when asked */
    free(text);
    meta.http_phases = true;
    text = print_table(m, &meta);
    assert_contains(text, "HTTP (ms)           mean       p50       p90       p95       p99");
    assert_contains(text,
                    "waiting            0.500     0.500     0.500     0.500     0.500          10");
    assert_contains(text, "connections   8 of 10 requests reused one (80.0 %)");
    free(text);
    merge_destroy(&m);
}

static void test_report_table_warns_when_the_schedule_slipped(void **state) {
    merge_t *m = known_merge();
    fixture_t f;
    for (int i = 0; i < 5; i++) {
        request_record_t *rec = known(&f, i);
        rec->intended_ns = rec->send_ns - 250 * MS;
        merge_add(m, rec);
    }
    merge_mark_partial(m, "interrupted");
    char *text = print_table(m, NULL);
    assert_contains(text, "PARTIAL RESULTS: interrupted");
    assert_contains(text, "WARNING: schedule lag p99 250.0 ms is above 10 ms");
    /* 5 of 15 requests 250 ms late: from the intended start their TTFT is 250 ms longer */
    assert_contains(text, "TTFT intended");
    assert_contains(text, "E2E intended");
    assert_contains(text, "the schedule lag included");
    free(text);
    merge_destroy(&m);
}

static void test_report_trace_writes_one_json_line_per_request(void **state) {
    char path[] = "/tmp/stampede-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    report_trace_t *trace = report_trace_open(path, RUN_START);
    assert_non_null(trace);
    fixture_t f;
    request_record_t *rec = known(&f, 2);
    static uint16_t tokens[11] = {1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    rec->chunk_tokens = tokens;
    metrics_t m;
    metrics_compute(rec, &m);
    assert_int_equal(report_trace_write(trace, rec, &m), 0);
    rec = known(&f, 3);
    rec->error = ERROR_HTTP_4XX;
    snprintf(rec->error_message, sizeof rec->error_message, "HTTP 400: \"too long\"\n");
    rec->n_chunks = 0;
    rec->first_token_ns = rec->first_content_ns = 0;
    rec->has_usage = false;
    assert_int_equal(report_trace_write(trace, rec, NULL), 0); /* metrics computed there */
    assert_int_equal(report_trace_close(&trace), 0);
    assert_null(trace);

    FILE *in = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    json_t *lines[2];
    for (int i = 0; i < 2; i++) {
        assert_true(getline(&line, &cap, in) > 0);
        json_error_t error;
        lines[i] = json_loads(line, 0, &error);
        if (!lines[i])
            fail_msg("line %d does not parse: %s", i + 1, error.text);
    }
    assert_int_equal(getline(&line, &cap, in), -1);
    free(line);
    fclose(in);
    /* request 2 was sent 2 s + 0.1 ms after the start; first chunk 30 ms later */
    assert_int_equal(number(lines[0], "request_id"), 2);
    assert_close(number(lines[0], "send_us"), 2000100.0, 1e-6, "send_us");
    json_t *chunks = json_object_get(lines[0], "chunks_us");
    assert_int_equal(json_array_size(chunks), 11);
    assert_close(json_number_value(json_array_get(chunks, 0)), 2030100.0, 1e-6, "chunk 0");
    assert_close(json_number_value(json_array_get(chunks, 10)), 2230100.0, 1e-6, "chunk 10");
    assert_int_equal(
        json_integer_value(json_array_get(json_object_get(lines[0], "chunk_tokens"), 1)), 2);
    assert_close(number(lines[0], "ttft_ms"), 30.0, 1e-9, "ttft");
    assert_close(number(lines[0], "http_ms.sending"), 0.4, 1e-9, "sending");
    assert_true(json_is_true(json_object_get(lines[0], "connection_reused")));
    assert_close(number(lines[0], "ttft_from_intended_ms"), 30.1, 1e-9, "ttft from intended");
    assert_close(number(lines[0], "e2e_from_intended_ms"), 230.1, 1e-9, "e2e from intended");
    assert_int_equal(number(lines[0], "usage.completion_tokens"), 11);
    assert_string_equal(json_string_value(json_object_get(lines[0], "error_message")), "");
    assert_string_equal(json_string_value(json_object_get(lines[1], "error")), "http_4xx");
    assert_string_equal(json_string_value(json_object_get(lines[1], "error_message")),
                        "HTTP 400: \"too long\"\n");
    assert_true(json_is_null(json_object_get(lines[1], "first_token_us")));
    assert_true(json_is_null(json_object_get(lines[1], "usage")));
    assert_int_equal(json_array_size(json_object_get(lines[1], "chunks_us")), 0);
    json_decref(lines[0]);
    json_decref(lines[1]);
    unlink(path);
}

/* finish_reason and refusals: per request in the trace, counted per level in results.json (with
 * the early stops of output_vs_requested) and on the table's finish line. */
static void test_report_finish_reasons_and_refusals(void **state) {
    merge_t *m = window_merge();
    fixture_t f;
    static const finish_reason_t reasons[] = {FINISH_STOP,   FINISH_STOP,       FINISH_LENGTH,
                                              FINISH_LENGTH, FINISH_TOOL_CALLS, FINISH_NONE};
    for (int i = 0; i < 6; i++) {
        request_record_t *rec = known(&f, i);
        rec->finish_reason = reasons[i];
        rec->refusal = i == 0;
        if (i == 1)
            rec->completion_tokens = 7; /* stop after 7 of the 11 asked */
        merge_add(m, rec);
    }
    merge_close_run_window(m, true);
    char *text = print_table(m, NULL);
    assert_contains(text, "finish        none 1, stop 2, length 2, tool_calls 1; 1 refusal\n");
    assert_contains(text, "              1 ended with finish_reason stop before the length asked");
    free(text);
    report_level_t level = {m, "concurrency", 4};
    json_t *root = report_json(&level, 1, NULL);
    json_t *l = json_array_get(json_object_get(root, "levels"), 0);
    static const json_field_t counts[] = {
        {"finish_reasons.stop", 2, 0},
        {"finish_reasons.length", 2, 0},
        {"finish_reasons.tool_calls", 1, 0},
        {"finish_reasons.content_filter", 0, 0},
        {"finish_reasons.other", 0, 0},
        {"finish_reasons.none", 1, 0},
        {"refusals", 1, 0},
        {"output_vs_requested.stopped_early", 1, 0},
        {"output_vs_requested.mismatched_requests", 1, 0},
    };
    assert_fields(l, counts, sizeof counts / sizeof *counts);
    json_decref(root);
    merge_destroy(&m);

    char path[] = "/tmp/stampede-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    report_trace_t *trace = report_trace_open(path, RUN_START);
    request_record_t *rec = known(&f, 0);
    rec->finish_reason = FINISH_CONTENT_FILTER;
    rec->refusal = true;
    assert_int_equal(report_trace_write(trace, rec, NULL), 0);
    assert_int_equal(report_trace_close(&trace), 0);
    FILE *in = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    assert_true(getline(&line, &cap, in) > 0);
    json_t *row = json_loads(line, 0, NULL);
    assert_non_null(row);
    assert_string_equal(json_string_value(json_object_get(row, "finish_reason")), "content_filter");
    assert_true(json_is_true(json_object_get(row, "refusal")));
    json_decref(row);
    free(line);
    fclose(in);
    unlink(path);
}

static void test_report_live_line(void **state) {
    live_t live = {.elapsed_s = 12.34,
                   .in_flight = 160,
                   .requests_ok = 1234,
                   .requests_failed = 3,
                   .requests_per_s = 41.25,
                   .output_tokens_per_s = 5230.4,
                   .ttft_p50_ms = 174.2};
    char buf[160];
    report_live_line(&live, buf, sizeof buf);
    assert_string_equal(buf, "12.3 s | in flight 160 | 41.2 req/s | 5230 tok/s | TTFT p50 174.2 "
                             "ms | 1234 ok, 3 failed");
    live.ttft_p50_ms = -1;
    report_live_line(&live, buf, sizeof buf);
    assert_non_null(strstr(buf, "TTFT p50 - |"));
}

UNIT_MAIN(cmocka_unit_test(test_report_json_parses_back_with_the_known_numbers),
          cmocka_unit_test(test_report_json_counts_samples_above_one_hour_as_clamped),
          cmocka_unit_test(test_report_json_marks_partial_and_holds_every_level),
          cmocka_unit_test(test_report_json_refuses_an_unwritable_path),
          cmocka_unit_test(test_report_table_has_the_expected_lines),
          cmocka_unit_test(test_report_table_warns_when_the_schedule_slipped),
          cmocka_unit_test(test_report_trace_writes_one_json_line_per_request),
          cmocka_unit_test(test_report_finish_reasons_and_refusals),
          cmocka_unit_test(test_report_live_line))
