#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config_case.h"
#include "unit_main.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "metrics.h"

#define BASE "target: {endpoints: [\"http://127.0.0.1:1\"]}\nlimits: {duration: 10s}\n"

static void test_config_slo_reads_case_study_3_regime(void **state) {
    config_t cfg;
    config_case_load(&cfg, BASE "slo:\n  ttfc: {p95: 750ms}\n  itl: {p95: 75ms}\n"
                                "  errors: {max_pct: 2}\n");
    assert_int_equal(cfg.slo.n, 3);
    assert_int_equal(cfg.slo.items[0].metric, METRIC_TTFC);
    assert_int_equal(cfg.slo.items[0].stat, CONFIG_SLO_PERCENTILE);
    assert_true(cfg.slo.items[0].percentile == 95);
    assert_int_equal(cfg.slo.items[0].bound_ns, 750000000);
    assert_int_equal(cfg.slo.items[1].metric, METRIC_ITL);
    assert_int_equal(cfg.slo.items[1].bound_ns, 75000000);
    assert_int_equal(cfg.slo.items[2].stat, CONFIG_SLO_ERROR_PCT);
    assert_true(cfg.slo.items[2].max_pct == 2);
    assert_false(cfg.capacity.given);
    config_free(&cfg);
}

static void test_config_slo_reads_several_statistics_of_one_metric(void **state) {
    config_t cfg;
    config_case_load(&cfg, BASE "slo:\n  e2e: {p50: 2s, p99.9: 20s, mean: 3s, max: 1m}\n");
    assert_int_equal(cfg.slo.n, 4);
    assert_true(cfg.slo.items[1].percentile == 99.9);
    assert_int_equal(cfg.slo.items[2].stat, CONFIG_SLO_MEAN);
    assert_int_equal(cfg.slo.items[3].stat, CONFIG_SLO_MAX);
    assert_int_equal(cfg.slo.items[3].bound_ns, 60000000000LL);
    char key[16];
    config_slo_key(&cfg.slo.items[1], key, sizeof key);
    assert_string_equal(key, "p99.9");
    config_free(&cfg);
}

static void test_config_slo_and_capacity_written_back_load_equal(void **state) {
    config_t cfg, again;
    config_case_load(&cfg, BASE "slo:\n  ttfc: {p95: 750ms, p99: 2s}\n  errors: {max_pct: 2.5}\n"
                                "  tpot: {mean: 40ms}\n"
                                "capacity: {axis: concurrency, start: 4, precision: 2, max: 256,"
                                " repeat_near_boundary: 3, target: 24}\n");
    config_case_reload(&again, &cfg);
    assert_int_equal(again.slo.n, cfg.slo.n);
    assert_memory_equal(again.slo.items, cfg.slo.items, cfg.slo.n * sizeof cfg.slo.items[0]);
    assert_true(again.capacity.given);
    assert_int_equal(again.capacity.axis, CAPACITY_AXIS_CONCURRENCY);
    assert_true(again.capacity.start == 4 && again.capacity.max == 256);
    assert_true(again.capacity.precision == 2 && !again.capacity.precision_relative);
    assert_int_equal(again.capacity.repeat_near_boundary, 3);
    assert_true(again.capacity.target == 24);
    config_free(&cfg);
    config_free(&again);
}

static void test_config_capacity_defaults_and_percent_precision(void **state) {
    config_t cfg;
    config_case_load(&cfg, BASE "capacity: {precision: 2%}\n");
    assert_true(cfg.capacity.given);
    assert_int_equal(cfg.capacity.axis, CAPACITY_AXIS_RATE);
    assert_true(cfg.capacity.start == 1 && cfg.capacity.max == 1000);
    assert_true(cfg.capacity.precision == 2 && cfg.capacity.precision_relative);
    assert_int_equal(cfg.capacity.repeat_near_boundary, 1);
    config_free(&cfg);
}

static void test_config_capacity_rho_takes_requests_per_session_from_the_workload(void **state) {
    config_t cfg;
    config_case_load(&cfg, BASE "workload: {kind: chat, turns: 5}\ncapacity: {axis: rho}\n");
    assert_true(cfg.capacity.requests_per_session == 5);
    config_free(&cfg);
    config_case_load(&cfg, BASE "capacity: {axis: rho, requests_per_session: 15}\n");
    assert_true(cfg.capacity.requests_per_session == 15);
    config_free(&cfg);
}

static const message_case_t bad_slo_keys[] = {
    {BASE "slo:\n  tffc: {p95: 1s}\n",
     "bad.yaml:4:3: slo.tffc: unknown key 'tffc'; did you mean 'ttfc'?"},
    {BASE "slo:\n  ttfc: {p100: 1s}\n",
     "bad.yaml:4:10: slo.ttfc.p100: expected a percentile (p50, p95, p99.9), mean or max, got "
     "'p100'"},
    {BASE "slo:\n  ttfc: {p95: 0ms}\n",
     "bad.yaml:4:15: slo.ttfc.p95: expected a duration greater than 0, got '0ms'"},
    {BASE "slo:\n  ttfc: 1s\n",
     "bad.yaml:4:9: slo.ttfc: expected a mapping of statistics to bounds such as {p95: "
     "750ms}, got '1s'"},
    {BASE "slo:\n  errors: {max_pct: 120}\n",
     "bad.yaml:4:21: slo.errors.max_pct: expected a percentage from 0 to 100, got '120'"},
    {BASE "slo:\n  errors: {pct: 1}\n",
     "bad.yaml:4:12: slo.errors.pct: unknown key 'pct'; valid keys here: max_pct"},
    {BASE "capacity: {axis: qps}\n",
     "bad.yaml:3:18: capacity.axis: expected one of rate, concurrency, rho, got 'qps'"},
    {BASE "capacity: {start: 10, max: 5}\n",
     "bad.yaml:3:23: capacity.max: max 5 is below start 10"},
    {BASE "capacity: {precision: 0}\n",
     "bad.yaml:3:23: capacity.precision: expected a number > 0 (in the axis' unit) or a "
     "percentage of the frontier such as 5%, got '0'"},
    {BASE "capacity: {axis: concurrency, start: 1.5}\n",
     "bad.yaml:3:11: capacity: axis concurrency wants whole numbers for start and max"},
    {BASE "workload: {kind: graph, graph: {shape: fanout}}\ncapacity: {axis: rho}\n",
     "bad.yaml:4:11: capacity.requests_per_session: axis rho needs the requests one session "
     "makes, which a fanout graph does not fix: give capacity.requests_per_session"},
    {BASE "capacity: {max: 64, target: 100}\n",
     "bad.yaml:3:29: capacity.target: target 100 is above max 64: the search runs no level above "
     "max, so it could never show the target carried"},
    {BASE "capacity: {axis: concurrency, target: 2.5}\n",
     "bad.yaml:3:39: capacity.target: axis concurrency wants a whole number of sessions, got "
     "'2.5'"},
    {BASE "capacity: {target: -3}\n", "bad.yaml:3:20: capacity.target: expected a number > 0, "
                                      "got '-3'"},
};

static void test_config_slo_refusals_name_line_and_key(void **state) {
    CONFIG_CASE_REFUSALS(bad_slo_keys);
}

UNIT_MAIN(cmocka_unit_test(test_config_slo_reads_case_study_3_regime),
          cmocka_unit_test(test_config_slo_reads_several_statistics_of_one_metric),
          cmocka_unit_test(test_config_slo_and_capacity_written_back_load_equal),
          cmocka_unit_test(test_config_capacity_defaults_and_percent_precision),
          cmocka_unit_test(test_config_capacity_rho_takes_requests_per_session_from_the_workload),
          cmocka_unit_test(test_config_slo_refusals_name_line_and_key))
