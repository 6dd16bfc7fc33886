#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "report_html.h"

static json_t *load(const char *path) {
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    if (!root)
        fail_msg("%s:%d: %s", path, error.line, error.text);
    return root;
}

/* Renders root; the page is NUL-terminated in out. */
static int render(const json_t *root, buffer_t *out) {
    buffer_init(out);
    int charts = report_html_render(root, out);
    assert_int_equal(buffer_reserve(out, 1), 0);
    out->data[out->len] = '\0';
    return charts;
}

static size_t count(const char *s, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The <figure> whose title is title, copied (the caller frees it). */
static char *figure(const char *page, const char *title) {
    char key[256];
    snprintf(key, sizeof key, "<title>%s</title>", title);
    const char *at = strstr(page, key);
    assert_non_null(at);
    const char *end = strstr(at, "</figure>");
    assert_non_null(end);
    return strndup(at, (size_t)(end - at));
}

/* Every <svg> of the page has at least one data mark before its </svg>. */
static void assert_every_chart_marked(const char *page, size_t charts) {
    size_t seen = 0;
    for (const char *p = strstr(page, "<svg"); p; p = strstr(p + 1, "<svg")) {
        const char *end = strstr(p, "</svg>");
        assert_non_null(end);
        const char *mark = strstr(p, "class=\"mark\"");
        assert_true(mark && mark < end);
        seen++;
    }
    assert_int_equal(seen, charts);
}

static void test_report_html_run_fixture_draws_every_chart_with_marks(void **state) {
    json_t *root = load("tests/fixtures/run-quick.json");
    buffer_t out;
    /* 4 latency, 2 throughput, errors, 2 CDFs, client series, server running/waiting and KV,
     * decode overlap, TTFT and TPOT per role */
    assert_int_equal(render(root, &out), 15);
    assert_every_chart_marked(out.data, 15);
    assert_null(strstr(out.data, "src="));
    assert_null(strstr(out.data, "href="));
    assert_null(strstr(out.data, "<script"));
    assert_non_null(strstr(out.data, "@media print"));
    buffer_clear(&out);
    json_decref(root);
}

static void test_report_html_sweep_fixture_one_point_per_level_and_percentile(void **state) {
    json_t *root = load("tests/fixtures/sweep-small.json");
    buffer_t out;
    assert_true(render(root, &out) >= 9);
    char *ttft = figure(out.data, "TTFT");
    assert_int_equal(count(ttft, "class=\"mark\""), 2 * 3); /* 2 levels × p50, p95, p99 */
    assert_non_null(strstr(ttft, "concurrency (sessions in flight)"));
    free(ttft);
    char *cdf = figure(out.data, "TTFT CDF per level");
    assert_non_null(strstr(cdf, ">c=2<"));
    assert_non_null(strstr(cdf, ">c=4<"));
    free(cdf);
    buffer_clear(&out);
    json_decref(root);
}

/* A graph sweep's levels (tests/fixtures/report/sweep-diamond) carry errors by class, roles,
 * decode overlap and a client series: each level gets its own section of charts, with marks. */
static void test_report_html_graph_sweep_charts_errors_series_overlap_and_roles(void **state) {
    json_t *root = load("tests/fixtures/report/sweep-diamond/results.json");
    /* the fixture's levels failed nothing, and a class no level counts is not drawn: one fails */
    json_t *level = json_array_get(json_object_get(root, "levels"), 0);
    json_object_set_new(json_object_get(level, "errors"), "http_5xx", json_integer(3));
    buffer_t out;
    /* 4 latency, 2 throughput, errors, 2 CDFs; per level: client, overlap, TTFT and TPOT roles */
    int charts = render(root, &out);
    assert_int_equal(charts, 9 + 2 * 4);
    assert_every_chart_marked(out.data, (size_t)charts);
    char *errors = figure(out.data, "Errors by class");
    assert_non_null(strstr(errors, ">http_5xx<")); /* the classes, not the total alone */
    assert_null(strstr(errors, ">all classes<"));
    free(errors);
    const char *levels[] = {"c=1", "c=2"};
    for (size_t i = 0; i < 2; i++) {
        char title[128];
        snprintf(title, sizeof title, "Client: in flight and requests/s (%s)", levels[i]);
        char *client = figure(out.data, title);
        assert_true(count(client, "class=\"mark\"") >= 2); /* in flight and req/s */
        free(client);
        snprintf(title, sizeof title, "Decode overlap (%s)", levels[i]);
        char *overlap = figure(out.data, title);
        assert_true(count(overlap, "class=\"mark\"") >= 1);
        free(overlap);
        snprintf(title, sizeof title, "TTFT p50 per role (%s)", levels[i]);
        char *roles = figure(out.data, title);
        assert_int_equal(count(roles, "class=\"mark\""), 3); /* planner, executor, aggregator */
        assert_non_null(strstr(roles, "aggregator"));
        free(roles);
    }
    buffer_clear(&out);
    json_decref(root);
}

static void test_report_html_cdf_from_buckets_is_cumulative_percent(void **state) {
    json_t *root = json_loads("{\"levels\": [{\"concurrency\": 1, \"ttft_ms\": {\"p50\": 15,"
                              "\"buckets\": [[10, 1], [20, 3]]}}]}",
                              0, NULL);
    buffer_t out;
    render(root, &out);
    char *cdf = figure(out.data, "TTFT CDF per level");
    assert_int_equal(count(cdf, "class=\"mark\""), 2);
    assert_non_null(strstr(cdf, "c=1: 10, 25</title>"));
    assert_non_null(strstr(cdf, "c=1: 20, 100</title>"));
    free(cdf);
    buffer_clear(&out);
    json_decref(root);
}

static void test_report_html_error_classes_as_percent_of_finished(void **state) {
    json_t *root = json_loads("{\"levels\": [{\"concurrency\": 8, \"requests_ok\": 90,"
                              "\"requests_failed\": 10, \"errors\": {\"timeout\": 4,"
                              "\"http_5xx\": 6}}]}",
                              0, NULL);
    buffer_t out;
    render(root, &out);
    char *errors = figure(out.data, "Errors by class");
    assert_non_null(strstr(errors, "timeout: 8, 4</title>"));
    assert_non_null(strstr(errors, "http_5xx: 8, 6</title>"));
    assert_int_equal(count(errors, "class=\"mark\""), 2); /* classes absent: no mark */
    free(errors);
    buffer_clear(&out);
    json_decref(root);
}

static void test_report_html_escapes_text_from_the_results(void **state) {
    json_t *root =
        json_loads("{\"run\": {\"config\": \"<script>x</script>&\"}, \"levels\": []}", 0, NULL);
    buffer_t out;
    assert_int_equal(render(root, &out), 0);
    assert_null(strstr(out.data, "<script"));
    assert_non_null(strstr(out.data, "&lt;script&gt;x&lt;/script&gt;&amp;"));
    buffer_clear(&out);
    json_decref(root);
}

static void test_report_html_refuses_a_document_without_levels(void **state) {
    json_t *root = json_loads("{\"schema_version\": 2}", 0, NULL);
    buffer_t out;
    assert_int_equal(render(root, &out), -1);
    buffer_clear(&out);
    char err[512] = "";
    FILE *sink = fopen("/dev/null", "w");
    assert_int_equal(report_html_emit(root, "runs/x", sink, err, sizeof err), -1);
    fclose(sink);
    assert_non_null(strstr(err, "runs/x/results.json: not a stampede results document"));
    json_decref(root);
}

UNIT_MAIN(cmocka_unit_test(test_report_html_run_fixture_draws_every_chart_with_marks),
          cmocka_unit_test(test_report_html_sweep_fixture_one_point_per_level_and_percentile),
          cmocka_unit_test(test_report_html_graph_sweep_charts_errors_series_overlap_and_roles),
          cmocka_unit_test(test_report_html_cdf_from_buckets_is_cumulative_percent),
          cmocka_unit_test(test_report_html_error_classes_as_percent_of_finished),
          cmocka_unit_test(test_report_html_escapes_text_from_the_results),
          cmocka_unit_test(test_report_html_refuses_a_document_without_levels))
