/* Loading workload text in a unit test: text that must load, and tables of text that must be
 * refused with an exact message (file name "bad.yaml"). Header-only (static functions) because
 * each tests/unit/test_*.c is a program of its own; include after cmocka.h. */
#ifndef STAMPEDE_TEST_CONFIG_CASE_H
#define STAMPEDE_TEST_CONFIG_CASE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "message_case.h"

/* Loads yaml into cfg (named "test.yaml" in messages), failing the test with the message if it is
 * refused. */
static inline void config_case_load(config_t *cfg, const char *yaml) {
    char msg[1024];
    config_error_t err;
    if (config_load_string(cfg, yaml, strlen(yaml), "test.yaml", &err) != 0) {
        config_error_format(&err, msg, sizeof msg);
        fail_msg("should load: %s\n%s", msg, yaml);
    }
}

/* Loads cfg's written-back form (config_to_yaml) into again, failing the test with the message if
 * it is refused. */
static inline void config_case_reload(config_t *again, const config_t *cfg) {
    char *text = config_to_yaml(cfg);
    assert_non_null(text);
    config_case_load(again, text);
    free(text);
}

/* Loads each of the n cases as "bad.yaml": each must be refused with exactly its message; every
 * case that is not is printed, then the test fails. */
static inline void config_case_refusals(const message_case_t *cases, size_t n) {
    size_t failures = 0;
    for (size_t i = 0; i < n; i++) {
        config_t cfg;
        config_error_t err;
        char msg[2048];
        const char *yaml = cases[i].input;
        if (config_load_string(&cfg, yaml, strlen(yaml), "bad.yaml", &err) == 0) {
            print_error("case %zu loaded but should fail with:\n  %s\n", i, cases[i].message);
            config_free(&cfg);
            failures++;
            continue;
        }
        config_error_format(&err, msg, sizeof msg);
        if (strcmp(msg, cases[i].message) != 0) {
            print_error("case %zu:\n  expected %s\n  got      %s\n", i, cases[i].message, msg);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* config_case_refusals over every case of the array cases. */
#define CONFIG_CASE_REFUSALS(cases) config_case_refusals(cases, sizeof(cases) / sizeof((cases)[0]))

#endif
