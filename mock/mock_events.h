/* The streamed events of the simulated server's Anthropic Messages and OpenAI Responses answers,
 * in the shapes the official SDKs accumulate (docs/mock.md): every event has its `event:` line
 * and a "type"; each token event also carries "sent_ns", as a chat chunk does (none when it is
 * below 0). Like
 * mock_chunk.h, each function writes at p (the caller reserved room) and returns the end of what
 * it wrote; the head keeps the open block or item and the Responses sequence number. */
#ifndef STAMPEDE_MOCK_EVENTS_H
#define STAMPEDE_MOCK_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "mock_chunk.h"

/* Room for the events around the tokens (everything but the reply text itself). */
#define MOCK_EVENTS_FRAME_BYTES 4096

/* Before the first token. Messages: message_start (its usage: input_tokens without the cached
 * ones, cache_read_input_tokens, output_tokens 1), a ping, and the first content block's start
 * (thinking when the reply opens with reasoning, else text). Responses: response.created,
 * response.in_progress, the first output item (reasoning or message) and its content part. */
char *mock_events_start(char *p, mock_chunk_head_t *head, bool reasoning,
                        const mock_chunk_usage_t *usage);
/* From the reasoning to the answer. Messages: the thinking block's stop and a text block's
 * start. Responses: the reasoning item's done, the message item and its content part. */
char *mock_events_switch(char *p, mock_chunk_head_t *head);
/* A token event up to the opening quote of its text (text_delta or thinking_delta; the
 * Responses output_text or reasoning_text delta); the caller writes the JSON-escaped text. */
char *mock_events_token_open(char *p, mock_chunk_head_t *head);
/* The rest of a token event after its text. */
char *mock_events_token_close(char *p, mock_chunk_head_t *head, int64_t sent_ns);
/* Messages' end: the open block's stop, message_delta (stop_reason max_tokens when length, else
 * end_turn; usage.output_tokens) and message_stop. */
char *mock_events_messages_end(char *p, mock_chunk_head_t *head, bool length,
                               const mock_chunk_usage_t *usage);
/* Responses' end, response.completed (status incomplete, max_output_tokens, when length), up to
 * its output array's first item; then mock_events_item_open / the text / mock_events_item_close
 * per item, then mock_events_completed_close with the usage. */
char *mock_events_completed_open(char *p, mock_chunk_head_t *head, bool length);
/* One output item of response.completed up to its text: the reasoning (reasoning_text) or the
 * message (output_text); first: no comma before it. */
char *mock_events_item_open(char *p, const mock_chunk_head_t *head, bool reasoning, bool first);
char *mock_events_item_close(char *p);
/* The end of response.completed: usage (input_tokens with the cached ones, their details, output
 * and reasoning tokens). */
char *mock_events_completed_close(char *p, const mock_chunk_usage_t *usage, uint32_t reasoning);
/* Fault injection: an error event in the API's shape (Anthropic's overloaded_error; Responses'
 * error event), a token event whose JSON is cut short and whose event ends (malformed), and one
 * whose bytes stop mid-object (truncated: the close follows). */
char *mock_events_error(char *p, mock_chunk_head_t *head);
char *mock_events_malformed(char *p, mock_chunk_head_t *head);
char *mock_events_truncated(char *p, mock_chunk_head_t *head);
/* The preflight's whole answer in the API's shape (one word), NUL-terminated static text. */
const char *mock_events_preflight(mock_api_kind_t kind);

#endif
