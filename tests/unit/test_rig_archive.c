/* controller/rig/archive: the queue's order and places, cancelling, the figures read from a run's
 * results.json, and retention that keeps pinned runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "archive.h"
#include "outfile.h"
#include "unit_main.h"

static archive_t *open_fresh(char *dir, size_t len) {
    snprintf(dir, len, "/tmp/stampede-archive.XXXXXX");
    assert_non_null(mkdtemp(dir));
    char err[512];
    archive_t *a = archive_open(dir, err, sizeof err);
    if (!a)
        fail_msg("%s", err);
    return a;
}

static void remove_dir(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int64_t submit(archive_t *a, const char *user, const char *group, int priority) {
    char err[512];
    archive_submission_t s = {.user = user,
                              .group = group,
                              .priority = priority,
                              .workload_name = "w.yaml",
                              .workload = "limits: {max_requests: 1}\n",
                              .file_digest = "0123456789abcdef",
                              .config = "{}"};
    int64_t id = archive_submit(a, &s, err, sizeof err);
    if (id <= 0)
        fail_msg("%s", err);
    return id;
}

static void test_archive_queue_is_fifo_per_group_with_priority_first(void **st) {
    char dir[64];
    archive_t *a = open_fresh(dir, sizeof dir);
    int64_t r1 = submit(a, "alice", "g1", 0), r2 = submit(a, "bob", "g1", 0);
    int64_t r3 = submit(a, "root", "g1", 5), r4 = submit(a, "bob", "g2", 0);
    assert_int_equal(archive_next(a, "g1"), r3);
    assert_int_equal(archive_next(a, "g2"), r4);
    assert_int_equal(archive_next(a, NULL), r3);
    assert_int_equal(archive_place(a, r3), 1);
    assert_int_equal(archive_place(a, r1), 2);
    assert_int_equal(archive_place(a, r2), 3);
    assert_int_equal(archive_place(a, r4), 1);
    assert_int_equal(archive_cancel_queued(a, r1, "root"), 0);
    assert_int_equal(archive_cancel_queued(a, r1, "root"), -1); /* not queued any more */
    assert_int_equal(archive_place(a, r1), 0);
    assert_int_equal(archive_place(a, r2), 2);
    char path[4200];
    archive_workload_path(a, r1, path, sizeof path);
    assert_int_not_equal(access(path, F_OK), 0); /* the queued file went with it */
    archive_workload_path(a, r2, path, sizeof path);
    assert_int_equal(access(path, F_OK), 0);
    archive_close(&a);
    remove_dir(dir);
}

static void test_archive_finished_keeps_results_figures_and_the_guard(void **st) {
    char dir[64], run_dir[4200], path[4300];
    archive_t *a = open_fresh(dir, sizeof dir);
    int64_t id = submit(a, "alice", "g1", 0);
    assert_int_equal(archive_started(a, id, 2), 0);
    archive_run_dir(a, id, run_dir, sizeof run_dir);
    assert_int_equal(outfile_make_dir(run_dir), 0);
    snprintf(path, sizeof path, "%s/results.json", run_dir);
    json_t *results = json_loads(
        "{\"run\": {\"run_id\": \"00aa\"}, \"validity\": {\"valid\": false, \"reasons\": "
        "[\"someone else\"]}, \"levels\": [{\"concurrency\": 4, \"requests_ok\": 40, "
        "\"requests_per_s\": 12.5, \"ttft_ms\": {\"p50\": 10.0, \"p99\": 30.0}, "
        "\"wall_clock_s\": 2.5, \"workload_digest\": \"feed\", \"server\": {\"guard\": "
        "{\"shared\": true, \"shared_reason\": \"someone else\"}}}]}",
        0, NULL);
    assert_non_null(results);
    assert_int_equal(json_dump_file(results, path, 0), 0);
    json_decref(results);
    assert_int_equal(archive_set_start(a, id, 1000000000LL), 0);
    assert_int_equal(archive_finished(a, id, "done", 3, NULL), 0);
    json_t *row = archive_run_json(a, id);
    assert_non_null(row);
    assert_string_equal(json_string_value(json_object_get(row, "state")), "done");
    assert_string_equal(json_string_value(json_object_get(row, "run_id")), "00aa");
    assert_string_equal(json_string_value(json_object_get(row, "workload_digest")), "feed");
    assert_int_equal(json_integer_value(json_object_get(row, "valid")), 0);
    assert_int_equal(json_integer_value(json_object_get(row, "shared")), 1);
    assert_int_equal(json_integer_value(json_object_get(row, "workers")), 2);
    assert_int_equal(json_integer_value(json_object_get(row, "load_end_ns")), 3500000000LL);
    json_t *level = json_array_get(json_object_get(row, "levels"), 0);
    assert_int_equal(json_integer_value(json_object_get(level, "requests_ok")), 40);
    assert_float_equal(json_real_value(json_object_get(level, "ttft_p99_ms")), 30.0, 1e-9);
    assert_true(json_is_null(json_object_get(level, "itl_p50_ms")));
    json_decref(row);
    archive_close(&a);
    remove_dir(dir);
}

static void test_archive_retain_keeps_the_newest_and_the_pinned(void **st) {
    char dir[64];
    archive_t *a = open_fresh(dir, sizeof dir);
    int64_t ids[5];
    for (size_t i = 0; i < 5; i++) {
        ids[i] = submit(a, "alice", "g1", 0);
        archive_finished(a, ids[i], "done", 0, NULL);
    }
    int64_t queued = submit(a, "bob", "g1", 0);
    assert_int_equal(archive_pin(a, ids[0], true), 0);
    assert_int_equal(archive_pin(a, 999, true), -1);
    assert_int_equal(archive_retain(a, 2, 0), 2); /* ids 1 and 2 go; 0 is pinned */
    json_t *left = archive_list_json(a, NULL, NULL, NULL, NULL, 0);
    int64_t want[] = {queued, ids[4], ids[3], ids[0]};
    assert_int_equal(json_array_size(left), 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(left, i), "id")),
                         want[i]);
    json_decref(left);
    archive_close(&a);
    remove_dir(dir);
}

UNIT_MAIN(cmocka_unit_test(test_archive_queue_is_fifo_per_group_with_priority_first),
          cmocka_unit_test(test_archive_finished_keeps_results_figures_and_the_guard),
          cmocka_unit_test(test_archive_retain_keeps_the_newest_and_the_pinned))
