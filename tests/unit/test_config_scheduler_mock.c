/* The parts of the workload file that pick how sessions are started (scheduler.kind:
 * sequential) and how the embedded mock is run (the mock section): loading, refusals with their
 * exact messages, and the written-back form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "message_case.h"
#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static void load_text(config_t *cfg, const char *yaml) {
    char msg[1024];
    config_error_t err;
    if (config_load_string(cfg, yaml, strlen(yaml), "test.yaml", &err) != 0) {
        config_error_format(&err, msg, sizeof msg);
        fail_msg("should load: %s\n%s", msg, yaml);
    }
}

static void check_refusals(const message_case_t *cases, size_t n) {
    for (size_t i = 0; i < n; i++) {
        config_t cfg;
        config_error_t err;
        char msg[2048];
        if (config_load_string(&cfg, cases[i].input, strlen(cases[i].input), "bad.yaml", &err) ==
            0) {
            config_free(&cfg);
            fail_msg("case %zu loaded but should fail:\n%s", i, cases[i].input);
        }
        config_error_format(&err, msg, sizeof msg);
        if (strcmp(msg, cases[i].message) != 0)
            fail_msg("case %zu:\n got: %s\nwant: %s", i, msg, cases[i].message);
    }
}

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
    load_text(&c, "scheduler: {kind: sequential}\nlimits: {max_sessions: 3}\n");
    assert_int_equal(c.scheduler.kind, SCHEDULER_SEQUENTIAL);
    assert_int_equal(c.scheduler.concurrency, 1);
    assert_string_equal(config_scheduler_kind_name(c.scheduler.kind), "sequential");
    char *text = assert_written_form_is_fixed_point(&c);
    assert_non_null(strstr(text, "scheduler:\n  kind: sequential\n  concurrency: 1\n"));
    free(text);
    config_free(&c);
    /* concurrency: 1 (what config.yaml writes) and an unused rate are accepted */
    load_text(&c, "scheduler: {kind: sequential, concurrency: 1, rate: 5/s}\n"
                  "limits: {duration: 1s}\n");
    assert_int_equal(c.scheduler.kind, SCHEDULER_SEQUENTIAL);
    config_free(&c);
}

static void test_config_sequential_refuses_a_concurrency(void **state) {
    static const message_case_t cases[] = {
        {"limits: {duration: 10s}\nscheduler:\n  kind: sequential\n  concurrency: 4\n",
         "bad.yaml:4:16: scheduler.concurrency: a sequential scheduler runs one session at a "
         "time; drop concurrency (or use kind: concurrent), got '4'"},
        {"limits: {duration: 10s}\nscheduler:\n  kind: sequentail\n",
         "bad.yaml:3:9: scheduler.kind: expected one of concurrent, rate, sequential, got "
         "'sequentail'; did you mean 'sequential'?"},
    };
    check_refusals(cases, sizeof cases / sizeof cases[0]);
}

UNIT_MAIN(cmocka_unit_test(test_config_sequential_loads_with_one_session_in_flight),
          cmocka_unit_test(test_config_sequential_refuses_a_concurrency))
