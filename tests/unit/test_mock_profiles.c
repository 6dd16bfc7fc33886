/* Each built-in profile of the mock, replayed in virtual time under the load its reference was
 * measured with, reproduces the reference's TTFT and TPOT within the stated tolerances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <stdio.h>

#include "mock_profiles.h"
#include "mock_sim.h"

static void check_profile(const char *name) {
    const mock_profile_t *p = mock_profile_find(name);
    assert_non_null(p);
    assert_true(p->n_points > 0);
    mock_engine_config_t config;
    mock_profile_engine_config(p, &config);
    for (uint32_t i = 0; i < p->n_points; i++) {
        const mock_profile_point_t *pt = &p->points[i];
        mock_sim_result_t r;
        assert_int_equal(mock_sim_run(&config, p->ttft_overhead_ms, &p->workload, pt->concurrency,
                                      20, 120, 1, &r),
                         0);
        assert_true(r.requests > 20);
        double ttft = p->ttft_is_median ? r.ttft_p50_ms : r.ttft_mean_ms;
        double tpot = p->tpot_is_median ? r.tpot_p50_ms : r.tpot_mean_ms;
        if (pt->tpot_ms > 0 && fabs(tpot / pt->tpot_ms - 1) > pt->tpot_tolerance)
            fail_msg("%s c=%u: TPOT %.2f ms, expected %.2f +- %.0f %%", name, pt->concurrency, tpot,
                     pt->tpot_ms, 100 * pt->tpot_tolerance);
        if (pt->ttft_ms > 0 && fabs(ttft / pt->ttft_ms - 1) > pt->ttft_tolerance)
            fail_msg("%s c=%u: TTFT %.1f ms, expected %.1f +- %.0f %%", name, pt->concurrency, ttft,
                     pt->ttft_ms, 100 * pt->ttft_tolerance);
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

static void test_mock_profile_h200_llama70b_matches_its_reference(void **state) {
    check_profile("h200-llama70b");
}

static void test_mock_profile_h200_queues_beyond_max_num_seqs(void **state) {
    /* The sweep's TTFT p50 leaves 200-300 ms for seconds at c = 110 (2214 ms): requests wait. */
    const mock_profile_t *p = mock_profile_find("h200-llama70b");
    mock_engine_config_t config;
    mock_profile_engine_config(p, &config);
    mock_sim_result_t at_70, at_110;
    mock_sim_run(&config, p->ttft_overhead_ms, &p->workload, 70, 20, 120, 1, &at_70);
    mock_sim_run(&config, p->ttft_overhead_ms, &p->workload, 110, 20, 120, 1, &at_110);
    assert_true(at_70.mean_waiting < 1);
    assert_true(at_110.mean_waiting > 5);
    assert_true(at_110.mean_running > 63);
    assert_true(at_110.ttft_p50_ms > 1000);
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

UNIT_MAIN(cmocka_unit_test(test_mock_profile_tp1_fp8_matches_its_reference),
          cmocka_unit_test(test_mock_profile_tp2_fp8_matches_its_reference),
          cmocka_unit_test(test_mock_profile_tp2_fp16_matches_its_reference),
          cmocka_unit_test(test_mock_profile_h200_llama70b_matches_its_reference),
          cmocka_unit_test(test_mock_profile_h200_queues_beyond_max_num_seqs),
          cmocka_unit_test(test_mock_sim_is_deterministic_in_its_seed))
