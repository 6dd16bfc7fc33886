/* `stampede mock` options: a profile first, explicit flags over it in any order, and refusals
 * that name the flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "text_case.h"
#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_cli.h"
#include "mock_options.h"
#include "mock_profiles.h"

static int parse(mock_options_t *o, char *err, size_t errlen, int argc, char **argv) {
    mock_options_init(o);
    FILE *sink = fopen("/dev/null", "w");
    int rc = mock_cli_parse(o, argc, argv, sink, err, errlen);
    fclose(sink);
    return rc;
}

static void test_mock_options_explicit_flags_override_the_profile_in_any_order(void **state) {
    char err[256];
    mock_options_t o;
    char *argv[] = {"mock", "--max-num-seqs=5", "--profile", "tp2-fp8", "--alpha", "0.5"};
    assert_int_equal(parse(&o, err, sizeof(err), 6, argv), 0);
    const mock_profile_t *p = mock_profile_find("tp2-fp8");
    assert_int_equal(o.max_num_seqs, 5);
    assert_true(o.alpha == 0.5);
    assert_true(o.tpot_base_ms == p->tpot_base_ms);
    assert_int_equal(o.kv_cache_tokens, p->kv_cache_tokens);
    assert_false(o.fixed);
    mock_options_clear(&o);
}

static void test_mock_options_fixed_mode_and_defaults(void **state) {
    char err[256];
    mock_options_t o;
    char *argv[] = {"mock", "--port",   "0",  "--ttft-ms",
                    "50",   "--itl-ms", "10", "--no-prefix-cache"};
    assert_int_equal(parse(&o, err, sizeof(err), 8, argv), 0);
    assert_true(o.fixed);
    assert_true(o.ttft_ms == 50 && o.itl_ms == 10);
    assert_int_equal(o.port, 0);
    assert_false(o.prefix_cache);
    assert_string_equal(o.bind, "127.0.0.1");
    assert_string_equal(o.model, "mock-llama");
    assert_true(dist_mean(&o.output_len) == 256);
    mock_options_clear(&o);
}

static void test_mock_options_refusals_name_the_flag(void **state) {
    static struct {
        int argc;
        char *argv[4];
        const char *message;
    } cases[] = {
        {3,
         {"mock", "--itl-ms", "-1"},
         "--itl-ms: expected a number in [0, 1000000000000], got '-1'"},
        {3, {"mock", "--fail-rate", "2"}, "--fail-rate: expected a number in [0, 1], got '2'"},
        {2, {"mock", "--port"}, "--port needs a value (N)"},
        {2, {"mock", "--nope"}, "unknown option '--nope' (stampede mock --help lists them)"},
        {2, {"mock", "--no-prefix-cache=1"}, "--no-prefix-cache takes no value"},
        {3,
         {"mock", "--max-num-seqs", "0"},
         "--max-num-seqs: expected an integer in [1, "
         "4294967295], got '0'"},
        {3,
         {"mock", "--max-model-len", "2000000"},
         "--kv-cache-tokens 1048576 cannot hold one "
         "sequence of --max-model-len 2000000 (vLLM "
         "refuses to start in this case too)"},
        {4,
         {"mock", "--profile", "tp1-fp8", "--ttft-ms=5"},
         "--profile and --ttft-ms/--itl-ms "
         "exclude each other: fixed mode has "
         "no engine model"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        mock_options_t o;
        assert_int_equal(parse(&o, err, sizeof(err), cases[i].argc, cases[i].argv), -1);
        if (strcmp(err, cases[i].message) != 0)
            fail_msg("case %zu: got \"%s\", expected \"%s\"", i, err, cases[i].message);
        mock_options_clear(&o);
    }
    char err[256];
    mock_options_t o;
    char *argv[] = {"mock", "--profile", "h100"};
    assert_int_equal(parse(&o, err, sizeof(err), 3, argv), -1);
    assert_non_null(strstr(err, "unknown profile 'h100' (known: default tp1-fp8"));
    mock_options_clear(&o);
}

static void test_mock_options_help_returns_1(void **state) {
    char err[256];
    mock_options_t o;
    char *argv[] = {"mock", "--port", "1", "--help"};
    assert_int_equal(parse(&o, err, sizeof(err), 4, argv), 1);
    mock_options_clear(&o);
}

static void test_mock_options_help_lists_each_profile_with_its_fit_per_level(void **state) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    mock_cli_usage(out);
    fclose(out);
    /* Both H200 profiles, their sources and one row per reference level (the last ones). */
    static const char *const want[] = {
        "  h200-llama70b  Llama 3.1 70B",
        "  h200-llama70b-eagle3\n",
        "Fitted on sweep-combined-50-120.md",
        "Fitted on sweep-round-robin-eagle3-50-160.md",
        "acceptance 0.37",
        "                  120     297     270     -9%",
        "                  160   72361   56355    -22%",
        "--spec-tokens K",
        NULL,
    };
    text_case_contains(text, want);
    free(text);
}

static void test_mock_options_spec_flags_override_the_eagle3_profile(void **state) {
    char err[256];
    mock_options_t o;
    char *argv[] = {"mock", "--spec-acceptance", "0.9", "--profile", "h200-llama70b-eagle3"};
    assert_int_equal(parse(&o, err, sizeof(err), 5, argv), 0);
    assert_int_equal(o.spec_tokens, 3);
    assert_true(o.spec_acceptance == 0.9);
    assert_true(o.spec_draft_ms == 16.5);
    assert_true(o.step_fixed_ms == 15);
    assert_int_equal(o.max_num_seqs, 64);
    mock_options_clear(&o);
    char *bad[] = {"mock", "--spec-acceptance", "1.5"};
    assert_int_equal(parse(&o, err, sizeof(err), 3, bad), -1);
    assert_non_null(strstr(err, "--spec-acceptance"));
    mock_options_clear(&o);
}

UNIT_MAIN(cmocka_unit_test(test_mock_options_explicit_flags_override_the_profile_in_any_order),
          cmocka_unit_test(test_mock_options_fixed_mode_and_defaults),
          cmocka_unit_test(test_mock_options_refusals_name_the_flag),
          cmocka_unit_test(test_mock_options_help_returns_1),
          cmocka_unit_test(test_mock_options_help_lists_each_profile_with_its_fit_per_level),
          cmocka_unit_test(test_mock_options_spec_flags_override_the_eagle3_profile))
