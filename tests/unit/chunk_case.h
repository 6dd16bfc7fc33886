/* Parsing one chunk for a test the way the stream does, but from an exact-size heap copy, so a
 * read past its end is an ASan report. Header-only (static functions) because each
 * tests/unit/test_*.c is a program of its own; include after cmocka.h. */
#ifndef STAMPEDE_TEST_CHUNK_CASE_H
#define STAMPEDE_TEST_CHUNK_CASE_H

#include <stdlib.h>
#include <string.h>

#include "chunk.h"

/* A chunk parser: chunk_parse, chunk_messages_parse or chunk_responses_parse. */
typedef int (*chunk_case_parse_fn)(const char *, size_t, chunk_info_t *);

/* Parses json[0..len) with fn from a copy of exactly len bytes; pointers into the copy are
 * rebased onto json, so callers can still compare them. */
static inline int chunk_case_parse(chunk_case_parse_fn fn, const char *json, size_t len,
                                   chunk_info_t *out) {
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, json, len);
    int rc = fn(copy, len, out);
    const char **fields[] = {&out->content, &out->reasoning, &out->finish_reason,
                             &out->error_message, &out->refusal};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (*fields[i] && *fields[i] >= copy && *fields[i] <= copy + len)
            *fields[i] = json + (*fields[i] - copy);
    free(copy);
    return rc;
}

/* A raw (still escaped) string field is expected's bytes; expected NULL: the field is absent. */
static inline void assert_raw(const char *ptr, size_t len, const char *expected) {
    if (!expected) {
        assert_null(ptr);
        assert_int_equal(len, 0);
        return;
    }
    assert_non_null(ptr);
    assert_int_equal(len, strlen(expected));
    assert_memory_equal(ptr, expected, len);
}

#endif
