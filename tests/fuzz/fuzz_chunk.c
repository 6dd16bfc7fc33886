/* The event scanners (common/chunk.c, chunk_messages.c, chunk_responses.c) on arbitrary data:
 * payloads, each input through all three. An event one accepts points only inside the payload
 * (but for the Responses finish_reason, which names a literal), its flags agree with its lengths,
 * and every string unescapes into no more bytes than its escaped form; one it refuses leaves the
 * output zeroed. chunk_parse_shaped gives chunk_parse's result, field for field: the input's lines
 * in order through one shape, then the whole input twice (the second read from the shape the
 * first made, when it could be one); at each line's start, chunk_frame_shaped on the rest reads
 * at most that line, as chunk_parse does. */
#include <stdbool.h>
#include <string.h>

#include "../unit/chunk_same.h"
#include "chunk.h"
#include "fuzz.h"

/* A returned string lies inside [data, data + len) (or is NULL with length 0). */
static void fuzz_chunk_check_span(const char *data, size_t len, const char *s, size_t n) {
    if (s == NULL) {
        FUZZ_CHECK(n == 0);
        return;
    }
    FUZZ_CHECK(s >= data && s <= data + len);
    FUZZ_CHECK(n <= (size_t)(data + len - s));
}

/* Unescapes the string into an exact-size heap buffer, so a write past it is caught. */
static void fuzz_chunk_check_unescape(const char *s, size_t n) {
    if (s == NULL)
        return;
    char *out = malloc(n ? n : 1);
    FUZZ_CHECK(out != NULL);
    FUZZ_CHECK(chunk_unescape(s, n, out) <= n);
    free(out);
}

typedef int (*fuzz_chunk_parse_fn)(const char *, size_t, chunk_info_t *);

static void fuzz_chunk_check(fuzz_chunk_parse_fn parse, const char *text, size_t size, bool chat) {
    chunk_info_t info;
    memset(&info, 0xA5, sizeof info);
    if (parse(text, size, &info) < 0) {
        chunk_info_t zero;
        memset(&zero, 0, sizeof zero);
        FUZZ_CHECK(memcmp(&info, &zero, sizeof info) == 0);
        return;
    }
    fuzz_chunk_check_span(text, size, info.content, info.content_len);
    fuzz_chunk_check_span(text, size, info.reasoning, info.reasoning_len);
    fuzz_chunk_check_span(text, size, info.refusal, info.refusal_len);
    if (parse != chunk_responses_parse)
        fuzz_chunk_check_span(text, size, info.finish_reason, info.finish_reason_len);
    fuzz_chunk_check_span(text, size, info.error_message, info.error_message_len);
    fuzz_chunk_check_span(text, size, info.response_id, info.response_id_len);
    FUZZ_CHECK(info.has_content == (info.content_len > 0));
    FUZZ_CHECK(info.has_reasoning == (info.reasoning_len > 0));
    FUZZ_CHECK(info.has_refusal == (info.refusal_len > 0));
    FUZZ_CHECK(info.error_message == NULL || info.has_error);
    FUZZ_CHECK(info.has_usage == (info.usage_fields != 0));
    if (info.done && chat)
        FUZZ_CHECK(!info.has_content && !info.has_usage && !info.has_error);
    if (info.done) /* an end event is no token */
        FUZZ_CHECK(!info.has_content && !info.has_reasoning && !info.has_tool_calls);
    fuzz_chunk_check_unescape(info.content, info.content_len);
    fuzz_chunk_check_unescape(info.reasoning, info.reasoning_len);
    fuzz_chunk_check_unescape(info.refusal, info.refusal_len);
    fuzz_chunk_check_unescape(info.error_message, info.error_message_len);
}

/* An exact-size heap copy of text[0..size), so a read past it is caught. */
static char *fuzz_chunk_copy(const char *text, size_t size) {
    char *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, text, size);
    return copy;
}

/* text[0..size) through the shape and through chunk_parse, from one exact-size copy. */
static void fuzz_chunk_check_shaped_one(chunk_shape_t *shape, const char *text, size_t size) {
    char *copy = fuzz_chunk_copy(text, size);
    chunk_info_t shaped, parsed;
    int rc_shaped = chunk_parse_shaped(shape, copy, size, &shaped);
    int rc = chunk_parse(copy, size, &parsed);
    FUZZ_CHECK(rc_shaped == rc);
    FUZZ_CHECK(chunk_info_same(&shaped, &parsed));
    free(copy);
}

/* The shape's read of a data line in a stream's bytes, text[0..size) from an exact-size copy: a
 * payload it reads is a whole line, ended by LF LF, and chunk_parse gives the same on it. */
static void fuzz_chunk_check_framed(chunk_shape_t *shape, const char *text, size_t size) {
    char *copy = fuzz_chunk_copy(text, size);
    chunk_info_t framed, parsed;
    size_t n = chunk_frame_shaped(shape, copy, size, &framed);
    if (n) {
        FUZZ_CHECK(n + 2 <= size && copy[n] == '\n' && copy[n + 1] == '\n');
        FUZZ_CHECK(!memchr(copy, '\n', n) && !memchr(copy, '\r', n));
        FUZZ_CHECK(chunk_parse(copy, n, &parsed) == 0);
        FUZZ_CHECK(chunk_info_same(&framed, &parsed));
    }
    free(copy);
}

static void fuzz_chunk_check_shaped(const char *text, size_t size) {
    chunk_shape_t *shape = chunk_shape_new();
    FUZZ_CHECK(shape != NULL);
    for (const char *p = text, *end = text + size;;) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        fuzz_chunk_check_framed(shape, p, (size_t)(end - p));
        fuzz_chunk_check_shaped_one(shape, p, (size_t)((newline ? newline : end) - p));
        if (!newline)
            break;
        p = newline + 1;
    }
    fuzz_chunk_check_shaped_one(shape, text, size);
    fuzz_chunk_check_shaped_one(shape, text, size);
    chunk_shape_destroy(&shape);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    fuzz_chunk_check(chunk_parse, text, size, true);
    fuzz_chunk_check(chunk_messages_parse, text, size, false);
    fuzz_chunk_check(chunk_responses_parse, text, size, false);
    fuzz_chunk_check_shaped(text, size);
    return 0;
}
