/* The config loader against YAML built to hurt it, as a worker meets it in an Assign: aliases (a
 * "billion laughs" that fans out, an alias to the node that holds it, which crashed the loader by
 * unbounded recursion) and nesting too deep for the recursive readers. Each is refused with the
 * position and the dotted key; anchors without aliases and ordinary files still load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "config_scan.h"
#include "unit_main.h"

/* Loads yaml, which must be refused with exactly "<string>:line:column: key: message". */
static void expect_refused(const char *yaml, const char *expected) {
    config_t c;
    config_error_t err;
    assert_int_equal(config_load_string(&c, yaml, strlen(yaml), NULL, &err), -1);
    char message[1024];
    config_error_format(&err, message, sizeof message);
    assert_string_equal(message, expected);
}

/* Nine levels of nine aliases: 9^9 nodes if anything walked them; refused at the first alias. */
static void test_config_scan_billion_laughs_refused_at_the_first_alias(void **state) {
    char yaml[4096];
    int n = snprintf(yaml, sizeof yaml, "limits: {max_requests: 1}\nl0: &l0 [lol, lol, lol]\n");
    for (int level = 1; level < 10; level++) {
        n += snprintf(yaml + n, sizeof yaml - (size_t)n, "l%d: &l%d [", level, level);
        for (int i = 0; i < 9; i++)
            n +=
                snprintf(yaml + n, sizeof yaml - (size_t)n, "*l%d%s", level - 1, i < 8 ? ", " : "");
        n += snprintf(yaml + n, sizeof yaml - (size_t)n, "]\n");
    }
    expect_refused(yaml, "<string>:3:10: l1[0]: YAML aliases (*l0) are not accepted: write the "
                         "value out in full (an alias can make a small file expand without bound)");
}

/* Before the scan, this one crashed the loader: the mixture's reader recursed into itself. */
static void test_config_scan_alias_to_its_own_container_refused(void **state) {
    expect_refused("workload:\n  think_time: &m {dist: mixture, components: [*m]}\n",
                   "<string>:2:47: workload.think_time.components[0]: YAML aliases (*m) are not "
                   "accepted: write the value out in full (an alias can make a small file expand "
                   "without bound)");
}

static void test_config_scan_alias_as_a_scalar_value_refused(void **state) {
    expect_refused("seed: &s 5\nlimits:\n  max_requests: *s\n",
                   "<string>:3:17: limits.max_requests: YAML aliases (*s) are not accepted: write "
                   "the value out in full (an alias can make a small file expand without bound)");
}

static void test_config_scan_anchor_without_alias_loads(void **state) {
    const char *yaml = "seed: &s 5\nlimits: &l\n  max_requests: 10\n";
    config_t c;
    config_error_t err;
    assert_int_equal(config_load_string(&c, yaml, strlen(yaml), NULL, &err), 0);
    assert_int_equal(c.seed, 5);
    assert_int_equal(c.limits.max_requests, 10);
    config_free(&c);
}

/* Mixtures nested `levels` deep around a fixed distribution, as think_time. */
static char *nested_mixture(int levels) {
    size_t cap = (size_t)levels * 64 + 128, n = 0;
    char *yaml = malloc(cap);
    assert_non_null(yaml);
    n += (size_t)snprintf(yaml, cap, "limits: {max_requests: 1}\nworkload:\n  think_time: ");
    for (int i = 0; i < levels; i++)
        n += (size_t)snprintf(yaml + n, cap - n, "{dist: mixture, components: [");
    n += (size_t)snprintf(yaml + n, cap - n, "{dist: fixed, value: 1}");
    for (int i = 0; i < levels; i++)
        n += (size_t)snprintf(yaml + n, cap - n, "]}");
    snprintf(yaml + n, cap - n, "\n");
    return yaml;
}

static void test_config_scan_nesting_past_the_limit_refused(void **state) {
    char *yaml = nested_mixture(10000); /* the readers' recursion would overflow the stack */
    config_t c;
    config_error_t err;
    assert_int_equal(config_load_string(&c, yaml, strlen(yaml), NULL, &err), -1);
    char expected[128];
    snprintf(expected, sizeof expected, "nested deeper than %d levels", CONFIG_SCAN_MAX_DEPTH);
    assert_string_equal(err.message, expected);
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.key, "workload.think_time.components[0].components[0]"));
    free(yaml);
}

static void test_config_scan_nesting_within_the_limit_loads(void **state) {
    char *yaml = nested_mixture(3);
    config_t c;
    config_error_t err;
    int rc = config_load_string(&c, yaml, strlen(yaml), NULL, &err);
    if (rc != 0)
        fail_msg("%s: %s", err.key, err.message);
    config_free(&c);
    free(yaml);
}

UNIT_MAIN(cmocka_unit_test(test_config_scan_billion_laughs_refused_at_the_first_alias),
          cmocka_unit_test(test_config_scan_alias_to_its_own_container_refused),
          cmocka_unit_test(test_config_scan_alias_as_a_scalar_value_refused),
          cmocka_unit_test(test_config_scan_anchor_without_alias_loads),
          cmocka_unit_test(test_config_scan_nesting_past_the_limit_refused),
          cmocka_unit_test(test_config_scan_nesting_within_the_limit_loads))
