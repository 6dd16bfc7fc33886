#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <string.h>

#include "merge.h"
#include "slo.h"

#define MS 1000000LL
#define S 1000000000LL

typedef struct fixture {
    request_record_t rec;
    int64_t chunk_ns[8];
} fixture_t;

/* An ok request sent at send_ns: first content chunk after ttft_ms, then 3 more every itl_ms. */
static request_record_t *make(fixture_t *f, int64_t send_ns, int64_t ttft_ms, int64_t itl_ms) {
    memset(f, 0, sizeof *f);
    request_record_t *rec = &f->rec;
    rec->send_ns = rec->intended_ns = send_ns;
    for (int i = 0; i < 4; i++)
        f->chunk_ns[i] = send_ns + ttft_ms * MS + i * itl_ms * MS;
    rec->n_chunks = 4;
    rec->chunk_ns = f->chunk_ns;
    rec->first_token_ns = rec->first_content_ns = f->chunk_ns[0];
    rec->end_ns = f->chunk_ns[3];
    return rec;
}

/* A run of 100 ok requests with TTFT 1, 2, ..., 100 ms and ITL itl_ms, plus `failed` failures,
 * merged and counted for goodput against slo; all end inside the window. */
typedef struct run {
    merge_t *merge;
    slo_goodput_t goodput;
    slo_input_t in;
} run_t;

static void run_fill(run_t *r, const config_slo_t *slo, int failed, int64_t itl_ms) {
    memset(r, 0, sizeof *r);
    r->merge = merge_new(NULL);
    assert_non_null(r->merge);
    fixture_t f;
    for (int i = 1; i <= 100 + failed; i++) {
        request_record_t *rec = make(&f, i * 10 * MS, i <= 100 ? i : 5, itl_ms);
        if (i > 100)
            rec->error = ERROR_HTTP_5XX;
        metrics_t m;
        metrics_compute(rec, &m);
        merge_add_metrics(r->merge, rec, &m);
        slo_goodput_add(&r->goodput, slo, rec, &m, true);
    }
    const merge_stats_t *all = merge_overall(r->merge);
    r->in = (slo_input_t){.latency = all->latency,
                          .ok = all->ok,
                          .failed = all->failed,
                          .goodput = &r->goodput,
                          .window_s = 10};
}

/* The run of run_fill (ITL 10 ms) judged against slo. */
static void run_judge(run_t *r, const config_slo_t *slo, int failed, slo_result_t *res) {
    run_fill(r, slo, failed, 10);
    slo_evaluate(slo, &r->in, res);
}

static config_slo_item_t percentile(metrics_kind_t k, double p, int64_t bound_ms) {
    return (config_slo_item_t){
        .metric = k, .stat = CONFIG_SLO_PERCENTILE, .percentile = p, .bound_ns = bound_ms * MS};
}

static config_slo_item_t errors(double max_pct) {
    return (config_slo_item_t){.stat = CONFIG_SLO_ERROR_PCT, .max_pct = max_pct};
}

static void test_slo_p95_passes_with_its_margin_and_fails_below(void **state) {
    config_slo_t slo = {
        .items = {percentile(METRIC_TTFC, 95, 100), percentile(METRIC_TTFC, 95, 90)}, .n = 2};
    run_t r;
    slo_result_t res;
    run_judge(&r, &slo, 0, &res);
    /* p95 of 1..100 ms is 95 ms within the histogram's 0.1 % */
    assert_true(fabs(res.checks[0].value - 95) < 0.2);
    assert_true(res.checks[0].pass);
    assert_true(fabs(res.checks[0].margin - 0.05) < 0.003);
    assert_false(res.checks[1].pass);
    assert_true(fabs(res.checks[1].margin - (90 - 95) / 90.0) < 0.003);
    assert_false(res.pass);
    assert_int_equal(res.binding, 1);
    merge_destroy(&r.merge);
}

static void test_slo_errors_over_budget_fail_and_bind(void **state) {
    config_slo_t slo = {.items = {percentile(METRIC_TTFC, 95, 1000), errors(2)}, .n = 2};
    run_t r;
    slo_result_t res;
    run_judge(&r, &slo, 3, &res); /* 3 failed of 103 finished: 2.91 % */
    assert_true(res.checks[0].pass);
    assert_false(res.checks[1].pass);
    assert_true(fabs(res.checks[1].value - 300.0 / 103) < 1e-9);
    assert_int_equal(res.binding, 1);
    merge_destroy(&r.merge);
}

static void test_slo_passing_run_binds_on_the_least_headroom(void **state) {
    config_slo_t slo = {
        .items = {percentile(METRIC_TTFC, 50, 500), percentile(METRIC_ITL, 95, 12), errors(2)},
        .n = 3};
    run_t r;
    slo_result_t res;
    run_judge(&r, &slo, 0, &res);
    assert_true(res.pass);
    /* ITL 10 ms against 12: margin 1/6, the least (TTFC 50 against 500: 0.9; errors 0 of 2: 1) */
    assert_int_equal(res.binding, 1);
    assert_true(fabs(res.checks[1].margin - 2.0 / 12) < 0.003);
    merge_destroy(&r.merge);
}

static void test_slo_goodput_counts_requests_within_every_bound(void **state) {
    /* per request: TTFC <= 40 ms (the p99's bound, the tail-most) and mean ITL <= 15 ms */
    config_slo_t slo = {.items = {percentile(METRIC_TTFC, 50, 20), percentile(METRIC_TTFC, 99, 40),
                                  percentile(METRIC_ITL, 95, 15)},
                        .n = 3};
    assert_int_equal(slo_request_bound_ns(&slo, METRIC_TTFC), 40 * MS);
    assert_int_equal(slo_request_bound_ns(&slo, METRIC_E2E), 0);
    run_t r;
    slo_result_t res;
    run_judge(&r, &slo, 2, &res);
    assert_true(res.has_goodput);
    assert_int_equal(res.checked_requests, 102);
    assert_int_equal(res.good_requests, 40); /* TTFC 1..40 ms; the failed ones never count */
    assert_true(fabs(res.attainment_pct - 4000.0 / 102) < 1e-9);
    assert_true(fabs(res.goodput_requests_per_s - 4.0) < 1e-9);       /* 40 in 10 s */
    assert_true(fabs(res.goodput_output_tokens_per_s - 16.0) < 1e-9); /* 4 tokens each */
    merge_destroy(&r.merge);
}

static void test_slo_goodput_judges_a_request_by_its_mean_itl(void **state) {
    config_slo_t slo = {.items = {percentile(METRIC_ITL, 95, 8)}, .n = 1};
    fixture_t f;
    metrics_t m;
    metrics_compute(make(&f, S, 5, 10), &m); /* gaps of 10 ms: over 8 */
    assert_false(slo_request_meets(&slo, &m));
    metrics_compute(make(&f, S, 5, 7), &m);
    assert_true(slo_request_meets(&slo, &m));
    slo_goodput_t g = {0};
    f.rec.warmup = true;
    slo_goodput_add(&g, &slo, &f.rec, &m, true);
    assert_int_equal(g.checked, 0);     /* warm-up is not in the attainment... */
    assert_int_equal(g.window_good, 1); /* ... but in the rate, like the request rate */
}

static void test_slo_nothing_measured_fails(void **state) {
    config_slo_t slo = {.items = {percentile(METRIC_TTFC, 95, 750), errors(2)}, .n = 2};
    merge_t *merge = merge_new(NULL);
    const merge_stats_t *all = merge_overall(merge);
    slo_input_t in = {.latency = all->latency};
    slo_result_t res;
    slo_evaluate(&slo, &in, &res);
    assert_false(res.pass);
    assert_false(res.checks[0].measured);
    assert_false(res.checks[1].measured);
    assert_int_equal(res.binding, 0);
    merge_destroy(&merge);
}

static void test_slo_clearly_lost_projects_the_level_total(void **state) {
    /* 100 requests, TTFC 1..100 ms; the p95 SLO at 80 ms has 20 misses. */
    config_slo_t slo = {.items = {percentile(METRIC_TTFC, 95, 80)}, .n = 1};
    run_t r;
    run_fill(&r, &slo, 0, 10);
    char why[256];
    /* half done: 200 expected, 10 misses allowed, x1.5 = 15 < 20 */
    assert_true(slo_clearly_lost(&slo, &r.in, 0.5, why, sizeof why));
    assert_non_null(strstr(why, "TTFC p95 <= 80 ms lost: 20 misses"));
    /* a quarter done: 400 expected, 20 allowed, x1.5 = 30 > 20 */
    assert_false(slo_clearly_lost(&slo, &r.in, 0.25, why, sizeof why));
    merge_destroy(&r.merge);
}

static void test_slo_clearly_lost_on_max_and_error_budget_never_on_mean(void **state) {
    config_slo_t max = {
        .items = {{.metric = METRIC_TTFC, .stat = CONFIG_SLO_MAX, .bound_ns = 99 * MS}}, .n = 1};
    config_slo_t mean = {
        .items = {{.metric = METRIC_TTFC, .stat = CONFIG_SLO_MEAN, .bound_ns = 1 * MS}}, .n = 1};
    config_slo_t err = {.items = {errors(2)}, .n = 1};
    run_t r;
    run_fill(&r, &err, 12, 10); /* 12 failed of 112 */
    char why[256];
    assert_true(slo_clearly_lost(&max, &r.in, 0.01, why, sizeof why)); /* 100 ms > 99 */
    assert_false(slo_clearly_lost(&mean, &r.in, 1, why, sizeof why));
    /* all done: 2.24 allowed x 1.5 < 12 */
    assert_true(slo_clearly_lost(&err, &r.in, 1, why, sizeof why));
    assert_non_null(strstr(why, "errors <= 2 % lost: 12 misses"));
    /* a tenth done: 22.4 x 1.5 allowed > 12 */
    assert_false(slo_clearly_lost(&err, &r.in, 0.1, why, sizeof why));
    merge_destroy(&r.merge);
}

static void test_slo_json_has_each_check_and_goodput(void **state) {
    config_slo_t slo = {.items = {percentile(METRIC_TTFC, 95, 750), errors(2)}, .n = 2};
    run_t r;
    slo_result_t res;
    run_judge(&r, &slo, 0, &res);
    json_t *o = slo_json(&res);
    assert_true(json_is_true(json_object_get(o, "pass")));
    assert_string_equal(json_string_value(json_object_get(o, "binding")), "TTFC p95 <= 750 ms");
    json_t *first = json_array_get(json_object_get(o, "checks"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "metric")), "ttfc");
    assert_string_equal(json_string_value(json_object_get(first, "statistic")), "p95");
    assert_true(json_real_value(json_object_get(first, "bound")) == 750);
    json_t *g = json_object_get(o, "goodput");
    assert_int_equal(json_integer_value(json_object_get(g, "good_requests")), 100);
    json_decref(o);
    merge_destroy(&r.merge);
}

static void test_slo_sweep_levels_are_judged_and_gathered_in_analysis(void **state) {
    config_slo_t slo = {.items = {percentile(METRIC_TTFC, 95, 50), errors(2)}, .n = 2};
    window_stats_t fast, slow;
    assert_int_equal(window_stats_init(&fast), 0);
    assert_int_equal(window_stats_init(&slow), 0);
    for (int i = 0; i < 100; i++) {
        histogram_record(fast.latency[METRIC_TTFC], 20 * MS);
        histogram_record(slow.latency[METRIC_TTFC], 80 * MS);
    }
    fast.ok = slow.ok = 100;
    json_t *levels = json_array(), *analysis = json_object();
    json_t *a = json_pack("{s:i}", "concurrency", 4), *b = json_pack("{s:i}", "concurrency", 8);
    fast.duration_ns = slow.duration_ns = 10 * S;
    slo_goodput_t good = {.checked = 100, .good = 90, .window_good = 50};
    slo_goodput_t half = good;
    slo_goodput_pool(&good, &half); /* two repetitions */
    slo_level_json(a, &slo, &fast, &good);
    slo_level_json(b, &slo, &slow, NULL);
    json_array_append_new(levels, a);
    json_array_append_new(levels, b);
    assert_true(json_is_true(json_object_get(json_object_get(a, "slo"), "pass")));
    assert_true(json_is_false(json_object_get(json_object_get(b, "slo"), "pass")));
    json_t *g = json_object_get(json_object_get(a, "slo"), "goodput");
    assert_int_equal(json_integer_value(json_object_get(g, "good_requests")), 180);
    assert_true(json_real_value(json_object_get(g, "attainment_pct")) == 90);
    assert_true(json_real_value(json_object_get(g, "requests_per_s")) == 10); /* 100 in 10 s */
    assert_true(json_is_null(json_object_get(json_object_get(b, "slo"), "goodput")));
    slo_analysis_json(analysis, levels);
    json_t *gathered = json_object_get(analysis, "slo");
    assert_int_equal(json_array_size(gathered), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(gathered, 1), "concurrency")), 8);
    assert_string_equal(json_string_value(json_object_get(json_array_get(gathered, 1), "binding")),
                        "TTFC p95 <= 50 ms");
    /* without SLOs nothing is added */
    config_slo_t none = {.n = 0};
    json_t *c = json_object(), *empty = json_object();
    slo_level_json(c, &none, &fast, NULL);
    assert_null(json_object_get(c, "slo"));
    json_t *only = json_array();
    json_array_append_new(only, c);
    slo_analysis_json(empty, only);
    assert_null(json_object_get(empty, "slo"));
    json_decref(only);
    json_decref(empty);
    json_decref(levels);
    json_decref(analysis);
    window_stats_free(&fast);
    window_stats_free(&slow);
}

UNIT_MAIN(cmocka_unit_test(test_slo_p95_passes_with_its_margin_and_fails_below),
          cmocka_unit_test(test_slo_errors_over_budget_fail_and_bind),
          cmocka_unit_test(test_slo_passing_run_binds_on_the_least_headroom),
          cmocka_unit_test(test_slo_goodput_counts_requests_within_every_bound),
          cmocka_unit_test(test_slo_goodput_judges_a_request_by_its_mean_itl),
          cmocka_unit_test(test_slo_nothing_measured_fails),
          cmocka_unit_test(test_slo_clearly_lost_projects_the_level_total),
          cmocka_unit_test(test_slo_clearly_lost_on_max_and_error_budget_never_on_mean),
          cmocka_unit_test(test_slo_json_has_each_check_and_goodput),
          cmocka_unit_test(test_slo_sweep_levels_are_judged_and_gathered_in_analysis))
