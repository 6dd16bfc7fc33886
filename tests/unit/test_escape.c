/* common/escape: JSON string bodies through jansson, appended to a buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

static void test_escape_json_quotes_backslashes_and_controls(void **state) {
    buffer_t out;
    buffer_init(&out);
    assert_int_equal(buffer_append(&out, "x=", 2), 0);
    assert_int_equal(escape_json_append(&out, "a\"b\\c\n\x01/é", 10), 0);
    assert_string_equal(out.data, "x=a\\\"b\\\\c\\n\\u0001/é");
    /* Quoted again, it reads back as the original text. */
    char doc[64];
    snprintf(doc, sizeof(doc), "\"%s\"", out.data + 2);
    json_t *v = json_loads(doc, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    assert_string_equal(json_string_value(v), "a\"b\\c\n\x01/é");
    json_decref(v);
    buffer_clear(&out);
}

static void test_escape_json_keeps_embedded_nul_and_rejects_bad_utf8(void **state) {
    buffer_t out;
    buffer_init(&out);
    assert_int_equal(escape_json_append(&out, "a\0b", 3), 0);
    assert_string_equal(out.data, "a\\u0000b");
    size_t before = out.len;
    assert_int_equal(escape_json_append(&out, "\xff\xfe", 2), -1);
    assert_int_equal(out.len, before);
    buffer_clear(&out);
}

UNIT_MAIN(cmocka_unit_test(test_escape_json_quotes_backslashes_and_controls),
          cmocka_unit_test(test_escape_json_keeps_embedded_nul_and_rejects_bad_utf8))
