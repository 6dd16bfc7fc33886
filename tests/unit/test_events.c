/* Event batches: what a worker packs is what the controller decodes (chunk times as varint
 * microsecond gaps, clock offsets undone), and the unacknowledged ring sends, keeps and resends
 * exactly what it should. Also the worker process around them: one whose loops cannot all start
 * stops the ones that did. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent.h"
#include "events.h"
#include "ingest.h"
#include "stampede.pb-c.h"
#include "worker_cli.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* When armed, the calls to pthread_create made by one thread fail (EAGAIN, as at a thread
 * limit) after the first `calls_before_failure`; every other call goes to the real function. */
static pthread_t failing_caller;
static int calls_before_failure = -1;

/* This program's pthread_create takes the place of libc's for the code linked into it (worker.c
 * included); the real one (or a sanitizer's interceptor in front of it) is the next in line. */
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                   void *arg) {
    pthread_create_fn real = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (calls_before_failure >= 0 && pthread_equal(pthread_self(), failing_caller)) {
        if (calls_before_failure == 0)
            return EAGAIN;
        calls_before_failure--;
    }
    return real(thread, attr, start, arg);
}

#define RUN_ID 0x1122334455667788ULL

/* Collects what events_flush sends; refuses once `accept` envelopes were taken. */
typedef struct sink {
    uint8_t *data[64];
    size_t len[64];
    size_t n;
    size_t accept;
} sink_t;

static int sink_send(void *arg, const uint8_t *data, size_t len) {
    sink_t *s = arg;
    if (s->n >= s->accept || s->n >= 64)
        return -1;
    s->data[s->n] = malloc(len);
    memcpy(s->data[s->n], data, len);
    s->len[s->n] = len;
    s->n++;
    return 0;
}

static void sink_clear(sink_t *s) {
    for (size_t i = 0; i < s->n; i++)
        free(s->data[i]);
    s->n = 0;
}

static events_t *new_events(uint32_t batch_records, size_t ring_batches, int64_t shift) {
    events_options_t opt = {.batch_records = batch_records,
                            .ring_batches = ring_batches,
                            .proto_version = PROTOCOL_VERSION,
                            .clock_shift_ns = shift};
    events_t *ev = events_new(&opt);
    assert_non_null(ev);
    events_begin_run(ev, RUN_ID, 3);
    return ev;
}

/* A streamed request of n chunks 10 ms apart with sub-microsecond jitter. */
static void fill_record(request_record_t *rec, int64_t *chunk_ns, uint16_t *tokens, uint32_t n) {
    const int64_t send = 1000000000000LL, first_token = send + 50000377;
    for (uint32_t i = 0; i < n; i++) {
        chunk_ns[i] = first_token + (int64_t)i * 10000000 + (int64_t)((i * 7919) % 997);
        if (tokens)
            tokens[i] = (uint16_t)(1 + i % 3);
    }
    *rec = (request_record_t){.session = 41,
                              .node = 2,
                              .role = 1,
                              .endpoint = 2,
                              .request_id = 12345,
                              .intended_ns = send - 2500,
                              .send_ns = send,
                              .headers_ns = send + 3000123,
                              .first_token_ns = first_token,
                              .first_content_ns = first_token,
                              .end_ns = chunk_ns[n - 1] + 1234,
                              .http_status = 200,
                              .error = ERROR_NONE,
                              .has_usage = true,
                              .prompt_tokens = 300,
                              .completion_tokens = n,
                              .cached_tokens = 128,
                              .requested_input_tokens = 299,
                              .requested_output_tokens = n,
                              .n_chunks = n,
                              .chunk_ns = chunk_ns,
                              .chunk_tokens = tokens,
                              .reasoning_chunks = 1,
                              .content_chunks = n - 1,
                              .content_bytes = 5 * n,
                              .finish_reason = FINISH_CONTENT_FILTER,
                              .refusal = true,
                              .workload_hash = 0xdeadbeefcafef00dULL,
                              .warmup = true,
                              .session_end = true,
                              .has_phases = true,
                              .connection_reused = true,
                              .tls_version = 13,
                              .tls_resumed = true,
                              .body_hash = 0x0123456789abcdefULL};
    for (int i = 0; i < RECORD_PHASE__COUNT; i++)
        rec->phase_ns[i] = 1000003 * (i + 1);
}

static Stampede__Envelope *only_envelope(sink_t *s) {
    assert_int_equal(s->n, 1);
    Stampede__Envelope *env = stampede__envelope__unpack(NULL, s->len[0], s->data[0]);
    assert_non_null(env);
    assert_int_equal(env->body_case, STAMPEDE__ENVELOPE__BODY_BATCH);
    return env;
}

/* One batch on its way from a worker's events to the controller's ingest. */
typedef struct shipped {
    events_t *ev;
    sink_t sink;
    Stampede__Envelope *env; /* the one envelope sent, unpacked */
    ingest_t *in;
} shipped_t;

/* Adds `copies` of rec to new events (clock shifted by `shift`), seals and sends them as one batch;
 * unpacks it and makes an ingest to read it with. */
static void ship(shipped_t *s, const request_record_t *rec, int copies, int64_t shift) {
    s->ev = new_events(0, 0, shift);
    for (int i = 0; i < copies; i++)
        assert_int_equal(events_add(s->ev, rec), 0);
    assert_int_equal(events_seal(s->ev), 1);
    s->sink = (sink_t){.accept = 64};
    assert_int_equal(events_flush(s->ev, sink_send, &s->sink), 1);
    s->env = only_envelope(&s->sink);
    s->in = ingest_new();
    assert_non_null(s->in);
}

static void shipped_clear(shipped_t *s) {
    ingest_destroy(&s->in);
    stampede__envelope__free_unpacked(s->env, NULL);
    sink_clear(&s->sink);
    events_destroy(&s->ev);
}

static void
test_events_round_trip_keeps_every_field_and_chunk_within_half_a_microsecond(void **st) {
    enum { N = 200 };
    int64_t chunk_ns[N];
    uint16_t tokens[N];
    request_record_t rec;
    fill_record(&rec, chunk_ns, tokens, N);
    strcpy(rec.error_message, "none at all");
    shipped_t s;
    ship(&s, &rec, 1, 0);
    Stampede__Envelope *env = s.env;
    assert_int_equal(env->proto_version, PROTOCOL_VERSION);
    assert_true(env->run_id == RUN_ID);
    assert_int_equal(env->seq, 1);
    assert_int_equal(env->batch->seq, 1);
    assert_int_equal(env->batch->worker_index, 3);
    assert_int_equal(env->batch->n_records, 1);

    request_record_t out;
    assert_int_equal(ingest_record(s.in, env->batch->records[0], 0, 3, &out), 0);
    assert_int_equal(out.session, 41);
    assert_int_equal(out.node, 2);
    assert_int_equal(out.role, 1);
    assert_int_equal(out.endpoint, 2);
    assert_int_equal(out.worker, 3);
    assert_int_equal(out.request_id, 12345);
    assert_true(out.intended_ns == rec.intended_ns);
    assert_true(out.send_ns == rec.send_ns);
    assert_true(out.headers_ns == rec.headers_ns);
    assert_true(out.first_token_ns == rec.first_token_ns);
    assert_true(out.first_content_ns == rec.first_content_ns);
    assert_true(out.end_ns == rec.end_ns);
    assert_int_equal(out.http_status, 200);
    assert_int_equal(out.error, ERROR_NONE);
    assert_string_equal(out.error_message, "none at all");
    assert_true(out.has_usage);
    assert_int_equal(out.prompt_tokens, 300);
    assert_int_equal(out.completion_tokens, N);
    assert_int_equal(out.cached_tokens, 128);
    assert_int_equal(out.requested_input_tokens, 299);
    assert_int_equal(out.requested_output_tokens, N);
    assert_int_equal(out.reasoning_chunks, 1);
    assert_int_equal(out.content_chunks, N - 1);
    assert_int_equal(out.content_bytes, 5 * N);
    assert_int_equal(out.finish_reason, FINISH_CONTENT_FILTER);
    assert_true(out.refusal);
    assert_true(out.workload_hash == 0xdeadbeefcafef00dULL);
    assert_true(out.warmup);
    assert_true(out.session_end);
    assert_true(out.has_phases);
    for (int i = 0; i < RECORD_PHASE__COUNT; i++)
        assert_int_equal(out.phase_ns[i], 1000003 * (i + 1));
    assert_true(out.connection_reused);
    assert_int_equal(out.tls_version, 13);
    assert_true(out.tls_resumed);
    assert_true(out.body_hash == 0x0123456789abcdefULL);
    assert_int_equal(out.n_chunks, N);
    assert_non_null(out.chunk_tokens);
    for (uint32_t i = 0; i < N; i++) {
        int64_t err = out.chunk_ns[i] - chunk_ns[i];
        /* expected: within 500 ns of the truth for every chunk (no accumulated rounding) */
        assert_true(err >= -500 && err <= 500);
        assert_int_equal(out.chunk_tokens[i], tokens[i]);
    }
    shipped_clear(&s);
}

static void test_events_chunk_gaps_cost_about_two_bytes_per_token_and_never_drift(void **st) {
    enum { N = 20000 };
    int64_t *chunk_ns = malloc(N * sizeof *chunk_ns);
    request_record_t rec;
    fill_record(&rec, chunk_ns, NULL, N);
    shipped_t s;
    ship(&s, &rec, 1, 0);
    /* 10 ms gaps are 10000 us: two varint bytes each, plus the fixed fields of the record */
    assert_true(s.sink.len[0] < 2 * N + 200);
    assert_int_equal(s.env->batch->records[0]->n_chunk_tokens, 0); /* all ones: not sent */
    request_record_t out;
    assert_int_equal(ingest_record(s.in, s.env->batch->records[0], 0, 0, &out), 0);
    assert_null(out.chunk_tokens);
    int64_t worst = 0;
    for (uint32_t i = 0; i < N; i++) {
        int64_t err = llabs(out.chunk_ns[i] - chunk_ns[i]);
        worst = err > worst ? err : worst;
    }
    assert_true(worst <= 500); /* expected <= 500 ns even at the 20000th chunk */
    shipped_clear(&s);
    free(chunk_ns);
}

static void test_events_clock_shift_is_undone_by_the_measured_offset(void **st) {
    enum { N = 50 };
    const int64_t shift = 5000000000LL;
    int64_t chunk_ns[N];
    request_record_t rec;
    fill_record(&rec, chunk_ns, NULL, N);
    shipped_t s;
    ship(&s, &rec, 1, shift);
    assert_true(s.env->batch->records[0]->send_ns == rec.send_ns + shift);
    request_record_t out;
    ingest_record(s.in, s.env->batch->records[0], shift, 0, &out);
    assert_true(out.send_ns == rec.send_ns);
    assert_true(out.first_token_ns == rec.first_token_ns);
    assert_true(out.end_ns == rec.end_ns);
    assert_true(out.intended_ns == rec.intended_ns);
    for (uint32_t i = 0; i < N; i++)
        assert_true(llabs(out.chunk_ns[i] - chunk_ns[i]) <= 500);
    shipped_clear(&s);
}

static void test_events_unsent_request_keeps_absolute_times_and_absent_stamps(void **st) {
    const int64_t shift = -7000;
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.intended_ns = 5000000;
    rec.end_ns = 5000900;
    rec.error = ERROR_CONNECT;
    strcpy(rec.error_message, "connect: Connection refused");
    shipped_t s;
    ship(&s, &rec, 1, shift);
    request_record_t out;
    ingest_record(s.in, s.env->batch->records[0], shift, 0, &out);
    assert_int_equal(out.send_ns, 0);
    assert_int_equal(out.headers_ns, 0);
    assert_int_equal(out.first_token_ns, 0);
    assert_true(out.intended_ns == rec.intended_ns);
    assert_true(out.end_ns == rec.end_ns);
    assert_int_equal(out.error, ERROR_CONNECT);
    assert_string_equal(out.error_message, "connect: Connection refused");
    assert_int_equal(out.n_chunks, 0);
    shipped_clear(&s);
}

static void test_events_batch_bytes_equal_what_protobuf_c_packs(void **st) {
    enum { N = 30 };
    int64_t chunk_ns[N];
    uint16_t tokens[N];
    request_record_t rec;
    fill_record(&rec, chunk_ns, tokens, N);
    shipped_t s;
    ship(&s, &rec, 3, 0);
    assert_int_equal(s.env->batch->n_records, 3);
    size_t len = stampede__envelope__get_packed_size(s.env);
    assert_int_equal(len, s.sink.len[0]);
    uint8_t *again = malloc(len);
    stampede__envelope__pack(s.env, again);
    assert_memory_equal(again, s.sink.data[0], len);
    free(again);
    shipped_clear(&s);
}

static uint64_t sent_seq(const sink_t *s, size_t i) {
    Stampede__Envelope *env = stampede__envelope__unpack(NULL, s->len[i], s->data[i]);
    assert_non_null(env);
    uint64_t seq = env->batch->seq;
    assert_int_equal(env->seq, seq);
    stampede__envelope__free_unpacked(env, NULL);
    return seq;
}

static void add_records(events_t *ev, int n) {
    int64_t chunk_ns[4];
    request_record_t rec;
    fill_record(&rec, chunk_ns, NULL, 4);
    for (int i = 0; i < n; i++)
        events_add(ev, &rec);
}

static void test_events_size_limit_seals_and_sequence_has_no_gaps(void **st) {
    events_t *ev = new_events(4, 0, 0);
    add_records(ev, 10); /* 4 + 4 sealed by size, 2 open */
    assert_int_equal(events_last_seq(ev), 2);
    assert_int_equal(events_open_records(ev), 2);
    assert_int_equal(events_seal(ev), 1);
    assert_int_equal(events_seal(ev), 0); /* nothing left to seal */
    assert_int_equal(events_last_seq(ev), 3);
    assert_int_equal(events_records(ev), 10);
    sink_t sink = {.accept = 64};
    assert_int_equal(events_flush(ev, sink_send, &sink), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(sent_seq(&sink, i), i + 1);
    sink_clear(&sink);
    events_destroy(&ev);
}

static void test_events_refused_send_waits_ack_frees_and_rewind_resends_unacked(void **st) {
    events_t *ev = new_events(1, 0, 0);
    add_records(ev, 5); /* five batches of one record */
    assert_int_equal(events_unacked(ev), 5);

    sink_t sink = {.accept = 3};
    assert_int_equal(events_flush(ev, sink_send, &sink), 3);
    events_ack(ev, 2);
    assert_int_equal(events_acked_seq(ev), 2);
    assert_int_equal(events_unacked(ev), 3);
    events_ack(ev, 1); /* stale: ignored */
    assert_int_equal(events_acked_seq(ev), 2);
    assert_int_equal(events_unacked(ev), 3);

    sink_clear(&sink);
    sink.accept = 64;
    assert_int_equal(events_flush(ev, sink_send, &sink), 2);
    assert_int_equal(sent_seq(&sink, 0), 4);
    assert_int_equal(sent_seq(&sink, 1), 5); /* the two refused, and only they */
    assert_int_equal(events_flush(ev, sink_send, &sink), 0);

    events_rewind(ev);
    sink_clear(&sink);
    assert_int_equal(events_flush(ev, sink_send, &sink), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(sent_seq(&sink, i), 3 + i);

    events_ack(ev, 5);
    assert_int_equal(events_unacked(ev), 0);
    assert_int_equal(events_flush(ev, sink_send, &sink), 0); /* nothing left to send */
    events_ack(ev, 99); /* beyond what exists: clamps, frees nothing more */
    assert_int_equal(events_acked_seq(ev), 5);
    sink_clear(&sink);
    events_destroy(&ev);
}

static void test_events_full_ring_holds_the_open_batch_then_drops_and_counts(void **st) {
    events_t *ev = new_events(2, 2, 0);
    add_records(ev, 4); /* two sealed batches fill the ring */
    assert_int_equal(events_unacked(ev), 2);
    add_records(ev, 2); /* the open batch fills up but cannot be sealed */
    assert_int_equal(events_seal(ev), -1);
    assert_int_equal(events_open_records(ev), 2);
    add_records(ev, 3); /* no room anywhere: dropped */
    assert_int_equal(events_dropped(ev), 3);
    events_ack(ev, 1);
    assert_int_equal(events_seal(ev), 1);
    assert_int_equal(events_last_seq(ev), 3);
    assert_int_equal(events_records(ev), 6);
    events_destroy(&ev);
}

static void test_events_new_run_restarts_sequence_and_forgets_batches(void **st) {
    events_t *ev = new_events(1, 0, 0);
    add_records(ev, 3);
    assert_int_equal(events_last_seq(ev), 3);
    events_begin_run(ev, RUN_ID + 1, 0);
    assert_int_equal(events_last_seq(ev), 0);
    assert_int_equal(events_unacked(ev), 0);
    assert_int_equal(events_records(ev), 0);
    add_records(ev, 1);
    sink_t sink = {.accept = 64};
    events_flush(ev, sink_send, &sink);
    Stampede__Envelope *env = only_envelope(&sink);
    assert_true(env->run_id == RUN_ID + 1);
    assert_int_equal(env->batch->seq, 1);
    stampede__envelope__free_unpacked(env, NULL);
    sink_clear(&sink);
    events_destroy(&ev);
}

/* A loopback TCP port nothing listens on. */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    close(fd);
    return ntohs(addr.sin_port);
}

/* Loop 0 starts and keeps trying to reach a controller that is not there; loop 1 cannot start.
 * The worker must stop loop 0 at once and exit 1, rather than run a part of its load. */
static void test_worker_stops_its_started_loops_when_a_loop_cannot_start(void **st) {
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", closed_port());
    char log_path[] = "/tmp/stampede-test-worker-XXXXXX";
    int log = mkstemp(log_path);
    assert_true(log >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(log, STDERR_FILENO);
        failing_caller = pthread_self();
        calls_before_failure = 1;
        char *argv[] = {"worker", "--connect", endpoint, "--threads", "3", "--id", "w", NULL};
        _exit(worker_main(7, argv));
    }
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 200 && done == 0; i++) { /* 10 s */
        done = waitpid(pid, &status, WNOHANG);
        if (done == 0)
            usleep(50000);
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    char text[4096] = "";
    ssize_t n = pread(log, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(log);
    unlink(log_path);
    if (done == 0)
        fail_msg("the worker still ran 10 s after loop 1 could not start; it said:\n%s", text);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    if (!strstr(text, "cannot start loop 1: Resource temporarily unavailable"))
        fail_msg("expected the reason for loop 1 in:\n%s", text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_events_round_trip_keeps_every_field_and_chunk_within_half_a_microsecond),
        cmocka_unit_test(test_events_chunk_gaps_cost_about_two_bytes_per_token_and_never_drift),
        cmocka_unit_test(test_events_clock_shift_is_undone_by_the_measured_offset),
        cmocka_unit_test(test_events_unsent_request_keeps_absolute_times_and_absent_stamps),
        cmocka_unit_test(test_events_batch_bytes_equal_what_protobuf_c_packs),
        cmocka_unit_test(test_events_size_limit_seals_and_sequence_has_no_gaps),
        cmocka_unit_test(test_events_refused_send_waits_ack_frees_and_rewind_resends_unacked),
        cmocka_unit_test(test_events_full_ring_holds_the_open_batch_then_drops_and_counts),
        cmocka_unit_test(test_events_new_run_restarts_sequence_and_forgets_batches),
        cmocka_unit_test(test_worker_stops_its_started_loops_when_a_loop_cannot_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
