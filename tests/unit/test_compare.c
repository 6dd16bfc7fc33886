#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "text_case.h"
#include "unit_main.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

/* Hand-made results files with known numbers (tests/fixtures/compare): base and spec are sweeps at
 * concurrency 10, 20, 30 and 10, 20, 40; third is a plain run at 20 whose figures are only in its
 * level's reference block. The test runs from the source directory. */
#define FIX "tests/fixtures/compare/"

static compare_t *load(const char *const *paths, size_t n) {
    compare_t *cmp = compare_new();
    assert_non_null(cmp);
    char err[512];
    for (size_t i = 0; i < n; i++) {
        int rc = compare_add(cmp, paths[i], err, sizeof err);
        if (rc != 0)
            fail_msg("%s: %s", paths[i], err);
    }
    return cmp;
}

/* levels[] entry of the JSON whose level is value. */
static json_t *level_of(json_t *root, double value) {
    json_t *levels = json_object_get(root, "levels");
    for (size_t i = 0; i < json_array_size(levels); i++) {
        json_t *l = json_array_get(levels, i);
        if (json_number_value(json_object_get(l, "level")) == value)
            return l;
    }
    fail_msg("level %g missing", value);
    return NULL;
}

static json_t *metric_of(json_t *root, double level, const char *key) {
    json_t *m = json_object_get(json_object_get(level_of(root, level), "metrics"), key);
    assert_non_null(m);
    return m;
}

static double at(json_t *array, size_t i) {
    json_t *v = json_array_get(array, i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *word(json_t *array, size_t i) {
    json_t *v = json_array_get(array, i);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *markdown(const compare_t *cmp) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    compare_print_markdown(cmp, f);
    fclose(f);
    return text;
}

/* A metric of a two-run comparison: first and second are the runs' values, the second changed by
 * change_pct and is judged verdict. */
static void assert_two_runs(json_t *metric, double first, double second, double change_pct,
                            const char *verdict) {
    assert_float_equal(at(json_object_get(metric, "values"), 0), first, 1e-9);
    assert_float_equal(at(json_object_get(metric, "values"), 1), second, 1e-9);
    assert_float_equal(at(json_object_get(metric, "change_pct"), 1), change_pct, 1e-9);
    assert_string_equal(word(json_object_get(metric, "verdict"), 1), verdict);
}

/* cmp's markdown holds every row of want (NULL-terminated). */
static void assert_markdown_has(const compare_t *cmp, const char *const *want) {
    char *md = markdown(cmp);
    text_case_contains(md, want);
    free(md);
}

/* Frees what a test made of a comparison. */
static void release(compare_t **cmp, json_t *root) {
    json_decref(root);
    compare_destroy(cmp);
    assert_null(*cmp);
}

static void test_compare_two_runs_change_and_verdict(void **state) {
    const char *paths[] = {FIX "base", FIX "spec/results.json"};
    compare_t *cmp = load(paths, 2);
    json_t *root = compare_json(cmp);
    assert_string_equal(json_string_value(json_object_get(root, "axis")), "concurrency");
    assert_int_equal(json_array_size(json_object_get(root, "levels")), 4);

    json_t *tpot10 = metric_of(root, 10, "tpot_p50_ms");
    assert_two_runs(tpot10, 40, 60, 50, "worse");

    json_t *tpot20 = metric_of(root, 20, "tpot_p50_ms");
    assert_float_equal(at(json_object_get(tpot20, "change_pct"), 1), -10, 1e-9);
    assert_string_equal(word(json_object_get(tpot20, "verdict"), 1), "better");

    /* Higher is better for throughput: 180 -> 200 tok/s is +11.1 % better. */
    json_t *tops20 = metric_of(root, 20, "tops");
    assert_float_equal(at(json_object_get(tops20, "change_pct"), 1), 100.0 * 20 / 180, 1e-9);
    assert_string_equal(word(json_object_get(tops20, "verdict"), 1), "better");
    json_t *tops10 = metric_of(root, 10, "tops");
    assert_string_equal(word(json_object_get(tops10, "verdict"), 1), "worse");

    /* Error rate changes in percentage points: 0 -> 1.5 % is +1.5. */
    json_t *err20 = metric_of(root, 20, "error_pct");
    assert_float_equal(at(json_object_get(err20, "change_pct"), 1), 1.5, 1e-9);
    assert_string_equal(word(json_object_get(err20, "verdict"), 1), "worse");
    json_t *rps10 = metric_of(root, 10, "actual_rps");
    assert_string_equal(word(json_object_get(rps10, "verdict"), 1), "same");

    static const char *const want[] = {
        "| 10 | 40.0 | 60.0 | +50% worse |", "| 20 | 50.0 | 45.0 | -10% better |",
        "| 20 | 250 | 5000 | +20x worse |",  "| 20 | 0.00 | 1.50 | +1.5 pt worse |",
        "| 20 | 180 | 200 | +11% better |",  NULL,
    };
    assert_markdown_has(cmp, want);
    release(&cmp, root);
}

static void test_compare_saturation_points(void **state) {
    const char *paths[] = {FIX "base", FIX "spec", FIX "third"};
    compare_t *cmp = load(paths, 3);
    json_t *root = compare_json(cmp);
    json_t *sat = json_object_get(root, "saturation");
    json_t *first = json_object_get(sat, "first_errors");
    assert_float_equal(json_number_value(json_object_get(json_array_get(first, 0), "level")), 30,
                       1e-9);
    assert_float_equal(json_number_value(json_object_get(json_array_get(first, 1), "error_pct")),
                       1.5, 1e-9);
    assert_true(json_is_null(json_array_get(first, 2))); /* a plain run has no analysis */
    json_t *plateau = json_array_get(json_object_get(sat, "tpot_plateau"), 1);
    assert_float_equal(json_number_value(json_object_get(plateau, "tpot_p50_ms")), 57.5, 1e-9);
    static const char *const want[] = {
        "| First errors | Concurrency 30 (2.00%) | Concurrency 20 (1.50%) | — |",
        "| Sustained >5% errors | not reached | Concurrency 40 | — |",
        "| TPOT p50 plateau | not reached | ~57.5ms (c 20) | — |",
        NULL,
    };
    assert_markdown_has(cmp, want);
    release(&cmp, root);
}

static void test_compare_absent_levels(void **state) {
    const char *paths[] = {FIX "base", FIX "spec"};
    compare_t *cmp = load(paths, 2);
    json_t *root = compare_json(cmp);
    json_t *present30 = json_object_get(level_of(root, 30), "present");
    assert_true(json_is_true(json_array_get(present30, 0)));
    assert_true(json_is_false(json_array_get(present30, 1)));
    json_t *tpot30 = metric_of(root, 30, "tpot_p50_ms");
    assert_true(json_is_null(json_array_get(json_object_get(tpot30, "values"), 1)));
    assert_true(json_is_null(json_array_get(json_object_get(tpot30, "change_pct"), 1)));
    assert_true(json_is_null(json_array_get(json_object_get(tpot30, "verdict"), 1)));
    char *md = markdown(cmp);
    assert_non_null(strstr(md, "| 30 | 80.0 | — | — |"));
    /* spec's level 40 is marked invalid in its file: shown, with a dagger. */
    assert_non_null(strstr(md, "| 40 | — | 70.0 † | — |"));
    json_t *invalid40 = json_object_get(level_of(root, 40), "invalid");
    assert_true(json_is_false(json_array_get(invalid40, 0)));
    assert_true(json_is_true(json_array_get(invalid40, 1)));
    assert_true(json_is_false(json_array_get(json_object_get(level_of(root, 10), "invalid"), 1)));
    free(md);
    release(&cmp, root);
}

/* The servers' own TPOT and TTFT (the scaling report's §3.1 and §3.3) from each level's gap
 * block, lower is better; absent where the run did not scrape (base's level 30, a run without
 * gap blocks). */
static void test_compare_server_tpot_and_ttft(void **state) {
    const char *two[] = {FIX "base", FIX "spec"};
    compare_t *cmp = load(two, 2);
    json_t *root = compare_json(cmp);
    json_t *stpot10 = metric_of(root, 10, "server_tpot_mean_ms");
    assert_two_runs(stpot10, 38, 57, 50, "worse");
    json_t *sttft10 = metric_of(root, 10, "server_ttft_mean_ms");
    assert_float_equal(at(json_object_get(sttft10, "change_pct"), 1), (150.0 - 180) / 180 * 100,
                       1e-9);
    assert_string_equal(word(json_object_get(sttft10, "verdict"), 1), "better");
    json_t *stpot30 = metric_of(root, 30, "server_tpot_mean_ms");
    assert_true(json_is_null(json_array_get(json_object_get(stpot30, "values"), 0)));
    json_t *metrics = json_object_get(root, "metrics");
    bool listed = false;
    for (size_t i = 0; i < json_array_size(metrics); i++) {
        json_t *m = json_array_get(metrics, i);
        if (!strcmp(json_string_value(json_object_get(m, "key")), "server_ttft_mean_ms")) {
            assert_string_equal(json_string_value(json_object_get(m, "better")), "lower");
            listed = true;
        }
    }
    assert_true(listed);
    static const char *const two_run_rows[] = {
        "### Server TPOT mean (ms)",
        "| 10 | 38.0 | 57.0 | +50% worse |",
        "| 20 | 47.0 | 43.0 | -8.5% better |",
        "| 10 | 180 | 150 | -17% better |",
        NULL,
    };
    assert_markdown_has(cmp, two_run_rows);
    release(&cmp, root);

    /* Three runs at c = 20: server TPOT 47 / 43 / 44 -> spec; server TTFT 230 / 240 / 220 ->
     * third, 4.3 % under base. */
    const char *three[] = {FIX "base", FIX "spec", FIX "third"};
    cmp = load(three, 3);
    root = compare_json(cmp);
    json_t *stpot20 = metric_of(root, 20, "server_tpot_mean_ms");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(stpot20, "winners"), 0)), 1);
    assert_float_equal(json_number_value(json_object_get(stpot20, "margin_pct")),
                       (43.0 - 44) / 44 * 100, 1e-9);
    json_t *sttft20 = metric_of(root, 20, "server_ttft_mean_ms");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(sttft20, "winners"), 0)), 2);
    static const char *const three_run_rows[] = {
        "| 20 | 47.0 | **43.0** | 44.0 |",
        "| 20 | 230 | 240 | **220** |",
        "| Server TTFT mean | spec (-17%) | third (-4.3%) | — | — |",
        NULL,
    };
    assert_markdown_has(cmp, three_run_rows);
    release(&cmp, root);

    /* Runs that scraped nothing: no server table at all. */
    const char *plain[] = {FIX "quickstart", FIX "sweep-small"};
    cmp = load(plain, 2);
    char *md = markdown(cmp);
    assert_null(strstr(md, "Server TPOT"));
    assert_null(strstr(md, "Server TTFT"));
    free(md);
    compare_destroy(&cmp);
}

static void test_compare_three_runs_winners(void **state) {
    const char *paths[] = {FIX "base", FIX "spec", FIX "third"};
    compare_t *cmp = load(paths, 3);
    json_t *root = compare_json(cmp);
    /* c = 20: TPOT 50 / 45 / 47.5 -> spec, 5.3 % under the runner-up third. */
    json_t *tpot20 = metric_of(root, 20, "tpot_p50_ms");
    assert_int_equal(json_array_size(json_object_get(tpot20, "winners")), 1);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(tpot20, "winners"), 0)), 1);
    assert_float_equal(json_number_value(json_object_get(tpot20, "margin_pct")),
                       (45 - 47.5) / 47.5 * 100, 1e-9);
    /* Output tokens/s 180 / 200 / 210 (third's from its reference block) -> third, +5 %. */
    json_t *tops20 = metric_of(root, 20, "tops");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(tops20, "winners"), 0)), 2);
    assert_float_equal(json_number_value(json_object_get(tops20, "margin_pct")), 5, 1e-9);
    /* Errors 0 / 1.5 / 0: a tie of base and third, no margin. */
    json_t *err20 = metric_of(root, 20, "error_pct");
    assert_int_equal(json_array_size(json_object_get(err20, "winners")), 2);
    assert_true(json_is_null(json_object_get(err20, "margin_pct")));
    /* c = 30: only base has it, so nobody wins. */
    assert_int_equal(
        json_array_size(json_object_get(metric_of(root, 30, "tpot_p50_ms"), "winners")), 0);

    static const char *const want[] = {
        "| 20 | 50.0 | **45.0** | 47.5 |",
        "| 30 | 80.0 | — | — |",
        "| TPOT p50 | base (-33%) | spec (-5.3%) | — | — |",
        "| Output tokens/s | base (+11%) | third (+5.0%) | — | — |",
        "| Error rate | tie (2 runs) | tie (2 runs) | — | — |",
        NULL,
    };
    assert_markdown_has(cmp, want);
    release(&cmp, root);
}

/* Each bad input names the file and says what is wrong. */
static void expect_error(const char *good, const char *bad, const char *needle) {
    compare_t *cmp = compare_new();
    char err[512];
    assert_int_equal(compare_add(cmp, good, err, sizeof err), 0);
    assert_int_equal(compare_add(cmp, bad, err, sizeof err), -1);
    if (!strstr(err, needle))
        fail_msg("expected '%s' in '%s'", needle, err);
    compare_destroy(&cmp);
}

static void test_compare_bad_input(void **state) {
    expect_error(FIX "base", FIX "v1", FIX "v1/results.json: schema_version 1, expected 2");
    expect_error(FIX "base", FIX "notjson", FIX "notjson/results.json:3: not a results.json");
    expect_error(FIX "base", FIX "missing-run", FIX "missing-run: No such file or directory");
    expect_error(FIX "base", "tests/fixtures", "tests/fixtures/results.json: No such file");
    expect_error(FIX "base", FIX "rate", "levels[0] is a rate level");
}

static void test_compare_csv_rows(void **state) {
    const char *paths[] = {FIX "base", FIX "spec"};
    compare_t *cmp = load(paths, 2);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    compare_print_csv(cmp, f);
    fclose(f);
    assert_true(!strncmp(text, "level,metric,unit,better,run,value,change_vs_first,", 51));
    static const char *const want[] = {
        "\n10,tpot_p50_ms,ms,lower,spec,60,50,worse,0\n",
        "\n10,tpot_p50_ms,ms,lower,base,40,,,1\n",
        "\n30,tpot_p50_ms,ms,lower,spec,,,,0\n",
        NULL,
    };
    text_case_contains(text, want);
    free(text);
    compare_destroy(&cmp);
}

/* The linear-vs-DAG case study's columns: ITL and TTFC p99 from the level's histograms, and the
 * mean prompt tokens (input tokens over ok requests); absent where a level has neither. */
static void test_compare_itl_ttfc_p99_and_prompt_tokens(void **state) {
    const char *two[] = {FIX "base", FIX "spec"};
    compare_t *cmp = load(two, 2);
    json_t *root = compare_json(cmp);
    json_t *itl = metric_of(root, 10, "itl_p99_ms");
    assert_float_equal(at(json_object_get(itl, "values"), 0), 30, 1e-9);
    assert_float_equal(at(json_object_get(itl, "change_pct"), 1), 50, 1e-9);
    assert_string_equal(word(json_object_get(itl, "verdict"), 1), "worse");
    json_t *ttfc = metric_of(root, 10, "ttfc_p99_ms");
    assert_float_equal(at(json_object_get(ttfc, "values"), 1), 400, 1e-9);
    assert_string_equal(word(json_object_get(ttfc, "verdict"), 1), "better");
    json_t *prompt = metric_of(root, 10, "prompt_tokens_mean");
    assert_float_equal(at(json_object_get(prompt, "values"), 0), 500, 1e-9);
    assert_float_equal(at(json_object_get(prompt, "values"), 1), 600, 1e-9);
    json_t *prompt20 = metric_of(root, 20, "prompt_tokens_mean");
    assert_true(json_is_null(json_array_get(json_object_get(prompt20, "values"), 0)));
    char *md = markdown(cmp);
    assert_non_null(strstr(md, "### ITL p99 (ms)"));
    assert_non_null(strstr(md, "### Prompt tokens (mean) (tok)"));
    free(md);
    release(&cmp, root);
}

UNIT_MAIN(cmocka_unit_test(test_compare_itl_ttfc_p99_and_prompt_tokens),
          cmocka_unit_test(test_compare_two_runs_change_and_verdict),
          cmocka_unit_test(test_compare_absent_levels),
          cmocka_unit_test(test_compare_saturation_points),
          cmocka_unit_test(test_compare_three_runs_winners),
          cmocka_unit_test(test_compare_server_tpot_and_ttft),
          cmocka_unit_test(test_compare_csv_rows), cmocka_unit_test(test_compare_bad_input))
