/* controller/live_metrics, live_window and live_http: the 60 s window forgets older seconds, the
 * Summary's quantiles come from the window, failures are counted by class but give no latency,
 * warm-up gives none either, bad flags are refused, and the HTTP server answers GET /metrics,
 * 404 and 405 from a loop polled in-process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "histogram.h"
#include "live_metrics.h"
#include "live_window.h"
#include "loop.h"

#define S 1000000000LL
#define MS 1000000LL

static const live_labels_t labels = {"http://127.0.0.1:1", "chat", "16"};
#define SERIES "endpoint=\"http://127.0.0.1:1\",level=\"16\",role=\"chat\""

/* A successful record with this TTFT, then one more chunk 10 ms later. */
static request_record_t record_with_ttft(int64_t ttft_ns, int64_t chunks[2]) {
    request_record_t rec = {0};
    rec.send_ns = 5 * S;
    chunks[0] = rec.send_ns + ttft_ns;
    chunks[1] = chunks[0] + 10 * MS;
    rec.first_token_ns = rec.first_content_ns = chunks[0];
    rec.end_ns = chunks[1];
    rec.chunk_ns = chunks;
    rec.n_chunks = 2;
    rec.http_status = 200;
    return rec;
}

static void record(live_metrics_t *lm, const request_record_t *rec, int64_t now_ns) {
    metrics_t m;
    metrics_compute(rec, &m);
    live_metrics_record(lm, rec, &m, &labels, now_ns);
}

/* The value of the sample line that starts with head (the whole name and labels), or NaN. */
static double sample_value(live_metrics_t *lm, int64_t now_ns, const char *head) {
    buffer_t out;
    buffer_init(&out);
    assert_int_equal(live_metrics_render(lm, now_ns, &out), 0);
    assert_int_equal(buffer_append(&out, "", 1), 0);
    double v = NAN;
    char want[512];
    snprintf(want, sizeof want, "\n%s ", head);
    const char *at = strstr(buffer_head(&out), want);
    if (at)
        v = strtod(at + strlen(want), NULL);
    buffer_clear(&out);
    return v;
}

/* The value of <prefix>requests_total for the test's series, one error class and outcome. */
static double requests_total(live_metrics_t *lm, int64_t now_ns, const char *prefix,
                             const char *error_class, const char *outcome) {
    char head[512];
    snprintf(head, sizeof head, "%srequests_total{" SERIES ",error_class=\"%s\",outcome=\"%s\"}",
             prefix, error_class, outcome);
    return sample_value(lm, now_ns, head);
}

static void test_live_window_forgets_seconds_older_than_60(void **state) {
    live_window_t w = {0};
    histogram_t *h = histogram_new();
    live_window_record(&w, live_window_slot(&w, 1000 * S), 10 * MS, 10);
    live_window_record(&w, live_window_slot(&w, 1030 * S + 500 * MS), 20 * MS, 5);
    live_window_merge(&w, 1030 * S, h);
    assert_int_equal(histogram_count(h), 15);
    histogram_reset(h);
    live_window_merge(&w, 1065 * S, h); /* second 1000 left the window, 1030 is in */
    assert_int_equal(histogram_count(h), 5);
    assert_int_equal(histogram_min(h), 20 * MS);
    histogram_reset(h);
    live_window_merge(&w, 1090 * S, h);
    assert_int_equal(histogram_count(h), 0);
    assert_int_equal(w.count, 15); /* _count stays over every observation */
    assert_true(fabs(w.sum_s - (0.1 + 0.1)) < 1e-9);
    live_window_clear(&w);
    histogram_destroy(&h);
}

static void test_live_summary_p50_and_p99_within_0_1_percent_over_the_window(void **state) {
    live_metrics_t *lm = live_metrics_new(NULL, NULL, NULL, NULL, "test");
    assert_non_null(lm);
    int64_t chunks[2];
    /* 1000 records with TTFT 1..1000 ms over 10 s, then at 100 s 10 records of 5 s: the window
     * at 105 s holds the last ones only. */
    for (int i = 1; i <= 1000; i++) {
        request_record_t rec = record_with_ttft(i * MS, chunks);
        record(lm, &rec, 100 * S + (int64_t)i * 10 * MS);
    }
    double p50 =
        sample_value(lm, 111 * S, "stampede_ttft_window_seconds{" SERIES ",quantile=\"0.5\"}");
    double p99 =
        sample_value(lm, 111 * S, "stampede_ttft_window_seconds{" SERIES ",quantile=\"0.99\"}");
    assert_true(fabs(p50 / 0.5 - 1) < 0.001);
    assert_true(fabs(p99 / 0.99 - 1) < 0.001);
    for (int i = 0; i < 10; i++) {
        request_record_t rec = record_with_ttft(5 * S, chunks);
        record(lm, &rec, 200 * S);
    }
    p50 = sample_value(lm, 205 * S, "stampede_ttft_window_seconds{" SERIES ",quantile=\"0.5\"}");
    assert_true(fabs(p50 / 5.0 - 1) < 0.001);
    assert_true(sample_value(lm, 205 * S, "stampede_ttft_window_seconds_count{" SERIES "}") ==
                1010);
    assert_true(sample_value(lm, 205 * S, "stampede_ttft_seconds_bucket{" SERIES ",le=\"0.5\"}") ==
                500);
    assert_true(isnan(
        sample_value(lm, 300 * S, "stampede_ttft_window_seconds{" SERIES ",quantile=\"0.5\"}")));
    live_metrics_destroy(&lm);
    assert_null(lm);
}

static void test_live_failed_request_counted_by_class_without_latency(void **state) {
    live_metrics_t *lm = live_metrics_new(NULL, NULL, "x_", NULL, "test");
    int64_t chunks[2];
    request_record_t rec = record_with_ttft(100 * MS, chunks);
    rec.error = ERROR_HTTP_5XX;
    rec.http_status = 500;
    record(lm, &rec, 10 * S);
    assert_true(requests_total(lm, 10 * S, "x_", "http_5xx", "failed") == 1);
    assert_true(requests_total(lm, 10 * S, "x_", "none", "ok") == 0);
    assert_true(sample_value(lm, 10 * S, "x_ttft_seconds_count{" SERIES "}") == 0);
    /* every fault class is a label of its own */
    rec.error = ERROR_TRUNCATED_JSON;
    rec.http_status = 200;
    record(lm, &rec, 11 * S);
    rec.error = ERROR_REFUSED;
    rec.http_status = 0;
    record(lm, &rec, 11 * S);
    assert_true(requests_total(lm, 11 * S, "x_", "truncated_json", "failed") == 1);
    assert_true(requests_total(lm, 11 * S, "x_", "refused", "failed") == 1);
    assert_true(requests_total(lm, 11 * S, "x_", "reset_mid_stream", "failed") == 0);
    assert_true(sample_value(lm, 11 * S, "x_ttft_seconds_count{" SERIES "}") == 0);
    live_metrics_destroy(&lm);
}

static void test_live_warmup_counts_requests_but_no_latency(void **state) {
    live_metrics_t *lm = live_metrics_new(NULL, NULL, NULL, "loadgen", "test");
    int64_t chunks[2];
    request_record_t rec = record_with_ttft(100 * MS, chunks);
    rec.warmup = true;
    record(lm, &rec, 10 * S);
    assert_true(requests_total(lm, 10 * S, "stampede_", "none", "ok") == 1);
    assert_true(sample_value(lm, 10 * S, "stampede_itl_seconds_count{" SERIES "}") == 0);
    assert_true(sample_value(lm, 10 * S, "loadgen_ttft_all_seconds_count") == 0);
    assert_true(sample_value(lm, 10 * S, "loadgen_requests_total") == 1);
    live_metrics_destroy(&lm);
}

static void test_live_refuses_bad_prefix_compat_and_address(void **state) {
    assert_null(live_metrics_new(NULL, NULL, "has:colon_", NULL, "test"));
    assert_null(live_metrics_new(NULL, NULL, "9starts_with_digit", NULL, "test"));
    assert_null(live_metrics_new(NULL, NULL, NULL, "locust", "test"));
    assert_null(live_metrics_new("127.0.0.1", NULL, NULL, NULL, "test"));
    assert_null(live_metrics_new("127.0.0.1:http", NULL, NULL, NULL, "test"));
}

/* Sends request to the server of lm on port and returns the response's first line (polling
 * the server in-process, at most 2 s). */
static void http_status_line(live_metrics_t *lm, uint16_t port, const char *request, char *line,
                             size_t cap) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
    char buf[4096];
    size_t got = 0;
    for (int64_t end = loop_now_ns() + 2 * S; loop_now_ns() < end && got < sizeof buf - 1;) {
        live_metrics_poll(lm);
        ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, MSG_DONTWAIT);
        if (n == 0)
            break;
        if (n > 0)
            got += (size_t)n;
        else
            usleep(1000);
    }
    close(fd);
    buf[got] = '\0';
    char *eol = strstr(buf, "\r\n");
    if (eol)
        *eol = '\0';
    size_t n = strlen(buf) < cap - 1 ? strlen(buf) : cap - 1;
    memcpy(line, buf, n);
    line[n] = '\0';
}

static void test_live_http_answers_metrics_404_and_405(void **state) {
    int save = dup(2); /* the bound address goes to stderr: read it back from a pipe */
    int p[2];
    assert_int_equal(pipe(p), 0);
    dup2(p[1], 2);
    live_metrics_t *lm = live_metrics_new("127.0.0.1:0", NULL, NULL, NULL, "test");
    fflush(stderr);
    dup2(save, 2);
    close(save);
    close(p[1]);
    char said[256] = {0};
    assert_true(read(p[0], said, sizeof said - 1) > 0);
    close(p[0]);
    assert_non_null(lm);
    unsigned port = 0;
    assert_int_equal(sscanf(said, "test: metrics on http://127.0.0.1:%u/metrics", &port), 1);
    char line[256];
    http_status_line(lm, (uint16_t)port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", line,
                     sizeof line);
    assert_string_equal(line, "HTTP/1.1 200 OK");
    http_status_line(lm, (uint16_t)port, "GET /other HTTP/1.1\r\n\r\n", line, sizeof line);
    assert_string_equal(line, "HTTP/1.1 404 Not Found");
    http_status_line(lm, (uint16_t)port, "POST /metrics HTTP/1.1\r\n\r\n", line, sizeof line);
    assert_string_equal(line, "HTTP/1.1 405 Method Not Allowed");
    live_metrics_destroy(&lm);
}

UNIT_MAIN(cmocka_unit_test(test_live_window_forgets_seconds_older_than_60),
          cmocka_unit_test(test_live_summary_p50_and_p99_within_0_1_percent_over_the_window),
          cmocka_unit_test(test_live_failed_request_counted_by_class_without_latency),
          cmocka_unit_test(test_live_warmup_counts_requests_but_no_latency),
          cmocka_unit_test(test_live_refuses_bad_prefix_compat_and_address),
          cmocka_unit_test(test_live_http_answers_metrics_404_and_405))
