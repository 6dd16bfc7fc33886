/* Writes the binary seeds of the fuzz corpus (tests/fuzz/corpus/{histogram,ingest,envelope}) from
 * the real encoders, so the seeds are what a worker sends: run `fuzz_make_corpus tests/fuzz/corpus`
 * from the source tree after a wire format changes, and check the files in. The text seeds (SSE,
 * chunks, HTTP, YAML) are checked in as written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "envelope.h"
#include "histogram.h"
#include "plan.h"
#include "trace_wire.h"

/* Writes bytes to DIR/SUB/NAME; exits on failure (a tool, not a library). */
static void make_corpus_write(const char *dir, const char *sub, const char *name,
                              const void *prefix, size_t prefix_len, const void *bytes,
                              size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(prefix, 1, prefix_len, f) != prefix_len || fwrite(bytes, 1, len, f) != len ||
        fclose(f) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(1);
    }
}

/* A histogram seed: mode byte 0 (decode), then the wire form without its checksum (the target
 * appends it). */
static void make_corpus_histogram(const char *dir, const char *name, const histogram_t *h) {
    size_t len = histogram_serialized_size(h);
    uint8_t *wire = malloc(len);
    if (!wire || histogram_write(h, wire, len) != len)
        exit(1);
    uint8_t mode = 0;
    make_corpus_write(dir, "histogram", name, &mode, 1, wire, len - 4);
    free(wire);
}

static void make_corpus_histograms(const char *dir) {
    histogram_t *h = histogram_new();
    make_corpus_histogram(dir, "empty", h);
    histogram_record(h, 1234567);
    make_corpus_histogram(dir, "one_value", h);
    uint64_t v = 1000;
    for (int i = 0; i < 200; i++, v = v * 21 / 20 + 7)
        histogram_record_n(h, v, (uint64_t)(i % 5 + 1));
    make_corpus_histogram(dir, "spread", h);
    histogram_record(h, HISTOGRAM_MAX_NS * 3); /* clamped into the top bucket */
    make_corpus_histogram(dir, "clamped", h);
    histogram_destroy(&h);
}

/* Packs env and writes it, after prefix (the ingest target's clock offset). */
static void make_corpus_envelope(const char *dir, const char *sub, const char *name,
                                 const void *prefix, size_t prefix_len, Stampede__Envelope *env) {
    uint8_t *buf = NULL;
    size_t cap = 0, len = envelope_pack(env, &buf, &cap);
    if (len == 0)
        exit(1);
    make_corpus_write(dir, sub, name, prefix, prefix_len, buf, len);
    free(buf);
}

/* A record as a worker sends one: sent, headers, first token, ended; chunks 10 ms apart. */
static void make_corpus_record(Stampede__Record *r, uint64_t id, uint64_t *gaps, uint32_t *tokens,
                               size_t chunks, uint64_t *phases) {
    *r = (Stampede__Record)STAMPEDE__RECORD__INIT;
    r->session = id / 3;
    r->node = (uint32_t)(id % 3);
    r->request_id = id;
    r->send_ns = 5000000000LL + (int64_t)id * 1000000;
    r->_intended_case = STAMPEDE__RECORD___INTENDED_INTENDED_DELTA_NS;
    r->intended_delta_ns = -20000;
    r->_headers_case = STAMPEDE__RECORD___HEADERS_HEADERS_DELTA_NS;
    r->headers_delta_ns = 3000000;
    r->_first_token_case = STAMPEDE__RECORD___FIRST_TOKEN_FIRST_TOKEN_DELTA_NS;
    r->first_token_delta_ns = 40000000;
    r->_first_content_case = STAMPEDE__RECORD___FIRST_CONTENT_FIRST_CONTENT_DELTA_NS;
    r->first_content_delta_ns = 40000000;
    r->_end_case = STAMPEDE__RECORD___END_END_DELTA_NS;
    r->end_delta_ns = 40000000 + (int64_t)chunks * 10000000;
    r->http_status = 200;
    r->has_usage = 1;
    r->prompt_tokens = 512;
    r->completion_tokens = (uint32_t)chunks + 1;
    r->cached_tokens = 256;
    r->requested_input_tokens = 512;
    r->requested_output_tokens = (uint32_t)chunks + 1;
    r->n_chunk_gap_us = chunks;
    r->chunk_gap_us = gaps;
    r->n_chunk_tokens = tokens ? chunks : 0;
    r->chunk_tokens = tokens;
    r->content_chunks = (uint32_t)chunks;
    r->content_bytes = chunks * 4;
    r->workload_hash = 0x1234abcd5678ef01ULL;
    r->n_http_phase_ns = phases ? 7 : 0;
    r->http_phase_ns = phases;
    r->connection_reused = id % 2;
}

static void make_corpus_batches(const char *dir) {
    static uint64_t gaps[8] = {40000, 10000, 10000, 10000, 10000, 10000, 10000, 10000};
    static uint32_t tokens[8] = {1, 2, 1, 1, 3, 1, 1, 1};
    static uint64_t phases[7] = {1000, 20000, 80000, 0, 15000, 3000000, 70000000};
    Stampede__Record r[4];
    make_corpus_record(&r[0], 30, gaps, NULL, 8, phases);
    make_corpus_record(&r[1], 31, gaps, tokens, 8, NULL);
    make_corpus_record(&r[2], 32, gaps, NULL, 0, NULL);
    r[2].http_status = 503;
    r[2].error = STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_5XX;
    r[2].error_message = "HTTP 503: Service Unavailable";
    r[2].has_usage = 0;
    make_corpus_record(&r[3], 33, gaps, NULL, 3, NULL);
    r[3].session_end = 1;
    r[3].warmup = 1;
    Stampede__Record *records[4] = {&r[0], &r[1], &r[2], &r[3]};
    Stampede__EventBatch batch = STAMPEDE__EVENT_BATCH__INIT;
    batch.seq = 7;
    batch.worker_index = 1;
    batch.n_records = 4;
    batch.records = records;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.proto_version = PROTOCOL_VERSION;
    env.run_id = 0x5eed;
    env.seq = 7;
    env.body_case = STAMPEDE__ENVELOPE__BODY_BATCH;
    env.batch = &batch;
    int64_t offsets[3] = {0, -250000, 1500000000};
    make_corpus_envelope(dir, "ingest", "batch_offset_0", &offsets[0], 8, &env);
    make_corpus_envelope(dir, "ingest", "batch_worker_behind", &offsets[1], 8, &env);
    make_corpus_envelope(dir, "ingest", "batch_worker_ahead", &offsets[2], 8, &env);
    make_corpus_envelope(dir, "envelope", "batch", NULL, 0, &env);
    r[1].send_ns = INT64_MAX - 10; /* refused: its end does not fit */
    make_corpus_envelope(dir, "ingest", "batch_refused_overflow", &offsets[0], 8, &env);
    batch.n_records = 1;
    make_corpus_envelope(dir, "ingest", "batch_one_record", &offsets[0], 8, &env);
}

static void make_corpus_control(const char *dir) {
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.proto_version = PROTOCOL_VERSION;
    Stampede__Hello hello = STAMPEDE__HELLO__INIT;
    hello.proto_version = PROTOCOL_VERSION;
    hello.name = "host-a-4242.0";
    hello.host = "host-a";
    hello.pid = 4242;
    hello.threads = 2;
    hello.capacity = 4096;
    hello.version = "0.1.0";
    env.body_case = STAMPEDE__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    make_corpus_envelope(dir, "envelope", "hello", NULL, 0, &env);
    Stampede__Assign assign = STAMPEDE__ASSIGN__INIT;
    assign.config_yaml = "seed: 7\ntarget:\n  endpoints: [http://127.0.0.1:8000]\n"
                         "workload:\n  kind: chat\n  turns: 3\nscheduler:\n  concurrency: 8\n";
    assign.worker_index = 1;
    assign.worker_count = 2;
    assign.concurrency = 4;
    assign.offset_ns = -12345;
    assign.rtt_ns = 80000;
    env.run_id = 0x5eed;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ASSIGN;
    env.assign = &assign;
    make_corpus_envelope(dir, "envelope", "assign", NULL, 0, &env);
    Stampede__Heartbeat heartbeat = STAMPEDE__HEARTBEAT__INIT;
    heartbeat.sent_ns = 9000000000LL;
    heartbeat.inflight = 64;
    heartbeat.requests_done = 1000;
    heartbeat.unacked = 2;
    heartbeat.state = ENVELOPE_WORKER_RUNNING;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &heartbeat;
    make_corpus_envelope(dir, "envelope", "heartbeat", NULL, 0, &env);
    Stampede__Stop stop = STAMPEDE__STOP__INIT;
    stop.reason = "run complete";
    stop.cancel = 1;
    env.body_case = STAMPEDE__ENVELOPE__BODY_STOP;
    env.stop = &stop;
    make_corpus_envelope(dir, "envelope", "stop", NULL, 0, &env);
    Stampede__WorkerStats stats = STAMPEDE__WORKER_STATS__INIT;
    stats.sse_events = 5000;
    stats.loop_cpu_ns = 123456789;
    Stampede__Done done = STAMPEDE__DONE__INIT;
    done.last_seq = 7;
    done.records = 1000;
    done.stats = &stats;
    env.body_case = STAMPEDE__ENVELOPE__BODY_DONE;
    env.done = &done;
    make_corpus_envelope(dir, "envelope", "done", NULL, 0, &env);
    Stampede__Ack ack = STAMPEDE__ACK__INIT;
    ack.up_to_seq = 7;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    make_corpus_envelope(dir, "envelope", "ack", NULL, 0, &env);
}

/* Worker parts of two replay traces, as the controller encodes them for Assign.trace_part: the
 * Mooncake example (one-request sessions with hash ids) and a small session trace with a diamond,
 * each split over two workers. */
static void make_corpus_trace(const char *dir, const char *name, const char *yaml) {
    config_t cfg;
    config_error_t err;
    if (config_load_string(&cfg, yaml, strlen(yaml), name, &err) != 0 ||
        config_trace_load(&cfg, &err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err.message);
        exit(1);
    }
    for (uint32_t w = 0; w < 2; w++) {
        plan_share_t share;
        buffer_t part;
        buffer_init(&part);
        char file[128];
        if (plan_share_for(&cfg, 2, w, &share) != 0 ||
            trace_wire_encode(&cfg, &share, &part) != 0) {
            fprintf(stderr, "%s: cannot encode worker %u's part\n", name, (unsigned)w);
            exit(1);
        }
        snprintf(file, sizeof file, "%s-worker%u", name, (unsigned)w);
        make_corpus_write(dir, "trace_wire", file, "", 0, part.data, part.len);
        buffer_clear(&part);
    }
    config_free(&cfg);
}

static void make_corpus_traces(const char *dir) {
    make_corpus_trace(dir, "mooncake",
                      "target: {endpoints: [http://127.0.0.1:9]}\n"
                      "workload: {kind: trace, trace: {path: examples/traces/mooncake-small.jsonl,"
                      " format: mooncake}}\n"
                      "scheduler: {kind: rate}\n");
    make_corpus_trace(dir, "diamond",
                      "target: {endpoints: [http://127.0.0.1:9]}\n"
                      "workload: {kind: trace, trace: {path: tests/fuzz/trace_wire_seed.jsonl}}\n"
                      "scheduler: {kind: concurrent, concurrency: 2}\n");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
        return 2;
    }
    make_corpus_histograms(argv[1]);
    make_corpus_batches(argv[1]);
    make_corpus_control(argv[1]);
    make_corpus_traces(argv[1]);
    return 0;
}
