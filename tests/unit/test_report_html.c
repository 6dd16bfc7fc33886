#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "temp_file.h"
#include "unit_main.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffer.h"
#include "report_html.h"
#include "report_requests.h"

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
    int charts = report_html_render(root, NULL, out);
    assert_int_equal(buffer_reserve(out, 1), 0);
    out->data[out->len] = '\0';
    return charts;
}

/* Renders the results JSON text; the page is NUL-terminated in out. */
static int render_text(const char *json, buffer_t *out) {
    json_error_t error;
    json_t *root = json_loads(json, 0, &error);
    if (!root)
        fail_msg("%d:%d: %s", error.line, error.column, error.text);
    int charts = render(root, out);
    json_decref(root);
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

/* The figure titled title in page holds text. */
static void assert_figure_has(const char *page, const char *title, const char *text) {
    char *figure_text = figure(page, title);
    if (!strstr(figure_text, text))
        fail_msg("figure \"%s\" does not hold \"%s\"", title, text);
    free(figure_text);
}

/* How many times needle stands in the figure titled title in page. */
static size_t figure_count(const char *page, const char *title, const char *needle) {
    char *figure_text = figure(page, title);
    size_t n = count(figure_text, needle);
    free(figure_text);
    return n;
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
    /* a single run: client series, server running/waiting and KV, decode overlap, 3 CDFs; no
     * chart against the level (one dot each), no per-role bars (one role), no error chart (none
     * failed), no per-request chart (no trace) */
    assert_int_equal(render(root, &out), 7);
    assert_every_chart_marked(out.data, 7);
    assert_null(strstr(out.data, "Latency against the level"));
    assert_null(strstr(out.data, "<title>Errors by class</title>"));
    assert_non_null(strstr(out.data, "Errors by class: no request failed."));
    assert_non_null(strstr(out.data, "run with --trace to get them"));
    assert_null(strstr(out.data, "per role"));
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
    /* 2 levels × p50, p95, p99 */
    assert_int_equal(figure_count(out.data, "TTFT", "class=\"mark\""), 2 * 3);
    assert_figure_has(out.data, "TTFT", "concurrency (sessions in flight)");
    assert_figure_has(out.data, "TTFT CDF per level", ">c=2<");
    assert_figure_has(out.data, "TTFT CDF per level", ">c=4<");
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
    /* 4 latency, 2 against throughput, 2 throughput, errors, 2 CDFs; per level: client,
     * overlap, TTFT and TPOT roles */
    int charts = render(root, &out);
    assert_int_equal(charts, 11 + 2 * 4);
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
        /* planner, executor, aggregator */
        assert_int_equal(figure_count(out.data, title, "class=\"mark\""), 3);
        assert_figure_has(out.data, title, "aggregator");
    }
    buffer_clear(&out);
    json_decref(root);
}

static void test_report_html_cdf_from_buckets_is_cumulative_percent(void **state) {
    buffer_t out;
    render_text("{\"levels\": [{\"concurrency\": 1, \"ttft_ms\": {\"p50\": 15,"
                "\"buckets\": [[10, 1], [20, 3]]}}]}",
                &out);
    assert_int_equal(figure_count(out.data, "TTFT CDF", "class=\"mark\""), 2);
    assert_figure_has(out.data, "TTFT CDF", "c=1: 10, 25</title>");
    assert_figure_has(out.data, "TTFT CDF", "c=1: 20, 100</title>");
    buffer_clear(&out);
}

static void test_report_html_error_classes_as_percent_of_finished(void **state) {
    buffer_t out;
    render_text("{\"levels\": [{\"concurrency\": 8, \"requests_ok\": 90,"
                "\"requests_failed\": 10, \"errors\": {\"timeout\": 4,"
                "\"http_5xx\": 6}}]}",
                &out);
    /* one level: a bar per class that failed */
    assert_figure_has(out.data, "Errors by class", "timeout: 4</title>");
    assert_figure_has(out.data, "Errors by class", "http_5xx: 6</title>");
    /* classes absent: no mark */
    assert_int_equal(figure_count(out.data, "Errors by class", "class=\"mark\""), 2);
    buffer_clear(&out);
}

static void test_report_html_escapes_text_from_the_results(void **state) {
    buffer_t out;
    assert_int_equal(
        render_text("{\"run\": {\"config\": \"<script>x</script>&\"}, \"levels\": []}", &out), 0);
    assert_null(strstr(out.data, "<script"));
    assert_non_null(strstr(out.data, "&lt;script&gt;x&lt;/script&gt;&amp;"));
    buffer_clear(&out);
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

/* Levels 1, 2, 4 double: the charts against the level space them by log2. The latency against
 * throughput chart has a point per level and a Pareto front without the dominated c=4 (fewer
 * tokens/s than c=2 at a higher TTFT). */
static void test_report_html_sweep_doubling_levels_log2_axis_and_pareto_front(void **state) {
    buffer_t out;
    render_text("{\"levels\": ["
                "{\"concurrency\": 1, \"output_tokens_per_s\": 100, \"ttft_ms\": {\"p50\": 10},"
                " \"tpot_ms\": {\"p50\": 5}},"
                "{\"concurrency\": 2, \"output_tokens_per_s\": 180, \"ttft_ms\": {\"p50\": 12},"
                " \"tpot_ms\": {\"p50\": 6}},"
                "{\"concurrency\": 4, \"output_tokens_per_s\": 170, \"ttft_ms\": {\"p50\": 30},"
                " \"tpot_ms\": {\"p50\": 9}}]}",
                &out);
    assert_figure_has(out.data, "TTFT", "concurrency (sessions in flight) (log₂ scale)");
    char *pareto = figure(out.data, "TTFT p50 against output tokens/s");
    assert_non_null(strstr(pareto, "c=1: 100, 10</title>"));
    assert_non_null(strstr(pareto, "c=4: 170, 30</title>"));
    assert_non_null(strstr(pareto, "Pareto front: 100, 10</title>"));
    assert_non_null(strstr(pareto, "Pareto front: 180, 12</title>"));
    assert_null(strstr(pareto, "Pareto front: 170, 30</title>"));
    assert_int_equal(count(pareto, "class=\"mark\""), 3 + 2);
    free(pareto);
    assert_non_null(strstr(out.data, "Errors by class: no request failed."));
    buffer_clear(&out);
}

/* Two levels 1 and 3 do not double: a linear axis. */
static void test_report_html_levels_that_do_not_double_keep_a_linear_axis(void **state) {
    buffer_t out;
    render_text("{\"levels\": [{\"concurrency\": 1, \"ttft_ms\": {\"p50\": 10}},"
                "{\"concurrency\": 3, \"ttft_ms\": {\"p50\": 12}},"
                "{\"concurrency\": 6, \"ttft_ms\": {\"p50\": 12}}]}",
                &out);
    assert_null(strstr(out.data, "log₂"));
    buffer_clear(&out);
}

/* A single run with requests.jsonl: two ok requests (one with 3 chunks), a failed one and a
 * warm-up one. The per-request charts hold the ok, measured requests; in flight counts all. */
static void test_report_html_single_run_draws_its_requests_from_the_trace(void **state) {
    char dir[] = "/tmp/stampede-report-html-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    temp_file_write_at(
        path, "{\"error\":\"none\",\"warmup\":false,\"send_us\":0,\"first_token_us\":100000,"
              "\"end_us\":300000,\"ttft_ms\":100,\"e2e_ms\":300,\"usage\":{\"prompt_tokens\":64},"
              "\"chunks_us\":[100000,200000,300000]}\n"
              "{\"error\":\"none\",\"warmup\":false,\"send_us\":100000,\"first_token_us\":150000,"
              "\"end_us\":200000,\"ttft_ms\":50,\"e2e_ms\":100,\"requested_input_tokens\":32,"
              "\"chunks_us\":[150000]}\n"
              "{\"error\":\"http_5xx\",\"warmup\":false,\"send_us\":0,\"end_us\":100000}\n"
              "{\"error\":\"none\",\"warmup\":true,\"send_us\":0,\"first_token_us\":900,"
              "\"end_us\":1000,\"ttft_ms\":0.9,\"e2e_ms\":1}\n");
    json_t *root = json_loads("{\"levels\": [{\"concurrency\": 2, \"requests_ok\": 2}]}", 0, NULL);
    buffer_t out;
    buffer_init(&out);
    int charts = report_html_render(root, dir, &out);
    assert_int_equal(buffer_reserve(&out, 1), 0);
    out.data[out.len] = '\0';
    /* in flight, TTFT, ITL, E2E, TTFT against prompt, ITL against position */
    assert_int_equal(charts, 6);
    assert_every_chart_marked(out.data, 6);
    /* two requests' dots, not the warm-up */
    assert_int_equal(figure_count(out.data, "TTFT per request", "r=\"2.5\""), 2);
    assert_figure_has(out.data, "TTFT against prompt length", "cx=");
    /* [0, 0.1 s): the first, the failed and the warm-up (1 ms of 100): 2.01 in flight */
    assert_figure_has(out.data, "Requests in flight", "mean over 0.1 s: 0.05, 2.01</title>");
    /* [0.1, 0.2 s): the first and the second */
    assert_figure_has(out.data, "Requests in flight", "mean over 0.1 s: 0.15, 2</title>");
    buffer_clear(&out);
    json_decref(root);
    unlink(path);
    rmdir(dir);
}

/* A sweep where no request succeeded: its latency sections say so in one line, not empty. */
static void test_report_html_sections_with_nothing_to_draw_say_so(void **state) {
    buffer_t out;
    render_text("{\"levels\": [{\"concurrency\": 1, \"requests_failed\": 5,"
                "\"requests_ok\": 0, \"errors\": {\"http_500\": 5}},"
                "{\"concurrency\": 2, \"requests_failed\": 9, \"requests_ok\": 0,"
                "\"errors\": {\"http_500\": 9}}]}",
                &out);
    assert_non_null(
        strstr(out.data, "Latency against the level: nothing to draw (no ok request)."));
    assert_non_null(strstr(out.data, "Latency against throughput: nothing to draw"));
    assert_non_null(strstr(out.data, "Latency distribution: nothing to draw"));
    assert_non_null(strstr(out.data, "<title>Errors by class</title>"));
    buffer_clear(&out);
}

/* A sweep of one level gets the single run's page, and says where its traces' charts are. */
static void test_report_html_one_level_sweep_points_to_its_repetitions_traces(void **state) {
    buffer_t out;
    render_text("{\"sweep\": {\"axis\": \"concurrency\"},"
                "\"levels\": [{\"concurrency\": 4, \"ttft_ms\": {\"p50\": 10}}]}",
                &out);
    assert_null(strstr(out.data, "Latency against the level"));
    assert_non_null(strstr(out.data, "stampede report OUT/levels/NN-LEVEL/rep-R"));
    assert_null(strstr(out.data, "run with --trace to get them"));
    buffer_clear(&out);
}

/* The rolling p50 over a 1 s window at 0, 1 and 2 s of points y = x every 0.1 s. */
static void test_report_requests_rolling_quantile_over_the_trailing_window(void **state) {
    report_points_t points = {0};
    double x[21], y[21];
    for (int i = 0; i <= 20; i++) {
        x[20 - i] = i / 10.0; /* unsorted: the function sorts */
        y[20 - i] = i;
    }
    points.x = x;
    points.y = y;
    points.n = 21;
    double q = 0.5, at_x[3], at_y[3];
    assert_int_equal(report_requests_rolling(&points, 1.0, &q, 1, 3, at_x, at_y), 0);
    assert_true(at_x[0] == 0 && at_x[2] == 2);
    assert_true(at_y[0] == 0);  /* {0} */
    assert_true(at_y[1] == 5);  /* (0, 1]: 1..10, nearest rank 5 */
    assert_true(at_y[2] == 15); /* (1, 2]: 11..20 */
}

UNIT_MAIN(cmocka_unit_test(test_report_html_run_fixture_draws_every_chart_with_marks),
          cmocka_unit_test(test_report_html_sweep_fixture_one_point_per_level_and_percentile),
          cmocka_unit_test(test_report_html_graph_sweep_charts_errors_series_overlap_and_roles),
          cmocka_unit_test(test_report_html_cdf_from_buckets_is_cumulative_percent),
          cmocka_unit_test(test_report_html_error_classes_as_percent_of_finished),
          cmocka_unit_test(test_report_html_escapes_text_from_the_results),
          cmocka_unit_test(test_report_html_refuses_a_document_without_levels),
          cmocka_unit_test(test_report_html_sweep_doubling_levels_log2_axis_and_pareto_front),
          cmocka_unit_test(test_report_html_levels_that_do_not_double_keep_a_linear_axis),
          cmocka_unit_test(test_report_html_single_run_draws_its_requests_from_the_trace),
          cmocka_unit_test(test_report_html_one_level_sweep_points_to_its_repetitions_traces),
          cmocka_unit_test(test_report_html_sections_with_nothing_to_draw_say_so),
          cmocka_unit_test(test_report_requests_rolling_quantile_over_the_trailing_window))
