/* The mock embedded in a process: mock_server_new binds a free port, mock_server_run serves
 * until mock_server_stop (from another thread), and everything is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mock.h"

static void *serve(void *arg) {
    static int rc;
    rc = mock_server_run(arg);
    return &rc;
}

/* One HTTP exchange on a fresh connection: the request sent whole, the reply (up to cap - 1
 * bytes) in out. */
static void http_exchange(uint16_t port, const char *req, char *out, size_t cap) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    size_t n = strlen(req);
    assert_int_equal(write(fd, req, n), (ssize_t)n);
    size_t len = 0;
    ssize_t got;
    while (len < cap - 1 && (got = read(fd, out + len, cap - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(fd);
}

static void http_get(uint16_t port, const char *path, char *out, size_t cap) {
    char req[256];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nConnection: close\r\n\r\n", path);
    http_exchange(port, req, out, cap);
}

static void test_mock_server_runs_embedded_until_stopped(void **state) {
    mock_options_t options;
    mock_options_init(&options);
    options.port = 0;
    options.fixed = true;
    char err[256];
    mock_server_t *server = mock_server_new(&options, err, sizeof(err));
    mock_options_clear(&options);
    assert_non_null(server);
    uint16_t port = mock_server_port(server);
    assert_true(port > 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, serve, server), 0);
    char reply[4096];
    http_get(port, "/health", reply, sizeof(reply));
    assert_non_null(strstr(reply, "HTTP/1.1 200 OK\r\n"));
    http_get(port, "/v1/models", reply, sizeof(reply));
    assert_non_null(strstr(reply, "\"id\":\"mock-llama\""));
    mock_server_stop(server);
    void *rc;
    assert_int_equal(pthread_join(thread, &rc), 0);
    assert_int_equal(*(int *)rc, 0);
    mock_server_destroy(&server);
    assert_null(server);
}

/* A streamed reply of the embedded mock in fixed mode to a POST of body to path, whole, in out. */
static void stream_reply(bool sent_ns, const char *path, const char *body, char *out, size_t cap) {
    mock_options_t options;
    mock_options_init(&options);
    options.port = 0;
    options.fixed = true;
    options.sent_ns = sent_ns;
    char err[256];
    mock_server_t *server = mock_server_new(&options, err, sizeof(err));
    mock_options_clear(&options);
    assert_non_null(server);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, serve, server), 0);
    char req[512];
    snprintf(req, sizeof(req),
             "POST %s HTTP/1.1\r\nConnection: close\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
             path, strlen(body), body);
    http_exchange(mock_server_port(server), req, out, cap);
    mock_server_stop(server);
    void *rc;
    assert_int_equal(pthread_join(thread, &rc), 0);
    mock_server_destroy(&server);
}

/* --no-sent-ns: the role, token and usage chunks (and the Messages token events) come without
 * the mock's write time, the rest as with it. */
static void test_mock_server_no_sent_ns_leaves_the_field_out_of_every_chunk(void **state) {
    static const char chat[] = "{\"model\":\"mock-llama\",\"messages\":[{\"role\":\"user\","
                               "\"content\":\"hi\"}],\"max_tokens\":3,\"stream\":true,"
                               "\"stream_options\":{\"include_usage\":true}}";
    static const char messages[] = "{\"model\":\"mock-llama\",\"messages\":[{\"role\":\"user\","
                                   "\"content\":\"hi\"}],\"max_tokens\":3,\"stream\":true}";
    static char with[8192], without[8192];
    /* Anthropic Messages: its 3 content_block_delta events carry it, or not */
    stream_reply(true, "/v1/messages", messages, with, sizeof(with));
    stream_reply(false, "/v1/messages", messages, without, sizeof(without));
    int deltas = 0;
    for (const char *p = with; (p = strstr(p, "\"sent_ns\":")); p++)
        deltas++;
    assert_int_equal(deltas, 3);
    assert_non_null(strstr(without, "event: message_stop"));
    assert_null(strstr(without, "sent_ns"));
    stream_reply(true, "/v1/chat/completions", chat, with, sizeof(with));
    stream_reply(false, "/v1/chat/completions", chat, without, sizeof(without));
    assert_non_null(strstr(with, "data: [DONE]"));
    assert_non_null(strstr(without, "data: [DONE]"));
    /* role, 3 tokens, usage: 5 chunks, each with its sent_ns or with none */
    int chunks = 0, stamped = 0;
    for (const char *p = with; (p = strstr(p, "data: {")); p++)
        chunks++;
    for (const char *p = with; (p = strstr(p, ",\"sent_ns\":")); p++)
        stamped++;
    assert_int_equal(chunks, 5);
    assert_int_equal(stamped, 5);
    assert_null(strstr(without, "sent_ns"));
    assert_non_null(strstr(without, "\"finish_reason\":null}]}\n\n"));
    assert_non_null(strstr(without, "\"cached_tokens\":0}}}\n\n"));
}

/* mock_server_new on options that parse but cannot be served; the message it gives. */
static void assert_refused(const char *bind, const char *model, const char *expected) {
    mock_options_t options;
    mock_options_init(&options);
    if (bind)
        snprintf(options.bind, sizeof(options.bind), "%s", bind);
    if (model)
        snprintf(options.model, sizeof(options.model), "%s", model);
    char err[256];
    mock_server_t *server = mock_server_new(&options, err, sizeof(err));
    mock_options_clear(&options);
    assert_null(server);
    assert_string_equal(err, expected);
}

static void test_mock_server_new_reports_a_bad_address(void **state) {
    assert_refused("not-an-ip", NULL, "--bind: 'not-an-ip' is not an IPv4 address");
}

static void test_mock_server_new_reports_a_model_name_that_is_not_utf8(void **state) {
    assert_refused(NULL, "m\xff", "--model: 'm\xff' is not valid UTF-8");
}

UNIT_MAIN(cmocka_unit_test(test_mock_server_runs_embedded_until_stopped),
          cmocka_unit_test(test_mock_server_no_sent_ns_leaves_the_field_out_of_every_chunk),
          cmocka_unit_test(test_mock_server_new_reports_a_bad_address),
          cmocka_unit_test(test_mock_server_new_reports_a_model_name_that_is_not_utf8))
