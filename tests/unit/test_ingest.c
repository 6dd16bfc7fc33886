/* The controller's side of event batches, fed what a network can deliver: records whose
 * timestamps overflow 64 bits, truncated and garbage envelopes. Each is refused with a message or
 * decoded, never undefined behaviour (this runs under UBSan without recovery), and a batch reaches
 * the merge whole or not at all, in go-back-N order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"
#include "ingest.h"
#include "registry.h"
#include "stampede.pb-c.h"

#define SEND_NS 5000000000LL /* a worker clock reading: 5 s after its boot */

/* What the merge would have been handed. */
typedef struct sink {
    size_t n;
    uint64_t request_ids[64];
    int64_t end_ns[64];
    uint32_t n_chunks[64];
} sink_t;

static void sink_record(void *arg, request_record_t *rec) {
    sink_t *s = arg;
    if (s->n < 64) {
        s->request_ids[s->n] = rec->request_id;
        s->end_ns[s->n] = rec->end_ns;
        s->n_chunks[s->n] = rec->n_chunks;
    }
    s->n++;
}

/* A plausible record: sent at SEND_NS, ended 100 ms later, three chunks 10 ms apart. */
static void good_record(Stampede__Record *r, uint64_t request_id) {
    static uint64_t gaps[3] = {50000, 10000, 10000};
    *r = (Stampede__Record)STAMPEDE__RECORD__INIT;
    r->request_id = request_id;
    r->send_ns = SEND_NS;
    r->_end_case = STAMPEDE__RECORD___END_END_DELTA_NS;
    r->end_delta_ns = 100000000;
    r->n_chunk_gap_us = 3;
    r->chunk_gap_us = gaps;
}

/* n good records with request ids first_id, first_id + 1, ..., and records[i] pointing at r[i]. */
static void good_records(Stampede__Record *r, Stampede__Record **records, size_t n,
                         uint64_t first_id) {
    for (size_t i = 0; i < n; i++) {
        good_record(&r[i], first_id + i);
        records[i] = &r[i];
    }
}

static Stampede__EventBatch make_batch(Stampede__Record **records, size_t n, uint64_t seq) {
    Stampede__EventBatch b = STAMPEDE__EVENT_BATCH__INIT;
    b.seq = seq;
    b.n_records = n;
    b.records = records;
    return b;
}

/* Ingests r from worker at offset_ns, which must be accepted; returns what it became. */
static request_record_t ingest_ok(ingest_t *in, const Stampede__Record *r, int64_t offset_ns,
                                  uint32_t worker) {
    request_record_t out;
    assert_int_equal(ingest_record(in, r, offset_ns, worker, &out), 0);
    return out;
}

static void test_ingest_good_record_moves_to_the_controller_clock(void **state) {
    ingest_t *in = ingest_new();
    Stampede__Record r;
    good_record(&r, 7);
    request_record_t out = ingest_ok(in, &r, 1000, 2);
    assert_int_equal(out.send_ns, SEND_NS - 1000);
    assert_int_equal(out.end_ns, SEND_NS + 100000000 - 1000);
    assert_int_equal(out.n_chunks, 3);
    assert_int_equal(out.chunk_ns[2], SEND_NS + 70000000 - 1000);
    assert_null(out.chunk_tokens);
    assert_int_equal(out.worker, 2);
    ingest_destroy(&in);
}

/* finish_reason travels as its number; one this controller does not know (a newer worker's)
 * reads as other, and a record without it as none. */
static void test_ingest_finish_reason_unknown_reads_as_other(void **state) {
    ingest_t *in = ingest_new();
    Stampede__Record r;
    good_record(&r, 8);
    request_record_t out = ingest_ok(in, &r, 0, 0);
    assert_int_equal(out.finish_reason, FINISH_NONE);
    assert_false(out.refusal);
    r.finish_reason = FINISH_LENGTH;
    r.refusal = true;
    out = ingest_ok(in, &r, 0, 0);
    assert_int_equal(out.finish_reason, FINISH_LENGTH);
    assert_true(out.refusal);
    r.finish_reason = 99;
    assert_int_equal(ingest_ok(in, &r, 0, 0).finish_reason, FINISH_OTHER);
    ingest_destroy(&in);
}

static void expect_refused(const Stampede__Record *r, int64_t offset_ns, const char *reason) {
    ingest_t *in = ingest_new();
    request_record_t out;
    assert_int_equal(ingest_record(in, r, offset_ns, 0, &out), INGEST_REFUSED);
    if (!strstr(ingest_error(in), reason))
        fail_msg("expected \"%s\" in \"%s\"", reason, ingest_error(in));
    ingest_destroy(&in);
}

static void test_ingest_send_time_minus_offset_overflowing_is_refused(void **state) {
    Stampede__Record r;
    good_record(&r, 1);
    r.send_ns = INT64_MIN + 5;
    expect_refused(&r, 100, "request 1: send time out of range");
    r.send_ns = INT64_MAX - 5;
    expect_refused(&r, -100, "send time out of range");
}

static void test_ingest_deltas_overflowing_are_refused(void **state) {
    Stampede__Record r;
    good_record(&r, 2);
    r.send_ns = INT64_MAX - 10;
    expect_refused(&r, 0, "request 2: end time out of range"); /* base + 100 ms */
    good_record(&r, 3);
    r._headers_case = STAMPEDE__RECORD___HEADERS_HEADERS_DELTA_NS;
    r.headers_delta_ns = INT64_MIN;
    expect_refused(&r, SEND_NS + 1, "headers time out of range");
    good_record(&r, 4);
    r._first_token_case = STAMPEDE__RECORD___FIRST_TOKEN_FIRST_TOKEN_DELTA_NS;
    r.first_token_delta_ns = INT64_MAX;
    expect_refused(&r, 0, "first token time out of range");
    good_record(&r, 5);
    r._first_content_case = STAMPEDE__RECORD___FIRST_CONTENT_FIRST_CONTENT_DELTA_NS;
    r.first_content_delta_ns = INT64_MAX - SEND_NS + 1;
    expect_refused(&r, 0, "first content time out of range");
    good_record(&r, 6);
    r._intended_case = STAMPEDE__RECORD___INTENDED_INTENDED_DELTA_NS;
    r.intended_delta_ns = INT64_MIN + 1;
    expect_refused(&r, SEND_NS + 2, "intended start out of range");
    /* A request never sent carries absolute times: its value minus the offset must fit too. */
    good_record(&r, 7);
    r.send_ns = 0;
    r.end_delta_ns = INT64_MIN + 3;
    r.n_chunk_gap_us = 0;
    expect_refused(&r, 10, "end time out of range");
}

static void test_ingest_chunk_gaps_overflowing_are_refused(void **state) {
    Stampede__Record r;
    good_record(&r, 8);
    uint64_t wrap[2] = {1, UINT64_MAX}; /* the running sum wraps to 0 */
    r.chunk_gap_us = wrap;
    r.n_chunk_gap_us = 2;
    expect_refused(&r, 0, "request 8: chunk 2 of 2 time out of range");
    uint64_t times_1000[1] = {(uint64_t)INT64_MAX / 1000 + 1}; /* us * 1000 > INT64_MAX */
    r.chunk_gap_us = times_1000;
    r.n_chunk_gap_us = 1;
    expect_refused(&r, 0, "chunk 1 of 1 time out of range");
    uint64_t past_end[1] = {(uint64_t)(INT64_MAX - SEND_NS) / 1000 + 1}; /* base + rel */
    r.chunk_gap_us = past_end;
    expect_refused(&r, 0, "chunk 1 of 1 time out of range");
    /* The largest gap that still fits is decoded. */
    uint64_t fits[1] = {(uint64_t)(INT64_MAX - SEND_NS) / 1000};
    r.chunk_gap_us = fits;
    ingest_t *in = ingest_new();
    request_record_t out;
    assert_int_equal(ingest_record(in, &r, 0, 0, &out), 0);
    assert_int_equal(out.chunk_ns[0], SEND_NS + (int64_t)fits[0] * 1000);
    ingest_destroy(&in);
}

static void test_ingest_chunk_token_counts_not_matching_the_chunks_are_refused(void **state) {
    Stampede__Record r;
    good_record(&r, 9);
    uint32_t tokens[2] = {2, 1};
    r.chunk_tokens = tokens;
    r.n_chunk_tokens = 2; /* three chunks */
    expect_refused(&r, 0, "request 9: 2 chunk token counts for 3 chunks");
}

static void test_ingest_http_phases_short_of_the_seven_are_refused(void **state) {
    Stampede__Record r;
    good_record(&r, 9);
    uint64_t phases[3] = {1, 2, 3};
    r.http_phase_ns = phases;
    r.n_http_phase_ns = 3;
    expect_refused(&r, 0, "request 9: 3 HTTP phases, expected 7");
}

/* The bug this guards against: records 1 and 2 merged, record 3 refused, the batch left unacked
 * and resent, records 1 and 2 merged again. */
static void test_ingest_batch_with_one_bad_record_hands_on_none(void **state) {
    Stampede__Record r[3];
    good_record(&r[0], 10);
    good_record(&r[1], 11);
    good_record(&r[2], 12);
    r[2].send_ns = INT64_MAX - 10;
    Stampede__Record *records[3] = {&r[0], &r[1], &r[2]};
    Stampede__EventBatch b = make_batch(records, 3, 1);
    ingest_t *in = ingest_new();
    sink_t sink = {0};
    assert_int_equal(ingest_batch(in, &b, 0, 0, sink_record, &sink), INGEST_REFUSED);
    assert_int_equal(sink.n, 0);
    assert_string_equal(ingest_error(in), "record 3 of 3, request 12: end time out of range");
    r[2].send_ns = SEND_NS;
    assert_int_equal(ingest_batch(in, &b, 0, 0, sink_record, &sink), 3);
    assert_int_equal(sink.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(sink.request_ids[i], 10 + i);
        assert_int_equal(sink.end_ns[i], SEND_NS + 100000000);
        assert_int_equal(sink.n_chunks[i], 3);
    }
    ingest_destroy(&in);
}

/* A worker of the run that has merged up to acked_seq. */
static run_worker_t worker_at(uint64_t acked_seq) {
    run_worker_t w;
    memset(&w, 0, sizeof w);
    w.index = 1;
    w.state = RUN_WORKER_RUNNING;
    w.acked_seq = acked_seq;
    return w;
}

static void test_ingest_go_back_n_merges_each_batch_once_and_in_order(void **state) {
    Stampede__Record r[4];
    Stampede__Record *records[4];
    good_records(r, records, 4, 100);
    Stampede__EventBatch b1 = make_batch(records, 2, 1);
    Stampede__EventBatch b2 = make_batch(records + 2, 1, 2);
    Stampede__EventBatch b3 = make_batch(records + 3, 1, 3);
    run_worker_t w = worker_at(0);
    ingest_t *in = ingest_new();
    sink_t sink = {0};
    assert_int_equal(collect_batch(&w, in, &b2, sink_record, &sink), COLLECT_OUT_OF_ORDER);
    assert_int_equal(collect_batch(&w, in, &b1, sink_record, &sink), COLLECT_MERGED);
    assert_int_equal(w.acked_seq, 1);
    assert_int_equal(w.ingested, 2);
    /* resent after a reconnect: acked again, merged never again */
    assert_int_equal(collect_batch(&w, in, &b1, sink_record, &sink), COLLECT_OUT_OF_ORDER);
    /* past a gap (batch 2 lost): waits for the resend of 2 */
    assert_int_equal(collect_batch(&w, in, &b3, sink_record, &sink), COLLECT_OUT_OF_ORDER);
    assert_int_equal(w.acked_seq, 1);
    assert_int_equal(collect_batch(&w, in, &b2, sink_record, &sink), COLLECT_MERGED);
    assert_int_equal(collect_batch(&w, in, &b3, sink_record, &sink), COLLECT_MERGED);
    assert_int_equal(w.acked_seq, 3);
    assert_int_equal(w.ingested, 4);
    assert_int_equal(sink.n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(sink.request_ids[i], 100 + i);
    ingest_destroy(&in);
}

static void test_ingest_go_back_n_skips_a_refused_batch_without_merging_any_of_it(void **state) {
    Stampede__Record r[3];
    Stampede__Record *records[3];
    good_records(r, records, 3, 200);
    uint64_t wrap[2] = {UINT64_MAX, 1};
    r[1].chunk_gap_us = wrap;
    r[1].n_chunk_gap_us = 2;
    Stampede__EventBatch bad = make_batch(records, 2, 5);
    Stampede__EventBatch next = make_batch(records + 2, 1, 6);
    run_worker_t w = worker_at(4);
    w.ingested = 40;
    ingest_t *in = ingest_new();
    sink_t sink = {0};
    /* The same bytes would be refused again: the sequence moves past them, nothing merged. */
    assert_int_equal(collect_batch(&w, in, &bad, sink_record, &sink), COLLECT_REFUSED);
    assert_int_equal(sink.n, 0);
    assert_int_equal(w.acked_seq, 5);
    assert_int_equal(w.ingested, 40);
    assert_non_null(strstr(ingest_error(in), "record 2 of 2, request 201"));
    assert_int_equal(collect_batch(&w, in, &bad, sink_record, &sink), COLLECT_OUT_OF_ORDER);
    assert_int_equal(collect_batch(&w, in, &next, sink_record, &sink), COLLECT_MERGED);
    assert_int_equal(sink.n, 1);
    assert_int_equal(sink.request_ids[0], 202);
    assert_int_equal(w.ingested, 41);
    ingest_destroy(&in);
}

/* Bytes off the data socket, as collect_data takes them. Returns how many records reached the
 * sink; an envelope that does not unpack, or holds no batch, gives 0. */
static size_t feed_bytes(const uint8_t *data, size_t len, int *outcome) {
    *outcome = -1;
    Stampede__Envelope *env = stampede__envelope__unpack(NULL, len, data);
    if (!env)
        return 0;
    sink_t sink = {0};
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_BATCH && env->batch->seq > 0) {
        run_worker_t w = worker_at(env->batch->seq - 1);
        ingest_t *in = ingest_new();
        *outcome = (int)collect_batch(&w, in, env->batch, sink_record, &sink);
        if (*outcome == COLLECT_REFUSED)
            assert_int_equal(sink.n, 0);
        if (*outcome == COLLECT_MERGED)
            assert_int_equal(sink.n, env->batch->n_records);
        ingest_destroy(&in);
    }
    stampede__envelope__free_unpacked(env, NULL);
    return sink.n;
}

/* A packed envelope with a batch of three good records; the caller frees it. */
static uint8_t *packed_batch(size_t *len) {
    static Stampede__Record r[3];
    static Stampede__Record *records[3];
    good_records(r, records, 3, 300);
    for (int i = 0; i < 3; i++) {
        r[i]._first_token_case = STAMPEDE__RECORD___FIRST_TOKEN_FIRST_TOKEN_DELTA_NS;
        r[i].first_token_delta_ns = 50000000;
    }
    static Stampede__EventBatch b;
    b = make_batch(records, 3, 1);
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.proto_version = 1;
    env.run_id = 42;
    env.seq = 1;
    env.body_case = STAMPEDE__ENVELOPE__BODY_BATCH;
    env.batch = &b;
    *len = stampede__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(*len);
    assert_int_equal(stampede__envelope__pack(&env, buf), *len);
    return buf;
}

static void test_ingest_truncated_envelopes_merge_nothing(void **state) {
    size_t len;
    uint8_t *buf = packed_batch(&len);
    int outcome;
    assert_int_equal(feed_bytes(buf, len, &outcome), 3);
    assert_int_equal(outcome, COLLECT_MERGED);
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *part = malloc(cut ? cut : 1); /* its own allocation: ASan sees a read past it */
        memcpy(part, buf, cut);
        size_t merged = feed_bytes(part, cut, &outcome);
        if (merged != 0)
            fail_msg("%zu of %zu bytes merged %zu records", cut, len, merged);
        free(part);
    }
    free(buf);
}

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Any 64-bit value, biased towards the edges where arithmetic overflows. */
static uint64_t edgy(uint64_t *seed) {
    uint64_t v = xorshift(seed);
    switch (v % 4) {
    case 0:
        return (uint64_t)INT64_MAX - xorshift(seed) % 1000000;
    case 1:
        return (uint64_t)INT64_MIN + xorshift(seed) % 1000000;
    case 2:
        return xorshift(seed) % 10000000000ULL;
    default:
        return xorshift(seed);
    }
}

/* An envelope whose one record holds random timestamps and gaps, packed by protobuf-c. */
static uint8_t *packed_random_record(uint64_t *seed, size_t *len) {
    uint64_t gaps[4];
    for (int i = 0; i < 4; i++)
        gaps[i] = edgy(seed);
    Stampede__Record r = STAMPEDE__RECORD__INIT;
    r.request_id = 1;
    r.send_ns = (int64_t)edgy(seed);
    r._headers_case = STAMPEDE__RECORD___HEADERS_HEADERS_DELTA_NS;
    r.headers_delta_ns = (int64_t)edgy(seed);
    r._end_case = STAMPEDE__RECORD___END_END_DELTA_NS;
    r.end_delta_ns = (int64_t)edgy(seed);
    r.n_chunk_gap_us = xorshift(seed) % 5;
    r.chunk_gap_us = gaps;
    Stampede__Record *records[1] = {&r};
    Stampede__EventBatch b = make_batch(records, 1, 1);
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_BATCH;
    env.batch = &b;
    *len = stampede__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(*len);
    stampede__envelope__pack(&env, buf);
    return buf;
}

/* Random bytes, a good envelope with a few bytes changed, and records of random times: each is
 * refused or decoded whole, never undefined behaviour or a partial merge. */
static void test_ingest_garbage_and_corrupted_envelopes_are_refused_or_decoded(void **state) {
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    size_t good_len;
    uint8_t *good = packed_batch(&good_len);
    int decoded = 0, refused = 0;
    for (int round = 0; round < 30000; round++) {
        size_t n;
        uint8_t *buf;
        if (round % 3 == 0) {
            n = 1 + xorshift(&seed) % 300;
            buf = malloc(n);
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)xorshift(&seed);
        } else if (round % 3 == 1) {
            n = good_len;
            buf = malloc(n);
            memcpy(buf, good, n);
            for (int k = 0; k < 1 + (int)(xorshift(&seed) % 4); k++)
                buf[xorshift(&seed) % n] = (uint8_t)xorshift(&seed);
        } else {
            buf = packed_random_record(&seed, &n);
        }
        int outcome;
        feed_bytes(buf, n, &outcome);
        decoded += outcome == COLLECT_MERGED;
        refused += outcome == COLLECT_REFUSED;
        assert_true(outcome != COLLECT_NO_MEMORY);
        free(buf);
    }
    /* Both ways out were taken many times (10,000 rounds of each kind). */
    if (decoded < 1000 || refused < 1000)
        fail_msg("%d decoded, %d refused", decoded, refused);
    free(good);
}

/* A batch claiming more records than a worker ever sends is refused whole before any record is
 * decoded, with a message the controller logs against the worker. */
static void test_ingest_batch_with_an_absurd_record_count_is_refused(void **state) {
    Stampede__Record r;
    good_record(&r, 40);
    size_t n = INGEST_MAX_RECORDS + 1;
    Stampede__Record **records = malloc(n * sizeof *records);
    assert_non_null(records);
    for (size_t i = 0; i < n; i++)
        records[i] = &r;
    Stampede__EventBatch b = make_batch(records, n, 1);
    ingest_t *in = ingest_new();
    sink_t sink = {0};
    assert_int_equal(ingest_batch(in, &b, 0, 0, sink_record, &sink), INGEST_REFUSED);
    assert_int_equal(sink.n, 0);
    assert_string_equal(ingest_error(in),
                        "65537 records in one batch, more than the 65536 a worker ever sends");
    b.n_records = INGEST_MAX_RECORDS; /* the limit itself is merged */
    assert_int_equal(ingest_batch(in, &b, 0, 0, sink_record, &sink), INGEST_MAX_RECORDS);
    assert_int_equal(sink.n, INGEST_MAX_RECORDS);
    ingest_destroy(&in);
    free(records);
}

/* The log line of an undecodable message names the peer: its worker name once registered, else
 * its routing id; after the first few, only every 1000th is logged. */
static void test_ingest_undecodable_message_names_its_peer(void **state) {
    registry_worker_t w;
    memset(&w, 0, sizeof w);
    run_worker_init(&w.run, "host-a-42.0", 0);
    char peer[160];
    static const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    registry_peer_name(&w, id, 4, peer, sizeof peer);
    assert_string_equal(peer, "worker host-a-42.0");
    registry_peer_name(NULL, id, 4, peer, sizeof peer);
    assert_string_equal(peer, "unregistered peer with routing id 0xdeadbeef");
    registry_peer_name(NULL, id, sizeof id, peer, sizeof peer);
    assert_string_equal(peer,
                        "unregistered peer with routing id 0xdeadbeef0102030405060708090a0b0c...");
    for (uint64_t k = 1; k <= MEASUREMENT_LOGGED_FIRST; k++)
        assert_true(measurement_logged(k));
    assert_false(measurement_logged(MEASUREMENT_LOGGED_FIRST + 1));
    assert_false(measurement_logged(999));
    assert_true(measurement_logged(1000));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ingest_good_record_moves_to_the_controller_clock),
        cmocka_unit_test(test_ingest_finish_reason_unknown_reads_as_other),
        cmocka_unit_test(test_ingest_send_time_minus_offset_overflowing_is_refused),
        cmocka_unit_test(test_ingest_deltas_overflowing_are_refused),
        cmocka_unit_test(test_ingest_chunk_gaps_overflowing_are_refused),
        cmocka_unit_test(test_ingest_chunk_token_counts_not_matching_the_chunks_are_refused),
        cmocka_unit_test(test_ingest_http_phases_short_of_the_seven_are_refused),
        cmocka_unit_test(test_ingest_batch_with_one_bad_record_hands_on_none),
        cmocka_unit_test(test_ingest_go_back_n_merges_each_batch_once_and_in_order),
        cmocka_unit_test(test_ingest_go_back_n_skips_a_refused_batch_without_merging_any_of_it),
        cmocka_unit_test(test_ingest_truncated_envelopes_merge_nothing),
        cmocka_unit_test(test_ingest_garbage_and_corrupted_envelopes_are_refused_or_decoded),
        cmocka_unit_test(test_ingest_batch_with_an_absurd_record_count_is_refused),
        cmocka_unit_test(test_ingest_undecodable_message_names_its_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
