/* common/config_telemetry: server_metrics (off by default, auto, or URLs), gpu_metrics and
 * scrape_interval are read, refused with a message naming the key, and written back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdlib.h>

#include "config.h"
#include "config_case.h"

#define BASE "limits: {max_requests: 1}\n"

static void test_config_telemetry_is_auto_by_default_with_a_one_second_interval(void **state) {
    config_t cfg;
    config_case_load(&cfg, BASE);
    assert_int_equal(cfg.telemetry.server_metrics, SERVER_METRICS_AUTO);
    assert_int_equal(cfg.telemetry.n_gpu_urls, 0);
    assert_int_equal(cfg.telemetry.scrape_interval_ns, 1000000000LL);
    config_free(&cfg);
}

static void test_config_telemetry_reads_auto_urls_gpu_and_interval(void **state) {
    config_t cfg;
    config_case_load(&cfg, BASE "server_metrics: auto\ngpu_metrics: http://127.0.0.1:9400/metrics\n"
                                "scrape_interval: 250ms\n");
    assert_int_equal(cfg.telemetry.server_metrics, SERVER_METRICS_AUTO);
    assert_int_equal(cfg.telemetry.n_gpu_urls, 1);
    assert_string_equal(cfg.telemetry.gpu_urls[0], "http://127.0.0.1:9400/metrics");
    assert_int_equal(cfg.telemetry.scrape_interval_ns, 250000000LL);
    config_free(&cfg);
    config_case_load(&cfg, BASE "server_metrics: [http://127.0.0.1:1/metrics, "
                                "http://127.0.0.1:2/m]\n");
    assert_int_equal(cfg.telemetry.server_metrics, SERVER_METRICS_URLS);
    assert_int_equal(cfg.telemetry.n_server_urls, 2);
    assert_string_equal(cfg.telemetry.server_urls[1], "http://127.0.0.1:2/m");
    config_free(&cfg);
}

static void test_config_telemetry_round_trips_through_config_yaml(void **state) {
    config_t cfg, again, copy;
    config_case_load(&cfg, BASE "server_metrics: [\"http://127.0.0.1:1/metrics\"]\n"
                                "gpu_metrics: [http://127.0.0.1:9400/metrics]\n"
                                "scrape_interval: 2s\n");
    char *yaml = config_to_yaml(&cfg);
    assert_non_null(yaml);
    config_case_load(&again, yaml);
    assert_int_equal(again.telemetry.server_metrics, SERVER_METRICS_URLS);
    assert_string_equal(again.telemetry.server_urls[0], "http://127.0.0.1:1/metrics");
    assert_string_equal(again.telemetry.gpu_urls[0], "http://127.0.0.1:9400/metrics");
    assert_int_equal(again.telemetry.scrape_interval_ns, 2000000000LL);
    assert_int_equal(config_copy(&copy, &again), 0);
    assert_string_equal(copy.telemetry.gpu_urls[0], "http://127.0.0.1:9400/metrics");
    free(yaml);
    config_free(&copy);
    config_free(&again);
    config_free(&cfg);
}

static void test_config_telemetry_refuses_bad_values_naming_the_key(void **state) {
    static const message_case_t cases[] = {
        {BASE "server_metrics: sometimes\n",
         "bad.yaml:2:17: server_metrics: expected auto, none or a list of /metrics URLs, got "
         "\"sometimes\""},
        {BASE "server_metrics: [ftp://x/metrics]\n",
         "bad.yaml:2:18: server_metrics[0]: expected a URL starting with http:// or https://, got "
         "'ftp://x/metrics'"},
        {BASE "gpu_metrics: {a: 1}\n", "bad.yaml:2:14: gpu_metrics: expected a list of URLs, got "
                                       "a mapping"},
        {BASE "scrape_interval: 1ms\n",
         "bad.yaml:2:18: scrape_interval: a scrape every 1.000 ms is too often for a server; use "
         "10ms or more"},
    };
    CONFIG_CASE_REFUSALS(cases);
}

/* `none` (and the older `off`) turns the scrape off; config.yaml writes it back as none. */
static void test_config_telemetry_none_turns_it_off(void **state) {
    config_t cfg, again;
    config_case_load(&cfg, BASE "server_metrics: none\n");
    assert_int_equal(cfg.telemetry.server_metrics, SERVER_METRICS_OFF);
    char *yaml = config_to_yaml(&cfg);
    assert_non_null(yaml);
    assert_non_null(strstr(yaml, "server_metrics: none"));
    config_case_load(&again, yaml);
    assert_int_equal(again.telemetry.server_metrics, SERVER_METRICS_OFF);
    free(yaml);
    config_free(&again);
    config_free(&cfg);
    config_case_load(&cfg, BASE "server_metrics: off\n");
    assert_int_equal(cfg.telemetry.server_metrics, SERVER_METRICS_OFF);
    config_free(&cfg);
}

UNIT_MAIN(cmocka_unit_test(test_config_telemetry_none_turns_it_off),
          cmocka_unit_test(test_config_telemetry_is_auto_by_default_with_a_one_second_interval),
          cmocka_unit_test(test_config_telemetry_reads_auto_urls_gpu_and_interval),
          cmocka_unit_test(test_config_telemetry_round_trips_through_config_yaml),
          cmocka_unit_test(test_config_telemetry_refuses_bad_values_naming_the_key))
