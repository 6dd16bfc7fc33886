/* Files of several runs (common/config_documents.h): a file of N YAML documents expands to
 * FILE#1..FILE#N, each of which loads as its own workload, with errors at lines of the whole
 * file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "config_documents.h"
#include "temp_file.h"
#include "unit_main.h"

static void test_config_documents_a_file_of_two_documents_is_two_runs(void **state) {
    char two[64], one[64];
    snprintf(two, sizeof two, "/tmp/stampede-test-docs-%d.yaml", (int)getpid());
    snprintf(one, sizeof one, "/tmp/stampede-test-doc-%d.yaml", (int)getpid());
    temp_file_write_at(
        two, "seed: 3\nlimits: {max_sessions: 1}\n---\nseed: 4\nlimits: {max_sessions: 2}\n");
    temp_file_write_at(one, "seed: 5\nlimits: {max_sessions: 1}\n");
    char *paths[] = {one, two};
    size_t n = 0;
    char **runs = config_expand_documents(paths, 2, &n);
    assert_non_null(runs);
    assert_int_equal(n, 3);
    assert_string_equal(runs[0], one);
    char expect[80];
    snprintf(expect, sizeof expect, "%s#2", two);
    assert_string_equal(runs[2], expect);
    assert_null(runs[3]);
    config_t cfg;
    config_error_t err;
    assert_int_equal(config_load_file(&cfg, runs[1], &err), 0);
    assert_int_equal(cfg.seed, 3);
    config_free(&cfg);
    assert_int_equal(config_load_file(&cfg, runs[2], &err), 0);
    assert_int_equal(cfg.seed, 4);
    assert_int_equal(cfg.limits.max_sessions, 2);
    config_free(&cfg);
    /* the file itself is still one run's file only when it has one document */
    assert_int_equal(config_load_file(&cfg, two, &err), -1);
    assert_string_equal(err.message, "expected a single YAML document, found a second one");
    config_documents_free(runs);
    unlink(two);
    unlink(one);
}

static void test_config_documents_an_error_names_the_line_in_the_whole_file(void **state) {
    char path[64], doc[80], msg[1024];
    snprintf(path, sizeof path, "/tmp/stampede-test-docs-bad-%d.yaml", (int)getpid());
    temp_file_write_at(
        path, "seed: 3\nlimits: {max_sessions: 1}\n---\nseed: 4\nlimits: {max_sesions: 2}\n");
    snprintf(doc, sizeof doc, "%s#2", path);
    config_t cfg;
    config_error_t err;
    assert_int_equal(config_load_file(&cfg, doc, &err), -1);
    assert_int_equal(err.line, 5);
    assert_string_equal(err.key, "limits.max_sesions");
    snprintf(doc, sizeof doc, "%s#3", path);
    assert_int_equal(config_load_file(&cfg, doc, &err), -1);
    config_error_format(&err, msg, sizeof msg);
    assert_non_null(strstr(msg, "the file has no document 3"));
    unlink(path);
}

/* A stray `---` closing the file is no third run; an empty document between two others keeps
 * its place, so that FILE#3 still names the third document. */
static void test_config_documents_a_trailing_empty_document_is_no_run(void **state) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/stampede-test-tail-%d.yaml", (int)getpid());
    temp_file_write_at(path, "seed: 3\n---\nseed: 4\n---\n");
    assert_int_equal(config_file_documents(path), 2);
    temp_file_write_at(path, "seed: 3\n---\nseed: 4\n---\n---\n# only a comment\n");
    assert_int_equal(config_file_documents(path), 2);
    temp_file_write_at(path, "seed: 3\n---\n---\nseed: 4\n");
    assert_int_equal(config_file_documents(path), 3);
    temp_file_write_at(path, "---\n");
    assert_int_equal(config_file_documents(path), 1);
    unlink(path);
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 100,000 flow sequences deep: counting the documents used to parse to the end, in time growing
 * with the square of the depth (33 s); it stops at depth 65, where loading refuses the file. */
static void test_config_documents_100k_deep_is_refused_at_depth_65_in_linear_time(void **state) {
    enum { DEPTH = 100000 };
    char path[64];
    snprintf(path, sizeof path, "/tmp/stampede-test-docs-deep-%d.yaml", (int)getpid());
    static char text[8 + 2 * DEPTH + 2];
    memcpy(text, "target: ", 8);
    memset(text + 8, '[', DEPTH);
    memset(text + 8 + DEPTH, ']', DEPTH);
    memcpy(text + 8 + 2 * DEPTH, "\n", 2);
    temp_file_write_at(path, text);
    double t0 = seconds_now();
    assert_int_equal(config_file_documents(path), 1);
    config_t cfg;
    config_error_t err;
    assert_int_equal(config_load_file(&cfg, path, &err), -1);
    double took = seconds_now() - t0;
    assert_non_null(strstr(err.message, "nested deeper than 64 levels"));
    assert_int_equal(err.line, 1);
    /* the 64th '[' (the 65th level, under the root mapping) */
    assert_int_equal(err.column, 8 + 64);
    assert_true(took < 1.0);
    unlink(path);
}

UNIT_MAIN(cmocka_unit_test(test_config_documents_a_file_of_two_documents_is_two_runs),
          cmocka_unit_test(test_config_documents_a_trailing_empty_document_is_no_run),
          cmocka_unit_test(test_config_documents_an_error_names_the_line_in_the_whole_file),
          cmocka_unit_test(test_config_documents_100k_deep_is_refused_at_depth_65_in_linear_time))
