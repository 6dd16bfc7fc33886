/* worker/stream's count of libcurl's own resends (a reused connection closed before any response
 * byte is resent once on a fresh one), for both ways a body reaches curl: with the request's
 * headers (CURLOPT_POSTFIELDS, a body under 64 KiB, counted by the pre-request callback) and read
 * through a callback (larger, counted by the seek callback). Against `stampede mock --faults
 * reset-headers@3`, so the identity docs/mock.md states can be held exactly: reset_before_headers
 * + resends = the mock's reset-headers count. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "loop.h"
#include "mock_spawn.h"

#define MS 1000000LL
#define REQUESTS 6

/* A mock of its own for each test (setup and teardown), so that both see the same schedule. */
MOCK_GROUP_FIXTURE("--ttft-ms", "1", "--itl-ms", "1", "--faults", "reset-headers@3")

typedef struct outcome {
    request_record_t record;
    loop_t *loop;
    bool done;
} outcome_t;

static void on_done(void *arg, request_record_t *record, const char *reply, size_t len) {
    (void)record, (void)reply, (void)len;
    outcome_t *o = arg;
    o->done = true;
    loop_stop(o->loop);
}

static void on_watchdog(loop_t *loop, uint64_t id, void *arg) {
    (void)id, (void)arg;
    loop_stop(loop);
}

/* A streamed chat body of 4 tokens whose prompt is `filler` bytes of text. */
static char *chat_body(size_t filler, size_t *len) {
    char *body = malloc(filler + 256);
    assert_non_null(body);
    int head =
        snprintf(body, 256, "{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":\"");
    memset(body + head, 'a', filler);
    *len = (size_t)head + filler;
    *len += (size_t)snprintf(body + *len, 256,
                             "\"}],\"max_tokens\":4,\"ignore_eos\":true,\"stream\":true}");
    return body;
}

/* The mock's stampede_mock_faults_total{kind="reset-headers"}, read from its /metrics. */
static size_t collect(char *data, size_t size, size_t n, void *arg) {
    char **text = arg;
    size_t old = *text ? strlen(*text) : 0;
    char *grown = realloc(*text, old + size * n + 1);
    assert_non_null(grown);
    memcpy(grown + old, data, size * n);
    grown[old + size * n] = '\0';
    *text = grown;
    return size * n;
}

static long mock_reset_headers(void) {
    char url[128], *text = NULL;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", mock.port);
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &text);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 5000L);
    assert_int_equal(curl_easy_perform(easy), CURLE_OK);
    curl_easy_cleanup(easy);
    long count = -1;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        const char *eol = strchrnul(line, '\n');
        const char *kind = strstr(line, "kind=\"reset-headers\"");
        if (strncmp(line, "stampede_mock_faults_total{", 27) == 0 && kind && kind < eol)
            count = strtol(strchr(kind, '}') + 1, NULL, 10);
    }
    free(text);
    assert_true(count >= 0);
    return count;
}

/* REQUESTS requests of one body, one after another on one stream, so that each but the first
 * reuses the connection of the one before; the mock closes every third request it reads. Its
 * requests 3 and 6 are the engine's 3 and 5, each resent once on a fresh connection (the mock's
 * 4 and 7), and all succeed. */
static void assert_resends_counted(size_t filler) {
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", mock.port);
    size_t len;
    char *body = chat_body(filler, &len);
    loop_t *loop = loop_new();
    engine_options_t options = {.max_streams = 1, .timeout_ns = 10000 * MS};
    engine_t *engine = engine_new(loop, &options);
    assert_non_null(engine);
    static outcome_t o[REQUESTS];
    uint32_t resends = 0, failed = 0;
    for (int i = 0; i < REQUESTS; i++) {
        memset(&o[i], 0, sizeof o[i]);
        o[i].loop = loop;
        engine_request_t req = {.url = url, .body = body, .body_len = len, .record = &o[i].record};
        assert_int_equal(engine_submit(engine, &req, on_done, &o[i]), 0);
        uint64_t dog = loop_timer_at(loop, loop_now_ns() + 10000 * MS, on_watchdog, NULL);
        loop_run(loop);
        loop_timer_cancel(loop, dog);
        assert_true(o[i].done);
        if (o[i].record.error != ERROR_NONE)
            fprintf(stderr, "request %d: %s\n", i + 1, o[i].record.error_message);
        resends += o[i].record.resends;
        failed += o[i].record.error == ERROR_RESET_BEFORE_HEADERS;
    }
    const uint32_t expected[REQUESTS] = {0, 0, 1, 0, 1, 0};
    for (int i = 0; i < REQUESTS; i++) {
        if (o[i].record.resends != expected[i])
            fail_msg("request %d: %u resends, expected %u", i + 1, o[i].record.resends,
                     expected[i]);
        assert_int_equal(o[i].record.error, ERROR_NONE);
        assert_true(o[i].record.has_phases);
    }
    engine_stats_t stats;
    engine_stats(engine, &stats);
    assert_int_equal(stats.connections, 3); /* the first, and one per resend */
    assert_int_equal(failed + resends, mock_reset_headers());
    engine_destroy(&engine);
    loop_destroy(&loop);
    free(body);
}

static void test_resends_counted_for_a_body_sent_with_the_headers(void **state) {
    (void)state;
    assert_resends_counted(1000);
}

static void test_resends_counted_for_a_body_read_through_the_callback(void **state) {
    (void)state;
    assert_resends_counted(100 * 1024);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resends_counted_for_a_body_sent_with_the_headers,
                                        mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(test_resends_counted_for_a_body_read_through_the_callback,
                                        mock_setup, mock_teardown),
    };
    return cmocka_run_group_tests_name("engine_resends", tests, NULL, NULL);
}
