/* The OpenAI chunk scanner (common/chunk.c) on arbitrary data: payloads. A chunk it accepts
 * points only inside the payload, its flags agree with its lengths, and every string unescapes
 * into no more bytes than its escaped form; one it refuses leaves the output zeroed. */
#include <stdbool.h>
#include <string.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    chunk_info_t info;
    memset(&info, 0xA5, sizeof info);
    if (chunk_parse(text, size, &info) < 0) {
        chunk_info_t zero;
        memset(&zero, 0, sizeof zero);
        FUZZ_CHECK(memcmp(&info, &zero, sizeof info) == 0);
        return 0;
    }
    fuzz_chunk_check_span(text, size, info.content, info.content_len);
    fuzz_chunk_check_span(text, size, info.reasoning, info.reasoning_len);
    fuzz_chunk_check_span(text, size, info.refusal, info.refusal_len);
    fuzz_chunk_check_span(text, size, info.finish_reason, info.finish_reason_len);
    fuzz_chunk_check_span(text, size, info.error_message, info.error_message_len);
    FUZZ_CHECK(info.has_content == (info.content_len > 0));
    FUZZ_CHECK(info.has_reasoning == (info.reasoning_len > 0));
    FUZZ_CHECK(info.has_refusal == (info.refusal_len > 0));
    FUZZ_CHECK(info.error_message == NULL || info.has_error);
    if (info.done)
        FUZZ_CHECK(!info.has_content && !info.has_usage && !info.has_error);
    fuzz_chunk_check_unescape(info.content, info.content_len);
    fuzz_chunk_check_unescape(info.reasoning, info.reasoning_len);
    fuzz_chunk_check_unescape(info.refusal, info.refusal_len);
    fuzz_chunk_check_unescape(info.error_message, info.error_message_len);
    return 0;
}
