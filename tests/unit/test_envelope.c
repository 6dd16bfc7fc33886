/* proto/envelope: one packing for both ends, and unpacking into an arena that allocates blocks,
 * not one malloc per message, and reuses them for the next envelope. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include "envelope.h"

#define N_RECORDS 5000
#define N_CHUNKS 20

/* An envelope of this protocol version around the body `body_case` (the caller points it). */
static Stampede__Envelope envelope_of(Stampede__Envelope__BodyCase body_case) {
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = body_case;
    env.proto_version = PROTOCOL_VERSION;
    return env;
}

/* Bytes as they travel: the caller frees data. */
typedef struct packed {
    uint8_t *data;
    size_t len;
} packed_t;

/* A batch of N_RECORDS records of N_CHUNKS chunks each, packed. */
static packed_t pack_batch(uint64_t seq) {
    Stampede__Record *records = calloc(N_RECORDS, sizeof *records);
    Stampede__Record **ptrs = calloc(N_RECORDS, sizeof *ptrs);
    uint64_t *gaps = calloc(N_RECORDS * N_CHUNKS, sizeof *gaps);
    assert_non_null(records);
    assert_non_null(ptrs);
    assert_non_null(gaps);
    for (size_t i = 0; i < N_RECORDS; i++) {
        stampede__record__init(&records[i]);
        records[i].request_id = seq * 1000000 + i;
        records[i].send_ns = (int64_t)i * 1000;
        records[i].error_message = i % 2 ? "timeout" : "";
        records[i].n_chunk_gap_us = N_CHUNKS;
        records[i].chunk_gap_us = &gaps[i * N_CHUNKS];
        for (size_t c = 0; c < N_CHUNKS; c++)
            gaps[i * N_CHUNKS + c] = i + c;
        ptrs[i] = &records[i];
    }
    Stampede__EventBatch batch = STAMPEDE__EVENT_BATCH__INIT;
    batch.seq = seq;
    batch.n_records = N_RECORDS;
    batch.records = ptrs;
    Stampede__Envelope env = envelope_of(STAMPEDE__ENVELOPE__BODY_BATCH);
    env.batch = &batch;
    packed_t out = {NULL, 0};
    size_t cap = 0;
    out.len = envelope_pack(&env, &out.data, &cap);
    assert_true(out.len > 0);
    free(gaps);
    free(ptrs);
    free(records);
    return out;
}

static void assert_batch(const Stampede__Envelope *env, uint64_t seq) {
    assert_non_null(env);
    assert_int_equal(env->body_case, STAMPEDE__ENVELOPE__BODY_BATCH);
    assert_int_equal(env->batch->seq, seq);
    assert_int_equal(env->batch->n_records, N_RECORDS);
    for (size_t i = 0; i < N_RECORDS; i++) {
        const Stampede__Record *r = env->batch->records[i];
        assert_int_equal(r->request_id, seq * 1000000 + i);
        assert_int_equal(r->send_ns, (int64_t)i * 1000);
        assert_string_equal(r->error_message, i % 2 ? "timeout" : "");
        assert_int_equal(r->n_chunk_gap_us, N_CHUNKS);
        assert_int_equal(r->chunk_gap_us[N_CHUNKS - 1], i + N_CHUNKS - 1);
    }
}

static void test_envelope_large_batch_unpacks_whole_from_a_few_blocks(void **state) {
    packed_t batch = pack_batch(1);
    envelope_arena_t *arena = envelope_arena_new();
    assert_non_null(arena);
    Stampede__Envelope *env = envelope_unpack(arena, batch.data, batch.len);
    assert_batch(env, 1);
    /* protobuf-c asked the arena for every message and array (more than one per record) ... */
    assert_true(envelope_arena_allocations(arena) > N_RECORDS);
    /* ... and the arena asked malloc for a handful of doubling blocks. */
    assert_in_range(envelope_arena_blocks_allocated(arena), 1, 12);
    envelope_arena_destroy(&arena);
    assert_null(arena);
    free(batch.data);
}

static void test_envelope_truncated_bytes_give_null_and_the_arena_still_works(void **state) {
    packed_t batch = pack_batch(3);
    envelope_arena_t *arena = envelope_arena_new();
    assert_null(envelope_unpack(arena, batch.data, batch.len / 2));
    assert_batch(envelope_unpack(arena, batch.data, batch.len), 3);
    envelope_arena_destroy(&arena);
    free(batch.data);
}

static void test_envelope_next_batch_reuses_the_blocks(void **state) {
    packed_t first = pack_batch(1), second = pack_batch(2);
    envelope_arena_t *arena = envelope_arena_new();
    assert_batch(envelope_unpack(arena, first.data, first.len), 1);
    uint64_t blocks = envelope_arena_blocks_allocated(arena);
    for (int i = 0; i < 3; i++)
        assert_batch(envelope_unpack(arena, second.data, second.len), 2);
    assert_int_equal(envelope_arena_blocks_allocated(arena), blocks);
    envelope_arena_destroy(&arena);
    free(first.data);
    free(second.data);
}

static void test_envelope_pack_grows_the_buffer_once(void **state) {
    Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
    hb.state = ENVELOPE_WORKER_RUNNING;
    hb.inflight = 7;
    Stampede__Envelope env = envelope_of(STAMPEDE__ENVELOPE__BODY_HEARTBEAT);
    env.heartbeat = &hb;
    uint8_t *buf = NULL;
    size_t cap = 0;
    size_t len = envelope_pack(&env, &buf, &cap);
    assert_int_equal(len, stampede__envelope__get_packed_size(&env));
    assert_true(cap >= len);
    uint8_t *same = buf;
    assert_int_equal(envelope_pack(&env, &buf, &cap), len);
    assert_ptr_equal(buf, same);
    envelope_arena_t *arena = envelope_arena_new();
    Stampede__Envelope *back = envelope_unpack(arena, buf, len);
    assert_non_null(back);
    assert_int_equal(back->heartbeat->state, ENVELOPE_WORKER_RUNNING);
    assert_int_equal(back->heartbeat->inflight, 7);
    assert_int_equal(back->proto_version, PROTOCOL_VERSION);
    envelope_arena_destroy(&arena);
    free(buf);
}

/* An Envelope{batch} of n empty records written by hand: 2 bytes each on the wire ("1a 00"), a
 * whole Stampede__Record (~250 bytes) each once unpacked. */
static packed_t empty_records_batch(size_t n) {
    size_t inner = 2 * n, at = 0;
    uint8_t *data = malloc(inner + 16);
    assert_non_null(data);
    data[at++] = 0x82; /* Envelope.batch: field 16, length-delimited, as a two-byte varint */
    data[at++] = 0x01;
    for (size_t v = inner;; v >>= 7) {
        data[at++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80)
            break;
    }
    for (size_t i = 0; i < n; i++) {
        data[at++] = (3 << 3) | 2; /* EventBatch.records, empty */
        data[at++] = 0;
    }
    return (packed_t){data, at};
}

/* A batch with an absurd count of records costs ~125 times its size to unpack: the arena's limit
 * refuses it (saying so) instead of growing without bound, and the arena still works after. */
static void test_envelope_arena_limit_refuses_an_absurd_record_count(void **state) {
    packed_t big = empty_records_batch(100000); /* 200 KB on the wire */
    envelope_arena_t *arena = envelope_arena_new();
    Stampede__Envelope *env = envelope_unpack(arena, big.data, big.len);
    assert_non_null(env); /* ~25 MB: within the default limit */
    assert_int_equal(env->batch->n_records, 100000);
    envelope_arena_destroy(&arena);
    arena = envelope_arena_new();
    envelope_arena_set_limit(arena, 4 << 20);
    assert_null(envelope_unpack(arena, big.data, big.len));
    assert_string_equal(envelope_arena_error(arena),
                        "unpacking it needs more memory than the arena's limit");
    uint64_t blocks = envelope_arena_blocks_allocated(arena);
    assert_null(envelope_unpack(arena, big.data, big.len)); /* no new block: the limit is reached */
    assert_int_equal(envelope_arena_blocks_allocated(arena), blocks);
    packed_t small = empty_records_batch(100);
    env = envelope_unpack(arena, small.data, small.len);
    assert_non_null(env);
    assert_int_equal(env->batch->n_records, 100);
    envelope_arena_destroy(&arena);
    free(small.data);
    free(big.data);
}

/* What a worker unpacks from its controller is bounded by the message's length plus a slack: a
 * batch of empty records (no worker expects one) is refused as over, an honest Assign of several
 * MiB (its YAML and trace part are copies of the bytes) unpacks whole, and garbage is refused as
 * not over. */
static void test_envelope_unpack_bounded_refuses_what_costs_more_than_its_length(void **state) {
    packed_t empty = empty_records_batch(100000);
    bool over = false;
    assert_null(
        envelope_unpack_bounded(empty.data, empty.len, empty.len + ENVELOPE_UNPACK_SLACK, &over));
    assert_true(over);
    free(empty.data);

    size_t big = 6 << 20;
    char *yaml = malloc(big + 1);
    uint8_t *part = malloc(big);
    assert_non_null(yaml);
    assert_non_null(part);
    memset(yaml, 'y', big);
    yaml[big] = '\0';
    memset(part, 0xab, big);
    Stampede__Assign assign = STAMPEDE__ASSIGN__INIT;
    assign.config_yaml = yaml;
    assign.trace_part.data = part;
    assign.trace_part.len = big;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ASSIGN;
    env.assign = &assign;
    uint8_t *buf = NULL;
    size_t cap = 0, n = envelope_pack(&env, &buf, &cap);
    assert_true(n > 2 * big);
    Stampede__Envelope *back = envelope_unpack_bounded(buf, n, n + ENVELOPE_UNPACK_SLACK, &over);
    assert_non_null(back);
    assert_false(over);
    assert_int_equal(strlen(back->assign->config_yaml), big);
    assert_int_equal(back->assign->trace_part.len, big);
    assert_memory_equal(back->assign->trace_part.data, part, big);
    envelope_free(back);
    free(buf);
    free(part);
    free(yaml);

    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
    over = true;
    assert_null(envelope_unpack_bounded(garbage, sizeof garbage, 1 << 20, &over));
    assert_false(over);
    envelope_free(NULL);
}

static void test_envelope_garbage_is_refused_as_not_an_envelope(void **state) {
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
    envelope_arena_t *arena = envelope_arena_new();
    assert_null(envelope_unpack(arena, garbage, sizeof garbage));
    assert_string_equal(envelope_arena_error(arena), "it is not a valid protobuf Envelope");
    envelope_arena_destroy(&arena);
}

UNIT_MAIN(cmocka_unit_test(test_envelope_large_batch_unpacks_whole_from_a_few_blocks),
          cmocka_unit_test(test_envelope_next_batch_reuses_the_blocks),
          cmocka_unit_test(test_envelope_truncated_bytes_give_null_and_the_arena_still_works),
          cmocka_unit_test(test_envelope_pack_grows_the_buffer_once),
          cmocka_unit_test(test_envelope_arena_limit_refuses_an_absurd_record_count),
          cmocka_unit_test(test_envelope_unpack_bounded_refuses_what_costs_more_than_its_length),
          cmocka_unit_test(test_envelope_garbage_is_refused_as_not_an_envelope))
