/* Batch ingest on the controller (controller/figures/ingest.c) from bytes: the first 8 bytes are
 * the worker's clock offset, the rest an envelope unpacked with the arena as the controller does;
 * a batch in it goes through ingest_batch. Either every record reaches the merge or none does
 * (and the refusal says why); a record's chunks are in time order, none before its send; and the
 * same batch ingested again, with the storage reused, gives the same records. */
#include <string.h>

#include "envelope.h"
#include "fuzz.h"
#include "ingest.h"

/* What reached the merge: how many records and a hash of their decoded times. */
typedef struct fuzz_ingest_sink {
    size_t records;
    uint64_t hash;
} fuzz_ingest_sink_t;

static uint64_t fuzz_ingest_mix(uint64_t hash, int64_t v) {
    return (hash ^ (uint64_t)v) * 0x100000001b3ULL;
}

static void fuzz_ingest_record(void *arg, request_record_t *rec) {
    fuzz_ingest_sink_t *sink = arg;
    FUZZ_CHECK(rec->n_chunks == 0 || rec->chunk_ns != NULL);
    for (uint32_t i = 0; i < rec->n_chunks; i++) {
        FUZZ_CHECK(i == 0 || rec->chunk_ns[i] >= rec->chunk_ns[i - 1]);
        FUZZ_CHECK(rec->send_ns == 0 || rec->chunk_ns[i] >= rec->send_ns);
        sink->hash = fuzz_ingest_mix(sink->hash, rec->chunk_ns[i]);
    }
    FUZZ_CHECK(rec->error_message[sizeof rec->error_message - 1] == '\0');
    sink->hash = fuzz_ingest_mix(sink->hash, rec->send_ns);
    sink->hash = fuzz_ingest_mix(sink->hash, rec->end_ns);
    sink->hash = fuzz_ingest_mix(sink->hash, (int64_t)rec->request_id);
    sink->records++;
}

static long fuzz_ingest_batch(ingest_t *ingest, const Stampede__EventBatch *batch, int64_t offset,
                              fuzz_ingest_sink_t *sink) {
    *sink = (fuzz_ingest_sink_t){.hash = 0xcbf29ce484222325ULL};
    long n = ingest_batch(ingest, batch, offset, 3, fuzz_ingest_record, sink);
    if (n >= 0) {
        FUZZ_CHECK((size_t)n == batch->n_records && sink->records == batch->n_records);
    } else {
        FUZZ_CHECK(n == INGEST_REFUSED || n == INGEST_NO_MEMORY);
        FUZZ_CHECK(sink->records == 0);
        FUZZ_CHECK(n != INGEST_REFUSED || ingest_error(ingest)[0] != '\0');
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int64_t offset = 0;
    if (size < sizeof offset)
        return 0;
    memcpy(&offset, data, sizeof offset);
    static envelope_arena_t *arena;
    if (!arena)
        arena = envelope_arena_new(); /* kept across inputs, as the controller keeps it */
    FUZZ_CHECK(arena != NULL);
    Stampede__Envelope *env = envelope_unpack(arena, data + sizeof offset, size - sizeof offset);
    if (!env || env->body_case != STAMPEDE__ENVELOPE__BODY_BATCH || !env->batch)
        return 0;
    ingest_t *ingest = ingest_new();
    FUZZ_CHECK(ingest != NULL);
    fuzz_ingest_sink_t first, again;
    long n = fuzz_ingest_batch(ingest, env->batch, offset, &first);
    FUZZ_CHECK(fuzz_ingest_batch(ingest, env->batch, offset, &again) == n);
    FUZZ_CHECK(first.records == again.records && first.hash == again.hash);
    ingest_destroy(&ingest);
    FUZZ_CHECK(ingest == NULL);
    return 0;
}
