/* controller/trace_writer: lines pushed from the loop reach the file in order; a writer that
 * cannot make progress (a FIFO nobody opens for reading) never blocks a push, a full queue drops
 * and counts, and the close gives up within its stall bound. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit_main.h"

#include "trace_writer.h"

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A fresh temporary directory's path + name in buf. */
static void temp_path(char *buf, size_t len, const char *name) {
    char dir[] = "/tmp/stampede-trace-writer.XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(buf, len, "%s/%s", dir, name);
}

static void remove_path(const char *path) {
    unlink(path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
}

static void test_trace_writer_writes_every_line_in_order(void **state) {
    char path[4096];
    temp_path(path, sizeof path, "requests.jsonl");
    trace_writer_t *w = trace_writer_new(path, 1 << 20);
    assert_non_null(w);
    char line[64];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(line, sizeof line, "{\"request_id\":%d}\n", i);
        assert_true(trace_writer_push(w, line, (size_t)n));
    }
    trace_writer_stats_t stats;
    assert_int_equal(trace_writer_close(&w, 2000, &stats), 0);
    assert_null(w);
    assert_int_equal(stats.lines_written, 1000);
    assert_int_equal(stats.lines_dropped, 0);
    assert_int_equal(stats.error, 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (int i = 0; i < 1000; i++) {
        int id = -1;
        assert_int_equal(fscanf(f, "{\"request_id\":%d}\n", &id), 1);
        assert_int_equal(id, i);
    }
    assert_int_equal(fgetc(f), EOF);
    fclose(f);
    remove_path(path);
}

static void test_trace_writer_unread_fifo_drops_when_full_and_close_is_bounded(void **state) {
    char path[4096];
    temp_path(path, sizeof path, "fifo");
    assert_int_equal(mkfifo(path, 0600), 0);
    const size_t line_len = 100, queue = 10 * line_len;
    trace_writer_t *w = trace_writer_new(path, queue);
    assert_non_null(w);
    char line[100];
    memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
    int64_t t0 = now_ms();
    int accepted = 0;
    for (int i = 0; i < 25; i++)
        accepted += trace_writer_push(w, line, sizeof line);
    /* The writer is stuck in open(): the first 10 lines fill the queue, the rest are dropped. */
    assert_int_equal(accepted, 10);
    assert_int_equal(trace_writer_dropped(w), 15);
    assert_true(now_ms() - t0 < 1000); /* pushing never waited for the FIFO */
    trace_writer_stats_t stats;
    t0 = now_ms();
    assert_int_equal(trace_writer_close(&w, 200, &stats), -1);
    int64_t took = now_ms() - t0;
    /* It gives up after 200 ms without progress; 5 s is the bound of a loaded machine. */
    assert_in_range(took, 150, 5000);
    assert_int_equal(stats.lines_written, 0);
    assert_int_equal(stats.lines_dropped, 25);
    remove_path(path);
}

static void test_trace_writer_unwritable_path_reports_the_error(void **state) {
    trace_writer_t *w = trace_writer_new("/nonexistent-dir/requests.jsonl", 1 << 20);
    assert_non_null(w);
    trace_writer_push(w, "{}\n", 3);
    for (int i = 0; i < 500 && !trace_writer_error(w); i++)
        usleep(10000); /* the thread's open() fails soon; 5 s bounds a loaded machine */
    assert_int_equal(trace_writer_error(w), ENOENT);
    trace_writer_stats_t stats;
    assert_int_equal(trace_writer_close(&w, 2000, &stats), -1);
    assert_int_equal(stats.error, ENOENT);
    assert_int_equal(stats.lines_written, 0);
    assert_int_equal(stats.lines_dropped, 1);
}

UNIT_MAIN(cmocka_unit_test(test_trace_writer_writes_every_line_in_order),
          cmocka_unit_test(test_trace_writer_unread_fifo_drops_when_full_and_close_is_bounded),
          cmocka_unit_test(test_trace_writer_unwritable_path_reports_the_error))
