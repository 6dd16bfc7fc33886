/* target.headers values from the environment or a file ({env: NAME}, {file: PATH}): loaded,
 * written back as the same form (never the value), resolved by config_header_value, and refused
 * with the key named when malformed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "temp_file.h"
#include "unit_main.h"

static int load(config_t *c, const char *headers, config_error_t *err) {
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "target:\n  endpoints: [http://127.0.0.1:9]\n  headers: %s\n"
             "workload:\n  kind: requests\n  input_tokens: 8\n  output_tokens: 8\n"
             "scheduler:\n  kind: concurrent\n  concurrency: 1\nlimits:\n  max_requests: 1\n",
             headers);
    memset(c, 0, sizeof *c);
    return config_load_string(c, yaml, strlen(yaml), "t.yaml", err);
}

static void test_header_from_env_is_read_at_resolution_and_written_back_as_its_name(void **st) {
    config_t c;
    config_error_t err;
    assert_int_equal(load(&c, "{X-Api-Key: {env: STAMPEDE_UNIT_HDR}, X-Team: infra}", &err), 0);
    assert_int_equal(c.target.n_headers, 2);
    assert_null(c.target.headers[0].value);
    assert_string_equal(c.target.headers[0].value_env, "STAMPEDE_UNIT_HDR");
    char *value = NULL;
    unsetenv("STAMPEDE_UNIT_HDR");
    assert_int_equal(config_header_value(&c, &c.target.headers[0], &value, &err), -1);
    assert_string_equal(err.key, "target.headers.X-Api-Key");
    assert_non_null(strstr(err.message, "STAMPEDE_UNIT_HDR is not set"));
    setenv("STAMPEDE_UNIT_HDR", "s3cret-value", 1);
    assert_int_equal(config_header_value(&c, &c.target.headers[0], &value, &err), 0);
    assert_string_equal(value, "s3cret-value");
    free(value);
    assert_int_equal(config_header_value(&c, &c.target.headers[1], &value, &err), 0);
    assert_string_equal(value, "infra");
    free(value);
    char *text = config_to_yaml_unredacted(&c);
    assert_non_null(text);
    assert_null(strstr(text, "s3cret-value"));
    config_t again;
    memset(&again, 0, sizeof again);
    assert_int_equal(config_load_string(&again, text, strlen(text), "again", &err), 0);
    assert_string_equal(again.target.headers[0].value_env, "STAMPEDE_UNIT_HDR");
    free(text);
    config_free(&again);
    config_free(&c);
    unsetenv("STAMPEDE_UNIT_HDR");
}

static void test_header_from_file_reads_its_first_line(void **st) {
    char path[] = "/tmp/stampede-hdr.XXXXXX";
    temp_file_write(path, "  tok-123 \n# rest\n");
    char headers[256];
    snprintf(headers, sizeof headers, "{Authorization: {file: %s}}", path);
    config_t c, copy;
    config_error_t err;
    assert_int_equal(load(&c, headers, &err), 0);
    assert_string_equal(c.target.headers[0].value_file, path);
    memset(&copy, 0, sizeof copy);
    assert_int_equal(config_copy(&copy, &c), 0);
    char *value = NULL;
    assert_int_equal(config_header_value(&copy, &copy.target.headers[0], &value, &err), 0);
    assert_string_equal(value, "tok-123");
    free(value);
    unlink(path);
    assert_int_equal(config_header_value(&c, &c.target.headers[0], &value, &err), -1);
    assert_non_null(strstr(err.message, "cannot read"));
    config_free(&copy);
    config_free(&c);
}

static void test_header_source_malformed_is_refused_with_the_key(void **st) {
    const char *bad[] = {"{X-Key: {env: A, file: /b}}", "{X-Key: {}}", "{X-Key: {env: sk-123}}",
                         "{X-Key: {vault: x}}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        config_t c;
        config_error_t err;
        assert_int_equal(load(&c, bad[i], &err), -1);
        assert_non_null(strstr(err.key, "target.headers.X-Key"));
        assert_null(strstr(err.message, "sk-123"));
        config_free(&c);
    }
}

UNIT_MAIN(cmocka_unit_test(test_header_from_env_is_read_at_resolution_and_written_back_as_its_name),
          cmocka_unit_test(test_header_from_file_reads_its_first_line),
          cmocka_unit_test(test_header_source_malformed_is_refused_with_the_key))
