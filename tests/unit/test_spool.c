/* Spool and journal files (proto/spool.h): frames read back as written; a flipped byte, a cut-off
 * end and a foreign file are refused naming the file and the offset; a worker's spool
 * (worker/spool_file.h) holds exactly its unacknowledged batches; `stampede merge` refuses spools
 * of different runs before writing anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envelope.h"
#include "events.h"
#include "spool.h"
#include "spool_file.h"
#include "spool_merge.h"
#include "temp_file.h"
#include "unit_main.h"

typedef struct tmp {
    char dir[64];
    char path[128];
} tmp_t;

static void tmp_make(tmp_t *t) {
    snprintf(t->dir, sizeof t->dir, "/tmp/stampede-unit-spool.XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    snprintf(t->path, sizeof t->path, "%s/a.spool", t->dir);
}

static void tmp_remove(tmp_t *t) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", t->dir);
    assert_int_equal(system(cmd), 0);
}

/* A file of a run frame, a batch of `batch` bytes and an end frame. */
static void write_sample(const char *path, const uint8_t *batch, size_t len) {
    char err[256];
    spool_writer_t *w = spool_writer_open(path, err, sizeof err);
    assert_non_null(w);
    Stampede__SpoolRun run = STAMPEDE__SPOOL_RUN__INIT;
    run.run_id = 0x1234;
    run.config_yaml = "seed: 1\n";
    run.writer = "controller";
    run.worker_count = 2;
    Stampede__SpoolEnd end = STAMPEDE__SPOOL_END__INIT;
    end.worker_index = 1;
    end.last_seq = 9;
    assert_int_equal(spool_write_run(w, &run), 0);
    assert_int_equal(spool_write_frame(w, SPOOL_FRAME_BATCH, batch, len), 0);
    assert_int_equal(spool_write_end(w, &end), 0);
    assert_int_equal(spool_writer_close(&w), 0);
}

static void test_spool_frames_read_back_as_written(void **state) {
    tmp_t t;
    tmp_make(&t);
    const uint8_t batch[] = {1, 2, 3, 4, 5, 6, 7};
    write_sample(t.path, batch, sizeof batch);
    struct stat st;
    assert_int_equal(stat(t.path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0640 & ~mask); /* outfile: 0640 under the umask */
    char err[512];
    spool_reader_t *r = spool_reader_open(t.path, err, sizeof err);
    assert_non_null(r);
    spool_frame_t f;
    bool truncated;
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    assert_int_equal(f.type, SPOOL_FRAME_RUN);
    assert_int_equal(f.offset, SPOOL_MAGIC_LEN);
    Stampede__SpoolRun *run = stampede__spool_run__unpack(NULL, f.len, f.data);
    assert_non_null(run);
    assert_true(run->run_id == 0x1234);
    assert_string_equal(run->writer, "controller");
    stampede__spool_run__free_unpacked(run, NULL);
    uint64_t after_run = f.offset + SPOOL_FRAME_HEADER + f.len;
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    assert_int_equal(f.type, SPOOL_FRAME_BATCH);
    assert_int_equal(f.offset, after_run);
    assert_int_equal(f.len, sizeof batch);
    assert_memory_equal(f.data, batch, sizeof batch);
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    assert_int_equal(f.type, SPOOL_FRAME_END);
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 0);
    spool_reader_close(&r);
    tmp_remove(&t);
}

static void test_spool_flipped_byte_is_corrupt_at_its_frame(void **state) {
    tmp_t t;
    tmp_make(&t);
    const uint8_t batch[] = {10, 20, 30, 40};
    write_sample(t.path, batch, sizeof batch);
    char err[512];
    spool_reader_t *r = spool_reader_open(t.path, err, sizeof err);
    spool_frame_t f;
    bool truncated;
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    uint64_t batch_at = f.offset + SPOOL_FRAME_HEADER + f.len;
    spool_reader_close(&r);
    int fd = open(t.path, O_WRONLY);
    uint8_t bad = 11;
    assert_int_equal(pwrite(fd, &bad, 1, (off_t)(batch_at + SPOOL_FRAME_HEADER)), 1);
    close(fd);
    r = spool_reader_open(t.path, err, sizeof err);
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), -1);
    assert_false(truncated);
    char want[256];
    snprintf(want, sizeof want, "%s: offset %llu: corrupt: the frame's checksum does not match",
             t.path, (unsigned long long)batch_at);
    assert_string_equal(err, want);
    spool_reader_close(&r);
    tmp_remove(&t);
}

static void test_spool_cut_off_end_is_truncated(void **state) {
    tmp_t t;
    tmp_make(&t);
    const uint8_t batch[] = {1, 2, 3};
    write_sample(t.path, batch, sizeof batch);
    struct stat st;
    assert_int_equal(stat(t.path, &st), 0);
    assert_int_equal(truncate(t.path, st.st_size - 2), 0);
    char err[512];
    spool_reader_t *r = spool_reader_open(t.path, err, sizeof err);
    spool_frame_t f;
    bool truncated;
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), 1);
    assert_int_equal(spool_reader_next(r, &f, &truncated, err, sizeof err), -1);
    assert_true(truncated);
    assert_non_null(strstr(err, ": truncated: the file ends"));
    spool_reader_close(&r);
    tmp_remove(&t);
}

static void test_spool_foreign_file_is_refused(void **state) {
    tmp_t t;
    tmp_make(&t);
    temp_file_write_at(t.path, "{\"not\": \"a spool\"}\n");
    char err[512], want[256];
    assert_null(spool_reader_open(t.path, err, sizeof err));
    snprintf(want, sizeof want, "%s: offset 0: not a stampede spool or journal (no %s header)",
             t.path, SPOOL_MAGIC);
    assert_string_equal(err, want);
    tmp_remove(&t);
}

/* A run's config as the workers get it (redacted): enough for merge to rebuild the run. */
#define SPOOL_TEST_CONFIG                                                                          \
    "target:\n  endpoints: [\"http://127.0.0.1:9\"]\nworkload:\n  kind: requests\n"                \
    "  input_tokens: 8\n  output_tokens: 8\nscheduler:\n  kind: concurrent\n  concurrency: 1\n"    \
    "limits:\n  max_requests: 10\n"

/* A worker's spool of run_id: `records` records in batches of 2, the first `acked` batches
 * acknowledged (not in the spool). */
static void write_spool_of(const char *path, uint64_t run_id, int records, uint64_t acked) {
    events_options_t opt = {.batch_records = 2, .proto_version = PROTOCOL_VERSION};
    events_t *ev = events_new(&opt);
    assert_non_null(ev);
    events_begin_run(ev, run_id, 0);
    for (int i = 0; i < records; i++) {
        request_record_t rec = {.session = (uint64_t)i,
                                .request_id = (uint64_t)i,
                                .send_ns = 1000000000LL + i,
                                .end_ns = 2000000000LL + i};
        assert_true(events_add(ev, &rec) >= 0);
    }
    events_ack(ev, acked);
    spool_file_run_t run = {.run_id = run_id,
                            .config_yaml = SPOOL_TEST_CONFIG,
                            .name = "w/0",
                            .count = 1,
                            .start_ns = 1000000000LL,
                            .requests_done = (uint64_t)records,
                            .done = true};
    char err[512];
    assert_int_equal(spool_file_write(path, &run, ev, err, sizeof err), 0);
    events_destroy(&ev);
}

static void write_worker_spool(const char *path, uint64_t run_id, uint64_t acked) {
    write_spool_of(path, run_id, 10, acked);
}

/* Runs `stampede merge SPOOL... --into into` (with --allow-invalid when asked), its stderr into
 * path (its stdout, the table, dropped); its exit status. */
static int merge_logged(const char *into, char **spools, int n, bool allow_invalid,
                        const char *path) {
    fflush(stderr);
    fflush(stdout);
    int saved = dup(STDERR_FILENO), saved_out = dup(STDOUT_FILENO);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int null = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
    close(fd);
    close(null);
    spool_merge_options_t options = {.allow_invalid = allow_invalid};
    int rc = spool_merge_run(into, spools, n, &options);
    fflush(stderr);
    fflush(stdout);
    dup2(saved, STDERR_FILENO);
    dup2(saved_out, STDOUT_FILENO);
    close(saved);
    close(saved_out);
    return rc;
}

static void read_text(const char *path, char *text, size_t len) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t got = fread(text, 1, len - 1, f);
    text[got] = '\0';
    fclose(f);
}

static void test_spool_worker_spool_holds_the_unacknowledged_batches(void **state) {
    tmp_t t;
    tmp_make(&t);
    char path[256];
    spool_file_path(t.dir, "w/0", 0xabc, path, sizeof path);
    char want[256];
    snprintf(want, sizeof want, "%s/stampede-0000000000000abc-w_0.spool", t.dir);
    assert_string_equal(path, want);
    write_worker_spool(path, 0xabc, 2);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_not_equal(access(tmp, F_OK), 0); /* renamed into place */
    char err[512];
    spool_reader_t *r = spool_reader_open(path, err, sizeof err);
    assert_non_null(r);
    spool_frame_t f;
    bool truncated;
    uint64_t seqs[8], n = 0;
    int got;
    while ((got = spool_reader_next(r, &f, &truncated, err, sizeof err)) == 1) {
        if (f.type == SPOOL_FRAME_BATCH) {
            Stampede__Envelope *env = stampede__envelope__unpack(NULL, f.len, f.data);
            assert_non_null(env);
            assert_true(env->run_id == 0xabc);
            seqs[n++] = env->batch->seq;
            stampede__envelope__free_unpacked(env, NULL);
        } else if (f.type == SPOOL_FRAME_END) {
            Stampede__SpoolEnd *e = stampede__spool_end__unpack(NULL, f.len, f.data);
            assert_int_equal(e->requests_done, 10);
            assert_int_equal(e->records, 10);
            assert_int_equal(e->last_seq, 5);
            assert_int_equal(e->acked_seq, 2);
            stampede__spool_end__free_unpacked(e, NULL);
        }
    }
    assert_int_equal(got, 0);
    assert_int_equal(n, 3);
    assert_int_equal(seqs[0], 3);
    assert_int_equal(seqs[2], 5);
    spool_reader_close(&r);
    tmp_remove(&t);
}

static void test_spool_merge_refuses_spools_of_different_runs(void **state) {
    tmp_t t;
    tmp_make(&t);
    char a[200], b[200], into[200], log[200];
    snprintf(a, sizeof a, "%s/one.spool", t.dir);
    snprintf(b, sizeof b, "%s/two.spool", t.dir);
    snprintf(into, sizeof into, "%s/out", t.dir);
    snprintf(log, sizeof log, "%s/err", t.dir);
    write_worker_spool(a, 0x1111, 0);
    write_worker_spool(b, 0x2222, 0);
    char *spools[] = {a, b};
    assert_int_equal(merge_logged(into, spools, 2, false, log), 1);
    char text[1024];
    read_text(log, text, sizeof text);
    char want[512];
    snprintf(want, sizeof want,
             "merge: %s is of run 0000000000002222, %s of run 0000000000001111: spools of "
             "different runs cannot be merged\n",
             b, a);
    assert_string_equal(text, want);
    assert_int_not_equal(access(into, F_OK), 0); /* nothing written */
    tmp_remove(&t);
}

/* Batches 3-5 in the first spool, 1-3 in the second: 3-5 wait until 1-2 are in, batch 3 counts
 * once, and the results hold the worker's 10 requests. */
static void test_spool_merge_orders_and_counts_resends_once(void **state) {
    tmp_t t;
    tmp_make(&t);
    char late[200], early[200], into[200], log[200], results[256];
    snprintf(late, sizeof late, "%s/late.spool", t.dir);
    snprintf(early, sizeof early, "%s/early.spool", t.dir);
    snprintf(into, sizeof into, "%s/out", t.dir);
    snprintf(log, sizeof log, "%s/err", t.dir);
    snprintf(results, sizeof results, "%s/results.json", into);
    write_spool_of(late, 0x77, 10, 2);
    write_spool_of(early, 0x77, 6, 0);
    char *spools[] = {late, early};
    int rc = merge_logged(into, spools, 2, true, log);
    char text[4096];
    read_text(log, text, sizeof text);
    if (rc != 0)
        fail_msg("merge exited %d: %s", rc, text);
    if (!strstr(text, "worker w/0: 10 records in batches 1-5 (0 from the journal, 5 from spools, 1 "
                      "duplicates counted once); its own count: 10 requests completed") ||
        strstr(text, "left out"))
        fail_msg("unexpected merge output: %s", text);
    static char json[1 << 20];
    read_text(results, json, sizeof json);
    assert_non_null(strstr(json, "\"requests_ok\": 10"));
    assert_non_null(strstr(json, "\"partial\": true"));
    tmp_remove(&t);
}

UNIT_MAIN(cmocka_unit_test(test_spool_frames_read_back_as_written),
          cmocka_unit_test(test_spool_flipped_byte_is_corrupt_at_its_frame),
          cmocka_unit_test(test_spool_cut_off_end_is_truncated),
          cmocka_unit_test(test_spool_foreign_file_is_refused),
          cmocka_unit_test(test_spool_worker_spool_holds_the_unacknowledged_batches),
          cmocka_unit_test(test_spool_merge_refuses_spools_of_different_runs),
          cmocka_unit_test(test_spool_merge_orders_and_counts_resends_once))
