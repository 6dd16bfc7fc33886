/* The mock's HTTP/1.1 request parser: partial input, pipelining, and every refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdio.h>
#include <string.h>

#include "mock_http.h"

static int parse(const char *text, mock_http_request_t *out) {
    return mock_http_parse(text, strlen(text), 65536, 1000, out);
}

static void test_mock_http_parses_a_post_with_its_body(void **state) {
    const char *req =
        "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd";
    mock_http_request_t r;
    assert_int_equal(parse(req, &r), MOCK_HTTP_COMPLETE);
    assert_int_equal(r.method, MOCK_HTTP_POST);
    assert_int_equal(r.path_len, strlen("/v1/completions"));
    assert_memory_equal(r.path, "/v1/completions", r.path_len);
    assert_true(r.keep_alive);
    assert_int_equal(r.content_length, 4);
    assert_memory_equal(r.body, "abcd", 4);
    assert_int_equal(r.total_bytes, strlen(req));
}

static void
test_mock_http_chunked_body_is_decoded_in_place_and_the_next_request_kept(void **state) {
    const char *head = "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n";
    const char *framed =
        "4;ext=1\r\n{\"pr\r\nA\r\nompt\": \"x\"\r\n1\r\n}\r\n0\r\nTrailer: t\r\n\r\n";
    const char *next = "GET /health HTTP/1.1\r\n\r\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%s%s%s", head, framed, next);
    size_t whole = strlen(head) + strlen(framed);
    mock_http_request_t r;
    for (size_t cut = strlen(head); cut < whole; cut++)
        assert_int_equal(mock_http_parse(buf, cut, 65536, 1000, &r), MOCK_HTTP_INCOMPLETE);
    assert_int_equal(mock_http_parse(buf, strlen(buf), 65536, 14, &r), 413);
    assert_int_equal(mock_http_parse(buf, strlen(buf), 65536, 1000, &r), MOCK_HTTP_COMPLETE);
    assert_true(r.chunked_body);
    assert_int_equal(r.content_length, 15);
    assert_int_equal(r.total_bytes, whole);
    assert_int_equal(mock_http_dechunk(buf + r.header_bytes, r.total_bytes - r.header_bytes), 15);
    assert_memory_equal(buf + r.header_bytes, "{\"prompt\": \"x\"}", 15);
    assert_string_equal(buf + r.total_bytes, next);
}

static void test_mock_http_waits_for_every_byte_at_any_split(void **state) {
    const char *req = "POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz";
    mock_http_request_t r;
    for (size_t cut = 0; cut < strlen(req); cut++)
        assert_int_equal(mock_http_parse(req, cut, 65536, 1000, &r), MOCK_HTTP_INCOMPLETE);
    assert_int_equal(mock_http_parse(req, strlen(req), 65536, 1000, &r), MOCK_HTTP_COMPLETE);
}

static void test_mock_http_pipelined_requests_parse_one_at_a_time(void **state) {
    const char *two = "GET /health HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n";
    mock_http_request_t r;
    assert_int_equal(parse(two, &r), MOCK_HTTP_COMPLETE);
    assert_int_equal(r.total_bytes, strlen("GET /health HTTP/1.1\r\n\r\n"));
    assert_int_equal(parse(two + r.total_bytes, &r), MOCK_HTTP_COMPLETE);
    assert_memory_equal(r.path, "/metrics", r.path_len);
}

static void test_mock_http_connection_semantics_by_version(void **state) {
    mock_http_request_t r;
    parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &r);
    assert_false(r.keep_alive);
    parse("GET / HTTP/1.0\r\n\r\n", &r);
    assert_false(r.keep_alive);
    parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r);
    assert_true(r.keep_alive);
    parse("GET / HTTP/1.1\nHost: bare-lf\n\n", &r);
    assert_true(r.keep_alive);
    parse("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n", &r);
    assert_true(r.expect_continue);
    assert_int_equal(r.header_bytes, strlen("POST / HTTP/1.1\r\nExpect: 100-continue\r\n"
                                            "Content-Length: 9\r\n\r\n"));
}

static void test_mock_http_refusals_have_the_right_status(void **state) {
    static const struct {
        const char *text;
        int status;
    } cases[] = {
        {"BLAH\r\n\r\n", 400},
        {"GET nopath HTTP/1.1\r\n\r\n", 400},
        {"GET / HTTP/2.0\r\n\r\n", 505},
        {"GET / HTTX/1.1\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\n\r\n", 411},
        {"POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", 413},
        {"POST / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n", 413},
        {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nA: b\r\n  folded\r\n\r\n", 400},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mock_http_request_t r;
        int got = parse(cases[i].text, &r);
        if (got != cases[i].status)
            fail_msg("\"%s\": got %d, expected %d", cases[i].text, got, cases[i].status);
    }
    char big[70000];
    memset(big, 'a', sizeof(big));
    mock_http_request_t r;
    assert_int_equal(mock_http_parse(big, sizeof(big), 65536, 1000, &r), 431);
}

static void test_mock_http_formats_response_heads(void **state) {
    char buf[512];
    int n = mock_http_format_head(buf, sizeof(buf), 404, "application/json", 22, false, NULL);
    assert_string_equal(buf, "HTTP/1.1 404 Not Found\r\nserver: stampede-mock\r\ncontent-type: "
                             "application/json\r\ncontent-length: 22\r\n\r\n");
    assert_int_equal(n, (int)strlen(buf));
    mock_http_format_head(buf, sizeof(buf), 200, "text/event-stream", -1, true, "x-a: 1");
    assert_non_null(
        strstr(buf, "transfer-encoding: chunked\r\nconnection: close\r\nx-a: 1\r\n\r\n"));
    assert_int_equal(mock_http_format_head(buf, 10, 200, "a", 0, false, NULL), -1);
}

UNIT_MAIN(
    cmocka_unit_test(test_mock_http_parses_a_post_with_its_body),
    cmocka_unit_test(test_mock_http_waits_for_every_byte_at_any_split),
    cmocka_unit_test(test_mock_http_chunked_body_is_decoded_in_place_and_the_next_request_kept),
    cmocka_unit_test(test_mock_http_pipelined_requests_parse_one_at_a_time),
    cmocka_unit_test(test_mock_http_connection_semantics_by_version),
    cmocka_unit_test(test_mock_http_refusals_have_the_right_status),
    cmocka_unit_test(test_mock_http_formats_response_heads))
