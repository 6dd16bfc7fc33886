/* worker/engine against real servers on loopback: `stampede mock` in fixed mode for timing,
 * reuse and concurrency; small raw-socket servers of our own for every failure class. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine.h"
#include "loop.h"
#include "mock_spawn.h"
#include "stream.h"

#define MS 1000000LL
#define CHAT_PATH "/v1/chat/completions"

/* The mock, spawned once for the tests that need it. */
MOCK_GROUP_FIXTURE("--ttft-ms", "50", "--itl-ms", "10")

/* A raw-socket server on a thread: answers each connection with a canned reply. */

typedef enum canned_end {
    CANNED_CLOSE,  /* write the reply, then close */
    CANNED_RESET,  /* write the reply, then reset the connection (RST) */
    CANNED_SILENT, /* read the request, never answer (until the test ends) */
} canned_end_t;

typedef struct canned_server {
    int listen_fd;
    int port;
    const char *reply;
    canned_end_t end;
    /* Instead of reply: a streamed response whose SSE events are written one by one, each as an
     * HTTP chunk, gap_ms apart, then the end of the body. */
    const char *const *script;
    int n_script;
    int gap_ms;
    pthread_t thread;
    char request[8192]; /* the first request received, headers and body */
    size_t request_len;
    volatile int stop;
} canned_server_t;

static int listen_loopback(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &alen) < 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

/* Reads one request: headers, then Content-Length bytes of body. */
static size_t read_request(int fd, char *buf, size_t cap) {
    size_t len = 0;
    size_t want = SIZE_MAX;
    while (len < cap - 1 && len < want) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0)
            break;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end && want == SIZE_MAX) {
            char *cl = strcasestr(buf, "content-length:");
            want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
        }
    }
    return len;
}

static void canned_write(int fd, const char *data, size_t len) {
    if (write(fd, data, len) != (ssize_t)len)
        fprintf(stderr, "canned server: short write\n");
}

static void canned_write_script(const canned_server_t *s, int fd) {
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";
    canned_write(fd, head, strlen(head));
    for (int i = 0; i < s->n_script; i++) {
        if (i > 0 && s->gap_ms > 0)
            usleep((useconds_t)s->gap_ms * 1000);
        char frame[4096];
        int n = snprintf(frame, sizeof(frame), "%zx\r\n%s\r\n", strlen(s->script[i]), s->script[i]);
        assert_true(n > 0 && (size_t)n < sizeof(frame));
        canned_write(fd, frame, (size_t)n);
    }
    canned_write(fd, "0\r\n\r\n", 5);
}

static void *canned_serve(void *arg) {
    canned_server_t *s = arg;
    int held[64];
    int n_held = 0;
    while (!s->stop) {
        struct pollfd p = {.fd = s->listen_fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        char request[8192];
        size_t len = read_request(fd, request, sizeof(request));
        if (!s->request_len) {
            memcpy(s->request, request, len);
            s->request_len = len;
        }
        if (s->end == CANNED_SILENT) {
            if (n_held < 64)
                held[n_held++] = fd;
            continue;
        }
        if (s->script)
            canned_write_script(s, fd);
        else
            canned_write(fd, s->reply, strlen(s->reply));
        if (s->end == CANNED_RESET) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        close(fd);
    }
    for (int i = 0; i < n_held; i++)
        close(held[i]);
    return NULL;
}

/* Takes s (calloc'd, its reply or script set), binds it to a loopback port and starts serving. */
static canned_server_t *canned_listen(canned_server_t *s) {
    s->listen_fd = listen_loopback(&s->port);
    assert_true(s->listen_fd >= 0);
    assert_int_equal(pthread_create(&s->thread, NULL, canned_serve, s), 0);
    return s;
}

static canned_server_t *canned_start(const char *reply, canned_end_t end) {
    canned_server_t *s = calloc(1, sizeof(*s));
    s->reply = reply;
    s->end = end;
    return canned_listen(s);
}

static canned_server_t *scripted_start(const char *const *events, int n, int gap_ms) {
    canned_server_t *s = calloc(1, sizeof(*s));
    s->script = events;
    s->n_script = n;
    s->gap_ms = gap_ms;
    s->end = CANNED_CLOSE;
    return canned_listen(s);
}

static void canned_stop(canned_server_t *s) {
    s->stop = 1;
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
    free(s);
}

/* Running requests on a loop, bounded in time. */

typedef struct outcome {
    request_record_t record;
    int64_t chunk_ns[4096];
    uint16_t chunk_tokens[4096];
    bool has_chunk_tokens; /* false: the record said every chunk carried one token */
    uint32_t n_chunks;
    char reply[65536];
    size_t reply_len;
    int done;
    bool reply_unused;        /* set before the run: submitted with engine_request_t.reply_unused */
    uint32_t said_max_tokens; /* set before the run: the record's requested_output_tokens */
    engine_stats_t stats;     /* the engine's, at the end of a run_tokens_against */
} outcome_t;

typedef struct run {
    loop_t *loop;
    engine_t *engine;
    int pending;
    int expired;
} run_t;

static run_t *current_run;

static void copy_outcome(outcome_t *o, request_record_t *record, const char *reply, size_t len) {
    o->n_chunks = record->n_chunks < 4096 ? record->n_chunks : 4096;
    if (record->chunk_ns)
        memcpy(o->chunk_ns, record->chunk_ns, o->n_chunks * sizeof(int64_t));
    o->has_chunk_tokens = record->chunk_tokens != NULL;
    if (record->chunk_tokens)
        memcpy(o->chunk_tokens, record->chunk_tokens, o->n_chunks * sizeof(uint16_t));
    o->reply_len = len < sizeof(o->reply) ? len : sizeof(o->reply) - 1;
    memcpy(o->reply, reply, o->reply_len);
    o->reply[o->reply_len] = '\0';
    o->done++;
}

static void on_done(void *arg, request_record_t *record, const char *reply, size_t len) {
    copy_outcome(arg, record, reply, len);
    if (--current_run->pending == 0)
        loop_stop(current_run->loop);
}

static void on_watchdog(loop_t *loop, uint64_t id, void *arg) {
    ((run_t *)arg)->expired = 1;
    loop_stop(loop);
}

static void run_until_done(run_t *run, int64_t limit_ns) {
    uint64_t dog = loop_timer_at(run->loop, loop_now_ns() + limit_ns, on_watchdog, run);
    if (run->pending > 0)
        loop_run(run->loop);
    loop_timer_cancel(run->loop, dog);
    assert_int_equal(run->expired, 0);
    assert_int_equal(run->pending, 0);
}

static void run_open(run_t *run, const engine_options_t *options) {
    memset(run, 0, sizeof(*run));
    run->loop = loop_new();
    assert_non_null(run->loop);
    run->engine = engine_new(run->loop, options);
    assert_non_null(run->engine);
    current_run = run;
}

/* run_open with the two options most tests set. */
static void run_open_streams(run_t *run, uint32_t max_streams, int64_t timeout_ns) {
    engine_options_t options = {.max_streams = max_streams, .timeout_ns = timeout_ns};
    run_open(run, &options);
}

static engine_stats_t run_stats(const run_t *run) {
    engine_stats_t stats;
    engine_stats(run->engine, &stats);
    return stats;
}

static void run_close(run_t *run) {
    engine_destroy(&run->engine);
    assert_null(run->engine);
    loop_destroy(&run->loop);
    current_run = NULL;
}

static char *chat_body(int max_tokens, int stream) {
    char *body = malloc(512);
    snprintf(body, 512,
             "{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":\"hello "
             "there\"}],\"max_tokens\":%d,\"ignore_eos\":true,\"stream\":%s,"
             "\"stream_options\":{\"include_usage\":true}}",
             max_tokens, stream ? "true" : "false");
    return body;
}

static void submit_one(run_t *run, const char *url, const char *body, outcome_t *o) {
    memset(&o->record, 0, sizeof(o->record));
    o->record.requested_output_tokens = o->said_max_tokens;
    engine_request_t req = {.url = url,
                            .body = body,
                            .body_len = strlen(body),
                            .reply_unused = o->reply_unused,
                            .record = &o->record};
    assert_int_equal(engine_submit(run->engine, &req, on_done, o), 0);
    run->pending++;
}

static void mock_url(char *url, size_t cap) {
    snprintf(url, cap, "http://127.0.0.1:%d" CHAT_PATH, mock.port);
}

/* Against the mock. */

static double median(double *values, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && values[j - 1] > values[j]; j--) {
            double t = values[j];
            values[j] = values[j - 1];
            values[j - 1] = t;
        }
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* Five streams of 40 tokens at once; medians over them, so that one stall of a busy machine
 * does not decide the outcome while a systematic error still does. */
static void test_engine_mock_fixed_ttft_50ms_itl_10ms_chunks_and_usage(void **state) {
    enum { STREAMS = 5, TOKENS = 40 };
    run_t run;
    run_open_streams(&run, STREAMS, 20000 * MS);
    char url[128];
    mock_url(url, sizeof(url));
    char *body = chat_body(TOKENS, 1);
    static outcome_t o[STREAMS];
    for (int i = 0; i < STREAMS; i++)
        submit_one(&run, url, body, &o[i]);
    run_until_done(&run, 20000 * MS);
    double ttft_ms[STREAMS], itl_mean_ms[STREAMS], gap_median_ms[STREAMS];
    for (int i = 0; i < STREAMS; i++) {
        request_record_t *r = &o[i].record;
        assert_int_equal(o[i].done, 1);
        assert_int_equal(r->error, ERROR_NONE);
        assert_int_equal(r->http_status, 200);
        /* A busy machine may deliver two tokens in one read: then they are one chunk. */
        uint32_t n = o[i].n_chunks, first = o[i].has_chunk_tokens ? o[i].chunk_tokens[0] : 1;
        assert_int_equal(record_chunk_tokens(r), TOKENS);
        assert_true(n >= 2 && n <= TOKENS);
        assert_int_equal(r->content_chunks, TOKENS); /* events */
        assert_int_equal(r->reasoning_chunks, 0);
        assert_true(r->has_usage);
        assert_int_equal(r->completion_tokens, TOKENS);
        assert_true(r->prompt_tokens > 0);
        assert_true(r->send_ns > 0 && r->headers_ns >= r->send_ns);
        assert_true(r->first_token_ns == r->first_content_ns);
        assert_true(r->first_content_ns == o[i].chunk_ns[0]);
        assert_true(r->end_ns >= o[i].chunk_ns[n - 1]);
        assert_true(o[i].reply_len > 0);
        assert_int_equal(r->content_bytes, o[i].reply_len);
        ttft_ms[i] = (double)(r->first_content_ns - r->send_ns) / MS;
        itl_mean_ms[i] = (double)(o[i].chunk_ns[n - 1] - o[i].chunk_ns[0]) / (TOKENS - first) / MS;
        double gaps[TOKENS]; /* the ITL samples: a chunk of k tokens gives k of gap / k */
        uint32_t samples = 0;
        for (uint32_t c = 1; c < n; c++) {
            uint32_t k = o[i].has_chunk_tokens ? o[i].chunk_tokens[c] : 1;
            for (uint32_t j = 0; j < k && samples < TOKENS; j++)
                gaps[samples++] = (double)(o[i].chunk_ns[c] - o[i].chunk_ns[c - 1]) / k / MS;
        }
        gap_median_ms[i] = median(gaps, samples);
    }
    /* TTFT: 50 ms of simulated prefill plus a loopback connect and request. That it is taken at
     * the first chunk is asserted per request above (first_content_ns == chunk_ns[0]); here it
     * must not come early, and the upper bound only has to hold on a 2-core machine loaded by the
     * parallel suite (56 and 59 ms did not, at 12 tests at once). */
    double ttft = median(ttft_ms, STREAMS);
    if (!(ttft >= 49.9 && ttft <= 150.0))
        fail_msg("TTFT median %.3f ms, expected 50 ms of prefill plus a connect", ttft);
    /* ITL: the mean gap within 4 % below and 5 % above 10 ms (one late first or last chunk on a
     * machine loaded by the parallel suite moves the mean by its delay / 39), the typical single
     * gap within 1 ms of it. A chunk-per-event error would put the gaps at 0 and 20 ms. */
    double itl = median(itl_mean_ms, STREAMS);
    assert_true(itl >= 9.6 && itl <= 10.5);
    double gap = median(gap_median_ms, STREAMS);
    assert_true(gap >= 9.0 && gap <= 11.0);
    free(body);
    run_close(&run);
}

typedef struct chain {
    run_t *run;
    const char *url;
    const char *body;
    request_record_t record;
    int remaining;
    int ok;
    int bad_chunks;
    error_class_t last_error;
    char last_message[160];
} chain_t;

static void chain_next(chain_t *c);

static void chain_done(void *arg, request_record_t *record, const char *reply, size_t len) {
    chain_t *c = arg;
    if (record->error == ERROR_NONE)
        c->ok++;
    else {
        c->last_error = record->error;
        snprintf(c->last_message, sizeof(c->last_message), "%s", record->error_message);
    }
    if (record_chunk_tokens(record) != 10) /* in 10 chunks or fewer: see docs/metrics.md */
        c->bad_chunks++;
    c->run->pending--;
    if (--c->remaining > 0)
        chain_next(c); /* resubmitting from the done callback, every slot busy */
    else if (c->run->pending == 0)
        loop_stop(c->run->loop);
}

static void chain_next(chain_t *c) {
    memset(&c->record, 0, sizeof(c->record));
    engine_request_t req = {
        .url = c->url, .body = c->body, .body_len = strlen(c->body), .record = &c->record};
    assert_int_equal(engine_submit(c->run->engine, &req, chain_done, c), 0);
    c->run->pending++;
}

/* Starts n chains of `remaining` requests each, every one on its own stream slot. */
static void chains_start(chain_t *chains, int n, run_t *run, const char *url, const char *body,
                         int remaining) {
    for (int i = 0; i < n; i++) {
        chains[i] = (chain_t){.run = run, .url = url, .body = body, .remaining = remaining};
        chain_next(&chains[i]);
    }
}

/* How many requests of the n chains succeeded. */
static int chains_ok(const chain_t *chains, int n) {
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += chains[i].ok;
    return ok;
}

static void test_engine_hundred_concurrent_streams_succeed_and_reuse_connections(void **state) {
    run_t run;
    run_open_streams(&run, 100, 30000 * MS);
    char url[128];
    mock_url(url, sizeof(url));
    char *body = chat_body(10, 1);
    static chain_t chains[100];
    chains_start(chains, 100, &run, url, body, 3);
    /* All slots taken: one more is refused. */
    request_record_t extra = {0};
    engine_request_t req = {.url = url, .body = body, .body_len = strlen(body), .record = &extra};
    assert_int_equal(engine_submit(run.engine, &req, chain_done, &chains[0]), -1);
    assert_int_equal(engine_inflight_to(run.engine, 0), 100);
    assert_int_equal(engine_inflight_to(run.engine, 5), 0);
    run_until_done(&run, 30000 * MS);
    int ok = 0, bad = 0;
    for (int i = 0; i < 100; i++) {
        ok += chains[i].ok;
        bad += chains[i].bad_chunks;
        if (chains[i].ok != 3)
            fprintf(stderr, "chain %d: %s %s\n", i, error_class_name(chains[i].last_error),
                    chains[i].last_message);
    }
    assert_int_equal(ok, 300);
    assert_int_equal(bad, 0);
    engine_stats_t stats = run_stats(&run);
    assert_int_equal(stats.requests_finished, 300);
    assert_int_equal(stats.requests_failed, 0);
    /* 300 requests over at most one connection per stream slot (100, and one more for the
     * slot a done callback still holds while it submits the next): most were reused. */
    if (stats.connections > stats.streams)
        fprintf(stderr, "%llu connections for %u stream slots\n",
                (unsigned long long)stats.connections, stats.streams);
    assert_true(stats.connections >= 1 && stats.connections <= stats.streams);
    assert_true(stats.streams <= 101);
    assert_true(stats.token_chunks == 3000);
    assert_true(stats.sse_events >= 3000 + 300 * 2); /* tokens, usage and [DONE] */
    assert_int_equal(engine_inflight_to(run.engine, 0), 0);
    free(body);
    run_close(&run);
}

/* 600 streams make three curl multi handles (shards); each slot keeps to one, so connections
 * are still reused and never outnumber the streams. */
static void test_engine_sharded_streams_succeed_and_reuse_connections(void **state) {
    run_t run;
    run_open_streams(&run, 600, 30000 * MS);
    char url[128];
    mock_url(url, sizeof(url));
    char *body = chat_body(10, 1);
    static chain_t chains[300];
    chains_start(chains, 300, &run, url, body, 3);
    run_until_done(&run, 30000 * MS);
    assert_int_equal(chains_ok(chains, 300), 900);
    engine_stats_t stats = run_stats(&run);
    assert_int_equal(stats.requests_failed, 0);
    assert_true(stats.connections >= 1 && stats.connections <= 301);
    assert_int_equal(stats.token_chunks, 9000);
    free(body);
    run_close(&run);
}

/* What the worker does with a resolver's line, on this thread: engine_lookup, then engine_pin. */
static int lookup_and_pin(engine_t *engine, const char *url, char *err, size_t errlen) {
    char line[ENGINE_PIN_LINE_MAX];
    int found = engine_lookup(url, line, sizeof(line), err, errlen);
    return found <= 0 ? found : engine_pin(engine, line, err, errlen);
}

static void test_engine_pins_a_host_name_once_before_any_request(void **state) {
    run_t run;
    run_open_streams(&run, 8, 20000 * MS);
    char by_name[128], by_address[128], err[512] = "";
    snprintf(by_name, sizeof(by_name), "http://localhost:%d" CHAT_PATH, mock.port);
    mock_url(by_address, sizeof(by_address));
    assert_int_equal(lookup_and_pin(run.engine, by_name, err, sizeof(err)), 0);
    assert_int_equal(lookup_and_pin(run.engine, by_name, err, sizeof(err)), 0);
    assert_int_equal(lookup_and_pin(run.engine, by_address, err, sizeof(err)), 0);
    engine_stats_t stats = run_stats(&run);
    assert_int_equal(stats.pinned_hosts, 1); /* localhost once; the IP literal needs no lookup */
    run_close(&run);
}

/* A label over 63 octets cannot be put in a DNS query, so the lookup fails on this host. */
#define UNRESOLVABLE_HOST                                                                          \
    "no-such-host-with-a-label-longer-than-sixty-three-octets-xxxxxxxx.invalid"

static void test_engine_lookup_names_the_host_and_endpoint_it_cannot_resolve(void **state) {
    run_t run;
    run_open_streams(&run, 8, 20000 * MS);
    char err[512] = "";
    const char *url = "http://" UNRESOLVABLE_HOST ":1/v1";
    assert_int_equal(lookup_and_pin(run.engine, url, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot resolve host " UNRESOLVABLE_HOST
                                " (endpoint http://" UNRESOLVABLE_HOST));
    assert_non_null(strstr(err, url));
    engine_stats_t stats = run_stats(&run);
    assert_int_equal(stats.pinned_hosts, 0);
    run_close(&run);
}

/* Requests to a pinned host hand curl the pinned addresses once per stream, not per request. */
static void test_engine_pins_are_set_once_per_stream(void **s) {
    run_t run;
    run_open_streams(&run, 4, 20000 * MS);
    char by_name[128], err[512] = "";
    snprintf(by_name, sizeof(by_name), "http://localhost:%d" CHAT_PATH, mock.port);
    assert_int_equal(lookup_and_pin(run.engine, by_name, err, sizeof(err)), 0);
    char *body = chat_body(10, 1);
    static chain_t chains[4];
    chains_start(chains, 4, &run, by_name, body, 5);
    run_until_done(&run, 20000 * MS);
    assert_int_equal(chains_ok(chains, 4), 20);
    engine_stats_t stats = run_stats(&run);
    assert_int_equal(stats.requests_finished, 20);
    assert_int_equal(stats.pinned_hosts, 1);
    /* one per stream slot (4, or 5 when a done callback still held its slot at a resubmit) */
    assert_true(stats.streams >= 4 && stats.streams <= 5);
    assert_int_equal(stats.resolve_updates, stats.streams);
    free(body);
    run_close(&run);
}

static void test_engine_non_streaming_reply_is_one_chunk_at_the_end(void **state) {
    run_t run;
    run_open_streams(&run, 2, 20000 * MS);
    char url[128];
    mock_url(url, sizeof(url));
    char *body = chat_body(5, 0);
    static outcome_t o;
    submit_one(&run, url, body, &o);
    run_until_done(&run, 20000 * MS);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 1);
    assert_int_equal(o.record.content_chunks, 1);
    assert_true(o.record.first_content_ns == o.record.end_ns);
    assert_true(o.record.has_usage);
    assert_int_equal(o.record.completion_tokens, 5);
    assert_true(o.reply_len > 0);
    free(body);
    run_close(&run);
}

/* The chunk stamps are sized by the request's max_tokens (worker/stream.c): a reply longer than
 * its request said (a server past max_tokens), or with none said, still keeps every chunk, on one
 * stream whose arrays the earlier requests sized. 40 tokens at 10 ms come in more than 3 reads. */
static void test_engine_chunks_past_the_requests_max_tokens_are_all_kept(void **state) {
    enum { TOKENS = 40 };
    static const uint32_t said[] = {3, TOKENS, 0, 2 * TOKENS, 1};
    run_t run;
    run_open_streams(&run, 1, 20000 * MS);
    char url[128];
    mock_url(url, sizeof(url));
    char *body = chat_body(TOKENS, 1);
    static outcome_t o;
    for (size_t k = 0; k < sizeof said / sizeof said[0]; k++) {
        memset(&o, 0, sizeof o);
        o.said_max_tokens = said[k];
        submit_one(&run, url, body, &o);
        run_until_done(&run, 20000 * MS);
        assert_int_equal(o.record.error, ERROR_NONE);
        assert_int_equal(record_chunk_tokens(&o.record), TOKENS);
        assert_int_equal(o.record.content_chunks, TOKENS);
        if (said[k] && said[k] < TOKENS)
            assert_true(o.n_chunks > said[k]);
        assert_true(o.chunk_ns[0] == o.record.first_content_ns);
        for (uint32_t c = 1; c < o.n_chunks; c++)
            assert_true(o.chunk_ns[c] > o.chunk_ns[c - 1]);
        assert_true(o.record.end_ns >= o.chunk_ns[o.n_chunks - 1]);
    }
    free(body);
    run_close(&run);
}

static void test_engine_sent_delay_histogram_and_counters(void **state) {
    run_t run;
    run_open_streams(&run, 8, 20000 * MS);
    histogram_t *delay = histogram_new();
    engine_set_sent_delay(run.engine, delay);
    char url[128];
    mock_url(url, sizeof(url));
    char *body = chat_body(20, 1);
    static outcome_t o[4];
    for (int i = 0; i < 4; i++)
        submit_one(&run, url, body, &o[i]);
    run_until_done(&run, 20000 * MS);
    engine_stats_t stats = run_stats(&run);
    /* Every token chunk carries sent_ns (and the usage chunk may too). */
    assert_true(histogram_count(delay) >= 80);
    /* Loopback on one host: the client adds tens of microseconds per chunk (epoll wakeup, curl,
     * SSE parsing); 2 ms for the median leaves room for a busy machine's scheduling delays while
     * still catching a chunk that waits for a timer or a later read. */
    uint64_t p50 = histogram_percentile(delay, 50);
    if (p50 >= 2 * MS)
        fprintf(stderr, "client-added delay p50 %.3f ms (p99 %.3f ms) over %llu chunks\n",
                (double)p50 / MS, (double)histogram_percentile(delay, 99) / MS,
                (unsigned long long)histogram_count(delay));
    assert_true(p50 < 2 * MS);
    assert_true(stats.write_callbacks > 0 && stats.body_bytes > 0);
    assert_true(stats.sse_events >= stats.token_chunks);
    histogram_destroy(&delay);
    free(body);
    run_close(&run);
}

/* Failure classes. */

/* One streamed request of max_tokens to url, the whole run bounded by limit_ns. */
static void run_tokens_against(const char *url, const engine_options_t *options, int max_tokens,
                               outcome_t *o, int64_t limit_ns) {
    run_t run;
    run_open(&run, options);
    char *body = chat_body(max_tokens, 1);
    submit_one(&run, url, body, o);
    run_until_done(&run, limit_ns);
    o->stats = run_stats(&run);
    free(body);
    run_close(&run);
}

static void run_one_against(const char *url, const engine_options_t *options, outcome_t *o,
                            int64_t limit_ns) {
    run_tokens_against(url, options, 5, o, limit_ns);
}

/* One request to path on the canned server s with the given request timeout (10 s bound on the
 * whole run), then stops s. */
static void run_one_on_canned_at(canned_server_t *s, const char *path, int64_t timeout_ns,
                                 outcome_t *o) {
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", s->port, path);
    engine_options_t options = {.max_streams = 1, .timeout_ns = timeout_ns};
    run_one_against(url, &options, o, 10000 * MS);
    canned_stop(s);
}

/* The common case: a chat completion with a 5 s request timeout. */
static void run_one_on_canned(canned_server_t *s, outcome_t *o) {
    run_one_on_canned_at(s, CHAT_PATH, 5000 * MS, o);
}

static void test_engine_refused_connection_is_error_refused(void **state) {
    int port;
    int fd = listen_loopback(&port);
    close(fd); /* nothing listens there any more */
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d" CHAT_PATH, port);
    engine_options_t options = {.max_streams = 1, .timeout_ns = 5000 * MS};
    static outcome_t o;
    run_one_against(url, &options, &o, 10000 * MS);
    assert_int_equal(o.record.error, ERROR_REFUSED);
    assert_int_equal(o.record.http_status, 0);
    assert_true(strlen(o.record.error_message) > 0);
    assert_true(o.record.end_ns >= o.record.send_ns);
}

/* No descriptor left for the socket (the soft open-file limit lowered to the next free one, after
 * the engine is made): the client's fault, class client_fd_limit, not a connect error. */
static void test_engine_no_descriptor_for_a_socket_is_client_fd_limit(void **state) {
    int port;
    int fd = listen_loopback(&port); /* listening: a socket, once made, would connect */
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d" CHAT_PATH, port);
    run_t run;
    run_open_streams(&run, 1, 5000 * MS);
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int next = dup(0);
    assert_true(next > 0);
    close(next);
    struct rlimit low = {.rlim_cur = (rlim_t)next, .rlim_max = saved.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    static outcome_t o;
    char *body = chat_body(5, 1);
    submit_one(&run, url, body, &o);
    run_until_done(&run, 5000 * MS);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    free(body);
    run_close(&run);
    close(fd);
    assert_int_equal(o.record.error, ERROR_CLIENT_FD_LIMIT);
    assert_non_null(strstr(o.record.error_message, "open-file limit"));
}

static void test_engine_bad_url_is_reported_through_the_callback(void **state) {
    engine_options_t options = {.max_streams = 1};
    static outcome_t o;
    run_one_against("nope://what", &options, &o, 5000 * MS);
    assert_int_equal(o.done, 1);
    assert_int_equal(o.record.error, ERROR_CONNECT);
}

static void test_engine_server_that_never_answers_is_error_timeout(void **state) {
    static outcome_t o;
    run_one_on_canned_at(canned_start("", CANNED_SILENT), CHAT_PATH, 300 * MS, &o);
    assert_int_equal(o.record.error, ERROR_TIMEOUT);
    double elapsed_ms = (double)(o.record.end_ns - o.record.send_ns) / MS;
    assert_true(elapsed_ms >= 299.0 && elapsed_ms < 3000.0);
}

/* A listener whose accept queue is full drops further SYNs, so a connect to it never completes. */
static void test_engine_connect_that_never_completes_is_error_connect_at_the_deadline(void **s) {
    int port;
    int fd = listen_loopback(&port);
    assert_true(fd >= 0);
    assert_int_equal(listen(fd, 0), 0); /* room for one queued connection, never accepted */
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fillers[2];
    for (int i = 0; i < 2; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fillers[i], (struct sockaddr *)&addr, sizeof(addr));
    }
    usleep(50 * 1000); /* the fillers' handshakes take the queue before the engine's SYN */
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d" CHAT_PATH, port);
    engine_options_t options = {
        .max_streams = 1, .timeout_ns = 5000 * MS, .connect_timeout_ns = 300 * MS};
    static outcome_t o;
    run_one_against(url, &options, &o, 10000 * MS);
    for (int i = 0; i < 2; i++)
        close(fillers[i]);
    close(fd);
    assert_int_equal(o.record.error, ERROR_CONNECT);
    assert_string_equal(o.record.error_message, "connect timed out after 300 ms");
    double elapsed_ms = (double)(o.record.end_ns - o.record.send_ns) / MS;
    assert_true(elapsed_ms >= 299.0 && elapsed_ms < 3000.0);
}

/* The connect deadline ends with the connect: a stream lasting longer than it completes. */
static void test_engine_connect_deadline_spares_a_connected_stream_that_outlasts_it(void **s) {
    engine_options_t options = {
        .max_streams = 1, .timeout_ns = 20000 * MS, .connect_timeout_ns = 100 * MS};
    char url[128];
    mock_url(url, sizeof(url));
    static outcome_t o;
    run_tokens_against(url, &options, 30, &o, 20000 * MS); /* 50 ms + 30 x 10 ms */
    assert_int_equal(o.record.error, ERROR_NONE);
    /* every token arrived (a loaded machine may read two events in one chunk: count tokens) */
    assert_int_equal(o.record.completion_tokens, 30);
    assert_true(o.n_chunks >= 2);
    assert_true(o.record.end_ns - o.record.send_ns > 200 * MS);
}

/* A complete JSON reply with the right Content-Length; the caller frees it. */
static char *json_reply(const char *status_line, const char *body) {
    char *out = malloc(1024 + strlen(body));
    sprintf(out,
            "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
            "Connection: close\r\n\r\n%s",
            status_line, strlen(body), body);
    return out;
}

static void test_engine_http_500_is_error_http_500_with_the_message(void **state) {
    char *reply = json_reply("500 Internal Server Error",
                             "{\"object\":\"error\",\"message\":\"engine overloaded, retry "
                             "later\",\"type\":\"x\",\"code\":500}");
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_HTTP_500);
    assert_int_equal(o.record.http_status, 500);
    assert_string_equal(o.record.error_message, "HTTP 500: engine overloaded, retry later");
    free(reply);
}

static void test_engine_http_404_is_error_http_4xx_with_the_detail(void **state) {
    char *reply = json_reply("404 Not Found", "{\"detail\":\"Not Found\"}");
    static outcome_t o;
    run_one_on_canned_at(canned_start(reply, CANNED_CLOSE), "/v1/nothing", 5000 * MS, &o);
    assert_int_equal(o.record.error, ERROR_HTTP_4XX);
    assert_int_equal(o.record.http_status, 404);
    assert_string_equal(o.record.error_message, "HTTP 404: Not Found");
    free(reply);
}

static void test_engine_http_429_is_error_http_429(void **state) {
    char *reply = json_reply("429 Too Many Requests",
                             "{\"object\":\"error\",\"message\":\"slow down\",\"code\":429}");
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_HTTP_429);
    assert_string_equal(o.record.error_message, "HTTP 429: slow down");
    free(reply);
}

static void test_engine_http_400_context_length_is_error_context_length(void **state) {
    char *reply = json_reply(
        "400 Bad Request",
        "{\"object\":\"error\",\"message\":\"This model's maximum context length is 2048 "
        "tokens. However, you requested 2100 tokens (100 in the messages, 2000 in the "
        "completion). Please reduce the length of the messages or completion.\",\"type\":"
        "\"BadRequestError\",\"param\":null,\"code\":400}");
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_CONTEXT_LENGTH);
    assert_int_equal(o.record.http_status, 400);
    free(reply);
    reply = json_reply("400 Bad Request", "{\"message\":\"The decoder prompt (length 9000) is "
                                          "longer than the maximum model length of 8192.\"}");
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_CONTEXT_LENGTH);
    free(reply);
    reply = json_reply("400 Bad Request", /* Anthropic's shape and wording */
                       "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                       "\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}");
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_CONTEXT_LENGTH);
    assert_string_equal(o.record.error_message,
                        "HTTP 400: prompt is too long: 210000 tokens > 200000 maximum");
    free(reply);
}

/* Anthropic's overloaded_error: HTTP 529, its own class, its message shown. */
static void test_engine_http_529_is_error_http_529_with_the_message(void **state) {
    char *reply = json_reply("529 Overloaded", "{\"type\":\"error\",\"error\":{\"type\":"
                                               "\"overloaded_error\",\"message\":\"Overloaded\"}}");
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_HTTP_529);
    assert_int_equal(o.record.http_status, 529);
    assert_string_equal(o.record.error_message, "HTTP 529: Overloaded");
    free(reply);
}

static void test_engine_http_400_other_is_error_http_4xx(void **state) {
    char *reply = json_reply("400 Bad Request", "{\"message\":\"temperature must be >= 0\"}");
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_HTTP_4XX);
    free(reply);
}

static void test_engine_html_page_in_a_200_is_error_not_sse(void **state) {
    static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                "Content-Length: 31\r\nConnection: close\r\n\r\n"
                                "<html><h1>502 Bad Gateway</h1>\n";
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_NOT_SSE);
    assert_int_equal(o.record.http_status, 200);
}

static void test_engine_http_503_streamed_as_sse_still_yields_its_message(void **state) {
    char *reply = malloc(512);
    const char *event = "data: {\"error\":{\"message\":\"no replicas ready\"}}\n\n";
    sprintf(reply,
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/event-stream\r\n"
            "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
            strlen(event), event);
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_HTTP_503);
    assert_string_equal(o.record.error_message, "HTTP 503: no replicas ready");
    free(reply);
}

static void test_engine_redirect_is_error_protocol(void **state) {
    static const char reply[] = "HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\n"
                                "Content-Length: 0\r\nConnection: close\r\n\r\n";
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_PROTOCOL);
    assert_int_equal(o.record.http_status, 307);
    assert_string_equal(o.record.error_message, "HTTP 307: redirects are not followed");
}

#define SSE_HEAD                                                                                   \
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
#define TOKEN_CHUNK(text)                                                                          \
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" text "\"}}]}\n\n"

/* HTTP chunk framing of fixed strings: the length is written by hand below. */
static char *chunked(const char *const *events, int n, int terminate) {
    char *out = calloc(1, 65536);
    strcat(out, SSE_HEAD);
    for (int i = 0; i < n; i++)
        sprintf(out + strlen(out), "%zx\r\n%s\r\n", strlen(events[i]), events[i]);
    if (terminate)
        strcat(out, "0\r\n\r\n");
    return out;
}

/* One request to a canned server answering with these n events as a chunked 200 stream, its body
 * ended cleanly when terminate, the connection ended as end says. */
static void run_one_on_events(const char *const *events, int n, int terminate, canned_end_t end,
                              outcome_t *o) {
    char *reply = chunked(events, n, terminate);
    run_one_on_canned(canned_start(reply, end), o);
    free(reply);
}

static void test_engine_server_hanging_up_mid_stream_is_error_reset_mid_stream(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), TOKEN_CHUNK("b"), TOKEN_CHUNK("c")};
    static outcome_t o;
    run_one_on_events(events, 3, 0, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_RESET_MID_STREAM);
    assert_int_equal(o.n_chunks, 1); /* one write, one read: one chunk of 3 tokens */
    assert_true(o.has_chunk_tokens);
    assert_int_equal(o.chunk_tokens[0], 3);
    assert_string_equal(o.reply, "abc");
    assert_true(o.record.first_content_ns > 0);
}

static void test_engine_connection_reset_mid_stream_is_error_reset_mid_stream(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), TOKEN_CHUNK("b")};
    static outcome_t o;
    run_one_on_events(events, 2, 0, CANNED_RESET, &o);
    assert_int_equal(o.record.error, ERROR_RESET_MID_STREAM);
}

static void test_engine_stream_cut_inside_an_event_is_error_truncated_json(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), "data: {\"choices\":[{\"index\":0,\"del"};
    static outcome_t o;
    run_one_on_events(events, 2, 0, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_TRUNCATED_JSON);
    assert_non_null(strstr(o.record.error_message, "inside an event"));
    assert_string_equal(o.reply, "a");
}

static void test_engine_close_without_a_byte_is_error_reset_before_headers(void **state) {
    static outcome_t o;
    run_one_on_canned(canned_start("", CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_RESET_BEFORE_HEADERS);
    assert_int_equal(o.record.http_status, 0);
}

static void test_engine_reset_without_a_byte_is_error_refused(void **state) {
    static outcome_t o;
    run_one_on_canned(canned_start("", CANNED_RESET), &o);
    assert_int_equal(o.record.error, ERROR_REFUSED);
    assert_int_equal(o.record.http_status, 0);
}

static void test_engine_retry_after_seconds_and_http_date(void **state) {
    assert_int_equal(stream_parse_retry_after("1", 0), 1);
    assert_int_equal(stream_parse_retry_after(" 120 ", 0), 120);
    assert_int_equal(stream_parse_retry_after("-3", 0), -1);
    assert_int_equal(stream_parse_retry_after("soon", 0), -1);
    assert_int_equal(stream_parse_retry_after("1.5", 0), -1);
    /* Sun, 06 Nov 1994 08:49:37 GMT = 784111777 */
    assert_int_equal(stream_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 30), 30);
    assert_int_equal(stream_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 5), 0);
}

static void test_engine_stream_ending_without_done_or_finish_is_error_no_done(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), TOKEN_CHUNK("b")};
    static outcome_t o;
    run_one_on_events(events, 2, 1, CANNED_CLOSE, &o); /* a clean end of body, but no [DONE] */
    assert_int_equal(o.record.error, ERROR_NO_DONE);
    assert_int_equal(o.n_chunks, 1);
    assert_int_equal(o.chunk_tokens[0], 2);
}

static void test_engine_finish_reason_without_done_is_complete(void **state) {
    const char *events[] = {
        TOKEN_CHUNK("a"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"};
    static outcome_t o;
    run_one_on_events(events, 2, 1, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 1);
    assert_false(o.record.has_usage);
}

static void test_engine_error_event_in_a_200_stream_is_error_server_error_event(void **state) {
    const char *events[] = {
        TOKEN_CHUNK("a"),
        "event: error\ndata: {\"error\":{\"message\":\"KV cache exhausted\",\"code\":503}}\n\n",
        "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_events(events, 3, 1, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_SERVER_ERROR_EVENT);
    assert_string_equal(o.record.error_message, "error event in stream: KV cache exhausted");
}

static void test_engine_error_object_in_a_data_chunk_is_error_server_error_event(void **state) {
    const char *events[] = {"data: {\"error\":{\"message\":\"bad things\",\"code\":400}}\n\n",
                            "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_events(events, 2, 1, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_SERVER_ERROR_EVENT);
    assert_string_equal(o.record.error_message, "error in stream: bad things");
}

static void test_engine_malformed_json_chunk_is_error_malformed_sse(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), "data: {\"choices\":[{\"delta\":\n\n",
                            "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_events(events, 3, 1, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_MALFORMED_SSE);
    assert_non_null(strstr(o.record.error_message, "malformed chunk"));
}

static void test_engine_reasoning_then_content_counts_and_usage(void **state) {
    const char *events[] = {
        "data: "
        "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"m\"}}]}\n\n",
        TOKEN_CHUNK("Hi\\n\\u00e9"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
        "{\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":4,"
        "\"prompt_tokens_details\":{\"cached_tokens\":3}}}\n\n",
        "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_events(events, 7, 1, CANNED_CLOSE, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->error, ERROR_NONE);
    /* one read: one chunk of the 4 token events (the role-only event carries no token) */
    assert_int_equal(o.n_chunks, 1);
    assert_int_equal(o.chunk_tokens[0], 4);
    assert_int_equal(r->reasoning_chunks, 2); /* counted per event */
    assert_int_equal(r->content_chunks, 2);
    assert_true(r->first_token_ns <= r->first_content_ns);
    assert_string_equal(o.reply, "Hi\n\xc3\xa9");
    assert_true(r->has_usage);
    assert_int_equal(r->prompt_tokens, 7);
    assert_int_equal(r->completion_tokens, 4);
    assert_int_equal(r->cached_tokens, 3);
}

#define USAGE_CHUNK(text, finish, completion)                                                      \
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" text                              \
    "\"},\"finish_reason\":" finish                                                                \
    "}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":" #completion "}}\n\n"

/* Fails unless the outcome's chunks were stamped as they came, gap_ms apart: in order, never two
 * at one instant, and the first to the last at least three quarters of the gaps apart. Not each
 * gap: a stamp late by a few ms on a loaded machine shortens the gap after it (a CI run read one
 * under 15 of 20 ms); the span only shortens by the first chunk's lateness. */
static void assert_chunks_apart(const outcome_t *o, int gap_ms) {
    assert_true(o->n_chunks >= 2);
    for (uint32_t i = 1; i < o->n_chunks; i++)
        assert_true(o->chunk_ns[i] > o->chunk_ns[i - 1]);
    int64_t span = o->chunk_ns[o->n_chunks - 1] - o->chunk_ns[0];
    assert_true(span >= (int64_t)(o->n_chunks - 1) * gap_ms * MS * 3 / 4);
}

/* A server that puts its one usage on the last content chunk (with finish_reason): that chunk
 * carried one token like the others, not the whole reply, so every gap stays one token's. */
static void test_engine_usage_only_on_the_last_chunk_counts_one_token_per_chunk(void **state) {
    static const char *const events[] = {TOKEN_CHUNK("a"),
                                         TOKEN_CHUNK(" b"),
                                         TOKEN_CHUNK(" c"),
                                         TOKEN_CHUNK(" d"),
                                         USAGE_CHUNK(" e", "\"stop\"", 5),
                                         "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 6, 20), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 5);
    if (o.has_chunk_tokens)
        for (uint32_t i = 0; i < o.n_chunks; i++)
            assert_int_equal(o.chunk_tokens[i], 1);
    assert_true(o.record.has_usage);
    assert_int_equal(o.record.completion_tokens, 5);
    assert_chunks_apart(&o, 20); /* the server sleeps 20 ms between chunks */
    assert_string_equal(o.reply, "a b c d e");
}

/* Fails unless the outcome has exactly these chunks, of these token counts each. */
static void assert_chunk_tokens(const outcome_t *o, const uint16_t *expected, uint32_t n) {
    assert_int_equal(o->n_chunks, n);
    assert_true(o->has_chunk_tokens);
    for (uint32_t i = 0; i < n; i++)
        if (o->chunk_tokens[i] != expected[i])
            fail_msg("chunk %u: %u tokens, expected %u", i, o->chunk_tokens[i], expected[i]);
}

/* vLLM's continuous_usage_stats: usage on every chunk is a running total, so each chunk carried
 * the difference, the first one included (it is credited once the second proves the totals). */
static void test_engine_continuous_usage_gives_each_chunk_its_token_count(void **state) {
    static const char *const events[] = {
        USAGE_CHUNK("a b", "null", 2),    USAGE_CHUNK(" c", "null", 3),
        USAGE_CHUNK(" d e", "null", 5),   USAGE_CHUNK(" f", "null", 6),
        USAGE_CHUNK(" g", "\"stop\"", 7), "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 6, 20), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_chunk_tokens(&o, (const uint16_t[]){2, 1, 2, 1, 1}, 5);
    assert_int_equal(o.record.completion_tokens, 7);
}

/* The same, with vLLM's first role-only chunk carrying usage (0 completion tokens). */
static void test_engine_continuous_usage_after_a_role_chunk_counts_from_the_first(void **state) {
    static const char *const events[] = {
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],"
        "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":0}}\n\n",
        USAGE_CHUNK("a b c", "null", 3), USAGE_CHUNK(" d", "\"length\"", 4), "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 4, 20), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_chunk_tokens(&o, (const uint16_t[]){3, 1}, 2);
}

/* Events written together arrive in one read and form one chunk of their tokens; the gap before
 * it belongs to all of them. Script elements are written 20 ms apart, each one write. */
static void test_engine_events_of_one_read_are_one_chunk_of_their_tokens(void **state) {
    static const char *const events[] = {TOKEN_CHUNK("a") TOKEN_CHUNK("b"),
                                         TOKEN_CHUNK("c") TOKEN_CHUNK("d") TOKEN_CHUNK("e"),
                                         TOKEN_CHUNK("f"), "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 4, 20), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_chunk_tokens(&o, (const uint16_t[]){2, 3, 1}, 3);
    assert_chunks_apart(&o, 20);
    assert_int_equal(o.record.content_chunks, 6);
    assert_string_equal(o.reply, "abcdef");
}

/* Continuous usage with events coalesced: the running totals of the events of one read add up,
 * the first one included once the second usage proves they are totals. */
static void test_engine_coalesced_continuous_usage_adds_the_events_tokens(void **state) {
    static const char *const events[] = {USAGE_CHUNK("a b", "null", 2) USAGE_CHUNK(" c", "null", 3),
                                         USAGE_CHUNK(" d e", "null", 5),
                                         USAGE_CHUNK(" f", "\"stop\"", 6) "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 3, 20), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_chunk_tokens(&o, (const uint16_t[]){3, 2, 1}, 3);
    assert_int_equal(o.record.completion_tokens, 6);
}

#define ID_TOKEN(id, text)                                                                         \
    "data: {\"id\":\"" id "\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" text "\"}}]}"

/* Each element one write. The token events that open a write, while the SSE parser is at an
 * event's boundary, are read through the chunk shape without it (shaped_events); the others go
 * through the parser: the stream's first write, an event of several data lines (whose shape has a
 * raw LF, so it reads no line), an event after another field or a comment, an event cut across
 * writes and the one after it in the same write, a "data:" with two spaces, CRLF line ends and
 * [DONE]. Every token is read once, in order, either way, its escapes decoded. */
static void test_engine_token_events_read_without_the_parser_are_read_as_with_it(void **state) {
    static const char *const events[] = {
        ID_TOKEN("c1", "a") "\n\n",
        ID_TOKEN("c22", "b") "\n\n" ID_TOKEN("c3", "c") "\n\n",
        "data: {\"id\":\"c4\",\ndata: "
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"d\"}}]}\n\n",
        ID_TOKEN("c5", "e") "\n\n",
        ID_TOKEN("c6", "f") "\n\ndata: {\"id\":\"c7\",\"choi",
        "ces\":[{\"index\":0,\"delta\":{\"content\":\"g\"}}]}\n\n" ID_TOKEN("c8", "h") "\n\n",
        ID_TOKEN("c9", "i") "\n\n",
        "id: 9\n" ID_TOKEN("c10", "j") "\n\n",
        "data:  {\"id\":\"c11\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"k\"}}]}\n\n",
        ID_TOKEN("c12", "l") "\r\n\r\n",
        ": ping\n\n" ID_TOKEN("c13", "m") "\n\n",
        ID_TOKEN("c14", "n") "\n\n" ID_TOKEN("c15", "\\\"o\\u00e9\\n") "\n\n" ID_TOKEN(
            "c16", "a text longer than thirty-two bytes, with\\ta tab") "\n\ndata: [DONE]\n\n",
    };
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 12, 20), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_string_equal(o.reply, "abcdefghijklmn\"o\u00e9\na text longer than thirty-two bytes, "
                                 "with\ta tab");
    assert_int_equal(o.record.content_chunks, 16);
    assert_int_equal(o.stats.sse_events, 17);
    assert_int_equal(o.stats.shaped_events, 7); /* b, c, f, i, n and the two after it */
}

/* An "event: error" line in one write and its data in the next: the event is open when the data
 * comes, so it goes through the parser, which gives it its type, and the request fails. */
static void test_engine_error_event_type_in_the_write_before_its_data_is_an_error(void **s) {
    static const char *const events[] = {ID_TOKEN("c1", "a") "\n\n", ID_TOKEN("c2", "b") "\n\n",
                                         "event: error\n", ID_TOKEN("c3", "c") "\n\n"};
    static outcome_t o;
    run_one_on_canned(scripted_start(events, 4, 20), &o);
    assert_int_equal(o.record.error, ERROR_SERVER_ERROR_EVENT);
    assert_int_equal(o.stats.shaped_events, 1); /* b */
    assert_string_equal(o.reply, "ab");
}

static void test_engine_sse_under_another_content_type_is_still_parsed(void **state) {
    static const char reply[] =
        "HTTP/1.1 200 OK\r\nContent-Type: TEXT/PLAIN\r\n"
        "Connection: close\r\n\r\n" TOKEN_CHUNK("x") TOKEN_CHUNK("y") "data: [DONE]\n\n";
    static outcome_t o;
    run_one_on_canned(canned_start(reply, CANNED_CLOSE), &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 1);
    assert_int_equal(o.chunk_tokens[0], 2);
    assert_string_equal(o.reply, "xy");
}

static void test_engine_sends_headers_session_id_and_bearer_key(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), "data: [DONE]\n\n"};
    char *reply = chunked(events, 2, 1);
    canned_server_t *s = canned_start(reply, CANNED_CLOSE);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d" CHAT_PATH, s->port);
    const char *extra[] = {"X-Team: lab-7", NULL};
    engine_options_t options = {
        .max_streams = 1, .timeout_ns = 5000 * MS, .headers = extra, .api_key = "sk-test-123"};
    run_t run;
    run_open(&run, &options);
    char *body = chat_body(5, 1);
    static outcome_t o;
    memset(&o.record, 0, sizeof(o.record));
    engine_request_t req = {.url = url,
                            .body = body,
                            .body_len = strlen(body),
                            .session_header = "session-42",
                            .record = &o.record};
    assert_int_equal(engine_submit(run.engine, &req, on_done, &o), 0);
    run.pending++;
    run_until_done(&run, 10000 * MS);
    run_close(&run);
    static char request[8192];
    memcpy(request, s->request, sizeof(request));
    canned_stop(s);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_non_null(strstr(request, "POST /v1/chat/completions HTTP/1.1\r\n"));
    assert_non_null(strcasestr(request, "\r\nContent-Type: application/json\r\n"));
    assert_non_null(strcasestr(request, "\r\nAccept: text/event-stream\r\n"));
    assert_non_null(strstr(request, "\r\nAuthorization: Bearer sk-test-123\r\n"));
    assert_non_null(strstr(request, "\r\nX-Session-ID: session-42\r\n"));
    assert_non_null(strstr(request, "\r\nX-Team: lab-7\r\n"));
    assert_null(strcasestr(request, "Expect:"));
    assert_non_null(strstr(request, body));
    free(body);
    free(reply);
}

/* One request of 8 tokens against a mock started with fault-injection arguments. */
static void run_against_faulty_mock(const char *const *args, outcome_t *o) {
    assert_int_equal(mock_spawn(&mock, args), 0);
    char url[128];
    mock_url(url, sizeof(url));
    engine_options_t options = {.max_streams = 1, .timeout_ns = 10000 * MS};
    run_tokens_against(url, &options, 8, o, 15000 * MS);
    mock_stop(&mock);
}

static void test_engine_mock_failing_with_503_is_error_http_503(void **state) {
    static const char *const args[] = {"--ttft-ms",     "5",   "--itl-ms", "2", "--fail-rate", "1",
                                       "--fail-status", "503", NULL};
    static outcome_t o;
    run_against_faulty_mock(args, &o);
    assert_int_equal(o.record.error, ERROR_HTTP_503);
    assert_int_equal(o.record.http_status, 503);
    assert_true(strncmp(o.record.error_message, "HTTP 503: ", 10) == 0);
    assert_true(strlen(o.record.error_message) > 12);
}

static void test_engine_mock_resetting_mid_stream_is_error_reset_mid_stream(void **state) {
    static const char *const args[] = {"--ttft-ms", "5", "--itl-ms", "2", "--reset-after-tokens",
                                       "3",         NULL};
    static outcome_t o;
    run_against_faulty_mock(args, &o);
    assert_int_equal(o.record.error, ERROR_RESET_MID_STREAM);
    assert_int_equal(o.record.http_status, 200);
    /* The mock flushes the third token before it resets, and Linux keeps received data readable
     * after an RST: all three arrive, then the reset (in 1 to 3 chunks: a loaded loop may read
     * two tokens in one wake-up, which makes them one chunk). */
    uint32_t tokens = 0;
    for (uint32_t i = 0; i < o.n_chunks; i++)
        tokens += o.has_chunk_tokens ? o.chunk_tokens[i] : 1;
    assert_int_equal(tokens, 3);
}

static void test_engine_mock_malformed_chunk_is_error_malformed_sse(void **state) {
    static const char *const args[] = {"--ttft-ms",        "5", "--itl-ms", "2",
                                       "--malformed-rate", "1", NULL};
    static outcome_t o;
    run_against_faulty_mock(args, &o);
    assert_int_equal(o.record.error, ERROR_MALFORMED_SSE);
    assert_non_null(strstr(o.record.error_message, "malformed chunk"));
}

typedef struct cancel_counter {
    int cancelled;
    int other;
} cancel_counter_t;

static void count_cancel(void *arg, request_record_t *record, const char *reply, size_t len) {
    cancel_counter_t *c = arg;
    if (record->error == ERROR_CANCELLED)
        c->cancelled++;
    else
        c->other++;
}

static void cancel_all_timer(loop_t *loop, uint64_t id, void *arg) {
    engine_cancel_all(arg);
    loop_stop(loop);
}

static void test_engine_cancel_all_and_destroy_report_cancelled(void **state) {
    canned_server_t *s = canned_start("", CANNED_SILENT);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d" CHAT_PATH, s->port);
    engine_options_t options = {.max_streams = 8, .timeout_ns = 10000 * MS};
    loop_t *loop = loop_new();
    engine_t *engine = engine_new(loop, &options);
    char *body = chat_body(5, 1);
    static request_record_t records[6];
    cancel_counter_t c = {0};
    for (int i = 0; i < 6; i++) {
        memset(&records[i], 0, sizeof(records[i]));
        engine_request_t req = {
            .url = url, .body = body, .body_len = strlen(body), .record = &records[i]};
        assert_int_equal(engine_submit(engine, &req, count_cancel, &c), 0);
    }
    /* Let the requests reach the server, then cancel 6 of them from a timer. */
    loop_timer_at(loop, loop_now_ns() + 100 * MS, cancel_all_timer, engine);
    loop_run(loop);
    assert_int_equal(c.cancelled, 6);
    assert_int_equal(c.other, 0);
    assert_int_equal(engine_inflight_to(engine, 0), 0); /* every request went to endpoint 0 */
    assert_true(records[0].end_ns >= records[0].send_ns + 100 * MS);
    /* Two more in flight when the engine is destroyed: cancelled too. */
    for (int i = 0; i < 2; i++) {
        engine_request_t req = {
            .url = url, .body = body, .body_len = strlen(body), .record = &records[i]};
        assert_int_equal(engine_submit(engine, &req, count_cancel, &c), 0);
    }
    engine_destroy(&engine);
    assert_int_equal(c.cancelled, 8);
    loop_destroy(&loop);
    canned_stop(s);
    free(body);
}

/* An engine for one stream more than the hard open-file limit says so on stderr with both
 * numbers (engine_new opens no connection, so nothing runs out here); one for 32 stays quiet. */
static void test_engine_warns_when_max_streams_exceed_the_open_file_limit(void **state) {
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max >= UINT32_MAX)
        skip();
    engine_options_t over = {.max_streams = (uint32_t)rl.rlim_max + 1}, fits = {.max_streams = 32};
    char expected[256], text[2048] = "", log_path[] = "/tmp/stampede-test-engine-XXXXXX";
    snprintf(expected, sizeof expected,
             "stampede: engine for %u streams: the open-file limit is %llu (hard limit %llu), "
             "below the %u descriptors needed",
             over.max_streams, (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max,
             over.max_streams);
    int log = mkstemp(log_path), saved = dup(STDERR_FILENO);
    assert_true(log >= 0 && saved >= 0);
    fflush(stderr);
    dup2(log, STDERR_FILENO);
    loop_t *loop = loop_new();
    engine_t *a = engine_new(loop, &over), *b = engine_new(loop, &fits);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = pread(log, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(log);
    unlink(log_path);
    assert_non_null(strstr(text, expected));
    assert_null(strstr(text, "engine for 32 streams"));
    assert_true(a && b); /* a warning, not a failure */
    engine_destroy(&a);
    engine_destroy(&b);
    loop_destroy(&loop);
}

/* One request to a canned whole reply with the reasoning tags on; stops the server. */
static void run_canned_with_tags(const char *reply, outcome_t *o) {
    canned_server_t *s = canned_start(reply, CANNED_CLOSE);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", s->port, CHAT_PATH);
    engine_options_t options = {.max_streams = 1,
                                .timeout_ns = 5000 * MS,
                                .reasoning_open = "<think>",
                                .reasoning_close = "</think>"};
    run_one_against(url, &options, o, 10000 * MS);
    canned_stop(s);
}

/* A non-streamed reply: its one chunk is answer when text follows the think block, reasoning
 * when the text is all inside it; a refusal message is answer; finish_reason is recorded. */
static void test_engine_non_streaming_think_refusal_and_finish_reason(void **state) {
    static const char *const bodies[] = {
        "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
        "\"<think>hm</think>Paris\",\"refusal\":null},\"finish_reason\":\"stop\"}]}",
        "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
        "\"<think>still thinking\"},\"finish_reason\":\"length\"}]}",
        "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
        "\"refusal\":\"I can't.\"},\"finish_reason\":\"stop\"}]}"};
    static const struct {
        uint32_t content, reasoning;
        bool refusal;
        finish_reason_t finish;
    } want[] = {
        {1, 0, false, FINISH_STOP}, {0, 1, false, FINISH_LENGTH}, {1, 0, true, FINISH_STOP}};
    for (int i = 0; i < 3; i++) {
        char *reply = json_reply("200 OK", bodies[i]);
        static outcome_t o;
        run_canned_with_tags(reply, &o);
        free(reply);
        assert_int_equal(o.record.error, ERROR_NONE);
        assert_int_equal(o.n_chunks, 1);
        assert_int_equal(o.record.content_chunks, want[i].content);
        assert_int_equal(o.record.reasoning_chunks, want[i].reasoning);
        assert_int_equal(o.record.refusal, want[i].refusal);
        assert_int_equal(o.record.finish_reason, want[i].finish);
        assert_true(o.record.first_token_ns == o.record.end_ns);
        assert_true(o.record.first_content_ns == (want[i].content ? o.record.end_ns : 0));
    }
}

#define REFUSAL_CHUNK(text)                                                                        \
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"" text                              \
    "\"},\"finish_reason\":null}]}\n\n"
#define FINISH_CHUNK(reason)                                                                       \
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"" reason "\"}]}\n\n"

/* One request to a scripted server (one write every 25 ms, as apart as the other scripted tests
 * keep theirs so that a loaded machine does not read two writes at once) with the reasoning tags
 * on or off. */
static void run_scripted_tags(const char *const *events, int n, const char *open, const char *close,
                              outcome_t *o) {
    canned_server_t *s = scripted_start(events, n, 25);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", s->port, CHAT_PATH);
    engine_options_t options = {.max_streams = 1,
                                .timeout_ns = 5000 * MS,
                                .reasoning_open = open,
                                .reasoning_close = close};
    run_one_against(url, &options, o, 10000 * MS);
    canned_stop(s);
}

static void run_scripted_with_tags(const char *const *events, int n, bool tags, outcome_t *o) {
    run_scripted_tags(events, n, tags ? "<think>" : NULL, tags ? "</think>" : NULL, o);
}

/* A reply of refusal deltas only (OpenAI structured outputs) is output: TTFT, TTFC and chunks. */
static void test_engine_refusal_only_reply_has_its_latencies_and_is_counted(void **state) {
    static const char *const events[] = {
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,"
        "\"refusal\":\"\"},\"finish_reason\":null}]}\n\n",
        REFUSAL_CHUNK("I'm"),
        REFUSAL_CHUNK(" sorry"),
        REFUSAL_CHUNK("."),
        FINISH_CHUNK("stop"),
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\n",
        "data: [DONE]\n\n"};
    static outcome_t o;
    run_scripted_with_tags(events, 7, true, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 3);
    assert_true(r->first_token_ns > 0);
    assert_int_equal(r->first_content_ns, r->first_token_ns);
    assert_int_equal(r->first_token_ns, o.chunk_ns[0]);
    assert_int_equal(r->content_chunks, 3);
    assert_int_equal(r->reasoning_chunks, 0);
    assert_true(r->refusal);
    assert_int_equal(r->finish_reason, FINISH_STOP);
    assert_int_equal(o.reply_len, 0); /* the refusal is not reply text for the next turn */
}

/* Qwen3 without a reasoning parser, both tags split across events: TTFC is the first answer. */
static void test_engine_think_block_split_across_events_is_reasoning(void **state) {
    static const char *const events[] = {TOKEN_CHUNK("<thi"),          TOKEN_CHUNK("nk>\\nOkay"),
                                         TOKEN_CHUNK(", so"),          TOKEN_CHUNK("</th"),
                                         TOKEN_CHUNK("ink>\\n\\nThe"), TOKEN_CHUNK(" end"),
                                         FINISH_CHUNK("length"),       "data: [DONE]\n\n"};
    static outcome_t o;
    run_scripted_with_tags(events, 8, true, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 6);
    assert_int_equal(r->first_token_ns, o.chunk_ns[0]);
    assert_int_equal(r->first_content_ns, o.chunk_ns[4]);
    assert_int_equal(r->reasoning_chunks, 4);
    assert_int_equal(r->content_chunks, 2);
    assert_false(r->refusal);
    assert_int_equal(r->finish_reason, FINISH_LENGTH);
    assert_string_equal(o.reply, "<think>\nOkay, so</think>\n\nThe end");
}

/* A request whose reply nobody reads keeps none of its text, yet both kinds of reply (with the
 * opening tag, and with only the closing one) split their tags across events and are classified
 * as when the whole text is kept: the stream keeps what the detection looks back over. */
static void test_engine_reply_unused_keeps_no_text_and_the_same_reasoning_split(void **state) {
    static const char *const opened[] = {TOKEN_CHUNK("  <thi"),        TOKEN_CHUNK("nk>\\nOkay"),
                                         TOKEN_CHUNK(", so"),          TOKEN_CHUNK("</th"),
                                         TOKEN_CHUNK("ink>\\n\\nThe"), TOKEN_CHUNK(" end"),
                                         FINISH_CHUNK("length"),       "data: [DONE]\n\n"};
    static const char *const closed[] = {TOKEN_CHUNK("Okay, we"), TOKEN_CHUNK(", so</"),
                                         TOKEN_CHUNK("thi"),      TOKEN_CHUNK("nk>\\n\\nParis"),
                                         TOKEN_CHUNK(" it is"),   FINISH_CHUNK("stop"),
                                         "data: [DONE]\n\n"};
    static outcome_t kept, dropped;
    for (int reply = 0; reply < 2; reply++) {
        const char *const *events = reply ? closed : opened;
        int n = reply ? 7 : 8;
        memset(&kept, 0, sizeof kept);
        memset(&dropped, 0, sizeof dropped);
        dropped.reply_unused = true;
        run_scripted_with_tags(events, n, true, &kept);
        run_scripted_with_tags(events, n, true, &dropped);
        assert_int_equal(dropped.record.error, ERROR_NONE);
        assert_true(kept.reply_len > 10);
        assert_int_equal(dropped.reply_len, 0);
        assert_int_equal(dropped.record.content_bytes, kept.reply_len);
        assert_int_equal(dropped.n_chunks, kept.n_chunks);
        assert_int_equal(dropped.record.reasoning_chunks, kept.record.reasoning_chunks);
        assert_int_equal(dropped.record.content_chunks, kept.record.content_chunks);
        assert_int_equal(dropped.record.reasoning_chunks, reply ? 3 : 4);
        /* the same event index opened the answer in both runs */
        for (uint32_t i = 0; i < kept.n_chunks; i++)
            if (kept.record.first_content_ns == kept.chunk_ns[i])
                assert_int_equal(dropped.record.first_content_ns, dropped.chunk_ns[i]);
    }
}

/* The same script twice with the given tags: the reply kept, then dropped (reply_unused). */
static void run_kept_and_dropped(const char *const *events, int n, const char *open,
                                 const char *close, outcome_t *kept, outcome_t *dropped) {
    memset(kept, 0, sizeof *kept);
    memset(dropped, 0, sizeof *dropped);
    dropped->reply_unused = true;
    run_scripted_tags(events, n, open, close, kept);
    run_scripted_tags(events, n, open, close, dropped);
}

/* Both runs of run_kept_and_dropped split the reply alike: chunks, reasoning and answer events,
 * the first answer in chunk first_content, and the same text bytes. */
static void assert_same_split(const outcome_t *kept, const outcome_t *dropped, uint32_t chunks,
                              uint32_t reasoning, uint32_t content, uint32_t first_content) {
    for (int i = 0; i < 2; i++) {
        const outcome_t *o = i ? dropped : kept;
        assert_int_equal(o->record.error, ERROR_NONE);
        assert_int_equal(o->n_chunks, chunks);
        assert_int_equal(o->record.reasoning_chunks, reasoning);
        assert_int_equal(o->record.content_chunks, content);
        assert_int_equal(o->record.first_content_ns, o->chunk_ns[first_content]);
    }
    assert_int_equal(dropped->record.content_bytes, kept->reply_len);
}

/* A reply nobody reads keeps the text's last bytes in the stream between events when the closing
 * tag is short, in the reply buffer when it is long or an event's text is: both ways, and the
 * switches between them (a 300-byte event, escapes, a tag split over three events), classify
 * as the whole kept text does, event for event, and count the same bytes. */
static void test_engine_reply_unused_keeps_its_tail_in_the_stream_or_the_buffer(void **state) {
#define LONG_TEXT                                                                                  \
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890"  \
    "1234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901"  \
    "2345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012"  \
    "345678901234567"
    static const char *const tags[][2] = {{"<think>", "</think>"},
                                          {"<|begin_of_thought|>", "<|end_of_thought|>"}};
    /* %s: the closing tag cut in three */
    static const char *const scripts[][9] = {
        {TOKEN_CHUNK("Okay"), TOKEN_CHUNK(" a\\nb"), TOKEN_CHUNK(LONG_TEXT), TOKEN_CHUNK("c"), NULL,
         NULL, NULL, TOKEN_CHUNK("\\n\\nParis \\u00e9"), TOKEN_CHUNK(" it is")},
        {TOKEN_CHUNK(" "), TOKEN_CHUNK("OPEN"), TOKEN_CHUNK("x\\ty"), TOKEN_CHUNK("z"), NULL, NULL,
         NULL, TOKEN_CHUNK(LONG_TEXT), TOKEN_CHUNK(" end")},
    };
    static outcome_t kept, dropped;
    for (int t = 0; t < 2; t++)
        for (int r = 0; r < 2; r++) {
            static char open_event[256], pieces[3][256];
            const char *close = tags[t][1];
            size_t cl = strlen(close), a = cl / 3, b = 2 * cl / 3;
            snprintf(pieces[0], sizeof pieces[0], TOKEN_CHUNK("%.*s"), (int)a, close);
            snprintf(pieces[1], sizeof pieces[1], TOKEN_CHUNK("%.*s"), (int)(b - a), close + a);
            snprintf(pieces[2], sizeof pieces[2], TOKEN_CHUNK("%s"), close + b);
            snprintf(open_event, sizeof open_event, TOKEN_CHUNK("%s"), tags[t][0]);
            const char *events[12];
            int n = 0;
            for (int i = 0; i < 9; i++) {
                const char *e = scripts[r][i];
                if (i >= 4 && i <= 6)
                    e = pieces[i - 4];
                else if (e && strstr(e, "OPEN"))
                    e = open_event;
                events[n++] = e;
            }
            events[n++] = FINISH_CHUNK("stop");
            events[n++] = "data: [DONE]\n\n";
            run_kept_and_dropped(events, n, tags[t][0], close, &kept, &dropped);
            assert_int_equal(dropped.reply_len, 0);
            /* the script's first 7 events are reasoning (the tag closes in the 7th): with or
             * without the opening tag */
            assert_same_split(&kept, &dropped, 9, 7, 2, 7);
        }
    /* the tag begun in the tail and ended by a text too long for it: the tail goes back in
     * front of the text in the reply buffer */
    static const char *const straddle[] = {TOKEN_CHUNK("Okay"),           TOKEN_CHUNK(", so</th"),
                                           TOKEN_CHUNK("ink>" LONG_TEXT), TOKEN_CHUNK(" end"),
                                           FINISH_CHUNK("stop"),          "data: [DONE]\n\n"};
    run_kept_and_dropped(straddle, 6, "<think>", "</think>", &kept, &dropped);
    assert_same_split(&kept, &dropped, 4, 2, 2, 2);
    /* a server that coalesces: several events in one write (one chunk of several tokens), the
     * closing tag split between two of them, a short text and a long one in the same write */
    static const char *const coalesced[] = {
        TOKEN_CHUNK("Okay") TOKEN_CHUNK(", so</th"),
        TOKEN_CHUNK("ink>") TOKEN_CHUNK(" Paris") TOKEN_CHUNK(" \\u00e9"),
        TOKEN_CHUNK(LONG_TEXT) TOKEN_CHUNK(" end"), FINISH_CHUNK("stop"), "data: [DONE]\n\n"};
    run_kept_and_dropped(coalesced, 5, "<think>", "</think>", &kept, &dropped);
    assert_same_split(&kept, &dropped, 3, 3, 4, 1);
#undef LONG_TEXT
}

/* An R1 distill whose template wrote <think> into the prompt: only the closing tag comes. */
static void test_engine_closing_tag_alone_makes_what_came_before_reasoning(void **state) {
    static const char *const events[] = {TOKEN_CHUNK("Okay"),     TOKEN_CHUNK(", so"),
                                         TOKEN_CHUNK("</think>"), TOKEN_CHUNK("\\n\\nParis"),
                                         FINISH_CHUNK("stop"),    "data: [DONE]\n\n"};
    static outcome_t o;
    run_scripted_with_tags(events, 6, true, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 4);
    assert_int_equal(r->first_content_ns, o.chunk_ns[3]);
    assert_int_equal(r->reasoning_chunks, 3);
    assert_int_equal(r->content_chunks, 1);
}

/* A reply that opens with a part of the tag and then is not the tag was answer from its start. */
static void test_engine_partial_tag_that_is_not_one_is_answer_from_the_start(void **state) {
    static const char *const events[] = {TOKEN_CHUNK("<thi"), TOKEN_CHUNK("s is html>"),
                                         FINISH_CHUNK("tool_calls"), "data: [DONE]\n\n"};
    static outcome_t o;
    run_scripted_with_tags(events, 4, true, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->first_content_ns, o.chunk_ns[0]);
    assert_int_equal(r->content_chunks, 2);
    assert_int_equal(r->reasoning_chunks, 0);
    assert_int_equal(r->finish_reason, FINISH_TOOL_CALLS);
}

/* An answer that began with a tool call, before any text: the text that follows, which opens
 * with no tag, decides that no undecided event came before it, and TTFC stays at the tool call
 * (neither at the reasoning chunk before it nor at the text). */
static void test_engine_answer_opened_by_a_tool_call_keeps_its_ttfc(void **state) {
    static const char *const events[] = {
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
        "{\"arguments\":\"{}\"}}]}}]}\n\n",
        TOKEN_CHUNK("Done."), FINISH_CHUNK("tool_calls"), "data: [DONE]\n\n"};
    static outcome_t o;
    run_scripted_with_tags(events, 5, true, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->error, ERROR_NONE);
    assert_int_equal(o.n_chunks, 3);
    assert_int_equal(r->first_token_ns, o.chunk_ns[0]);
    assert_int_equal(r->first_content_ns, o.chunk_ns[1]);
    assert_int_equal(r->reasoning_chunks, 1);
    assert_int_equal(r->content_chunks, 2);
}

/* target.reasoning_tags: [] - the tags are text like any other. */
static void test_engine_think_tags_off_counts_everything_as_answer(void **state) {
    static const char *const events[] = {TOKEN_CHUNK("<think>"),         TOKEN_CHUNK("hm"),
                                         TOKEN_CHUNK("</think>"),        TOKEN_CHUNK("ok"),
                                         FINISH_CHUNK("content_filter"), "data: [DONE]\n\n"};
    static outcome_t o;
    run_scripted_with_tags(events, 6, false, &o);
    request_record_t *r = &o.record;
    assert_int_equal(r->first_content_ns, r->first_token_ns);
    assert_int_equal(r->content_chunks, 4);
    assert_int_equal(r->reasoning_chunks, 0);
    assert_int_equal(r->finish_reason, FINISH_CONTENT_FILTER);
}

/* No finish_reason at all ([DONE] ends it): none. */
static void test_engine_reply_without_finish_reason_records_none(void **state) {
    const char *events[] = {TOKEN_CHUNK("a"), "data: [DONE]\n\n"};
    static outcome_t o;
    run_one_on_events(events, 2, 1, CANNED_CLOSE, &o);
    assert_int_equal(o.record.error, ERROR_NONE);
    assert_int_equal(o.record.finish_reason, FINISH_NONE);
}

int main(void) {
    const struct CMUnitTest mock_tests[] = {
        cmocka_unit_test(test_engine_mock_fixed_ttft_50ms_itl_10ms_chunks_and_usage),
        cmocka_unit_test(test_engine_hundred_concurrent_streams_succeed_and_reuse_connections),
        cmocka_unit_test(test_engine_non_streaming_reply_is_one_chunk_at_the_end),
        cmocka_unit_test(test_engine_chunks_past_the_requests_max_tokens_are_all_kept),
        cmocka_unit_test(test_engine_pins_a_host_name_once_before_any_request),
        cmocka_unit_test(test_engine_lookup_names_the_host_and_endpoint_it_cannot_resolve),
        cmocka_unit_test(test_engine_pins_are_set_once_per_stream),
        cmocka_unit_test(test_engine_sharded_streams_succeed_and_reuse_connections),
        cmocka_unit_test(test_engine_sent_delay_histogram_and_counters),
        cmocka_unit_test(test_engine_connect_deadline_spares_a_connected_stream_that_outlasts_it),
    };
    const struct CMUnitTest fault_tests[] = {
        cmocka_unit_test(test_engine_refused_connection_is_error_refused),
        cmocka_unit_test(test_engine_bad_url_is_reported_through_the_callback),
        cmocka_unit_test(test_engine_server_that_never_answers_is_error_timeout),
        cmocka_unit_test(test_engine_connect_that_never_completes_is_error_connect_at_the_deadline),
        cmocka_unit_test(test_engine_http_500_is_error_http_500_with_the_message),
        cmocka_unit_test(test_engine_http_404_is_error_http_4xx_with_the_detail),
        cmocka_unit_test(test_engine_http_429_is_error_http_429),
        cmocka_unit_test(test_engine_http_400_context_length_is_error_context_length),
        cmocka_unit_test(test_engine_http_400_other_is_error_http_4xx),
        cmocka_unit_test(test_engine_http_529_is_error_http_529_with_the_message),
        cmocka_unit_test(test_engine_html_page_in_a_200_is_error_not_sse),
        cmocka_unit_test(test_engine_http_503_streamed_as_sse_still_yields_its_message),
        cmocka_unit_test(test_engine_redirect_is_error_protocol),
        cmocka_unit_test(test_engine_server_hanging_up_mid_stream_is_error_reset_mid_stream),
        cmocka_unit_test(test_engine_connection_reset_mid_stream_is_error_reset_mid_stream),
        cmocka_unit_test(test_engine_stream_cut_inside_an_event_is_error_truncated_json),
        cmocka_unit_test(test_engine_close_without_a_byte_is_error_reset_before_headers),
        cmocka_unit_test(test_engine_reset_without_a_byte_is_error_refused),
        cmocka_unit_test(test_engine_retry_after_seconds_and_http_date),
        cmocka_unit_test(test_engine_refusal_only_reply_has_its_latencies_and_is_counted),
        cmocka_unit_test(test_engine_think_block_split_across_events_is_reasoning),
        cmocka_unit_test(test_engine_reply_unused_keeps_no_text_and_the_same_reasoning_split),
        cmocka_unit_test(test_engine_reply_unused_keeps_its_tail_in_the_stream_or_the_buffer),
        cmocka_unit_test(test_engine_closing_tag_alone_makes_what_came_before_reasoning),
        cmocka_unit_test(test_engine_partial_tag_that_is_not_one_is_answer_from_the_start),
        cmocka_unit_test(test_engine_answer_opened_by_a_tool_call_keeps_its_ttfc),
        cmocka_unit_test(test_engine_think_tags_off_counts_everything_as_answer),
        cmocka_unit_test(test_engine_reply_without_finish_reason_records_none),
        cmocka_unit_test(test_engine_non_streaming_think_refusal_and_finish_reason),
        cmocka_unit_test(test_engine_stream_ending_without_done_or_finish_is_error_no_done),
        cmocka_unit_test(test_engine_finish_reason_without_done_is_complete),
        cmocka_unit_test(test_engine_error_event_in_a_200_stream_is_error_server_error_event),
        cmocka_unit_test(test_engine_error_object_in_a_data_chunk_is_error_server_error_event),
        cmocka_unit_test(test_engine_malformed_json_chunk_is_error_malformed_sse),
        cmocka_unit_test(test_engine_reasoning_then_content_counts_and_usage),
        cmocka_unit_test(test_engine_usage_only_on_the_last_chunk_counts_one_token_per_chunk),
        cmocka_unit_test(test_engine_continuous_usage_gives_each_chunk_its_token_count),
        cmocka_unit_test(test_engine_continuous_usage_after_a_role_chunk_counts_from_the_first),
        cmocka_unit_test(test_engine_events_of_one_read_are_one_chunk_of_their_tokens),
        cmocka_unit_test(test_engine_coalesced_continuous_usage_adds_the_events_tokens),
        cmocka_unit_test(test_engine_token_events_read_without_the_parser_are_read_as_with_it),
        cmocka_unit_test(test_engine_error_event_type_in_the_write_before_its_data_is_an_error),
        cmocka_unit_test(test_engine_sse_under_another_content_type_is_still_parsed),
        cmocka_unit_test(test_engine_sends_headers_session_id_and_bearer_key),
        cmocka_unit_test(test_engine_cancel_all_and_destroy_report_cancelled),
        cmocka_unit_test(test_engine_warns_when_max_streams_exceed_the_open_file_limit),
    };
    const struct CMUnitTest mock_fault_tests[] = {
        cmocka_unit_test(test_engine_mock_failing_with_503_is_error_http_503),
        cmocka_unit_test(test_engine_no_descriptor_for_a_socket_is_client_fd_limit),
        cmocka_unit_test(test_engine_mock_resetting_mid_stream_is_error_reset_mid_stream),
        cmocka_unit_test(test_engine_mock_malformed_chunk_is_error_malformed_sse),
    };
    int failed = cmocka_run_group_tests_name("engine_faults", fault_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("engine_mock_faults", mock_fault_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("engine_mock", mock_tests, mock_setup, mock_teardown);
    return failed;
}
