/* controller/telemetry_read: pages of vLLM, SGLang, Dynamo and DCGM names read into stampede's
 * quantities, deltas between two pages, percentiles interpolated in the bucket as
 * histogram_quantile does, absent metrics absent (NAN), restarts flagged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "prom_parse.h"
#include "telemetry_read.h"

static void read_text(const char *text, telemetry_reading_t *out) {
    prom_page_t *page = prom_page_parse(text, strlen(text));
    assert_non_null(page);
    assert_int_equal(page->lines_skipped, 0);
    telemetry_read_page(page, out);
    prom_page_destroy(&page);
}

/* The reading of a page that must read as dialect. */
static telemetry_reading_t read_as(const char *text, const char *dialect) {
    telemetry_reading_t r;
    read_text(text, &r);
    if (!r.dialect || strcmp(r.dialect, dialect) != 0)
        fail_msg("read as %s, expected %s", r.dialect ? r.dialect : "no dialect", dialect);
    return r;
}

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

/* Two engines (model_name m, engine 0 and 1): their series are summed. */
static const char *const VLLM_A =
    "# TYPE vllm:request_success_total counter\n"
    "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\"} 10.0\n"
    "vllm:request_success_total{engine=\"1\",finished_reason=\"length\"} 5.0\n"
    "vllm:generation_tokens_total{engine=\"0\"} 1000.0\n"
    "vllm:prompt_tokens_total{engine=\"0\"} 2000.0\n"
    "vllm:prefix_cache_queries_total 2000.0\nvllm:prefix_cache_hits_total 500.0\n"
    "vllm:num_requests_running{engine=\"0\"} 3.0\nvllm:num_requests_running{engine=\"1\"} 4.0\n"
    "vllm:kv_cache_usage_perc{engine=\"0\"} 0.25\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.75\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.1\"} 5.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.5\"} 8.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\"} 10.0\n"
    "vllm:time_to_first_token_seconds_count{engine=\"0\"} 10.0\n"
    "vllm:time_to_first_token_seconds_sum{engine=\"0\"} 3.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"0.1\"} 0.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"0.5\"} 5.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"+Inf\"} 5.0\n"
    "vllm:time_to_first_token_seconds_count{engine=\"1\"} 5.0\n"
    "vllm:time_to_first_token_seconds_sum{engine=\"1\"} 1.5\n";

/* A: TTFT cumulative (0.1: 5, 0.5: 13, +Inf: 15). B adds 100 observations: 40 in (0, 0.1], 60 in
 * (0.1, 0.5], none above. */
static const char *const VLLM_B =
    "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\"} 70.0\n"
    "vllm:request_success_total{engine=\"1\",finished_reason=\"length\"} 45.0\n"
    "vllm:generation_tokens_total{engine=\"0\"} 6000.0\n"
    "vllm:prompt_tokens_total{engine=\"0\"} 12000.0\n"
    "vllm:prefix_cache_queries_total 12000.0\nvllm:prefix_cache_hits_total 3000.0\n"
    "vllm:num_requests_running{engine=\"0\"} 0.0\nvllm:num_requests_running{engine=\"1\"} 0.0\n"
    "vllm:kv_cache_usage_perc{engine=\"0\"} 0.0\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.1\"} 45.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.5\"} 68.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\"} 70.0\n"
    "vllm:time_to_first_token_seconds_count{engine=\"0\"} 70.0\n"
    "vllm:time_to_first_token_seconds_sum{engine=\"0\"} 13.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"0.1\"} 0.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"0.5\"} 45.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"+Inf\"} 45.0\n"
    "vllm:time_to_first_token_seconds_count{engine=\"1\"} 45.0\n"
    "vllm:time_to_first_token_seconds_sum{engine=\"1\"} 11.5\n";

static void test_telemetry_read_sums_vllm_series_over_engines(void **state) {
    telemetry_reading_t a;
    read_text(VLLM_A, &a);
    assert_string_equal(a.dialect, "vllm");
    NEAR(a.counter[TELEMETRY_C_REQUESTS], 15, 0);
    NEAR(a.gauge[TELEMETRY_G_RUNNING], 7, 0);
    NEAR(a.gauge[TELEMETRY_G_KV_USAGE], 50, 1e-9); /* mean of 25 % and 75 % */
    assert_true(a.histogram[TELEMETRY_H_TTFT].present);
    assert_false(a.histogram[TELEMETRY_H_TTFT].layout_mismatch);
    NEAR(a.histogram[TELEMETRY_H_TTFT].cumulative[1], 13, 0);
    assert_string_equal(telemetry_read_name(&a, TELEMETRY_H_TTFT),
                        "vllm:time_to_first_token_seconds");
}

static void test_telemetry_read_delta_interpolates_percentiles_in_the_bucket(void **state) {
    telemetry_reading_t a, b;
    telemetry_delta_t d;
    read_text(VLLM_A, &a);
    read_text(VLLM_B, &b);
    telemetry_read_delta(&a, &b, &d);
    assert_false(d.restarted);
    NEAR(d.counter[TELEMETRY_C_REQUESTS], 100, 0);
    NEAR(d.counter[TELEMETRY_C_GENERATION_TOKENS], 5000, 0);
    NEAR(d.counter[TELEMETRY_C_PREFIX_HITS] / d.counter[TELEMETRY_C_PREFIX_QUERIES], 0.25, 1e-12);
    const telemetry_histogram_delta_t *t = &d.histogram[TELEMETRY_H_TTFT];
    NEAR(t->count, 100, 0);
    NEAR(t->mean_s, 0.20, 1e-12); /* Δsum 20 / Δcount 100 */
    /* p50: rank 50 in (0.1, 0.5] holding 60 after 40: 0.1 + 0.4 * (50 - 40) / 60 */
    NEAR(t->p50_s, 0.1 + 0.4 * 10.0 / 60.0, 1e-12);
    /* p95: rank 95: 0.1 + 0.4 * 55 / 60 */
    NEAR(t->p95_s, 0.1 + 0.4 * 55.0 / 60.0, 1e-12);
    /* p50 of the first bucket: linear from 0 (rank 20 of 40 in (0, 0.1]) is checked by q 0.2 */
    bool at_least;
    double lo, hi;
    NEAR(telemetry_read_quantile_bounded(&t->delta, 0.2, &at_least, &lo, &hi), 0.05, 1e-12);
    assert_false(at_least);
    /* absent quantities stay absent: vLLM pages without a queue histogram give NAN */
    assert_true(isnan(d.histogram[TELEMETRY_H_QUEUE].p50_s));
    assert_true(isnan(d.histogram[TELEMETRY_H_QUEUE].count));
    assert_true(isnan(d.counter[TELEMETRY_C_GPU_ENERGY_MJ]));
}

static void test_telemetry_read_quantile_in_inf_bucket_is_a_lower_bound(void **state) {
    telemetry_buckets_t b = {.present = true,
                             .n = 3,
                             .le = {0.1, 0.5, INFINITY},
                             .cumulative = {1, 2, 100},
                             .count = 100};
    bool at_least;
    double lo, hi;
    NEAR(telemetry_read_quantile_bounded(&b, 0.99, &at_least, &lo, &hi), 0.5, 0);
    assert_true(at_least);
    b.cumulative[2] = 0;
    b.cumulative[0] = b.cumulative[1] = 0;
    assert_true(isnan(telemetry_read_quantile_bounded(&b, 0.5, &at_least, &lo, &hi))); /* empty */
}

static void test_telemetry_read_flags_a_counter_that_went_backwards(void **state) {
    telemetry_reading_t a, b;
    telemetry_delta_t d;
    read_text(VLLM_B, &a);
    read_text("vllm:request_success_total 3.0\nvllm:generation_tokens_total 90.0\n", &b);
    telemetry_read_delta(&a, &b, &d);
    assert_true(d.restarted);
    assert_string_equal(d.restart_why, "vllm:request_success_total went from 115 to 3");
    NEAR(d.counter[TELEMETRY_C_REQUESTS], 3, 0); /* b's own count after the reset */
    read_text("process_start_time_seconds 100\nvllm:request_success_total 1\n", &a);
    read_text("process_start_time_seconds 160\nvllm:request_success_total 9\n", &b);
    telemetry_read_delta(&a, &b, &d);
    assert_true(d.restarted);
    assert_non_null(strstr(d.restart_why, "process_start_time_seconds moved by 60 s"));
}

static void test_telemetry_read_refuses_percentiles_of_mismatched_layouts(void **state) {
    telemetry_reading_t a;
    read_text("x:y 1\n"
              "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"1\"} 1\n"
              "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\"} 2\n"
              "vllm:e2e_request_latency_seconds_count{engine=\"0\"} 2\n"
              "vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"2\"} 1\n"
              "vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"+Inf\"} 2\n"
              "vllm:e2e_request_latency_seconds_count{engine=\"1\"} 2\n",
              &a);
    assert_true(a.histogram[TELEMETRY_H_E2E].present);
    assert_true(a.histogram[TELEMETRY_H_E2E].layout_mismatch);
    bool at_least;
    double lo, hi;
    assert_true(isnan(
        telemetry_read_quantile_bounded(&a.histogram[TELEMETRY_H_E2E], 0.5, &at_least, &lo, &hi)));
}

static void test_telemetry_read_recognises_sglang_names(void **state) {
    telemetry_reading_t r =
        read_as("sglang:num_running_reqs{tp_rank=\"0\"} 12\nsglang:num_queue_reqs 3\n"
                "sglang:token_usage 0.4\nsglang:prompt_tokens_total 800\n"
                "sglang:cached_tokens_total 200\nsglang:generation_tokens_total 900\n"
                "sglang:num_requests_total 9\n"
                "sglang:time_per_output_token_seconds_bucket{le=\"0.05\"} 4\n"
                "sglang:time_per_output_token_seconds_bucket{le=\"+Inf\"} 5\n"
                "sglang:time_per_output_token_seconds_count 5\n"
                "sglang:time_per_output_token_seconds_sum 0.2\n",
                "sglang");
    NEAR(r.gauge[TELEMETRY_G_RUNNING], 12, 0);
    NEAR(r.gauge[TELEMETRY_G_WAITING], 3, 0);
    NEAR(r.gauge[TELEMETRY_G_KV_USAGE], 40, 1e-9);
    NEAR(r.counter[TELEMETRY_C_PREFIX_HITS], 200, 0);
    NEAR(r.counter[TELEMETRY_C_PREFIX_QUERIES], 800, 0);
    NEAR(r.counter[TELEMETRY_C_REQUESTS], 9, 0);
    /* the older ITL name is read when the new one is missing */
    assert_string_equal(telemetry_read_name(&r, TELEMETRY_H_ITL),
                        "sglang:time_per_output_token_seconds");
    assert_false(r.histogram[TELEMETRY_H_TTFT].present);
}

static void test_telemetry_read_recognises_dynamo_frontend_names(void **state) {
    telemetry_reading_t r = read_as("dynamo_frontend_inflight_requests{model=\"m\"} 6\n"
                                    "dynamo_frontend_queued_requests{model=\"m\"} 2\n"
                                    "dynamo_frontend_requests_total{model=\"m\"} 40\n"
                                    "dynamo_frontend_input_sequence_tokens_sum{model=\"m\"} 4000\n"
                                    "dynamo_frontend_input_sequence_tokens_count{model=\"m\"} 40\n"
                                    "dynamo_frontend_output_sequence_tokens_sum{model=\"m\"} 2000\n"
                                    "vllm:num_requests_running 99\n",
                                    "dynamo");
    NEAR(r.gauge[TELEMETRY_G_RUNNING], 6, 0); /* the frontend's, not the passed-through engine's */
    NEAR(r.counter[TELEMETRY_C_PROMPT_TOKENS], 4000, 0);
    NEAR(r.counter[TELEMETRY_C_GENERATION_TOKENS], 2000, 0);
    assert_true(isnan(r.gauge[TELEMETRY_G_KV_USAGE]));
}

static void test_telemetry_read_recognises_dcgm_names(void **state) {
    telemetry_reading_t r =
        read_as("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 80\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 60\n"
                "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300.5\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 200\n"
                "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1000\nDCGM_FI_DEV_FB_USED{gpu=\"1\"} 500\n"
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 7000\n"
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\"} 3000\n",
                "dcgm");
    assert_true(isnan(r.counter[TELEMETRY_C_REQUESTS]));
    NEAR(r.gauge[TELEMETRY_G_GPU_UTIL], 70, 0);
    NEAR(r.gauge[TELEMETRY_G_GPU_POWER_W], 500.5, 0);
    NEAR(r.gauge[TELEMETRY_G_GPU_FB_USED_MIB], 1500, 0);
    NEAR(r.counter[TELEMETRY_C_GPU_ENERGY_MJ], 10000, 0);
}

static void test_telemetry_read_add_sums_endpoints_and_keeps_absent_absent(void **state) {
    telemetry_reading_t a, b;
    telemetry_delta_t d, sum;
    read_text(VLLM_A, &a);
    read_text(VLLM_B, &b);
    telemetry_read_delta(&a, &b, &d);
    telemetry_read_delta_init(&sum);
    telemetry_read_add(&sum, &d);
    telemetry_read_add(&sum, &d);
    telemetry_read_finish(&sum);
    NEAR(sum.counter[TELEMETRY_C_REQUESTS], 200, 0);
    NEAR(sum.histogram[TELEMETRY_H_TTFT].count, 200, 0);
    NEAR(sum.histogram[TELEMETRY_H_TTFT].p50_s, d.histogram[TELEMETRY_H_TTFT].p50_s, 1e-12);
    assert_true(isnan(sum.counter[TELEMETRY_C_GPU_ENERGY_MJ]));
    assert_true(isnan(sum.histogram[TELEMETRY_H_PREFILL].mean_s));
}

/* DCGM's blank sentinels are "no value": the int64 blank (9223372036854775794 is "not
 * supported"), the fp64 one (2^47) and the int32 one; the energy counter beside them stays. */
static void test_telemetry_read_dcgm_blank_sentinels_are_absent(void **state) {
    telemetry_reading_t r =
        read_as("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"a\"} 9223372036854775794\n"
                "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"b\"} 50\n"
                "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"a\"} 140737488355328.000000\n"
                "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"a\"} 2147483634\n"
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"a\"} 2147483640\n",
                "dcgm");
    assert_true(isnan(r.gauge[TELEMETRY_G_GPU_UTIL]));
    assert_true(isnan(r.gauge[TELEMETRY_G_GPU_POWER_W]));
    assert_true(isnan(r.gauge[TELEMETRY_G_GPU_FB_USED_MIB]));
    assert_null(
        telemetry_read_name(&r, TELEMETRY_H__COUNT + TELEMETRY_C__COUNT + TELEMETRY_G_GPU_POWER_W));
    /* 2.1 MJ is a real energy reading, not the int32 blank */
    NEAR(r.counter[TELEMETRY_C_GPU_ENERGY_MJ], 2147483640.0, 0);
}

/* A page of DCGM_FI_PROF_* fields only is DCGM: utilisation from the graphics engine's active
 * ratio, per MIG instance (GPU_I_ID), in percent. */
static void test_telemetry_read_dcgm_prof_only_page_gives_utilisation(void **state) {
    telemetry_reading_t r = read_as(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"7\","
        "Hostname=\"h\"} 0.2\n"
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"8\","
        "Hostname=\"h\"} 0.6\n"
        "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"7\",Hostname=\"h\"} 0.1\n",
        "dcgm");
    NEAR(r.gauge[TELEMETRY_G_GPU_UTIL], 40, 1e-9);
    assert_true(isnan(r.gauge[TELEMETRY_G_GPU_POWER_W]));
    assert_true(isnan(r.counter[TELEMETRY_C_GPU_ENERGY_MJ]));
}

/* A MIG GPU's instances repeat its device-wide power and energy: counted once per GPU; frame
 * buffer is per instance and summed. Hostname= and hostname= both tell hosts apart. */
static void test_telemetry_read_dcgm_counts_a_mig_gpu_once_per_host(void **state) {
    telemetry_reading_t r;
    read_text("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"1\",Hostname=\"x\"} 300\n"
              "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"2\",Hostname=\"x\"} 300\n"
              "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"a\",hostname=\"y\"} 100\n"
              "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"1\","
              "Hostname=\"x\"} 5000\n"
              "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"2\","
              "Hostname=\"x\"} 5000\n"
              "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"1\",Hostname=\"x\"} 1000\n"
              "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"a\",GPU_I_ID=\"2\",Hostname=\"x\"} 2000\n",
              &r);
    NEAR(r.gauge[TELEMETRY_G_GPU_POWER_W], 400, 0); /* x's GPU once, y's GPU */
    NEAR(r.counter[TELEMETRY_C_GPU_ENERGY_MJ], 5000, 0);
    NEAR(r.gauge[TELEMETRY_G_GPU_FB_USED_MIB], 3000, 0);
}

/* The prefix cache's queries and hits, the KV usage (%) and the ITL histogram's count and name
 * that r read. */
static void assert_cache_and_itl(const telemetry_reading_t *r, double queries, double hits,
                                 double kv_pct, double itl_count, const char *itl_name) {
    NEAR(r->counter[TELEMETRY_C_PREFIX_QUERIES], queries, 0);
    NEAR(r->counter[TELEMETRY_C_PREFIX_HITS], hits, 0);
    NEAR(r->gauge[TELEMETRY_G_KV_USAGE], kv_pct, 1e-9);
    NEAR(r->histogram[TELEMETRY_H_ITL].count, itl_count, 0);
    assert_string_equal(telemetry_read_name(r, TELEMETRY_H_ITL), itl_name);
}

/* vLLM's deprecated names are read when the current ones are absent. */
static void test_telemetry_read_vllm_deprecated_names_are_fallbacks(void **state) {
    telemetry_reading_t r;
    read_text("vllm:gpu_prefix_cache_queries_total{engine=\"0\"} 100.0\n"
              "vllm:gpu_prefix_cache_hits_total{engine=\"0\"} 40.0\n"
              "vllm:gpu_cache_usage_perc{engine=\"0\"} 0.5\n"
              "vllm:time_per_output_token_seconds_bucket{le=\"0.01\"} 1.0\n"
              "vllm:time_per_output_token_seconds_bucket{le=\"+Inf\"} 2.0\n"
              "vllm:time_per_output_token_seconds_count 2.0\n"
              "vllm:time_per_output_token_seconds_sum 0.03\n",
              &r);
    assert_cache_and_itl(&r, 100, 40, 50, 2, "vllm:time_per_output_token_seconds");
    assert_string_equal(telemetry_read_name(&r, TELEMETRY_H__COUNT + TELEMETRY_C_PREFIX_HITS),
                        "vllm:gpu_prefix_cache_hits_total");
}

/* vLLM 0.10 publishes the deprecated names beside the current ones, with the same counts: only
 * the current ones are read, never both. */
static void test_telemetry_read_vllm_old_and_new_names_are_not_double_counted(void **state) {
    telemetry_reading_t r;
    read_text("vllm:prefix_cache_queries_total{engine=\"0\"} 32.0\n"
              "vllm:gpu_prefix_cache_queries_total{engine=\"0\"} 32.0\n"
              "vllm:prefix_cache_hits_total{engine=\"0\"} 16.0\n"
              "vllm:gpu_prefix_cache_hits_total{engine=\"0\"} 16.0\n"
              "vllm:kv_cache_usage_perc{engine=\"0\"} 0.1\n"
              "vllm:gpu_cache_usage_perc{engine=\"0\"} 0.1\n"
              "vllm:inter_token_latency_seconds_bucket{le=\"+Inf\"} 3.0\n"
              "vllm:inter_token_latency_seconds_count 3.0\n"
              "vllm:inter_token_latency_seconds_sum 0.03\n"
              "vllm:time_per_output_token_seconds_bucket{le=\"+Inf\"} 3.0\n"
              "vllm:time_per_output_token_seconds_count 3.0\n"
              "vllm:time_per_output_token_seconds_sum 0.03\n",
              &r);
    assert_cache_and_itl(&r, 32, 16, 10, 3, "vllm:inter_token_latency_seconds");
}

/* prometheus_client's *_created series (a counter's or histogram's creation time, 1.75e9) are
 * neither counts nor sums. */
static void test_telemetry_read_vllm_created_series_are_ignored(void **state) {
    telemetry_reading_t r;
    read_text("vllm:request_success_total{engine=\"0\",finished_reason=\"stop\"} 4.0\n"
              "vllm:request_success_created{engine=\"0\",finished_reason=\"stop\"} 1.75e9\n"
              "vllm:prompt_tokens_total{engine=\"0\"} 10.0\n"
              "vllm:prompt_tokens_created{engine=\"0\"} 1.75e9\n"
              "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.1\"} 4.0\n"
              "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\"} 4.0\n"
              "vllm:time_to_first_token_seconds_count{engine=\"0\"} 4.0\n"
              "vllm:time_to_first_token_seconds_sum{engine=\"0\"} 0.2\n"
              "vllm:time_to_first_token_seconds_created{engine=\"0\"} 1.75e9\n",
              &r);
    NEAR(r.counter[TELEMETRY_C_REQUESTS], 4, 0);
    NEAR(r.counter[TELEMETRY_C_PROMPT_TOKENS], 10, 0);
    NEAR(r.histogram[TELEMETRY_H_TTFT].count, 4, 0);
    NEAR(r.histogram[TELEMETRY_H_TTFT].sum, 0.2, 1e-12);
    assert_false(r.histogram[TELEMETRY_H_TTFT].layout_mismatch);
}

/* The `engine` label (vLLM V1, one series per engine core): counters and histograms summed over
 * engines, the KV gauge averaged. */
static void test_telemetry_read_vllm_engine_label_is_summed(void **state) {
    telemetry_reading_t r;
    read_text("vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 30.0\n"
              "vllm:generation_tokens_total{engine=\"1\",model_name=\"m\"} 70.0\n"
              "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.2\n"
              "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.4\n",
              &r);
    NEAR(r.counter[TELEMETRY_C_GENERATION_TOKENS], 100, 0);
    NEAR(r.gauge[TELEMETRY_G_KV_USAGE], 30, 1e-9);
}

/* Every observation 130 ms in vLLM's (0.1, 0.25] bucket: the p50 estimate (175 ms) carries its
 * bucket as bounds and is bucket-limited; the mean is exact. */
static void test_telemetry_read_estimate_carries_its_bucket(void **state) {
    telemetry_reading_t a, b;
    telemetry_delta_t d;
    read_text("vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 0.0\n"
              "vllm:time_to_first_token_seconds_bucket{le=\"0.25\"} 0.0\n"
              "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 0.0\n"
              "vllm:time_to_first_token_seconds_count 0.0\n"
              "vllm:time_to_first_token_seconds_sum 0.0\n",
              &a);
    read_text("vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 0.0\n"
              "vllm:time_to_first_token_seconds_bucket{le=\"0.25\"} 10.0\n"
              "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 10.0\n"
              "vllm:time_to_first_token_seconds_count 10.0\n"
              "vllm:time_to_first_token_seconds_sum 1.3\n",
              &b);
    telemetry_read_delta(&a, &b, &d);
    const telemetry_histogram_delta_t *h = &d.histogram[TELEMETRY_H_TTFT];
    NEAR(h->mean_s, 0.130, 1e-12);
    NEAR(h->p50_s, 0.175, 1e-12);
    NEAR(h->bounds_s[0][0], 0.1, 0);
    NEAR(h->bounds_s[0][1], 0.25, 0);
    assert_true(telemetry_read_bucket_limited(h->p50_s, h->bounds_s[0][0], h->bounds_s[0][1]));
    assert_false(telemetry_read_bucket_limited(1.0, 0.9, 1.0));
}

/* A page of tests/data/metrics (fixtures reproducing what real captures showed). */
static prom_page_t *read_fixture(const char *name, telemetry_reading_t *out) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/metrics/%s", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    prom_page_t *page = prom_page_parse(text, n);
    assert_non_null(page);
    telemetry_read_page(page, out);
    return page;
}

/* SGLang 0.4 has no num_requests_total: the finished requests are the e2e histogram's count. */
static void test_telemetry_read_sglang_requests_from_e2e_count(void **state) {
    telemetry_reading_t r;
    prom_page_t *page = read_fixture("sglang_without_requests_total.prom", &r);
    assert_string_equal(r.dialect, "sglang");
    NEAR(r.counter[TELEMETRY_C_REQUESTS], 200, 0);
    assert_string_equal(telemetry_read_name(&r, TELEMETRY_H__COUNT + TELEMETRY_C_REQUESTS),
                        "sglang:e2e_request_latency_seconds_count");
    NEAR(r.gauge[TELEMETRY_G_WAITING], 30, 0);
    NEAR(r.histogram[TELEMETRY_H_ITL].count, 31800, 0);
    prom_page_destroy(&page);
}

/* vLLM 0.10: engine label, *_created gauges, deprecated names beside the new: each figure once. */
static void test_telemetry_read_vllm_v1_page_counts_each_figure_once(void **state) {
    telemetry_reading_t r;
    prom_page_t *page = read_fixture("vllm_v1_engine_created_deprecated.prom", &r);
    assert_int_equal(page->lines_skipped, 0);
    NEAR(r.counter[TELEMETRY_C_REQUESTS], 10, 0);
    NEAR(r.counter[TELEMETRY_C_PREFIX_QUERIES], 400, 0);
    NEAR(r.counter[TELEMETRY_C_PREFIX_HITS], 100, 0);
    NEAR(r.gauge[TELEMETRY_G_KV_USAGE], 50, 1e-9);
    NEAR(r.histogram[TELEMETRY_H_TTFT].count, 10, 0);
    NEAR(r.histogram[TELEMETRY_H_TTFT].sum, 1.3, 1e-12);
    prom_page_destroy(&page);
}

/* The README's page: spaces after commas, "..." lines skipped, the blank utilisation absent. */
static void test_telemetry_read_dcgm_readme_style_page(void **state) {
    telemetry_reading_t r;
    prom_page_t *page = read_fixture("dcgm_readme_style_blank.prom", &r);
    assert_int_equal(page->lines_skipped, 2);
    assert_string_equal(r.dialect, "dcgm");
    assert_true(isnan(r.gauge[TELEMETRY_G_GPU_UTIL]));
    NEAR(r.gauge[TELEMETRY_G_GPU_POWER_W], 250.5, 1e-9);
    NEAR(r.gauge[TELEMETRY_G_GPU_FB_USED_MIB], 1024, 0);
    NEAR(r.counter[TELEMETRY_C_GPU_ENERGY_MJ], 5e6, 0);
    prom_page_destroy(&page);
}

/* A MIG GPU's profiling-only page: utilisation from GR_ENGINE_ACTIVE over its instances. */
static void test_telemetry_read_dcgm_prof_mig_page(void **state) {
    telemetry_reading_t r;
    prom_page_t *page = read_fixture("dcgm_prof_mig.prom", &r);
    assert_string_equal(r.dialect, "dcgm");
    NEAR(r.gauge[TELEMETRY_G_GPU_UTIL], 50, 1e-9);
    prom_page_destroy(&page);
}

/* A Dynamo component's page is no frontend's: no dialect, every figure absent. */
static void test_telemetry_read_dynamo_component_page_is_unrecognised(void **state) {
    telemetry_reading_t r;
    prom_page_t *page = read_fixture("dynamo_component_only.prom", &r);
    assert_null(r.dialect);
    assert_true(isnan(r.counter[TELEMETRY_C_REQUESTS]));
    assert_true(isnan(r.gauge[TELEMETRY_G_RUNNING]));
    prom_page_destroy(&page);
}

UNIT_MAIN(cmocka_unit_test(test_telemetry_read_sums_vllm_series_over_engines),
          cmocka_unit_test(test_telemetry_read_delta_interpolates_percentiles_in_the_bucket),
          cmocka_unit_test(test_telemetry_read_quantile_in_inf_bucket_is_a_lower_bound),
          cmocka_unit_test(test_telemetry_read_flags_a_counter_that_went_backwards),
          cmocka_unit_test(test_telemetry_read_refuses_percentiles_of_mismatched_layouts),
          cmocka_unit_test(test_telemetry_read_recognises_sglang_names),
          cmocka_unit_test(test_telemetry_read_recognises_dynamo_frontend_names),
          cmocka_unit_test(test_telemetry_read_recognises_dcgm_names),
          cmocka_unit_test(test_telemetry_read_add_sums_endpoints_and_keeps_absent_absent),
          cmocka_unit_test(test_telemetry_read_dcgm_blank_sentinels_are_absent),
          cmocka_unit_test(test_telemetry_read_dcgm_prof_only_page_gives_utilisation),
          cmocka_unit_test(test_telemetry_read_dcgm_counts_a_mig_gpu_once_per_host),
          cmocka_unit_test(test_telemetry_read_vllm_deprecated_names_are_fallbacks),
          cmocka_unit_test(test_telemetry_read_vllm_old_and_new_names_are_not_double_counted),
          cmocka_unit_test(test_telemetry_read_vllm_created_series_are_ignored),
          cmocka_unit_test(test_telemetry_read_vllm_engine_label_is_summed),
          cmocka_unit_test(test_telemetry_read_estimate_carries_its_bucket),
          cmocka_unit_test(test_telemetry_read_sglang_requests_from_e2e_count),
          cmocka_unit_test(test_telemetry_read_vllm_v1_page_counts_each_figure_once),
          cmocka_unit_test(test_telemetry_read_dcgm_readme_style_page),
          cmocka_unit_test(test_telemetry_read_dcgm_prof_mig_page),
          cmocka_unit_test(test_telemetry_read_dynamo_component_page_is_unrecognised))
