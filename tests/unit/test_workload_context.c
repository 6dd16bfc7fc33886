#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <string.h>

#include "config_case.h"
#include "workload_context.h"

/* Three chat turns of 100 fresh and 10 output tokens after a 50-token system prompt. */
#define THREE_TURN_CHAT                                                                            \
    "workload:\n"                                                                                  \
    "  kind: chat\n"                                                                               \
    "  turns: 3\n"                                                                                 \
    "  input_tokens: 100\n"                                                                        \
    "  output_tokens: 10\n"                                                                        \
    "  system_prompt_tokens: 50\n"

static void test_workload_context_chat_turns_carry_every_earlier_turn(void **state) {
    /* system 50; each turn 100 fresh + 10 out: 160, 50 + 110 + 110 = 270, 50 + 220 + 110 = 380 */
    config_t cfg;
    config_case_load(&cfg, THREE_TURN_CHAT "limits: {duration: 10s}\n");
    workload_context_t w;
    assert_int_equal(workload_context_estimate(&cfg, 20, 1000000, &w), 0);
    assert_int_equal(w.sessions, 20);
    assert_int_equal(w.requests, 60);
    assert_true(fabs(w.mean_context - 270) < 1e-9);
    assert_true(fabs(w.mean_prompt - 260) < 1e-9);
    assert_true(fabs(w.mean_output - 10) < 1e-9);
    assert_int_equal(w.max_context, 380);
    assert_true(fabs(w.mean_parallel - 1) < 1e-9);
    assert_true(fabs(w.session_tokens - 270) < 1e-9); /* one request in flight at a time */
    config_free(&cfg);
}

static void
test_workload_context_graph_counts_parallel_branches_and_appended_replies(void **state) {
    /* plan 100 + 200 out = 300; w1, w2: plan's reply 200 + 50 fresh + 30 out = 280 (no history);
     * review continues plan's conversation (300), gets 30 + 30 + 20 fresh, 40 out: 420.
     * 4 requests over a depth of 3: 1280 / 3 tokens in flight per session. */
    config_t cfg;
    config_case_load(&cfg, "workload:\n"
                           "  kind: graph\n"
                           "  graph:\n"
                           "    shape: template\n"
                           "    nodes:\n"
                           "      - {id: plan, input_tokens: 100, output_tokens: 200}\n"
                           "      - {id: w1, parents: [plan], history: none,\n"
                           "         append_parent_replies: true, input_tokens: 50,\n"
                           "         output_tokens: 30}\n"
                           "      - {id: w2, parents: [plan], history: none,\n"
                           "         append_parent_replies: true, input_tokens: 50,\n"
                           "         output_tokens: 30}\n"
                           "      - {id: review, parents: [w1, w2], history_parent: plan,\n"
                           "         history: full, append_parent_replies: true,\n"
                           "         input_tokens: 20, output_tokens: 40}\n"
                           "limits:\n"
                           "  max_sessions: 5\n");
    workload_context_t w;
    assert_int_equal(workload_context_estimate(&cfg, 1000, 1000000, &w), 0);
    assert_int_equal(w.sessions, 5); /* limits.max_sessions bounds the sample */
    assert_int_equal(w.requests, 20);
    assert_true(fabs(w.mean_context - 320) < 1e-9);
    assert_int_equal(w.max_context, 420);
    assert_true(fabs(w.mean_parallel - 4.0 / 3) < 1e-9);
    assert_true(fabs(w.session_tokens - 1280.0 / 3) < 1e-9);
    config_free(&cfg);
}

static void test_workload_context_compaction_caps_a_request_at_the_limit(void **state) {
    config_t cfg;
    config_case_load(&cfg, THREE_TURN_CHAT "  compaction: {limit_tokens: 300}\n"
                                           "limits: {duration: 10s}\n");
    workload_context_t w;
    assert_int_equal(workload_context_estimate(&cfg, 4, 1000000, &w), 0);
    assert_int_equal(w.max_context, 300);
    assert_true(fabs(w.mean_context - (160 + 270 + 300) / 3.0) < 1e-9);
    config_free(&cfg);
}

static void test_workload_context_same_seed_same_estimate(void **state) {
    const char *yaml = "seed: 7\n"
                       "workload:\n"
                       "  kind: chat\n"
                       "  turns: {dist: uniform, min: 1, max: 9}\n"
                       "  input_tokens: {dist: lognormal, mean: 300, sigma: 0.5}\n"
                       "  output_tokens: {dist: uniform, min: 10, max: 90}\n"
                       "limits: {duration: 10s}\n";
    config_t a, b;
    config_case_load(&a, yaml);
    config_case_load(&b, yaml);
    workload_context_t x, y;
    assert_int_equal(workload_context_estimate(&a, 200, 1000000, &x), 0);
    assert_int_equal(workload_context_estimate(&b, 200, 1000000, &y), 0);
    assert_true(x.mean_context == y.mean_context && x.max_context == y.max_context);
    assert_true(x.mean_context > 300); /* later turns hold the earlier ones */
    config_free(&a);
    config_free(&b);
}

static void test_workload_context_sample_stops_at_the_request_budget(void **state) {
    config_t cfg;
    config_case_load(&cfg, "workload:\n"
                           "  kind: chat\n"
                           "  turns: 10\n"
                           "limits: {duration: 10s}\n");
    workload_context_t w;
    assert_int_equal(workload_context_estimate(&cfg, 1000, 35, &w), 0);
    assert_int_equal(w.sessions, 4); /* the fourth session passes 35 requests: sampling stops */
    assert_int_equal(w.requests, 40);
    config_free(&cfg);
}

UNIT_MAIN(
    cmocka_unit_test(test_workload_context_chat_turns_carry_every_earlier_turn),
    cmocka_unit_test(test_workload_context_graph_counts_parallel_branches_and_appended_replies),
    cmocka_unit_test(test_workload_context_compaction_caps_a_request_at_the_limit),
    cmocka_unit_test(test_workload_context_same_seed_same_estimate),
    cmocka_unit_test(test_workload_context_sample_stops_at_the_request_budget))
