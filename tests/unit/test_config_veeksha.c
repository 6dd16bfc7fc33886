/* Veeksha workload files (common/config_veeksha.c): the write-up's synthetic multi-turn spec maps
 * onto stampede's keys, and bad Veeksha keys are refused naming the file, line and key. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "config_case.h"
#include "unit_main.h"

static const char *spec = "session_generator:\n"
                          "  type: synthetic\n"
                          "  session_graph:\n"
                          "    type: linear\n"
                          "    num_request_generator:\n"
                          "      type: uniform\n"
                          "      min: 110\n"
                          "      max: 150\n"
                          "    request_wait_generator:\n"
                          "      type: poisson\n"
                          "      arrival_rate: 31.25\n"
                          "  channels:\n"
                          "    - type: text\n"
                          "      body_length_generator: {type: uniform, min: 400, max: 600}\n"
                          "  output_spec:\n"
                          "    text:\n"
                          "      output_length_generator: {type: uniform, min: 150, max: 250}\n"
                          "traffic_scheduler:\n"
                          "  type: concurrent\n"
                          "  target_concurrent_sessions: 1\n"
                          "runtime:\n"
                          "  max_sessions: 5\n"
                          "seed: 77\n";

static void test_config_veeksha_multiturn_spec_maps_onto_a_chat_workload(void **state) {
    (void)state;
    config_t cfg;
    config_case_load(&cfg, spec);
    assert_int_equal(cfg.seed, 77);
    assert_int_equal(cfg.workload.kind, WORKLOAD_CHAT);
    assert_int_equal(cfg.workload.turns.kind, DIST_UNIFORM);
    assert_true(cfg.workload.turns.param[DIST_P_MIN] == 110);
    assert_true(cfg.workload.turns.param[DIST_P_MAX] == 150);
    assert_int_equal(cfg.workload.think_time.kind, DIST_EXPONENTIAL);
    assert_true(fabs(dist_mean(&cfg.workload.think_time) - 0.032) < 1e-12);
    assert_true(cfg.workload.input_tokens.param[DIST_P_MIN] == 400);
    assert_true(cfg.workload.output_tokens.param[DIST_P_MAX] == 250);
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_CONCURRENT);
    assert_int_equal(cfg.scheduler.concurrency, 1);
    assert_int_equal(cfg.limits.max_sessions, 5);
    /* written back, it is an ordinary stampede file with the same workload */
    char *text = config_to_yaml(&cfg);
    config_t again;
    config_case_load(&again, text);
    assert_int_equal(again.workload.kind, WORKLOAD_CHAT);
    assert_int_equal(again.limits.max_sessions, 5);
    free(text);
    config_free(&again);
    config_free(&cfg);
}

static void test_config_veeksha_trace_generator_maps_onto_a_trace_replay(void **state) {
    (void)state;
    config_t cfg;
    config_case_load(&cfg, "session_generator:\n"
                           "  type: trace\n"
                           "  trace_file: traces/workload_b_dag.jsonl\n"
                           "  wrap_mode: true\n"
                           "  flavor:\n"
                           "    type: timed_synthetic_session\n"
                           "    page_size: 16\n"
                           "seed: 42\n"
                           "traffic_scheduler: {type: rate}\n"
                           "runtime: {benchmark_timeout: 30}\n");
    assert_int_equal(cfg.workload.kind, WORKLOAD_TRACE);
    assert_int_equal(cfg.workload.trace.format, TRACE_FORMAT_SESSION);
    assert_true(cfg.workload.trace.wrap);
    const char *path = cfg.workload.trace.path;
    size_t len = strlen(path), tail = strlen("traces/workload_b_dag.jsonl");
    assert_true(len >= tail);
    assert_string_equal(path + len - tail, "traces/workload_b_dag.jsonl");
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_RATE);
    assert_int_equal(cfg.limits.duration_ns, 30000000000LL);
    assert_int_equal(cfg.seed, 42);
    config_free(&cfg);
}

static void test_config_veeksha_refuses_what_it_does_not_map_with_line_and_key(void **state) {
    (void)state;
    static const message_case_t cases[] = {
        {"session_generator: {type: synthetic, session_graph: {type: linear, "
         "num_request_generator: {type: fixed, value: 3}}}\nruntime: {max_sesions: 5}\n",
         "bad.yaml:2:11: runtime.max_sesions: unknown key 'max_sesions'; did you mean "
         "'max_sessions'?"},
        {"session_generator:\n  type: synthetic\n  session_graph:\n    type: tree\n"
         "runtime: {max_sessions: 5}\n",
         "bad.yaml:4:11: session_generator.session_graph.type: expected one of linear, got "
         "'tree'"},
        {"session_generator:\n  type: synthetic\n  session_graph: {type: linear}\n"
         "runtime: {max_sessions: 5}\n",
         "bad.yaml:3:18: session_generator.session_graph.num_request_generator: missing key "
         "'num_request_generator'"},
        {"session_generator:\n  type: synthetic\n  session_graph:\n    type: linear\n"
         "    num_request_generator: {type: poisson, arrival_rate: 2}\n"
         "runtime: {max_sessions: 5}\n",
         "bad.yaml:5:35: session_generator.session_graph.num_request_generator.type: a poisson "
         "generator gives waits (request_wait_generator); use fixed, uniform or normal for "
         "lengths"},
        {"session_generator: {type: synthetic, session_graph: {type: linear, "
         "num_request_generator: {type: fixed, value: 3}}}\n",
         "bad.yaml:1:1: limits: no limit given: set at least one of limits.duration, "
         "limits.max_sessions or limits.max_requests (an unbounded run against a shared server "
         "is refused)"},
    };
    config_case_refusals(cases, sizeof cases / sizeof cases[0]);
}

UNIT_MAIN(cmocka_unit_test(test_config_veeksha_multiturn_spec_maps_onto_a_chat_workload),
          cmocka_unit_test(test_config_veeksha_trace_generator_maps_onto_a_trace_replay),
          cmocka_unit_test(test_config_veeksha_refuses_what_it_does_not_map_with_line_and_key))
