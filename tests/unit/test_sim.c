/* The simulator's pieces: common/loop's virtual clock (timers in deadline order on virtual time,
 * loop_now_ns reading it, one per thread, no descriptors) and mock/mock_virtual (a body answered
 * at the engine model's instants, the prefix-aware router keeping a prefix on its replica). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "unit_main.h"

#include "loop.h"
#include "mock_options.h"
#include "mock_virtual.h"

#define START_NS 5000000000LL

/* The clock each note_time timer read when it fired, in firing order. */
static int64_t fired_at[8];
static int n_fired;

static void note_time(loop_t *loop, uint64_t id, void *arg) {
    (void)loop, (void)id, (void)arg;
    fired_at[n_fired++] = loop_now_ns();
}

static void test_virtual_loop_jumps_timer_to_timer_and_returns_when_none_is_left(void **state) {
    (void)state;
    loop_t *loop = loop_new_virtual(START_NS);
    assert_non_null(loop);
    assert_int_equal(loop_now_ns(), START_NS);
    n_fired = 0;
    loop_timer_at(loop, START_NS + 3000000000LL, note_time, NULL); /* 3 s */
    loop_timer_at(loop, START_NS + 1000, note_time, NULL);
    uint64_t cancelled = loop_timer_at(loop, START_NS + 2000, note_time, NULL);
    loop_timer_cancel(loop, cancelled);
    struct timespec before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    assert_int_equal(loop_run(loop), 0);
    clock_gettime(CLOCK_MONOTONIC, &after);
    assert_int_equal(n_fired, 2);
    assert_int_equal(fired_at[0], START_NS + 1000);
    assert_int_equal(fired_at[1], START_NS + 3000000000LL);
    /* three virtual seconds took far less than one real second */
    assert_true(after.tv_sec - before.tv_sec < 1);
    loop_destroy(&loop);
    assert_true(loop_now_ns() != START_NS + 3000000000LL); /* the real clock again */
}

static void never_watched(loop_t *loop, int fd, int mask, void *arg) {
    (void)loop;
    (void)fd;
    (void)mask;
    (void)arg;
    fail();
}

static void test_virtual_loop_is_one_per_thread_and_watches_no_descriptor(void **state) {
    (void)state;
    loop_t *loop = loop_new_virtual(START_NS);
    assert_non_null(loop);
    errno = 0;
    assert_null(loop_new_virtual(0));
    assert_int_equal(errno, EBUSY);
    errno = 0;
    assert_int_equal(loop_watch(loop, 0, LOOP_READABLE, 0, never_watched, NULL), -1);
    assert_int_equal(errno, ENOTSUP);
    loop_destroy(&loop);
    loop = loop_new_virtual(0); /* free again once destroyed */
    assert_non_null(loop);
    loop_destroy(&loop);
}

typedef struct answer {
    int calls;
    mock_virtual_reply_t reply;
    int64_t first_event_ns, last_event_ns;
} answer_t;

static void keep_answer(void *arg, const mock_virtual_reply_t *reply) {
    answer_t *a = arg;
    a->calls++;
    a->reply = *reply;
    a->first_event_ns = reply->n_events ? reply->event_ns[0] : 0;
    a->last_event_ns = reply->n_events ? reply->event_ns[reply->n_events - 1] : 0;
}

/* A chat body of n_words prompt words (word w0 w1 ...) asking for max_tokens. */
static int chat_body(char *buf, size_t len, const char *prefix, int n_words, int max_tokens) {
    int n = snprintf(buf, len, "{\"messages\":[{\"role\":\"user\",\"content\":\"%s", prefix);
    for (int i = 0; i < n_words; i++)
        n += snprintf(buf + n, len - (size_t)n, " w%d", i);
    n += snprintf(buf + n, len - (size_t)n, "\"}],\"max_tokens\":%d,\"stream\":true}", max_tokens);
    return n;
}

/* One chat request of 100 prompt tokens and 10 output tokens, alone on one virtual replica of o,
 * answered into a; *calls_in_submit says how many answers came from inside the submit, *end_ns
 * the virtual instant the loop ran dry. */
static void ask_alone(const mock_options_t *o, answer_t *a, int *calls_in_submit, int64_t *end_ns) {
    loop_t *loop = loop_new_virtual(START_NS);
    char err[256];
    mock_virtual_t *server = mock_virtual_new(loop, o, 1, MOCK_ROUTER_ROUND_ROBIN, err, sizeof err);
    assert_non_null(server);
    char body[4096];
    int len = chat_body(body, sizeof body, "hello", 99, 10); /* 100 prompt tokens */
    assert_non_null(mock_virtual_submit(server, MOCK_API_CHAT, body, (size_t)len, keep_answer, a));
    *calls_in_submit = a->calls;
    loop_run(loop);
    *end_ns = loop_now_ns();
    mock_virtual_destroy(&server);
    loop_destroy(&loop);
}

static void test_virtual_server_answers_at_the_engine_models_instants(void **state) {
    (void)state;
    mock_options_t o;
    mock_options_init(&o);
    o.prefix_cache = false;
    answer_t a = {0};
    int calls_in_submit;
    int64_t end_ns;
    ask_alone(&o, &a, &calls_in_submit, &end_ns);
    assert_int_equal(calls_in_submit, 0); /* never from inside submit */
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.reply.status, 200);
    assert_int_equal(a.reply.prompt_tokens, 100);
    assert_int_equal(a.reply.completion_tokens, 10);
    assert_int_equal(a.reply.n_events, 10);
    /* alone in the engine: the overhead, one step that prefills 100 tokens and samples the first
     * token, then one decode step of one sequence per token */
    double step_ms = o.step_fixed_ms + o.tpot_base_ms;
    double first_ms = o.ttft_overhead_ms + step_ms + 100 / o.prefill_tokens_per_s * 1e3;
    assert_true(fabs((double)(a.first_event_ns - START_NS) / 1e6 - first_ms) < 1e-3);
    assert_true(fabs((double)(a.last_event_ns - a.first_event_ns) / 1e6 - 9 * step_ms) < 1e-3);
    mock_options_clear(&o);
}

/* A refusal (here: past max_model_len) is answered MOCK_VIRTUAL_REFUSAL_NS after it was sent,
 * never at the same virtual instant: a workload the server refuses whole must still let the run's
 * virtual clock reach its duration. */
static void test_virtual_server_answers_a_refusal_after_a_round_trip(void **state) {
    (void)state;
    mock_options_t o;
    mock_options_init(&o);
    o.max_model_len = 16;
    answer_t a = {0};
    int calls_in_submit;
    int64_t end_ns;
    ask_alone(&o, &a, &calls_in_submit, &end_ns);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.reply.status, 400);
    assert_int_equal(end_ns - START_NS, MOCK_VIRTUAL_REFUSAL_NS);
    mock_options_clear(&o);
}

/* Submits a chat body of `words` words after prefix (max_tokens 4) and runs the loop dry. */
static void ask(mock_virtual_t *server, loop_t *loop, const char *prefix, int words, answer_t *a) {
    char body[8192];
    int len = chat_body(body, sizeof body, prefix, words, 4);
    assert_non_null(mock_virtual_submit(server, MOCK_API_CHAT, body, (size_t)len, keep_answer, a));
    loop_run(loop);
    assert_int_equal(a->calls, 1);
}

static void test_prefix_router_sends_a_cached_prefix_to_its_replica(void **state) {
    (void)state;
    mock_options_t o;
    mock_options_init(&o);
    loop_t *loop = loop_new_virtual(START_NS);
    char err[256];
    mock_virtual_t *server = mock_virtual_new(loop, &o, 2, MOCK_ROUTER_PREFIX, err, sizeof err);
    assert_non_null(server);
    /* the first request goes to replica 0 and caches its 320-token prompt there */
    answer_t first = {0}, second = {0}, third = {0};
    ask(server, loop, "shared", 319, &first);
    assert_int_equal(first.reply.replica, 0);
    /* round robin would send the second to replica 1; its prefix is on replica 0 */
    ask(server, loop, "shared", 400, &second);
    assert_int_equal(second.reply.replica, 0);
    assert_int_equal(second.reply.cached_tokens, 320);
    /* a prompt cached nowhere: no hit, wherever it goes */
    ask(server, loop, "other", 50, &third);
    assert_int_equal(third.reply.cached_tokens, 0);
    mock_virtual_destroy(&server);
    loop_destroy(&loop);
    mock_options_clear(&o);
}

UNIT_MAIN(cmocka_unit_test(test_virtual_loop_jumps_timer_to_timer_and_returns_when_none_is_left),
          cmocka_unit_test(test_virtual_loop_is_one_per_thread_and_watches_no_descriptor),
          cmocka_unit_test(test_virtual_server_answers_at_the_engine_models_instants),
          cmocka_unit_test(test_virtual_server_answers_a_refusal_after_a_round_trip),
          cmocka_unit_test(test_prefix_router_sends_a_cached_prefix_to_its_replica))
