/* The parts of the workload file that pick how sessions are started (scheduler.kind:
 * sequential) and how the embedded mock is run (the mock section): loading, refusals with their
 * exact messages, and the written-back form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config_case.h"
#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* Written back and loaded again, the text is the same (the resolved config.yaml loads). */
static char *assert_written_form_is_fixed_point(const config_t *c) {
    config_t again;
    config_error_t err;
    char *text = config_to_yaml(c);
    assert_non_null(text);
    assert_int_equal(config_load_string(&again, text, strlen(text), "w.yaml", &err), 0);
    char *text2 = config_to_yaml(&again);
    assert_string_equal(text, text2);
    free(text2);
    config_free(&again);
    return text;
}

static void test_config_sequential_loads_with_one_session_in_flight(void **state) {
    config_t c;
    config_case_load(&c, "scheduler: {kind: sequential}\nlimits: {max_sessions: 3}\n");
    assert_int_equal(c.scheduler.kind, SCHEDULER_SEQUENTIAL);
    assert_int_equal(c.scheduler.concurrency, 1);
    assert_string_equal(config_scheduler_kind_name(c.scheduler.kind), "sequential");
    char *text = assert_written_form_is_fixed_point(&c);
    assert_non_null(strstr(text, "scheduler:\n  kind: sequential\n  concurrency: 1\n"));
    free(text);
    config_free(&c);
    /* concurrency: 1 (what config.yaml writes) and an unused rate are accepted */
    config_case_load(&c, "scheduler: {kind: sequential, concurrency: 1, rate: 5/s}\n"
                         "limits: {duration: 1s}\n");
    assert_int_equal(c.scheduler.kind, SCHEDULER_SEQUENTIAL);
    config_free(&c);
}

static const message_case_t bad_sequential_schedulers[] = {
    {"limits: {duration: 10s}\nscheduler:\n  kind: sequential\n  concurrency: 4\n",
     "bad.yaml:4:16: scheduler.concurrency: a sequential scheduler runs one session at a "
     "time; drop concurrency (or use kind: concurrent), got '4'"},
    {"limits: {duration: 10s}\nscheduler:\n  kind: sequentail\n",
     "bad.yaml:3:9: scheduler.kind: expected one of concurrent, rate, sequential, got "
     "'sequentail'; did you mean 'sequential'?"},
};

static void test_config_sequential_refuses_a_concurrency(void **state) {
    CONFIG_CASE_REFUSALS(bad_sequential_schedulers);
}

static const char *const full_mock = "limits: {max_requests: 4}\n"
                                     "mock:\n"
                                     "  profile: tp1-fp8\n"
                                     "  max_model_len: 4096\n"
                                     "  prefix_cache: false\n"
                                     "  ttft_overhead: 1.5ms\n"
                                     "  output_len: lognormal:mean=300,sigma=0.5\n"
                                     "  early_eos: true\n"
                                     "  strict_model: false\n"
                                     "  fail_rate: 0.25\n"
                                     "  fail_status: 503\n"
                                     "  sent_ns: false\n"
                                     "  seed: 7\n";

/* m's mock arguments are want's (NULL-terminated), in order, and no more. */
static void assert_mock_args(const config_mock_t *m, const char *const *want) {
    char **args = config_mock_args(m);
    assert_non_null(args);
    size_t i = 0;
    for (; want[i] != NULL; i++) {
        if (args[i] == NULL)
            fail_msg("argument %zu missing, expected %s", i, want[i]);
        assert_string_equal(args[i], want[i]);
    }
    assert_null(args[i]);
    free(args);
}

/* Every flag with its argument, in the fixed key order whatever the file's order; a false
 * strict_model adds nothing, a false prefix_cache adds --no-prefix-cache. */
static void assert_full_mock_args(const config_mock_t *m) {
    static const char *const want[] = {"--profile",
                                       "tp1-fp8",
                                       "--seed",
                                       "7",
                                       "--max-model-len",
                                       "4096",
                                       "--no-prefix-cache",
                                       "--ttft-overhead-ms",
                                       "1.5",
                                       "--output-len",
                                       "lognormal:mean=300,sigma=0.5",
                                       "--early-eos",
                                       "--fail-rate",
                                       "0.25",
                                       "--fail-status",
                                       "503",
                                       "--no-sent-ns",
                                       NULL};
    assert_mock_args(m, want);
}

static void test_config_mock_section_becomes_mock_arguments(void **state) {
    config_t c, copy, again;
    config_error_t err;
    config_case_load(&c, full_mock);
    assert_int_equal(c.mock.n_options, 11);
    assert_full_mock_args(&c.mock);
    char *text = assert_written_form_is_fixed_point(&c);
    assert_non_null(strstr(text, "\nmock:\n  profile: \"tp1-fp8\"\n  strict_model: false\n  seed: "
                                 "7\n  max_model_len: 4096\n  prefix_cache: false\n  "
                                 "ttft_overhead: 1500us\n"));
    assert_int_equal(config_load_string(&again, text, strlen(text), "w.yaml", &err), 0);
    assert_full_mock_args(&again.mock);
    assert_int_equal(config_copy(&copy, &c), 0);
    assert_full_mock_args(&copy.mock);
    assert_ptr_not_equal(copy.mock.options[0].value, c.mock.options[0].value);
    free(text);
    config_free(&c);
    config_free(&copy);
    config_free(&again);
}

static void test_config_mock_fixed_mode_in_milliseconds(void **state) {
    config_t c;
    config_case_load(&c, "limits: {max_requests: 4}\nmock: {itl: 250us, ttft: 0.05}\n");
    static const char *const want[] = {"--ttft-ms", "50", "--itl-ms", "0.25", NULL};
    assert_mock_args(&c.mock, want);
    config_free(&c);
}

static void test_config_without_mock_section_writes_none(void **state) {
    config_t c;
    config_case_load(&c, "limits: {max_requests: 4}\nmock:\n");
    assert_int_equal(c.mock.n_options, 0);
    static const char *const want[] = {NULL};
    assert_mock_args(&c.mock, want);
    char *text = config_to_yaml(&c);
    assert_null(strstr(text, "mock:"));
    free(text);
    config_free(&c);
}

static void test_config_mock_speculative_decoding_keys_become_flags(void **state) {
    config_t c;
    config_case_load(&c, "limits: {max_requests: 4}\nmock: {profile: h200-llama70b-eagle3, "
                         "spec_acceptance: 0.6, spec_tokens: 2, spec_draft: 2ms, "
                         "step_fixed: 10ms, spec_verify_weight: 0.5}\n");
    static const char *const want[] = {"--profile",
                                       "h200-llama70b-eagle3",
                                       "--step-fixed-ms",
                                       "10",
                                       "--spec-tokens",
                                       "2",
                                       "--spec-acceptance",
                                       "0.6",
                                       "--spec-draft-ms",
                                       "2",
                                       "--spec-verify-weight",
                                       "0.5",
                                       NULL};
    assert_mock_args(&c.mock, want);
    config_free(&c);
    static const message_case_t cases[] = {
        {"limits: {duration: 1s}\nmock:\n  spec_acceptance: 1.5\n",
         "bad.yaml:3:20: mock.spec_acceptance: expected a number from 0 to 1, got '1.5'"},
    };
    CONFIG_CASE_REFUSALS(cases);
}

static void test_config_mock_faults_key_becomes_the_faults_flag(void **state) {
    config_t c;
    config_case_load(&c, "limits: {max_requests: 4}\nmock: {faults: '500:0.02,not-sse@50'}\n");
    static const char *const want[] = {"--faults", "500:0.02,not-sse@50", NULL};
    assert_mock_args(&c.mock, want);
    config_free(&c);
}

static const message_case_t bad_mock_keys[] = {
    {"limits: {duration: 1s}\nmock:\n  max_modle_len: 100\n",
     "bad.yaml:3:3: mock.max_modle_len: unknown key 'max_modle_len'; did you mean "
     "'max_model_len'?"},
    {"limits: {duration: 1s}\nmock:\n  max_model_len: 0\n",
     "bad.yaml:3:18: mock.max_model_len: expected a whole number from 1 to 4294967295, got "
     "'0'"},
    {"limits: {duration: 1s}\nmock:\n  fail_rate: 1.5\n",
     "bad.yaml:3:14: mock.fail_rate: expected a number from 0 to 1, got '1.5'"},
    {"limits: {duration: 1s}\nmock:\n  fail_status: 42\n",
     "bad.yaml:3:16: mock.fail_status: expected a whole number from 100 to 599, got '42'"},
    {"limits: {duration: 1s}\nmock:\n  ttft: soon\n",
     "bad.yaml:3:9: mock.ttft: expected a duration such as 500ms, 2s, 1.5m or 1m30s (units "
     "ns, us, ms, s, m, h; a bare number is seconds), got 'soon'"},
    {"limits: {duration: 1s}\nmock:\n  profile: tp1-fp8\n  itl: 10ms\n",
     "bad.yaml:4:3: mock.itl: profile and ttft/itl exclude each other: ttft and itl select "
     "the fixed mode, which has no engine model"},
    {"limits: {duration: 1s}\nmock:\n  prefix_cache: maybe\n",
     "bad.yaml:3:17: mock.prefix_cache: expected true or false, got 'maybe'"},
    {"limits: {duration: 1s}\nmock:\n  profile: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
     "bad.yaml:3:12: mock.profile: expected 1 to 31 characters, got "
     "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'"},
    {"limits: {duration: 1s}\nmock: [a]\n",
     "bad.yaml:2:7: mock: expected a mapping, got a sequence"},
};

static void test_config_mock_refusals_name_the_key(void **state) {
    CONFIG_CASE_REFUSALS(bad_mock_keys);
}

UNIT_MAIN(cmocka_unit_test(test_config_sequential_loads_with_one_session_in_flight),
          cmocka_unit_test(test_config_sequential_refuses_a_concurrency),
          cmocka_unit_test(test_config_mock_section_becomes_mock_arguments),
          cmocka_unit_test(test_config_mock_fixed_mode_in_milliseconds),
          cmocka_unit_test(test_config_without_mock_section_writes_none),
          cmocka_unit_test(test_config_mock_refusals_name_the_key),
          cmocka_unit_test(test_config_mock_speculative_decoding_keys_become_flags),
          cmocka_unit_test(test_config_mock_faults_key_becomes_the_faults_flag))
