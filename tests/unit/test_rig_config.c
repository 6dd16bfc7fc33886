/* controller/rig/rig_config: the rig's groups, admins and retention, and the errors that name the
 * file, line and key of a mistake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rig_config.h"
#include "temp_file.h"
#include "unit_main.h"

/* Writes text to a fresh file; its path into path. */
static void write_config(char *path, size_t len, const char *text) {
    snprintf(path, len, "/tmp/stampede-rig-config.XXXXXX");
    temp_file_write(path, text);
}

/* Loads text as a rig's config, which must load; the file's path into path. */
static void load_config(rig_config_t *c, char *path, size_t len, const char *text) {
    char err[512];
    write_config(path, len, text);
    if (rig_config_load(c, path, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void test_rig_config_reads_groups_admins_and_retention(void **st) {
    char path[64];
    rig_config_t c;
    load_config(&c, path, sizeof path,
                "groups:\n  h200-a: [http://a:1, http://b:2]\n  h200-b: http://c:3\n"
                "admins: [root, ops]\nretention: {keep: 50, max_age: 2d}\n");
    assert_int_equal(c.n_groups, 2);
    const rig_group_t *a = rig_config_group(&c, "h200-a");
    assert_non_null(a);
    assert_int_equal(a->n_urls, 2);
    assert_string_equal(a->urls[1], "http://b:2");
    assert_int_equal(rig_config_group(&c, "h200-b")->n_urls, 1);
    assert_null(rig_config_group(&c, "h100"));
    assert_true(rig_config_is_admin(&c, "ops"));
    assert_false(rig_config_is_admin(&c, "alice"));
    assert_int_equal(c.keep_runs, 50);
    assert_int_equal(c.keep_age_s, 2 * 86400);
    rig_config_free(&c);
    unlink(path);
}

static void test_rig_config_reads_a_groups_workers_count(void **st) {
    char path[64];
    rig_config_t c;
    load_config(&c, path, sizeof path,
                "groups:\n  big: {endpoints: [http://a:1, http://b:2], workers: 3}\n"
                "  small: [http://c:3]\n");
    const rig_group_t *big = rig_config_group(&c, "big");
    assert_non_null(big);
    assert_int_equal(big->n_urls, 2);
    assert_string_equal(big->urls[0], "http://a:1");
    assert_int_equal(big->workers, 3);
    assert_int_equal(rig_config_group(&c, "small")->workers, 0); /* the rig's share rule */
    rig_config_free(&c);
    unlink(path);
}

static void test_rig_config_names_file_line_and_key_of_a_mistake(void **st) {
    const struct {
        const char *text, *want;
    } cases[] = {
        {"admins: [root]\n", ":1:1: groups: missing"},
        {"groups:\n  g1: [ftp://a]\n", ":2:7: groups.g1: 'ftp://a' is not an http"},
        {"groups:\n  g1: [http://a]\n  g1: [http://b]\n",
         ":3:3: groups: group 'g1' is named twice"},
        {"groups:\n  g1: []\n", ":2:7: groups.g1: a group needs at least one endpoint URL"},
        {"groups: {g1: [http://a]}\nretention: {keep: -1}\n", ":2:19: retention.keep: expected"},
        {"groups: {g1: [http://a]}\nretention: {max_age: soon}\n", ":2:22: retention.max_age"},
        {"groups: {g1: [http://a]}\nadmin: [x]\n", ":2:1: admin: unknown key"},
        {"groups:\n  g1: {endpoints: [http://a], workers: 0}\n",
         ":2:40: groups.g1.workers: expected a count of workers, 1 to 100000"},
        {"groups:\n  g1:\n    endpoints: [http://a]\n    workers: two\n",
         ":4:14: groups.g1.workers: expected a count"},
        {"groups:\n  g1: {workers: 2}\n", ":2:7: groups.g1.endpoints: missing"},
        {"groups:\n  g1: {endpoints: [http://a], share: 2}\n",
         ":2:31: groups.g1.share: unknown key 'share' (endpoints, workers)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[64], err[512] = "";
        write_config(path, sizeof path, cases[i].text);
        rig_config_t c;
        assert_int_equal(rig_config_load(&c, path, err, sizeof err), -1);
        if (strncmp(err, path, strlen(path)) || !strstr(err, cases[i].want))
            fail_msg("case %zu: '%s' does not name %s%s", i, err, path, cases[i].want);
        unlink(path);
    }
}

UNIT_MAIN(cmocka_unit_test(test_rig_config_reads_groups_admins_and_retention),
          cmocka_unit_test(test_rig_config_reads_a_groups_workers_count),
          cmocka_unit_test(test_rig_config_names_file_line_and_key_of_a_mistake))
