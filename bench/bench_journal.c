/* The controller's write-ahead journal (controller/journal.h): what appending a merged batch to
 * OUT/journal.spool and handing it to the kernel before its Ack costs, against what the
 * controller already spends on the same batch (unpacking it and decoding its records). Batches
 * are real ones, sealed by the worker's own batcher: streamed records of 200 chunks until the
 * 256 KiB size limit seals the batch, and small ones of 16 records (the 50 ms timer's batches at
 * low rates). Prints numbers; never passes or fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "envelope.h"
#include "events.h"
#include "ingest.h"
#include "spool.h"

#define CHUNKS 200
#define BATCHES 400

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct sealed {
    uint8_t *data;
    size_t len;
} sealed_t;

static int keep_first(void *arg, const uint8_t *data, size_t len) {
    sealed_t *s = arg;
    if (s->data)
        return -1;
    s->data = malloc(len);
    memcpy(s->data, data, len);
    s->len = len;
    return 0;
}

/* One sealed batch of n streamed records, as a worker sends it. */
static sealed_t make_batch(uint32_t n) {
    events_options_t opt = {.batch_records = n, .proto_version = PROTOCOL_VERSION};
    events_t *ev = events_new(&opt);
    events_begin_run(ev, 42, 0);
    int64_t chunk_ns[CHUNKS];
    for (uint32_t i = 0; i < n; i++) {
        int64_t send = 1000000000000LL + (int64_t)i * 1000000;
        for (int c = 0; c < CHUNKS; c++)
            chunk_ns[c] = send + 150000000 + (int64_t)c * 20000000 + (c * 7919) % 997;
        request_record_t rec = {.request_id = i,
                                .session = i,
                                .send_ns = send,
                                .intended_ns = send - 20000,
                                .headers_ns = send + 5000000,
                                .first_token_ns = chunk_ns[0],
                                .end_ns = chunk_ns[CHUNKS - 1],
                                .has_usage = true,
                                .prompt_tokens = 512,
                                .completion_tokens = CHUNKS,
                                .n_chunks = CHUNKS,
                                .chunk_ns = chunk_ns};
        events_add(ev, &rec);
    }
    events_seal(ev);
    sealed_t s = {0};
    events_foreach_unacked(ev, keep_first, &s);
    events_destroy(&ev);
    return s;
}

static void count_record(void *arg, request_record_t *rec) {
    (*(uint64_t *)arg) += rec->n_chunks;
}

/* Journals and decodes the first batch sealed from `records` records, BATCHES times each. */
static void bench(const char *what, uint32_t records) {
    sealed_t batch = make_batch(records);
    char path[256], err[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/stampede-bench-journal.%d", dir && *dir ? dir : "/tmp",
             (int)getpid());
    spool_writer_t *w = spool_writer_open(path, err, sizeof err);
    if (!w || !batch.data) {
        fprintf(stderr, "bench_journal: %s\n", w ? "no batch" : err);
        exit(1);
    }
    double t0 = now_s();
    for (int i = 0; i < BATCHES; i++)
        if (spool_write_frame(w, SPOOL_FRAME_BATCH, batch.data, batch.len) != 0 ||
            spool_writer_flush(w) != 0) {
            perror("bench_journal: write");
            exit(1);
        }
    double journal = (now_s() - t0) / BATCHES;
    spool_writer_close(&w);
    unlink(path);

    envelope_arena_t *arena = envelope_arena_new();
    ingest_t *ingest = ingest_new();
    uint64_t chunks = 0;
    size_t in_batch = 0;
    t0 = now_s();
    for (int i = 0; i < BATCHES; i++) {
        Stampede__Envelope *env = envelope_unpack(arena, batch.data, batch.len);
        if (!env || ingest_batch(ingest, env->batch, 0, 0, count_record, &chunks) < 0) {
            fprintf(stderr, "bench_journal: the batch does not decode\n");
            exit(1);
        }
        in_batch = env->batch->n_records;
    }
    double decode = (now_s() - t0) / BATCHES;
    printf("RESULT name=journal batch=%s records=%u bytes=%zu journal_us=%.1f journal_MBps=%.0f "
           "unpack_decode_us=%.1f journal_vs_decode=%.2f\n",
           what, (unsigned)in_batch, batch.len, journal * 1e6, batch.len / journal / 1e6,
           decode * 1e6, journal / decode);
    ingest_destroy(&ingest);
    envelope_arena_destroy(&arena);
    free(batch.data);
}

int main(void) {
    bench("full", 512);
    bench("small", 16);
    return 0;
}
