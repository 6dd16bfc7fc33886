/* The simulated engine on virtual time: step durations, queueing at max_num_seqs, chunked
 * prefill, prefix-cache hits, preemption when the KV pool runs out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdlib.h>
#include <string.h>

#include "mock_engine.h"
#include "mock_prefix_cache.h"

#define MS 1000000LL

typedef struct token_log {
    int64_t at[8][512]; /* token times per sequence index */
    uint32_t n[8];
    mock_seq_t *seqs;
} token_log_t;

static void record_token(mock_seq_t *seq, int64_t now_ns, void *arg) {
    token_log_t *log = arg;
    size_t i = (size_t)(seq - log->seqs);
    log->at[i][log->n[i]++] = now_ns;
}

/* Runs steps from t = 0 until the engine is idle; returns the end time. */
static int64_t run_until_idle(mock_engine_t *engine, token_log_t *log, int64_t now) {
    for (int steps = 0; steps < 100000 && mock_engine_has_work(engine); steps++) {
        int64_t d = mock_engine_step_begin(engine, now);
        assert_true(d > 0);
        now += d;
        mock_engine_step_end(engine, now, record_token, log);
    }
    assert_false(mock_engine_has_work(engine));
    return now;
}

static mock_engine_config_t base_config(void) {
    mock_engine_config_t c = {
        .max_num_seqs = 8,
        .max_num_batched_tokens = 8192,
        .kv_cache_tokens = 65536,
        .prefix_cache_tokens = 65536,
        .tpot_base_ms = 10,
        .alpha = 0,
        .prefill_tokens_per_s = 1000,
    };
    return c;
}

static uint64_t ids_buf[8][4096], hash_buf[8][256];

/* Token ids i + salt, hashed into blocks for the sequence, in buffer slot `slot` (one slot per
 * sequence alive at once). */
static void make_seq(mock_seq_t *seq, int slot, uint32_t prompt, uint32_t output, uint64_t salt) {
    uint64_t *ids = ids_buf[slot];
    memset(seq, 0, sizeof(*seq));
    for (uint32_t i = 0; i < prompt + output; i++)
        ids[i] = i + salt;
    seq->block_hashes = hash_buf[slot];
    seq->n_block_hashes = mock_prefix_cache_hash_blocks(ids, prompt + output, hash_buf[slot]);
    seq->prompt_tokens = prompt;
    seq->output_tokens = output;
}

/* n sequences of the same size added at t = 0, sequence i salted with i * salt_step. */
static void add_seqs(mock_engine_t *e, mock_seq_t *seqs, int n, uint32_t prompt, uint32_t output,
                     uint64_t salt_step) {
    for (int i = 0; i < n; i++) {
        make_seq(&seqs[i], i, prompt, output, salt_step * (uint64_t)i);
        mock_engine_add(e, &seqs[i], 0);
    }
}

static void test_mock_engine_first_token_ends_the_prefill_step(void **state) {
    mock_engine_config_t c = base_config();
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[1];
    token_log_t log = {.seqs = seqs};
    make_seq(&seqs[0], 0, 100, 3, 0);
    assert_int_equal(mock_engine_add(e, &seqs[0], 0), 0);
    run_until_idle(e, &log, 0);
    assert_int_equal(log.n[0], 3);
    /* 10 ms + 100 tokens at 1000/s = 110 ms, then one 10 ms step per token. */
    assert_int_equal(log.at[0][0], 110 * MS);
    assert_int_equal(log.at[0][1], 120 * MS);
    assert_int_equal(log.at[0][2], 130 * MS);
    assert_int_equal(seqs[0].state, MOCK_SEQ_FINISHED);
    mock_engine_destroy(&e);
    assert_null(e);
}

static void test_mock_engine_step_time_is_base_times_running_to_alpha(void **state) {
    mock_engine_config_t c = base_config();
    c.alpha = 0.5;
    c.prefill_tokens_per_s = 0;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[4];
    add_seqs(e, seqs, 4, 8, 5, 1000);
    int64_t d = mock_engine_step_begin(e, 0);
    assert_int_equal(d, 20 * MS); /* 10 ms x 4^0.5 */
    mock_engine_destroy(&e);
}

static void test_mock_engine_requests_beyond_max_num_seqs_wait(void **state) {
    mock_engine_config_t c = base_config();
    c.max_num_seqs = 2;
    c.prefill_tokens_per_s = 0;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[3];
    token_log_t log = {.seqs = seqs};
    add_seqs(e, seqs, 3, 8, 4, 100);
    run_until_idle(e, &log, 0);
    /* Two run together (4 steps of 10 ms); the third starts when they are done. */
    assert_int_equal(log.at[0][3], 40 * MS);
    assert_int_equal(log.at[1][3], 40 * MS);
    assert_int_equal(log.at[2][0], 50 * MS);
    assert_int_equal(seqs[2].first_scheduled_ns, 40 * MS);
    mock_engine_destroy(&e);
}

static void test_mock_engine_chunked_prefill_stays_within_the_token_budget(void **state) {
    mock_engine_config_t c = base_config();
    c.max_num_batched_tokens = 64;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[1];
    token_log_t log = {.seqs = seqs};
    make_seq(&seqs[0], 0, 200, 2, 0);
    mock_engine_add(e, &seqs[0], 0);
    int64_t now = 0;
    uint32_t chunks[] = {64, 64, 64, 8};
    for (int i = 0; i < 4; i++) {
        int64_t d = mock_engine_step_begin(e, now);
        assert_int_equal(seqs[0].step_tokens, chunks[i]);
        assert_int_equal(d, 10 * MS + chunks[i] * MS); /* 1 ms per token at 1000/s */
        now += d;
        mock_engine_step_end(e, now, record_token, &log);
        assert_int_equal(log.n[0], i == 3 ? 1 : 0);
    }
    mock_engine_destroy(&e);
}

/* Two identical sequences of 64 + 2 tokens: the first runs to its end, then the second is added;
 * returns the time it was added. */
static int64_t run_one_then_add_its_twin(mock_engine_t *e, mock_seq_t seqs[2], token_log_t *log) {
    make_seq(&seqs[0], 0, 64, 2, 7);
    make_seq(&seqs[1], 1, 64, 2, 7);
    mock_engine_add(e, &seqs[0], 0);
    int64_t now = run_until_idle(e, log, 0);
    mock_engine_add(e, &seqs[1], now);
    return now;
}

static void test_mock_engine_prefix_hit_skips_prefill_but_the_last_token(void **state) {
    mock_engine_config_t c = base_config();
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[2];
    token_log_t log = {.seqs = seqs};
    int64_t now = run_one_then_add_its_twin(e, seqs, &log);
    assert_int_equal(seqs[0].cached_tokens, 0);
    int64_t d = mock_engine_step_begin(e, now);
    /* 3 of 4 blocks hit (a full hit would leave nothing to compute): 16 tokens prefilled. */
    assert_int_equal(seqs[1].cached_tokens, 48);
    assert_int_equal(d, 10 * MS + 16 * MS);
    mock_engine_step_end(e, now + d, record_token, &log);
    mock_engine_stats_t st;
    mock_engine_get_stats(e, &st);
    assert_int_equal(st.prefix_queries, 128);
    assert_int_equal(st.prefix_hits, 48);
    mock_engine_destroy(&e);
}

static void test_mock_engine_without_prefix_cache_never_hits(void **state) {
    mock_engine_config_t c = base_config();
    c.prefix_cache_tokens = 0;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[2];
    token_log_t log = {.seqs = seqs};
    int64_t now = run_one_then_add_its_twin(e, seqs, &log);
    run_until_idle(e, &log, now);
    assert_int_equal(seqs[1].cached_tokens, 0);
    mock_engine_destroy(&e);
}

static void test_mock_engine_preempts_the_newest_when_blocks_run_out(void **state) {
    mock_engine_config_t c = base_config();
    c.kv_cache_tokens = 96; /* 6 blocks */
    c.prefix_cache_tokens = 0;
    c.prefill_tokens_per_s = 0;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[2];
    token_log_t log = {.seqs = seqs};
    /* Each needs 4 blocks at its longest (16 + 48 tokens): both cannot grow at once. */
    make_seq(&seqs[0], 0, 16, 48, 0);
    make_seq(&seqs[1], 1, 16, 48, 500);
    mock_engine_add(e, &seqs[0], 0);
    mock_engine_add(e, &seqs[1], 0);
    run_until_idle(e, &log, 0);
    mock_engine_stats_t st;
    mock_engine_get_stats(e, &st);
    assert_true(st.preemptions >= 1);
    assert_int_equal(seqs[0].preemptions, 0); /* the oldest keeps running */
    assert_true(seqs[1].preemptions >= 1);
    assert_int_equal(log.n[0], 48);
    assert_int_equal(log.n[1], 48); /* a preempted sequence still delivers every token once */
    assert_true(log.at[1][47] > log.at[0][47]);
    assert_true(st.kv_usage == 0.0);
    mock_engine_destroy(&e);
}

static void test_mock_engine_abort_frees_the_blocks(void **state) {
    mock_engine_config_t c = base_config();
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[2];
    make_seq(&seqs[0], 0, 300, 50, 0);
    make_seq(&seqs[1], 1, 30, 5, 900);
    mock_engine_add(e, &seqs[0], 0);
    mock_engine_add(e, &seqs[1], 0);
    mock_engine_step_begin(e, 0);
    mock_engine_stats_t st;
    mock_engine_get_stats(e, &st);
    assert_true(st.kv_usage > 0);
    mock_engine_abort(e, &seqs[0]);
    mock_engine_abort(e, &seqs[1]);
    assert_int_equal(seqs[0].state, MOCK_SEQ_ABORTED);
    mock_engine_get_stats(e, &st);
    assert_true(st.kv_usage == 0.0);
    assert_int_equal(st.running, 0);
    token_log_t log = {.seqs = seqs};
    mock_engine_step_end(e, 100 * MS, record_token, &log); /* aborted: no tokens delivered */
    assert_int_equal(log.n[0] + log.n[1], 0);
    assert_false(mock_engine_has_work(e));
    mock_engine_destroy(&e);
}

static void test_mock_engine_forgets_a_sequence_aborted_mid_step(void **state) {
    mock_engine_config_t c = base_config();
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t *gone = malloc(sizeof(*gone));
    mock_seq_t seqs[1];
    token_log_t log = {.seqs = seqs};
    make_seq(gone, 0, 20, 5, 0);
    make_seq(&seqs[0], 1, 20, 5, 300);
    mock_engine_add(e, gone, 0);
    mock_engine_add(e, &seqs[0], 0);
    int64_t d = mock_engine_step_begin(e, 0);
    mock_engine_abort(e, gone);
    free(gone); /* the server frees an aborted request; the step must not touch it (ASan) */
    mock_engine_step_end(e, d, record_token, &log);
    assert_int_equal(log.n[0], 1);
    mock_engine_destroy(&e);
}

static void test_mock_engine_refuses_a_sequence_larger_than_the_pool(void **state) {
    mock_engine_config_t c = base_config();
    c.kv_cache_tokens = 64;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seq;
    make_seq(&seq, 0, 60, 10, 0);
    assert_int_equal(mock_engine_add(e, &seq, 0), -1);
    assert_false(mock_engine_has_work(e));
    mock_engine_destroy(&e);
}

/* Speculative decoding's per-step token counts of one sequence of `output` tokens. */
typedef struct spec_log {
    uint32_t steps_by_count[8]; /* decode steps that kept 1, 2, ... 7 or more tokens */
    uint32_t tokens, first;
    uint32_t counts[4096];
    uint32_t n;
} spec_log_t;

static void record_spec(mock_seq_t *seq, int64_t now_ns, void *arg) {
    spec_log_t *log = arg;
    (void)now_ns;
    if (log->tokens == 0)
        log->first = seq->step_sampled; /* the prefill's step: always one token */
    else
        log->steps_by_count[seq->step_sampled < 7 ? seq->step_sampled : 7]++; /* 7: 7 or more */
    log->tokens += seq->step_sampled;
    log->counts[log->n++] = seq->step_sampled;
}

static void run_spec_with(uint32_t spec_tokens, uint32_t budget, uint64_t seed, double acceptance,
                          uint32_t output, spec_log_t *log) {
    mock_engine_config_t c = base_config();
    c.spec_tokens = spec_tokens;
    c.max_num_batched_tokens = budget;
    c.spec_acceptance = acceptance;
    c.seed = seed;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seq;
    make_seq(&seq, 0, 100, output, 0);
    seq.key = 42;
    mock_engine_add(e, &seq, 0);
    memset(log, 0, sizeof(*log));
    int64_t now = 0;
    for (int steps = 0; steps < 10000 && mock_engine_has_work(e); steps++) {
        now += mock_engine_step_begin(e, now);
        mock_engine_step_end(e, now, record_spec, log);
    }
    mock_engine_destroy(&e);
}

static void run_spec(uint64_t seed, double acceptance, uint32_t output, spec_log_t *log) {
    run_spec_with(3, 8192, seed, acceptance, output, log);
}

static void test_mock_engine_spec_drafts_never_pass_the_step_budget(void **state) {
    static spec_log_t log;
    run_spec_with(1000000, 150, 1, 1, 1000, &log); /* every draft accepted */
    assert_int_equal(log.tokens, 1000);
    assert_int_equal(log.first, 1);
    for (uint32_t i = 1; i + 1 < log.n; i++)
        assert_int_equal(log.counts[i], 150);
    assert_int_equal(log.counts[log.n - 1], (1000 - 1) % 150);
}

static void
test_mock_engine_spec_decoding_keeps_1_to_4_tokens_per_step_as_acceptance_decides(void **state) {
    spec_log_t log;
    run_spec(1, 0.6, 3000, &log);
    assert_int_equal(log.tokens, 3000); /* exactly the output, never more */
    assert_int_equal(log.first, 1);
    uint32_t steps = 0;
    for (uint32_t k = 1; k <= 4; k++)
        steps += log.steps_by_count[k];
    assert_int_equal(log.steps_by_count[0] + log.steps_by_count[5] + log.steps_by_count[7], 0);
    /* Drafts accepted in a run, each with p = 0.6: P(k tokens) = 0.6^(k-1) x 0.4 (k < 4), and
     * 0.6^3 = 0.216 for all 4; a mean of 1 + 0.6 + 0.36 + 0.216 = 2.176 tokens per step. */
    double mean = (double)(log.tokens - 1) / steps;
    assert_true(mean > 2.176 * 0.96 && mean < 2.176 * 1.04);
    double p1 = (double)log.steps_by_count[1] / steps, p4 = (double)log.steps_by_count[4] / steps;
    assert_true(p1 > 0.40 - 0.04 && p1 < 0.40 + 0.04);
    assert_true(p4 > 0.216 - 0.04 && p4 < 0.216 + 0.04);
}

static void test_mock_engine_spec_decoding_acceptance_is_deterministic_in_the_seed(void **state) {
    static spec_log_t a, b, c, none;
    run_spec(7, 0.5, 500, &a);
    run_spec(7, 0.5, 500, &b);
    run_spec(8, 0.5, 500, &c);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.counts, b.counts, a.n * sizeof(a.counts[0]));
    assert_true(a.n != c.n || memcmp(a.counts, c.counts, a.n * sizeof(a.counts[0])) != 0);
    run_spec(7, 0, 500, &none); /* nothing accepted: one token a step, as without drafts */
    assert_int_equal(none.n, 500);
}

static void
test_mock_engine_spec_step_time_adds_the_drafter_and_weighted_verification(void **state) {
    mock_engine_config_t c = base_config();
    c.step_fixed_ms = 5;
    c.tpot_base_ms = 2;
    c.alpha = 1;
    c.prefill_tokens_per_s = 0;
    c.spec_tokens = 3;
    c.spec_draft_ms = 4;
    c.spec_verify_weight = 0.5;
    mock_engine_t *e = mock_engine_new(&c);
    mock_seq_t seqs[2];
    add_seqs(e, seqs, 2, 32, 50, 1000);
    /* The prefill step: no drafter, 2 sequences: 5 + 2 x 2. */
    int64_t d = mock_engine_step_begin(e, 0);
    assert_int_equal(d, 9 * MS);
    token_log_t log = {.seqs = seqs};
    mock_engine_step_end(e, d, record_token, &log);
    /* Decoding: 5 + 3 drafts x 4 + 2 x (2 sequences + 2 x 3 drafts x 0.5) = 27. */
    assert_int_equal(mock_engine_step_begin(e, d), 27 * MS);
    mock_engine_destroy(&e);
}

UNIT_MAIN(
    cmocka_unit_test(test_mock_engine_first_token_ends_the_prefill_step),
    cmocka_unit_test(test_mock_engine_step_time_is_base_times_running_to_alpha),
    cmocka_unit_test(test_mock_engine_requests_beyond_max_num_seqs_wait),
    cmocka_unit_test(test_mock_engine_chunked_prefill_stays_within_the_token_budget),
    cmocka_unit_test(test_mock_engine_prefix_hit_skips_prefill_but_the_last_token),
    cmocka_unit_test(test_mock_engine_without_prefix_cache_never_hits),
    cmocka_unit_test(test_mock_engine_preempts_the_newest_when_blocks_run_out),
    cmocka_unit_test(test_mock_engine_abort_frees_the_blocks),
    cmocka_unit_test(test_mock_engine_forgets_a_sequence_aborted_mid_step),
    cmocka_unit_test(test_mock_engine_refuses_a_sequence_larger_than_the_pool),
    cmocka_unit_test(
        test_mock_engine_spec_decoding_keeps_1_to_4_tokens_per_step_as_acceptance_decides),
    cmocka_unit_test(test_mock_engine_spec_decoding_acceptance_is_deterministic_in_the_seed),
    cmocka_unit_test(test_mock_engine_spec_drafts_never_pass_the_step_budget),
    cmocka_unit_test(test_mock_engine_spec_step_time_adds_the_drafter_and_weighted_verification))
