#ifndef STAMPEDE_CHUNK_H
#define STAMPEDE_CHUNK_H

/* What the metrics need from one OpenAI-compatible stream chunk (the data: of an SSE event),
 * picked out by a validating JSON scanner that builds no DOM and allocates nothing.
 * Strings are returned raw: pointers into the chunk, still JSON-escaped (chunk_unescape). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct chunk_info {
    bool done; /* data was exactly [DONE] */
    /* Raw choices[0].delta.content, or choices[0].text (/v1/completions); NULL when null or
     * absent. has_content: non-empty. */
    const char *content;
    size_t content_len;
    bool has_content;
    /* Raw choices[0].delta.reasoning_content (or delta.reasoning, newer vLLM); NULL when null
     * or absent. has_reasoning: non-empty. */
    const char *reasoning;
    size_t reasoning_len;
    bool has_reasoning;
    /* Raw choices[0].delta.refusal (OpenAI's structured outputs answer a refusal there instead of
     * in content); NULL when null or absent. has_refusal: non-empty. */
    const char *refusal;
    size_t refusal_len;
    bool has_refusal;
    bool has_tool_calls; /* choices[0].delta.tool_calls present and non-empty */
    /* Raw choices[0].finish_reason; NULL when null or absent. */
    const char *finish_reason;
    size_t finish_reason_len;
    /* A top-level "usage" object (not null): its prompt_tokens, completion_tokens and
     * prompt_tokens_details.cached_tokens (0 when absent). */
    bool has_usage;
    uint32_t prompt_tokens, completion_tokens, cached_tokens;
    /* A top-level "error" (object or string), or vLLM's older {"object":"error","message":..,
     * "code":..} form: raw message (NULL when absent) and numeric code (HTTP status), else 0. */
    bool has_error;
    const char *error_message;
    size_t error_message_len;
    int error_code;
    /* A top-level "sent_ns": the stampede mock's CLOCK_MONOTONIC send time of the chunk. */
    bool has_sent_ns;
    int64_t sent_ns;
} chunk_info_t;

/* Fills *out from one data: payload of len bytes (not NUL-terminated; never read past len).
 * Returns 0, or -1 when the payload is neither [DONE] nor one well-formed JSON object (out is
 * then zeroed). Pointers in *out point into data. Keys written with escapes are not matched. */
int chunk_parse(const char *data, size_t len, chunk_info_t *out);

/* Decodes the JSON string body escaped[0..len) into out (\n \" \\ \/ \b \f \r \t, \uXXXX with
 * surrogate pairs to UTF-8; a lone surrogate becomes U+FFFD; an invalid escape is copied as
 * is). out needs >= len bytes; returns the bytes written (no NUL is added). */
size_t chunk_unescape(const char *escaped, size_t len, char *out);

#endif
