/* Each built-in profile of the mock, replayed in virtual time under the load its reference was
 * measured with, reproduces the reference's TTFT and TPOT within the stated tolerances; the two
 * H200 profiles at every level of their sweeps, and together the shape of the reports' "Phase 0
 * vs Phase 3" analysis. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mock_profiles.h"
#include "mock_sim.h"

/* One level of a reference sweep (ms), as its report prints it. */
typedef struct reference_level {
    uint32_t concurrency;
    double ttft_p50, ttft_p95, tpot_p50, tpot_p95;
} reference_level_t;

/* sweep-combined-50-120.md: Phase 0, vLLM without speculation, max-num-seqs 128. */
static const reference_level_t phase0[] = {
    {50, 174, 210, 44, 46},    {60, 186, 221, 47, 49},   {70, 206, 249, 56, 57},
    {80, 222, 268, 59, 61},    {90, 231, 5815, 67, 83},  {100, 258, 3021, 79, 86},
    {110, 2214, 4967, 83, 95}, {120, 297, 2227, 84, 95},
};

/* sweep-round-robin-eagle3-50-160.md: Phase 3, EAGLE-3 with 3 draft tokens, max-num-seqs 64. */
static const reference_level_t phase3[] = {
    {50, 236.0, 324.8, 65.1, 68.0},      {60, 258.3, 332.7, 70.1, 71.4},
    {70, 6518.8, 9851.7, 73.6, 74.5},    {80, 14697.6, 28935.4, 73.4, 75.1},
    {90, 25804.1, 33273.9, 75.7, 80.4},  {100, 34258.4, 39529.4, 71.0, 71.8},
    {110, 41930.1, 49843.2, 69.6, 71.9}, {120, 49040.7, 58438.1, 70.3, 71.1},
    {130, 52824.6, 56436.6, 68.9, 69.5}, {140, 55570.7, 65460.3, 68.2, 68.9},
    {150, 65929.3, 70660.6, 67.5, 68.4}, {160, 72360.8, 77096.2, 67.8, 68.6},
};

#define N_LEVELS(t) (sizeof(t) / sizeof((t)[0]))

/* Replays are deterministic: each (profile, concurrency) is run once and kept. */
static struct {
    const mock_profile_t *p;
    uint32_t concurrency;
    mock_sim_result_t r;
} replays[64];
static size_t n_replays;

static const mock_sim_result_t *replay(const char *name, uint32_t concurrency) {
    const mock_profile_t *p = mock_profile_find(name);
    assert_non_null(p);
    for (size_t i = 0; i < n_replays; i++)
        if (replays[i].p == p && replays[i].concurrency == concurrency)
            return &replays[i].r;
    assert_true(n_replays < sizeof(replays) / sizeof(replays[0]));
    replays[n_replays].p = p;
    replays[n_replays].concurrency = concurrency;
    assert_int_equal(mock_profile_replay(p, concurrency, &replays[n_replays].r), 0);
    assert_true(replays[n_replays].r.requests > 20);
    return &replays[n_replays++].r;
}

static void expect_within(const char *what, const char *name, uint32_t c, double model, double ref,
                          double tolerance) {
    if (!(fabs(model / ref - 1) <= tolerance))
        fail_msg("%s c=%u: %s %.1f ms, reference %.1f +- %.0f %%", name, c, what, model, ref,
                 100 * tolerance);
}

static void check_profile(const char *name) {
    const mock_profile_t *p = mock_profile_find(name);
    assert_non_null(p);
    assert_true(p->n_points > 0);
    for (uint32_t i = 0; i < p->n_points; i++) {
        const mock_profile_point_t *pt = &p->points[i];
        const mock_sim_result_t *r = replay(name, pt->concurrency);
        double ttft = p->ttft_is_median ? r->ttft_p50_ms : r->ttft_mean_ms;
        double tpot = p->tpot_is_median ? r->tpot_p50_ms : r->tpot_mean_ms;
        if (pt->tpot_ms > 0 && pt->tpot_tolerance > 0)
            expect_within("TPOT", name, pt->concurrency, tpot, pt->tpot_ms, pt->tpot_tolerance);
        if (pt->ttft_ms > 0 && pt->ttft_tolerance > 0)
            expect_within("TTFT", name, pt->concurrency, ttft, pt->ttft_ms, pt->ttft_tolerance);
    }
}

static void test_mock_profile_tp1_fp8_matches_its_reference(void **state) {
    check_profile("tp1-fp8");
}

static void test_mock_profile_tp2_fp8_matches_its_reference(void **state) {
    check_profile("tp2-fp8");
}

static void test_mock_profile_tp2_fp16_matches_its_reference(void **state) {
    check_profile("tp2-fp16");
}

static void
test_mock_profile_h200_llama70b_matches_every_level_of_the_combined_sweep(void **state) {
    for (size_t i = 0; i < N_LEVELS(phase0); i++) {
        const reference_level_t *l = &phase0[i];
        const mock_sim_result_t *r = replay("h200-llama70b", l->concurrency);
        expect_within("TPOT p50", "h200-llama70b", l->concurrency, r->tpot_p50_ms, l->tpot_p50,
                      0.10);
        expect_within("TPOT p95", "h200-llama70b", l->concurrency, r->tpot_p95_ms, l->tpot_p95,
                      0.10);
        if (l->ttft_p50 < 1000)
            expect_within("TTFT p50", "h200-llama70b", l->concurrency, r->ttft_p50_ms, l->ttft_p50,
                          0.15);
    }
}

static void
test_mock_profile_h200_llama70b_ttft_p95_spikes_from_90_while_p50_stays_low(void **state) {
    /* The sweep's regime change: up to 80 every request starts within ~270 ms; from 90 the KV
     * pool runs short now and then (preemptions, evicted histories), so the p95 reaches
     * seconds while the median request still starts in 230-300 ms. */
    for (size_t i = 0; i < N_LEVELS(phase0); i++) {
        const reference_level_t *l = &phase0[i];
        const mock_sim_result_t *r = replay("h200-llama70b", l->concurrency);
        if (l->concurrency <= 80) {
            assert_true(r->ttft_p95_ms < 1.25 * l->ttft_p95);
            assert_int_equal(r->preemptions, 0);
        } else {
            if (r->ttft_p95_ms < 2000 || r->ttft_p50_ms > 500)
                fail_msg("c=%u: TTFT p50 %.0f ms, p95 %.0f ms: expected p50 < 500, p95 > 2000",
                         l->concurrency, r->ttft_p50_ms, r->ttft_p95_ms);
            assert_true(r->preemptions > 0);
        }
    }
}

static void test_mock_profile_h200_llama70b_eagle3_matches_every_level_of_its_sweep(void **state) {
    const char *name = "h200-llama70b-eagle3";
    double plateau_min = 1e9, plateau_max = 0;
    for (size_t i = 0; i < N_LEVELS(phase3); i++) {
        const reference_level_t *l = &phase3[i];
        const mock_sim_result_t *r = replay(name, l->concurrency);
        expect_within("TPOT p50", name, l->concurrency, r->tpot_p50_ms, l->tpot_p50, 0.10);
        expect_within("TPOT p95", name, l->concurrency, r->tpot_p95_ms, l->tpot_p95, 0.10);
        expect_within("TTFT p50", name, l->concurrency, r->ttft_p50_ms, l->ttft_p50,
                      l->concurrency <= 60 ? 0.15 : 0.25);
        if (l->concurrency >= 70) { /* the knee: 64 slots full, a queue */
            assert_true(r->ttft_p50_ms > 5000);
            plateau_min = fmin(plateau_min, r->tpot_p50_ms);
            plateau_max = fmax(plateau_max, r->tpot_p50_ms);
        } else {
            assert_true(r->ttft_p50_ms < 1000);
        }
        /* The queue grows with c until the clients' 120 s timeout caps what survives it. */
        if (l->concurrency >= 80 && l->concurrency <= 140)
            assert_true(r->ttft_p50_ms > replay(name, l->concurrency - 10)->ttft_p50_ms);
    }
    /* The reference's plateau: 68-76 ms from 70 to 160. */
    assert_true(plateau_min > 68 * 0.95 && plateau_max < 76 * 1.05);
}

/* The first level of the sweep 50 -> 160 where the profile's replay passes err_pct errors. */
static uint32_t first_errors_past(const char *name, double err_pct) {
    for (uint32_t c = 50; c <= 160; c += 10)
        if (replay(name, c)->error_pct > err_pct)
            return c;
    return 0;
}

static void test_mock_profiles_h200_time_out_where_their_references_erred(void **state) {
    /* Both reports' clients gave up after 120 s: Phase 0 lost 1.7 % at 110 and 7-8 % at 120
     * (2 of 3 runs), Phase 3 16 % from 90 and 35-58 % from 120. */
    assert_int_equal(first_errors_past("h200-llama70b", 0), 100); /* 0.3 %: a few */
    assert_int_equal(first_errors_past("h200-llama70b", 5), 120);
    uint32_t eagle = first_errors_past("h200-llama70b-eagle3", 5);
    assert_true(eagle == 90 || eagle == 100);
    assert_true(replay("h200-llama70b-eagle3", 140)->error_pct > 35);
    assert_true(replay("h200-llama70b-eagle3", 70)->error_pct == 0);
}

static void test_mock_profile_h200_llama70b_eagle3_chunks_carry_1_to_4_tokens(void **state) {
    const mock_profile_t *p = mock_profile_find("h200-llama70b-eagle3");
    assert_int_equal(p->spec_tokens, 3);
    double a = p->spec_acceptance;
    double expected = 1 + a + a * a + a * a * a; /* tokens per decode step */
    const mock_sim_result_t *r = replay("h200-llama70b-eagle3", 50);
    /* Per sequence and step, prefill steps (one token) included: a little under a decode's. */
    assert_true(r->tokens_per_chunk > 1.4 && r->tokens_per_chunk <= expected * 1.01);
    assert_true(r->tokens_per_chunk > expected * 0.97);
    assert_true(replay("h200-llama70b", 50)->tokens_per_chunk == 1);
}

/* The first level of the sweep 50 -> 160 whose TTFT p50 passes 1 s (the reports' saturation). */
static uint32_t first_ttft_past_1s(const char *name) {
    for (uint32_t c = 50; c <= 160; c += 10)
        if (replay(name, c)->ttft_p50_ms > 1000)
            return c;
    return 0;
}

static void test_mock_profiles_phase0_vs_phase3_has_the_reports_shape(void **state) {
    /* sweep-round-robin-eagle3-50-160.md, "Phase 3 vs Phase 0", on one sweep 50 -> 160. */
    for (uint32_t c = 50; c <= 160; c += 10) {
        const mock_sim_result_t *base = replay("h200-llama70b", c);
        const mock_sim_result_t *eagle = replay("h200-llama70b-eagle3", c);
        if (c <= 90 && !(eagle->tpot_p50_ms > base->tpot_p50_ms)) /* TPOT worse at low c */
            fail_msg("c=%u: EAGLE-3 TPOT %.1f, baseline %.1f: expected worse", c,
                     eagle->tpot_p50_ms, base->tpot_p50_ms);
        if (c >= 100 && !(eagle->tpot_p50_ms < base->tpot_p50_ms)) /* ... better at high c */
            fail_msg("c=%u: EAGLE-3 TPOT %.1f, baseline %.1f: expected better", c,
                     eagle->tpot_p50_ms, base->tpot_p50_ms);
        double ttft_ratio = eagle->ttft_p50_ms / base->ttft_p50_ms;
        if (c <= 60 && !(ttft_ratio > 1 && ttft_ratio < 2)) /* +36-39 % */
            fail_msg("c=%u: TTFT ratio %.2f, expected 1-2", c, ttft_ratio);
        /* Catastrophically worse from 70: 31x at 70 to 165x at 120 in the report; past 120
         * Phase 0 queues too and Phase 3's clients time out, so the ratio falls back. */
        if (c >= 70 && !(ttft_ratio > (c <= 120 ? 20 : 3)))
            fail_msg("c=%u: TTFT ratio %.2f, expected > %d", c, ttft_ratio, c <= 120 ? 20 : 3);
    }
    /* Saturation (TTFT p50 > 1 s) about 40 % lower: the report has 110 -> 70. */
    uint32_t base = first_ttft_past_1s("h200-llama70b");
    uint32_t eagle = first_ttft_past_1s("h200-llama70b-eagle3");
    assert_int_equal(eagle, 70);
    assert_true(base >= 110);
    double reduction = 1 - (double)eagle / base;
    assert_true(reduction > 0.30 && reduction < 0.50);
}

static void test_mock_profile_fit_tables_are_what_the_model_gives(void **state) {
    /* The fit columns of --help and docs/mock.md are the live replay, not stale numbers. */
    for (size_t i = 0; mock_profile_at(i); i++) {
        const mock_profile_t *p = mock_profile_at(i);
        for (uint32_t k = 0; k < p->n_points; k++) {
            const mock_profile_point_t *pt = &p->points[k];
            if (pt->fit_tpot_ms == 0)
                continue;
            const mock_sim_result_t *r = replay(p->name, pt->concurrency);
            double ttft = p->ttft_is_median ? r->ttft_p50_ms : r->ttft_mean_ms;
            double tpot = p->tpot_is_median ? r->tpot_p50_ms : r->tpot_mean_ms;
            expect_within("fit TTFT", p->name, pt->concurrency, pt->fit_ttft_ms, ttft, 0.01);
            expect_within("fit TPOT", p->name, pt->concurrency, pt->fit_tpot_ms, tpot, 0.01);
            expect_within("fit TPOT p95", p->name, pt->concurrency, pt->fit_tpot_p95_ms,
                          r->tpot_p95_ms, 0.01);
        }
    }
}

static void test_mock_profile_h200_reference_tables_are_the_profiles_points(void **state) {
    const mock_profile_t *p0 = mock_profile_find("h200-llama70b");
    const mock_profile_t *p3 = mock_profile_find("h200-llama70b-eagle3");
    assert_int_equal(p0->n_points, N_LEVELS(phase0));
    assert_int_equal(p3->n_points, N_LEVELS(phase3));
    for (size_t i = 0; i < N_LEVELS(phase0); i++) {
        assert_int_equal(p0->points[i].concurrency, phase0[i].concurrency);
        assert_true(p0->points[i].tpot_ms == phase0[i].tpot_p50);
        assert_true(p0->points[i].tpot_p95_ms == phase0[i].tpot_p95);
        assert_true(p0->points[i].ttft_ms == phase0[i].ttft_p50);
    }
    for (size_t i = 0; i < N_LEVELS(phase3); i++) {
        assert_int_equal(p3->points[i].concurrency, phase3[i].concurrency);
        assert_true(fabs(p3->points[i].tpot_ms - phase3[i].tpot_p50) < 0.01);
        assert_true(fabs(p3->points[i].ttft_ms - phase3[i].ttft_p50) < 1);
    }
}

static void test_mock_sim_abandons_requests_at_the_client_timeout(void **state) {
    /* One slot, 0.5-1.5 s of decoding per request, 4 clients: a request waits ~3 s for the slot
     * and ends ~4 s after it was sent, so a 3.5 s timeout abandons many; those that remain
     * completed in time, and the queue is shorter than without the timeout. */
    mock_engine_config_t config = {.max_num_seqs = 1,
                                   .max_num_batched_tokens = 8192,
                                   .kv_cache_tokens = 65536,
                                   .tpot_base_ms = 10};
    mock_sim_workload_t w = {.steps_min = 1,
                             .steps_max = 1,
                             .input_tokens = {50},
                             .output_tokens = {100},
                             .jitter = 0.5,
                             .timeout_ms = 3500};
    mock_sim_result_t with, without;
    assert_int_equal(mock_sim_run(&config, 0, &w, 4, 10, 60, 1, &with), 0);
    assert_true(with.timeouts > 10 && with.requests > 10);
    assert_true(fabs(with.error_pct - 100.0 * with.timeouts / (with.timeouts + with.requests)) <
                1e-9);
    assert_true(with.ttft_p95_ms < 3500);
    w.timeout_ms = 0;
    assert_int_equal(mock_sim_run(&config, 0, &w, 4, 10, 60, 1, &without), 0);
    assert_int_equal(without.timeouts, 0);
    assert_true(without.error_pct == 0);
    assert_true(without.ttft_p50_ms > with.ttft_p50_ms + 200);
    w.timeout_ms = 5; /* inside the overhead: refused */
    assert_int_equal(mock_sim_run(&config, 10, &w, 4, 10, 60, 1, &with), -1);
}

static void test_mock_sim_is_deterministic_in_its_seed(void **state) {
    const mock_profile_t *p = mock_profile_find("tp1-fp8");
    mock_engine_config_t config;
    mock_profile_engine_config(p, &config);
    mock_sim_result_t a, b, c;
    mock_sim_run(&config, p->ttft_overhead_ms, &p->workload, 8, 5, 20, 7, &a);
    mock_sim_run(&config, p->ttft_overhead_ms, &p->workload, 8, 5, 20, 7, &b);
    mock_sim_run(&config, p->ttft_overhead_ms, &p->workload, 8, 5, 20, 8, &c);
    assert_int_equal(a.requests, b.requests);
    assert_true(a.ttft_mean_ms == b.ttft_mean_ms && a.tpot_mean_ms == b.tpot_mean_ms);
    assert_true(a.ttft_mean_ms != c.ttft_mean_ms);
}

UNIT_MAIN(
    cmocka_unit_test(test_mock_profile_tp1_fp8_matches_its_reference),
    cmocka_unit_test(test_mock_profile_tp2_fp8_matches_its_reference),
    cmocka_unit_test(test_mock_profile_tp2_fp16_matches_its_reference),
    cmocka_unit_test(test_mock_profile_h200_llama70b_matches_every_level_of_the_combined_sweep),
    cmocka_unit_test(test_mock_profile_h200_llama70b_ttft_p95_spikes_from_90_while_p50_stays_low),
    cmocka_unit_test(test_mock_profile_h200_llama70b_eagle3_matches_every_level_of_its_sweep),
    cmocka_unit_test(test_mock_profile_h200_llama70b_eagle3_chunks_carry_1_to_4_tokens),
    cmocka_unit_test(test_mock_profiles_h200_time_out_where_their_references_erred),
    cmocka_unit_test(test_mock_profiles_phase0_vs_phase3_has_the_reports_shape),
    cmocka_unit_test(test_mock_profile_fit_tables_are_what_the_model_gives),
    cmocka_unit_test(test_mock_profile_h200_reference_tables_are_the_profiles_points),
    cmocka_unit_test(test_mock_sim_abandons_requests_at_the_client_timeout),
    cmocka_unit_test(test_mock_sim_is_deterministic_in_its_seed))
