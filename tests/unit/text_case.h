/* Checking that a text a test rendered (a report, a usage page) holds each of a list of pieces.
 * Header-only (a static function) because each tests/unit/test_*.c is a program of its own;
 * include after cmocka.h. */
#ifndef STAMPEDE_TEST_TEXT_CASE_H
#define STAMPEDE_TEST_TEXT_CASE_H

#include <string.h>

/* text holds every string of want (NULL-terminated); every one it lacks is printed, then the test
 * fails. */
static inline void text_case_contains(const char *text, const char *const *want) {
    assert_non_null(text);
    size_t missing = 0;
    for (size_t i = 0; want[i]; i++)
        if (!strstr(text, want[i])) {
            print_error("missing: \"%s\"\n", want[i]);
            missing++;
        }
    if (missing)
        fail_msg("%zu of the pieces above are not in:\n%s", missing, text);
}

#endif
