/* common/config_net: where a request to an endpoint goes (base URL, target.path, a whole request
 * URL), target.tls and target.proxy read, refused with a message naming the key, written back
 * and copied. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_case.h"

#define WORK "workload: {kind: requests}\nlimits: {max_requests: 1}\n"

static void assert_request_url(const config_t *cfg, size_t endpoint, const char *expected) {
    char *url = config_request_url(&cfg->target, cfg->target.endpoints[endpoint]);
    assert_non_null(url);
    assert_string_equal(url, expected);
    free(url);
}

/* With target (a target section) and WORK loaded, a request to endpoint 0 goes to url0, and to
 * endpoint 1 (unless url1 is NULL) to url1. */
static void assert_request_urls(const char *target, const char *url0, const char *url1) {
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s%s", target, WORK);
    config_t cfg;
    config_case_load(&cfg, yaml);
    assert_request_url(&cfg, 0, url0);
    if (url1)
        assert_request_url(&cfg, 1, url1);
    config_free(&cfg);
}

static void test_config_net_base_url_gets_v1_and_the_api_path_once(void **state) {
    assert_request_urls("target: {endpoints: [http://h:8000/v1/, http://g:1/llama/v1]}\n",
                        "http://h:8000/v1/chat/completions",
                        "http://g:1/llama/v1/chat/completions");
    assert_request_urls("target: {endpoints: [http://h:8000], api: completions}\n",
                        "http://h:8000/v1/completions", NULL);
}

static void test_config_net_whole_request_url_is_the_path_never_doubled(void **state) {
    config_t cfg;
    config_case_load(
        &cfg, "target:\n  endpoints: [http://h:8000/v1/chat/completions,\n"
              "    \"http://az/openai/deployments/d/chat/completions?api-version=1\"]\n" WORK);
    assert_string_equal(cfg.target.endpoints[0], "http://h:8000/v1/chat/completions");
    assert_request_url(&cfg, 0, "http://h:8000/v1/chat/completions");
    assert_request_url(&cfg, 1, "http://az/openai/deployments/d/chat/completions?api-version=1");
    config_free(&cfg);
}

static void test_config_net_path_replaces_the_api_path(void **state) {
    assert_request_urls(
        "target:\n  endpoints: [http://az:443/v1]\n"
        "  path: /openai/deployments/d/chat/completions?api-version=2024-06-01\n",
        "http://az:443/openai/deployments/d/chat/completions?api-version=2024-06-01", NULL);
}

static void test_config_net_endpoint_api_and_base(void **state) {
    config_api_t api;
    char base[256];
    assert_int_equal(config_endpoint_api("http://h/v1/chat/completions?x=1", &api), 0);
    assert_int_equal(api, API_CHAT);
    assert_int_equal(config_endpoint_api("https://h:1/v1/completions/", &api), 0);
    assert_int_equal(api, API_COMPLETIONS);
    assert_int_equal(config_endpoint_api("http://h:8000", &api), -1);
    assert_int_equal(config_endpoint_api("http://completions:8000/v1", &api), -1);
    assert_string_equal(config_endpoint_base("http://h:1/v1/chat/completions?x", base, sizeof base),
                        "http://h:1");
    assert_string_equal(config_endpoint_base("http://g/llama/v1/completions", base, sizeof base),
                        "http://g/llama");
    assert_string_equal(config_endpoint_base("http://h:1", base, sizeof base), "http://h:1");
}

static void test_config_net_tls_and_proxy_load_write_back_and_copy(void **state) {
    config_t cfg, again, copy;
    config_case_load(&cfg,
                     "target:\n  endpoints: [https://h:443]\n"
                     "  tls: {ca_file: /etc/ca.pem, client_cert: /c.pem, client_key: /k.pem}\n"
                     "  proxy: http://user:pw@proxy:3128\n" WORK);
    assert_string_equal(cfg.target.tls.ca_file, "/etc/ca.pem");
    assert_false(cfg.target.tls.insecure);
    assert_string_equal(cfg.target.tls.client_key, "/k.pem");
    assert_int_equal(cfg.target.proxy, CONFIG_PROXY_URL);
    char label[256];
    assert_string_equal(config_proxy_label(&cfg.target, label, sizeof label),
                        "http://user:<redacted>@proxy:3128");
    char *wire = config_to_yaml_unredacted(&cfg), *file = config_to_yaml(&cfg);
    assert_non_null(strstr(file, "proxy: \"http://user:<redacted>@proxy:3128\""));
    assert_null(strstr(file, "pw@"));
    config_case_load(&again, wire);
    assert_string_equal(again.target.tls.client_cert, "/c.pem");
    assert_string_equal(again.target.proxy_url, "http://user:pw@proxy:3128");
    assert_int_equal(config_copy(&copy, &again), 0);
    assert_string_equal(copy.target.tls.ca_file, "/etc/ca.pem");
    assert_string_equal(copy.target.proxy_url, "http://user:pw@proxy:3128");
    free(wire);
    free(file);
    config_free(&copy);
    config_free(&again);
    config_free(&cfg);
    config_case_load(&cfg,
                     "target: {endpoints: [https://h], tls: {insecure: true}, proxy: env}\n" WORK);
    assert_true(cfg.target.tls.insecure);
    assert_string_equal(config_proxy_label(&cfg.target, label, sizeof label), "env");
    config_free(&cfg);
}

static void test_config_net_defaults_are_no_proxy_and_verified_tls(void **state) {
    config_t cfg;
    config_case_load(&cfg, WORK);
    assert_int_equal(cfg.target.proxy, CONFIG_PROXY_NONE);
    assert_null(cfg.target.tls.ca_file);
    assert_false(cfg.target.tls.insecure);
    assert_null(cfg.target.path);
    assert_true(cfg.target.preflight);
    assert_int_equal(cfg.limits.endpoint_dead_after_ns, 10000000000LL);
    config_free(&cfg);
}

static void test_config_net_preflight_and_dead_endpoint_breaker_load_and_write_back(void **state) {
    config_t cfg, again;
    config_case_load(&cfg, "target: {preflight: false}\nworkload: {kind: requests}\n"
                           "limits: {max_requests: 1, endpoint_dead_after: 0s}\n");
    assert_false(cfg.target.preflight);
    assert_int_equal(cfg.limits.endpoint_dead_after_ns, 0);
    char *yaml = config_to_yaml(&cfg);
    assert_non_null(strstr(yaml, "  preflight: false\n"));
    config_case_load(&again, yaml);
    assert_false(again.target.preflight);
    assert_int_equal(again.limits.endpoint_dead_after_ns, 0);
    free(yaml);
    config_free(&again);
    config_free(&cfg);
}

static const message_case_t refusals[] = {
    {"target: {tls: {ca_fle: /x}}\n",
     "bad.yaml:1:16: target.tls.ca_fle: unknown key 'ca_fle'; did you mean 'ca_file'?"},
    {"target: {tls: {client_cert: /c.pem}}\n",
     "bad.yaml:1:29: target.tls.client_cert: client_cert is given without client_key; mTLS needs "
     "both"},
    {"target: {tls: {insecure: true, ca_file: /ca.pem}}\n",
     "bad.yaml:1:41: target.tls.ca_file: insecure: true skips verification, so ca_file would be "
     "unused; keep one"},
    {"target: {proxy: 127.0.0.1:3128}\n", "bad.yaml:1:17: target.proxy: expected none, env or a "
                                          "proxy URL (http://, https://, socks5://, "
                                          "...), got \"127.0.0.1:3128\""},
    {"target: {path: v1/chat}\n",
     "bad.yaml:1:16: target.path: expected a path from the host's root, e.g. "
     "/openai/deployments/NAME/chat/completions?api-version=2024-06-01, got \"v1/chat\""},
    {"target: {endpoints: [http://h/v1/chat/completions], path: /x}\n",
     "bad.yaml:1:22: target.endpoints[0]: 'http://h/v1/chat/completions' is a whole request URL "
     "and target.path is given as well; give the base URL (scheme, host, port) with target.path, "
     "or the whole URL without it"},
    {"target: {endpoints: [http://h/v1/completions]}\n",
     "bad.yaml:1:22: target.endpoints[0]: 'http://h/v1/completions' is a /completions URL but "
     "target.api is chat; set target.api: completions, or give the base URL"},
    {"target: {endpoints: [\"http://h:1/v1?x=1\"]}\n",
     "bad.yaml:1:22: target.endpoints[0]: URL 'http://h:1/v1?x=1' is a base URL and takes no "
     "query or fragment (a query may follow a whole request URL, "
     ".../chat/completions?api-version=..., or target.path)"},
};

static void test_config_net_refuses_bad_values_naming_the_key(void **state) {
    CONFIG_CASE_REFUSALS(refusals);
}

UNIT_MAIN(cmocka_unit_test(test_config_net_base_url_gets_v1_and_the_api_path_once),
          cmocka_unit_test(test_config_net_whole_request_url_is_the_path_never_doubled),
          cmocka_unit_test(test_config_net_path_replaces_the_api_path),
          cmocka_unit_test(test_config_net_endpoint_api_and_base),
          cmocka_unit_test(test_config_net_tls_and_proxy_load_write_back_and_copy),
          cmocka_unit_test(test_config_net_defaults_are_no_proxy_and_verified_tls),
          cmocka_unit_test(test_config_net_preflight_and_dead_endpoint_breaker_load_and_write_back),
          cmocka_unit_test(test_config_net_refuses_bad_values_naming_the_key))
