/* The streamed chunks of the simulated server, byte for byte in vLLM's format with one
 * addition, "sent_ns" (the CLOCK_MONOTONIC instant the chunk was written; a sent_ns below 0
 * leaves it out, as --no-sent-ns asks). The per-request
 * prefix is formatted once; each token is then a few copies and one integer to text, with no
 * allocation. Every function writes at p (the caller reserved mock_chunk_max_bytes per chunk)
 * and returns the end of what it wrote. */
#ifndef STAMPEDE_MOCK_CHUNK_H
#define STAMPEDE_MOCK_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_api.h"

/* The longest escaped model name a head holds (the head has a fixed size). */
#define MOCK_CHUNK_MAX_MODEL_JSON 256

/* The fixed start of every chunk of one response, up to and including "choices":[ (chat and
 * completions); the response's id and model, and where its events are (Messages, Responses:
 * mock_events.h). */
typedef struct mock_chunk_head {
    mock_api_kind_t kind;
    size_t len;
    char text[512];
    char id[48];
    char model_json[MOCK_CHUNK_MAX_MODEL_JSON + 1];
    long long created;
    uint32_t sequence; /* Responses: the next event's sequence_number */
    uint32_t block;    /* Messages: the open content block; Responses: the open output item */
    bool reasoning;    /* the open block or item is the reasoning */
} mock_chunk_head_t;

/* Token counts as "usage" reports them. */
typedef struct mock_chunk_usage {
    uint32_t prompt_tokens, completion_tokens, cached_tokens;
} mock_chunk_usage_t;

/* Formats the head for response id (e.g. "chatcmpl-3f..") created at the given UNIX time;
 * model_json is the model name already escaped for JSON (at most MOCK_CHUNK_MAX_MODEL_JSON
 * bytes). */
void mock_chunk_head_init(mock_chunk_head_t *self, mock_api_kind_t kind, const char *id,
                          long long created, const char *model_json);
/* An upper bound of any one chunk of this response carrying a word of word_len bytes. */
size_t mock_chunk_max_bytes(const mock_chunk_head_t *head, size_t word_len);
/* Chat only: the first chunk, {"role":"assistant","content":""}. */
char *mock_chunk_role(char *p, const mock_chunk_head_t *head, int64_t sent_ns);
/* The start of a token chunk, up to the opening quote of its text; the caller writes the
 * JSON-escaped text of one or more tokens (several when speculative decoding accepted drafts)
 * and ends it with mock_chunk_token_close. reasoning puts the text in delta.reasoning_content. */
char *mock_chunk_token_open(char *p, const mock_chunk_head_t *head, bool reasoning);
/* The rest of a token chunk after its text: finish is NULL or "length"/"stop" (the last token);
 * usage is NULL unless continuous usage stats were asked for. */
char *mock_chunk_token_close(char *p, const mock_chunk_head_t *head, const char *finish,
                             const mock_chunk_usage_t *usage, int64_t sent_ns);
/* The usage chunk that follows the last token when stream_options.include_usage is set. */
char *mock_chunk_usage(char *p, const mock_chunk_head_t *head, const mock_chunk_usage_t *usage,
                       int64_t sent_ns);
/* An event whose JSON stops mid-object with no end of event (fault injection: the close
 * follows). */
char *mock_chunk_truncated(char *p, const mock_chunk_head_t *head);
/* An SSE `event: error` carrying vLLM's error object (fault injection). */
char *mock_chunk_error_event(char *p);
/* A chunk whose JSON is cut short (fault injection). */
char *mock_chunk_malformed(char *p, const mock_chunk_head_t *head);
/* data: [DONE] */
char *mock_chunk_done(char *p);
/* Writes the decimal form of v at p. */
char *mock_chunk_put_u64(char *p, uint64_t v);

#endif
