/* common/prom_parse: the text exposition format read back, with the awkward inputs a server we do
 * not control may send: escapes, NaN and infinities, comments, TYPE lines, CRLF, no final
 * newline, NUL bytes, truncation at every byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <string.h>

#include "prom.h"
#include "prom_parse.h"
#include "support.h"

static prom_page_t *parse(const char *text) {
    prom_page_t *page = prom_page_parse(text, strlen(text));
    assert_non_null(page);
    return page;
}

/* parse of text every line of which is well-formed: none is skipped. */
static prom_page_t *parse_clean(const char *text) {
    prom_page_t *page = parse(text);
    if (page->lines_skipped != 0)
        fail_msg("%zu lines skipped, the first (line %zu): %s", (size_t)page->lines_skipped,
                 (size_t)page->first_error_line, page->first_error);
    return page;
}

static void test_prom_parse_reads_names_labels_values_and_timestamps(void **state) {
    prom_page_t *page = parse_clean("vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 3.0\n"
                                    "plain 42\n"
                                    "with_ts{a=\"b\"} -1.5e-3 1700000000000\n");
    assert_int_equal(page->n_samples, 3);
    assert_string_equal(page->samples[0].name, "vllm:num_requests_running");
    assert_int_equal(page->samples[0].n_labels, 2);
    assert_string_equal(prom_sample_label(&page->samples[0], "engine"), "0");
    assert_string_equal(prom_sample_label(&page->samples[0], "model_name"), "m");
    assert_null(prom_sample_label(&page->samples[0], "le"));
    assert_true(page->samples[0].value == 3.0);
    assert_int_equal(page->samples[1].n_labels, 0);
    assert_true(page->samples[1].value == 42.0);
    assert_true(page->samples[2].has_timestamp);
    assert_int_equal(page->samples[2].timestamp_ms, 1700000000000LL);
    assert_true(fabs(page->samples[2].value + 1.5e-3) < 1e-15);
    prom_page_destroy(&page);
    assert_null(page);
}

static void test_prom_parse_unescapes_label_values(void **state) {
    prom_page_t *page = parse("m{path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",nl=\"a\\nb\",e=\"\"} 1\n");
    assert_int_equal(page->n_samples, 1);
    assert_string_equal(prom_sample_label(&page->samples[0], "path"), "C:\\dir");
    assert_string_equal(prom_sample_label(&page->samples[0], "q"), "say \"hi\"");
    assert_string_equal(prom_sample_label(&page->samples[0], "nl"), "a\nb");
    assert_string_equal(prom_sample_label(&page->samples[0], "e"), "");
    prom_page_destroy(&page);
}

static void test_prom_parse_reads_nan_and_infinities(void **state) {
    prom_page_t *page = parse("a NaN\nb +Inf\nc -Inf\nd{le=\"+Inf\"} 7\ne Infinity\n");
    assert_int_equal(page->n_samples, 4);
    assert_true(isnan(page->samples[0].value));
    assert_true(isinf(page->samples[1].value) && page->samples[1].value > 0);
    assert_true(isinf(page->samples[2].value) && page->samples[2].value < 0);
    assert_string_equal(prom_sample_label(&page->samples[3], "le"), "+Inf");
    assert_int_equal(page->lines_skipped, 1); /* "Infinity" is not the format's spelling */
    assert_int_equal(page->first_error_line, 5);
    prom_page_destroy(&page);
}

static void test_prom_parse_keeps_types_and_skips_comments(void **state) {
    prom_page_t *page = parse("# HELP x_total Things {with} \"quotes\" \\\\ done.\n"
                              "# TYPE x_total counter\n"
                              "# a free comment = 3\n"
                              "#TYPE h histogram\n"
                              "x_total 5\n"
                              "h_bucket{le=\"0.5\"} 1\n");
    assert_int_equal(page->n_samples, 2);
    assert_string_equal(prom_page_type(page, "x_total"), "counter");
    assert_string_equal(prom_page_type(page, "h"), "histogram");
    assert_null(prom_page_type(page, "nothing"));
    assert_int_equal(page->lines_skipped, 0);
    prom_page_destroy(&page);
}

static void test_prom_parse_accepts_crlf_and_no_final_newline(void **state) {
    prom_page_t *page = parse_clean("a{x=\"1\"} 1\r\n\r\nb 2\r\nc 3");
    assert_int_equal(page->n_samples, 3);
    assert_string_equal(prom_sample_label(&page->samples[0], "x"), "1");
    assert_true(page->samples[1].value == 2.0);
    assert_true(page->samples[2].value == 3.0);
    prom_page_destroy(&page);
    assert_null(page);
}

static void test_prom_parse_skips_malformed_lines_and_says_which(void **state) {
    prom_page_t *page = parse("good 1\n"
                              "bad{a=\"unterminated} 1\n"
                              "9starts_with_digit 1\n"
                              "no_value\n"
                              "bad_escape{a=\"\\t\"} 1\n"
                              "trailing 1 2 3\n"
                              "also_good{a=\"1\",} 2\n");
    assert_int_equal(page->n_samples, 2);
    assert_string_equal(page->samples[0].name, "good");
    assert_string_equal(page->samples[1].name, "also_good");
    assert_string_equal(prom_sample_label(&page->samples[1], "a"), "1");
    assert_int_equal(page->lines_skipped, 5);
    assert_int_equal(page->first_error_line, 2);
    assert_string_equal(page->first_error, "unterminated label value");
    prom_page_destroy(&page);
}

static void test_prom_parse_treats_a_nul_byte_as_an_error_not_an_end(void **state) {
    const char text[] = "a 1\nb\0 2\nc 3\n";
    prom_page_t *page = prom_page_parse(text, sizeof text - 1);
    assert_non_null(page);
    assert_int_equal(page->n_samples, 2);
    assert_string_equal(page->samples[1].name, "c");
    assert_int_equal(page->lines_skipped, 1);
    assert_int_equal(page->first_error_line, 2);
    prom_page_destroy(&page);
}

static void test_prom_parse_refuses_more_labels_than_the_bound(void **state) {
    buffer_t b;
    buffer_init(&b);
    buffer_appendf(&b, "many{");
    for (int i = 0; i <= PROM_PARSE_MAX_LABELS; i++)
        buffer_appendf(&b, "l%d=\"v\",", i);
    buffer_appendf(&b, "} 1\nok 2\n");
    prom_page_t *page = prom_page_parse(buffer_head(&b), buffer_pending(&b));
    assert_non_null(page);
    assert_int_equal(page->n_samples, 1);
    assert_string_equal(page->samples[0].name, "ok");
    assert_string_equal(page->first_error, "too many labels");
    prom_page_destroy(&page);
    buffer_clear(&b);
}

/* What common/prom writes, read back: every truncation of it parses without a crash, and the
 * whole page gives the values written. */
static void test_prom_parse_reads_back_what_prom_writes_and_survives_every_truncation(void **s) {
    buffer_t b;
    buffer_init(&b);
    prom_writer_t w = prom_writer(&b);
    static const double bounds[] = {0.1, 0.5, 1.0};
    prom_histogram_t h;
    assert_int_equal(prom_histogram_init(&h, bounds, 3), 0);
    prom_histogram_observe(&h, 0.05);
    prom_histogram_observe(&h, 0.7);
    prom_histogram_observe(&h, 9);
    prom_label_t label = {"model_name", "a \"quoted\\ name\n"};
    prom_family(&w, "t_seconds", "histogram", "help with \\ and\nnewline");
    prom_histogram(&w, "t_seconds", "help", &label, 1, &h);
    assert_int_equal(w.rc, 0);
    for (size_t n = 0; n <= buffer_pending(&b); n++) {
        prom_page_t *page = prom_page_parse(buffer_head(&b), n);
        assert_non_null(page);
        prom_page_destroy(&page);
    }
    prom_page_t *page = prom_page_parse(buffer_head(&b), buffer_pending(&b));
    assert_int_equal(page->lines_skipped, 0);
    assert_int_equal(page->n_samples, 6); /* 4 buckets, count, sum */
    assert_string_equal(prom_sample_label(&page->samples[0], "model_name"), label.value);
    assert_string_equal(prom_sample_label(&page->samples[3], "le"), "+Inf");
    assert_true(page->samples[3].value == 3.0);
    assert_string_equal(page->samples[5].name, "t_seconds_sum");
    assert_true(fabs(page->samples[5].value - 9.75) < 1e-12);
    assert_string_equal(prom_page_type(page, "t_seconds"), "histogram");
    prom_page_destroy(&page);
    buffer_clear(&b);
    prom_histogram_clear(&h);
}

UNIT_MAIN(
    cmocka_unit_test(test_prom_parse_reads_names_labels_values_and_timestamps),
    cmocka_unit_test(test_prom_parse_unescapes_label_values),
    cmocka_unit_test(test_prom_parse_reads_nan_and_infinities),
    cmocka_unit_test(test_prom_parse_keeps_types_and_skips_comments),
    cmocka_unit_test(test_prom_parse_accepts_crlf_and_no_final_newline),
    cmocka_unit_test(test_prom_parse_skips_malformed_lines_and_says_which),
    cmocka_unit_test(test_prom_parse_treats_a_nul_byte_as_an_error_not_an_end),
    cmocka_unit_test(test_prom_parse_refuses_more_labels_than_the_bound),
    cmocka_unit_test(test_prom_parse_reads_back_what_prom_writes_and_survives_every_truncation))
