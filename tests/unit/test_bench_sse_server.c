/* bench/sse_server.h, the benchmarks' coalescing server: it must write exactly the pattern's
 * number of token events per write, at the token rate of one per ITL, or bench_engine's
 * coalescing comparison compares the wrong things. Checked through the real engine on loopback. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "unit_main.h"

#include "../../bench/sse_server.h"
#include "engine.h"

#define MS 1000000LL
#define TOKENS 10

typedef struct outcome {
    request_record_t record;
    int64_t chunk_ns[64];
    uint16_t chunk_tokens[64];
    uint32_t n_chunks;
    int done;
} outcome_t;

static void on_done(void *arg, request_record_t *record, const char *reply, size_t len) {
    outcome_t *o = arg;
    o->n_chunks = record->n_chunks < 64 ? record->n_chunks : 64;
    for (uint32_t i = 0; i < o->n_chunks; i++) {
        o->chunk_ns[i] = record->chunk_ns[i];
        o->chunk_tokens[i] = record->chunk_tokens ? record->chunk_tokens[i] : 1;
    }
    o->done = 1;
}

static void on_watchdog(loop_t *loop, uint64_t id, void *arg) {
    loop_stop(loop);
}

static void on_check(loop_t *loop, uint64_t id, void *arg) {
    if (((outcome_t *)arg)->done)
        loop_stop(loop);
    else
        loop_timer_at(loop, loop_now_ns() + 5 * MS, on_check, arg);
}

static void test_sse_server_writes_2_then_3_events_per_write_one_itl_apart(void **state) {
    sse_server_config_t cfg = {.ttft_ms = 20, .itl_ms = 30, .pattern_len = 2};
    assert_int_equal(sse_server_parse_pattern("2,3", cfg.pattern), 2);
    pid_t pid = 0;
    int port = 0;
    assert_int_equal(sse_server_spawn(&cfg, -1, &pid, &port), 0);
    loop_t *loop = loop_new();
    engine_options_t options = {.max_streams = 1, .timeout_ns = 10000 * MS};
    engine_t *engine = engine_new(loop, &options);
    char url[96], body[160];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", port);
    int len =
        snprintf(body, sizeof(body),
                 "{\"model\":\"m\",\"messages\":[],\"max_tokens\":%d,\"stream\":true}", TOKENS);
    static outcome_t o;
    request_record_t *record = &o.record;
    engine_request_t request = {
        .url = url, .body = body, .body_len = (size_t)len, .record = record};
    assert_int_equal(engine_submit(engine, &request, on_done, &o), 0);
    loop_timer_at(loop, loop_now_ns() + 5 * MS, on_check, &o);
    loop_timer_at(loop, loop_now_ns() + 10000 * MS, on_watchdog, NULL);
    loop_run(loop);
    engine_destroy(&engine);
    loop_destroy(&loop);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);

    assert_int_equal(o.done, 1);
    assert_int_equal(o.record.error, ERROR_NONE);
    /* Tokens that came in one write share one receive stamp, whether the record keeps them as
     * one chunk of k tokens or as k chunks: group them by stamp. */
    uint32_t groups = 0, group_tokens[TOKENS] = {0}, total = 0;
    int64_t group_ns[TOKENS] = {0};
    for (uint32_t i = 0; i < o.n_chunks; i++) {
        if (i == 0 || o.chunk_ns[i] != o.chunk_ns[i - 1]) {
            assert_true(groups < TOKENS);
            group_ns[groups++] = o.chunk_ns[i];
        }
        group_tokens[groups - 1] += o.chunk_tokens[i];
        total += o.chunk_tokens[i];
    }
    assert_int_equal(total, TOKENS);
    assert_int_equal(groups, 4);
    const uint32_t expected[4] = {2, 3, 2, 3};
    for (uint32_t g = 0; g < 4; g++)
        assert_int_equal(group_tokens[g], expected[g]);
    /* A group goes out when its last token (index 1, 4, 6, 9) is due, never before: TTFT + index
     * x ITL after the request, which was stamped before it was sent. Late only by scheduling. */
    const uint32_t last_index[4] = {1, 4, 6, 9};
    for (uint32_t g = 0; g < 4; g++) {
        double at_ms = (double)(group_ns[g] - o.record.send_ns) / MS;
        double due_ms = cfg.ttft_ms + last_index[g] * cfg.itl_ms;
        if (at_ms < due_ms || at_ms > due_ms + 150)
            fail_msg("group %u arrived %.1f ms after the send, its last token was due at %.0f ms",
                     g, at_ms, due_ms);
    }
}

static void test_sse_server_pattern_text_is_checked(void **state) {
    int pattern[SSE_SERVER_MAX_PATTERN];
    assert_int_equal(sse_server_parse_pattern("1", pattern), 1);
    assert_int_equal(sse_server_parse_pattern("3,1,2", pattern), 3);
    assert_int_equal(pattern[0] * 100 + pattern[1] * 10 + pattern[2], 312);
    assert_int_equal(sse_server_parse_pattern("0", pattern), -1);
    assert_int_equal(sse_server_parse_pattern("2;3", pattern), -1);
    assert_int_equal(sse_server_parse_pattern(",2", pattern), -1);
    assert_int_equal(sse_server_parse_pattern("65", pattern), -1);
}

UNIT_MAIN(cmocka_unit_test(test_sse_server_writes_2_then_3_events_per_write_one_itl_apart),
          cmocka_unit_test(test_sse_server_pattern_text_is_checked))
