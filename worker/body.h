/* The JSON body of one OpenAI-compatible request, written into a growable buffer that is reused
 * from request to request (its capacity is kept). Strings are escaped for JSON (", \ and control
 * characters); valid UTF-8 passes through unchanged and each byte of an invalid sequence becomes
 * U+FFFD, so any reply a server sent can go back in the history and the body stays valid JSON.
 *
 *   chat:        {"model":M,"messages":[{"role":R,"content":T},...],"max_tokens":N,
 *                 "stream":true,"stream_options":{"include_usage":true}[,"ignore_eos":true]
 *                 [,"min_tokens":N][,"tools":[...]]}
 *                an assistant message that calls a tool adds "tool_calls":[{"id":I,"type":
 *                "function","function":{"name":F,"arguments":"{}"}}]; the tool's answer is
 *                {"role":"tool","tool_call_id":I,"content":T}
 *   completions: {"model":M,"prompt":"T1\nT2\n...","max_tokens":N,"stream":true,...}
 *   messages:    {"model":M,"system":S,"messages":[{"role":R,"content":T},...],"max_tokens":N,
 *                 "stream":true[,"thinking":{"type":"enabled","budget_tokens":B}][,"tools":[...]]}
 *                (Anthropic: a leading system message is "system"; a tool call is an assistant
 *                "tool_use" block, its answer a user "tool_result" block)
 *   responses:   {"model":M,"instructions":S,"input":[{"role":R,"content":T},...],
 *                 "max_output_tokens":N,"stream":true[,"tools":[...]]} (OpenAI Responses: a tool
 *                call is a "function_call" item, its answer a "function_call_output" item)
 *
 * Usage: body_begin, then body_add per message (in completions mode the texts are joined by a
 * newline into the prompt and the role is ignored), then body_end. */
#ifndef STAMPEDE_BODY_H
#define STAMPEDE_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

typedef struct body_options {
    config_api_t api;  /* the body's shape (above) */
    const char *model; /* copied into the body at body_begin */
    uint32_t max_tokens;
    bool max_completion_tokens; /* the limit's key is max_completion_tokens, not max_tokens */
    bool stream;                /* also asks for stream_options.include_usage */
    bool ignore_eos;
    bool min_tokens;          /* also sends min_tokens = max_tokens (vLLM, SGLang) */
    bool continuous_usage;    /* stream_options.continuous_usage_stats: usage on every event */
    uint32_t thinking_tokens; /* messages: thinking.budget_tokens (0: no thinking block) */
    const char *previous_response_id; /* responses: the response this one continues (NULL:
                                         none); borrowed until body_end */
    const char *tools_json; /* chat, messages, responses: the tools array in the API's shape, JSON
                               written as is (NULL: none); borrowed   until body_end */
    size_t tools_len;
} body_options_t;

typedef struct body {
    char *data; /* NUL-terminated JSON after a successful body_end; owned */
    size_t len;
    size_t cap;
    body_options_t options;
    uint32_t parts; /* messages (or prompt pieces) added since body_begin */
    bool list_open; /* the messages (or input) array is open */
    bool failed;    /* an allocation failed since body_begin */
} body_t;

/* An empty body (no allocation yet). */
void body_init(body_t *self);
/* Frees the buffer. */
void body_free(body_t *self);
/* Starts a new body in the same buffer (previous contents discarded, capacity kept). */
void body_begin(body_t *self, const body_options_t *options);
/* Adds one message: role "system", "user" or "assistant"; text of len bytes (may hold NULs). */
void body_add(body_t *self, const char *role, const char *text, size_t len);
/* Adds an assistant message (text) that calls tool `name` with call id `call_id` (both plain
 * [A-Za-z0-9_-] names); in completions mode only the text. */
void body_add_tool_call(body_t *self, const char *text, size_t len, const char *call_id,
                        const char *name);
/* Adds the answer to tool call `call_id` (role "tool"); in completions mode only the text. */
void body_add_tool_result(body_t *self, const char *call_id, const char *text, size_t len);
/* Closes the JSON. 0 ok (data/len hold the body); -1 if an allocation failed on the way. */
int body_end(body_t *self);

#endif
