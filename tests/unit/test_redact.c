/* common/redact: secrets replaced in place, bounded by the buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "redact.h"
#include "unit_main.h"

static void test_redact_replaces_every_occurrence(void **st) {
    char text[160] = "HTTP 401: bad key sk-123456 (sk-123456)";
    assert_int_equal(redact_text(text, sizeof text, "sk-123456"), 2);
    assert_string_equal(text, "HTTP 401: bad key <redacted> (<redacted>)");
}

static void test_redact_stays_within_the_buffer_when_the_mark_is_longer(void **st) {
    char text[16] = "a abcd b abcd"; /* the second one is pushed past the end */
    assert_int_equal(redact_text(text, sizeof text, "abcd"), 1);
    assert_string_equal(text, "a <redacted> b ");
    assert_null(strstr(text, "abcd"));
    char tight[8] = "x abcd";
    assert_int_equal(redact_text(tight, sizeof tight, "abcd"), 1);
    assert_string_equal(tight, "x <reda");
}

static void test_redact_ignores_short_or_absent_secrets(void **st) {
    char text[32] = "key abc here";
    assert_int_equal(redact_text(text, sizeof text, "abc"), 0);
    assert_int_equal(redact_text(text, sizeof text, NULL), 0);
    assert_int_equal(redact_text(text, sizeof text, "zzzzzz"), 0);
    assert_string_equal(text, "key abc here");
}

UNIT_MAIN(cmocka_unit_test(test_redact_replaces_every_occurrence),
          cmocka_unit_test(test_redact_stays_within_the_buffer_when_the_mark_is_longer),
          cmocka_unit_test(test_redact_ignores_short_or_absent_secrets))
