#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "temp_file.h"
#include "unit_main.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definitions.h"

/* One request, sent at 0: a reasoning chunk at 100 ms (1 token), content at 110 ms (1 token)
 * and at 130 ms (3 tokens, e.g. speculative decoding), transfer over at 131 ms: 5 tokens. */
static const double chunks_us[] = {100000, 110000, 130000};
static const uint32_t chunk_tokens[] = {1, 1, 3};
static const definitions_request_t request = {
    .send_us = 0,
    .end_us = 131000,
    .first_content_us = 110000,
    .chunks_us = chunks_us,
    .chunk_tokens = chunk_tokens,
    .n_chunks = 3,
    .output_tokens = 5,
};

static definitions_summary_t summarise(definitions_tool_t tool, const definitions_request_t *r,
                                       size_t n) {
    definitions_t *d = definitions_new(tool);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(definitions_add(d, &r[i]), 0);
    definitions_summary_t s;
    definitions_summary(d, &s);
    definitions_destroy(&d);
    assert_null(d);
    return s;
}

static void test_definitions_vllm_one_itl_sample_per_chunk_tpot_to_last_chunk(void **state) {
    definitions_summary_t s = summarise(DEFINITIONS_VLLM, &request, 1);
    assert_float_equal(s.ttft_ms.p50, 100.0, 1e-9);
    assert_int_equal(s.itl_ms.count, 2); /* gaps 10 and 20 ms: the 3-token chunk is one */
    assert_float_equal(s.itl_ms.mean, 15.0, 1e-9);
    assert_float_equal(s.tpot_ms.p50, 30.0 / 4, 1e-9);
    assert_int_equal(s.ttfo_ms.count, 0);
}

static void test_definitions_sglang_spreads_a_chunk_gap_over_its_tokens(void **state) {
    definitions_summary_t s = summarise(DEFINITIONS_SGLANG, &request, 1);
    assert_int_equal(s.itl_ms.count, 4); /* 10, then 20/3 three times */
    assert_float_equal(s.itl_ms.mean, 30.0 / 4, 1e-9);
    assert_float_equal(s.itl_ms.p50, 20.0 / 3, 1e-9);
    assert_float_equal(s.tpot_ms.p50, 31.0 / 4, 1e-9); /* latency to the end of the transfer */
}

static void test_definitions_aiperf_itl_per_request_and_ttfo_skips_reasoning(void **state) {
    definitions_summary_t s = summarise(DEFINITIONS_AIPERF, &request, 1);
    assert_float_equal(s.ttft_ms.p50, 100.0, 1e-9);
    assert_int_equal(s.ttfo_ms.count, 1);
    assert_float_equal(s.ttfo_ms.p50, 110.0, 1e-9);
    assert_int_equal(s.itl_ms.count, 1);
    assert_float_equal(s.itl_ms.p50, 30.0 / 4, 1e-9); /* latency to the last content chunk */
    assert_int_equal(s.tpot_ms.count, 0);
}

static void test_definitions_guidellm_tpot_includes_the_first_token(void **state) {
    definitions_summary_t s = summarise(DEFINITIONS_GUIDELLM, &request, 1);
    assert_float_equal(s.tpot_ms.p50, 130.0 / 5, 1e-9);
    assert_int_equal(s.itl_ms.count, 1);
    assert_float_equal(s.itl_ms.p50, 30.0 / 4, 1e-9);
}

static void test_definitions_percentiles_interpolate_like_numpy(void **state) {
    /* TTFTs 10, 20, 30, 40 ms: numpy's p50 25, p90 37, p99 39.7 */
    double c[4][1] = {{10000}, {20000}, {30000}, {40000}};
    definitions_request_t r[4];
    for (size_t i = 0; i < 4; i++)
        r[i] = (definitions_request_t){.end_us = c[i][0],
                                       .first_content_us = NAN,
                                       .chunks_us = c[i],
                                       .n_chunks = 1,
                                       .output_tokens = 1};
    definitions_summary_t s = summarise(DEFINITIONS_VLLM, r, 4);
    assert_float_equal(s.ttft_ms.p50, 25.0, 1e-9);
    assert_float_equal(s.ttft_ms.p90, 37.0, 1e-9);
    assert_float_equal(s.ttft_ms.p99, 39.7, 1e-9);
    assert_int_equal(s.tpot_ms.count, 0); /* one token: no TPOT */
    assert_float_equal(s.output_tokens_per_s, 4 / 0.040, 1e-9);
}

static void test_definitions_tool_names(void **state) {
    assert_int_equal(definitions_tool("vllm"), DEFINITIONS_VLLM);
    assert_int_equal(definitions_tool("aiperf"), DEFINITIONS_AIPERF);
    assert_int_equal(definitions_tool("guidellm"), DEFINITIONS_GUIDELLM);
    assert_int_equal(definitions_tool("sglang"), DEFINITIONS_SGLANG);
    assert_int_equal(definitions_tool("genai-perf"), -1);
}

/* A directory with requests.jsonl holding text; the caller removes it. */
static void make_trace(char *dir, const char *text) {
    strcpy(dir, "/tmp/stampede-definitions.XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    temp_file_write_at(path, text);
}

static void remove_trace(const char *dir) {
    char path[128];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    unlink(path);
    rmdir(dir);
}

static void test_definitions_report_reads_the_trace_and_skips_warmup(void **state) {
    char dir[64];
    make_trace(dir, "{\"warmup\":true,\"error\":\"none\",\"send_us\":0,\"end_us\":5,"
                    "\"chunks_us\":[1,2]}\n"
                    "{\"warmup\":false,\"error\":\"none\",\"send_us\":0.000,\"end_us\":131000,"
                    "\"first_content_us\":110000,\"output_tokens\":5,"
                    "\"chunks_us\":[100000,110000,130000],\"chunk_tokens\":[1,1,3]}\n"
                    "{\"warmup\":false,\"error\":\"timeout\",\"send_us\":0,\"end_us\":9,"
                    "\"chunks_us\":[]}\n");
    char out_text[4096] = "", err[512] = "";
    FILE *out = fmemopen(out_text, sizeof out_text, "w");
    assert_int_equal(definitions_report(dir, "guidellm,sglang", out, err, sizeof err), 0);
    fclose(out);
    assert_non_null(strstr(out_text, "1 ok requests"));
    assert_non_null(strstr(out_text, "guidellm"));
    assert_non_null(strstr(out_text, "26.000")); /* GuideLLM TPOT 130 / 5 */
    assert_non_null(strstr(out_text, "7.750"));  /* SGLang TPOT 31 / 4 */
    assert_null(strstr(out_text, "vllm "));
    remove_trace(dir);
}

static void test_definitions_report_names_the_line_and_key_of_bad_input(void **state) {
    char dir[64], err[512] = "";
    make_trace(dir, "{\"warmup\":false,\"error\":\"none\",\"send_us\":0,\"end_us\":1,"
                    "\"chunks_us\":[1]}\n"
                    "{\"warmup\":false,\"error\":\"none\",\"send_us\":0,\"end_us\":1,"
                    "\"chunks_us\":[1,\"x\"]}\n");
    FILE *out = fopen("/dev/null", "w");
    assert_int_equal(definitions_report(dir, "vllm", out, err, sizeof err), -1);
    assert_non_null(strstr(err, "requests.jsonl:2: key \"chunks_us\"[1]: not a number"));
    assert_int_equal(definitions_report(dir, "vllm,tgi", out, err, sizeof err), -1);
    assert_non_null(strstr(err, "'tgi' is not a tool"));
    remove_trace(dir);
    assert_int_equal(definitions_report(dir, "vllm", out, err, sizeof err), -1);
    assert_non_null(strstr(err, "run with --trace"));
    fclose(out);
}

UNIT_MAIN(cmocka_unit_test(test_definitions_vllm_one_itl_sample_per_chunk_tpot_to_last_chunk),
          cmocka_unit_test(test_definitions_sglang_spreads_a_chunk_gap_over_its_tokens),
          cmocka_unit_test(test_definitions_aiperf_itl_per_request_and_ttfo_skips_reasoning),
          cmocka_unit_test(test_definitions_guidellm_tpot_includes_the_first_token),
          cmocka_unit_test(test_definitions_percentiles_interpolate_like_numpy),
          cmocka_unit_test(test_definitions_tool_names),
          cmocka_unit_test(test_definitions_report_reads_the_trace_and_skips_warmup),
          cmocka_unit_test(test_definitions_report_names_the_line_and_key_of_bad_input))
