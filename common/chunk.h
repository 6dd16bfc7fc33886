#ifndef STAMPEDE_CHUNK_H
#define STAMPEDE_CHUNK_H

/* What the metrics need from one streamed event (the data: of an SSE event) of any of the four
 * APIs, picked out by a validating JSON scanner that builds no DOM and allocates nothing: an
 * OpenAI chat or completions chunk (chunk_parse), an Anthropic Messages event
 * (chunk_messages_parse) or an OpenAI Responses event (chunk_responses_parse), all in the one
 * shape chunk_info_t. Strings are returned raw: pointers into the event, still JSON-escaped
 * (chunk_unescape). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which usage counts an event carried (chunk_info_t.usage_fields). */
#define CHUNK_USAGE_PROMPT 1u
#define CHUNK_USAGE_COMPLETION 2u
#define CHUNK_USAGE_CACHED 4u

typedef struct chunk_info {
    bool done; /* data was exactly [DONE], or the API's end event (Messages message_stop,
                  Responses response.completed or response.incomplete) */
    /* Raw choices[0].delta.content, or choices[0].text (/v1/completions); NULL when null or
     * absent. has_content: non-empty. */
    const char *content;
    size_t content_len;
    bool has_content;
    /* The content's raw bytes are its text, with no escape to decode: known only to the chunk
     * shape's read (chunk_parse_shaped, chunk_frame_shaped); false when not known. */
    bool content_plain;
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
     * prompt_tokens_details.cached_tokens (0 when absent); usage_fields says which of the three
     * the event set (a chat usage block sets all three; a Messages event only those it has). */
    bool has_usage;
    unsigned usage_fields;
    uint32_t prompt_tokens, completion_tokens, cached_tokens;
    /* A top-level "error" (object or string), or vLLM's older {"object":"error","message":..,
     * "code":..} form: raw message (NULL when absent) and numeric code (HTTP status), else 0. */
    bool has_error;
    const char *error_message;
    size_t error_message_len;
    int error_code;
    /* Responses: the response's "id" (response.created, response.completed), raw; NULL when
     * absent. */
    const char *response_id;
    size_t response_id_len;
    /* A top-level "sent_ns": the stampede mock's CLOCK_MONOTONIC send time of the chunk. */
    bool has_sent_ns;
    int64_t sent_ns;
} chunk_info_t;

/* Fills *out from one data: payload of len bytes (not NUL-terminated; never read past len).
 * Returns 0, or -1 when the payload is neither [DONE] nor one well-formed JSON object (out is
 * then zeroed). Pointers in *out point into data. Keys written with escapes are not matched. */
int chunk_parse(const char *data, size_t len, chunk_info_t *out);

/* Fills *out from the data of one Anthropic Messages event (message_start, content_block_start,
 * content_block_delta, content_block_stop, message_delta, message_stop, ping, error), read by its
 * "type" whatever the order of its keys. A text_delta is content, a thinking_delta reasoning, a
 * non-empty input_json_delta a tool call; message_delta's stop_reason is the finish_reason (raw:
 * end_turn, max_tokens, tool_use...); usage counts input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens as prompt tokens and cache_read_input_tokens as cached ones, each
 * only when the event has it; message_stop sets done. Returns 0, or -1 when the data is not one
 * well-formed JSON object (out is then zeroed). */
int chunk_messages_parse(const char *data, size_t len, chunk_info_t *out);

/* Fills *out from the data of one OpenAI Responses event: response.output_text.delta is content,
 * response.reasoning_text.delta and response.reasoning_summary_text.delta reasoning,
 * response.refusal.delta a refusal, a non-empty response.function_call_arguments.delta a tool
 * call; response.completed and response.incomplete set done, the usage (input_tokens,
 * output_tokens, input_tokens_details.cached_tokens) and a finish_reason ("stop", "tool_calls"
 * when the output holds a function call, "length" when cut by max_output_tokens);
 * response.failed and error set has_error with their message. Returns 0, or -1 when the data is
 * not one well-formed JSON object (out is then zeroed). */
int chunk_responses_parse(const char *data, size_t len, chunk_info_t *out);

/* The last payload parsed through chunk_parse_shaped, as a shape: its bytes, with holes where
 * the next payload of a stream may differ (the top-level "id", "created" and
 * "system_fingerprint" values, the delta's text or reasoning, the mock's "sent_ns"). One per loop
 * thread: every stream of a server sends the same shape for each token, so a token's payload is
 * compared to it instead of parsed member by member. */
typedef struct chunk_shape chunk_shape_t;

/* An empty shape; NULL when out of memory. */
chunk_shape_t *chunk_shape_new(void);
/* Frees it; *self_p becomes NULL. */
void chunk_shape_destroy(chunk_shape_t **self_p);
/* chunk_parse, with exactly its result, its return value and its pointers into data: a payload
 * whose bytes equal the shape's outside the holes, and whose holes each hold a value that the
 * member reading it accepts, is read from the shape with the holes' values read again by the
 * same functions chunk_parse uses there; any other is parsed in full and, when it can be one,
 * becomes the shape. */
int chunk_parse_shaped(chunk_shape_t *shape, const char *data, size_t len, chunk_info_t *out);
/* One SSE data line's payload at the start of data[0..len), followed there by LF LF (the line's
 * end and the event's), when the shape reads it: its length n, with *out as chunk_parse gives it
 * for data[0..n) (counted as a hit); else 0, nothing counted. Such a payload holds no raw CR or
 * LF (only a shape of one without them reads here, and no hole's value can hold one), so the
 * line ends at n: a reader of the stream's bytes need not scan for it (stream.c's shaped
 * events). */
size_t chunk_frame_shaped(chunk_shape_t *shape, const char *data, size_t len, chunk_info_t *out);
/* Payloads read from the shape, and parsed in full, since the shape was made. */
uint64_t chunk_shape_hits(const chunk_shape_t *self);
uint64_t chunk_shape_misses(const chunk_shape_t *self);

/* Decodes the JSON string body escaped[0..len) into out (\n \" \\ \/ \b \f \r \t, \uXXXX with
 * surrogate pairs to UTF-8; a lone surrogate becomes U+FFFD; an invalid escape is copied as
 * is). out needs >= len bytes; returns the bytes written (no NUL is added). */
size_t chunk_unescape(const char *escaped, size_t len, char *out);

#endif
