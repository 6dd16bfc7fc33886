/* A stream's reply counted in the target's tokenizer (target.tokenizer): each token event's text
 * (content and reasoning) is tokenised incrementally, so a chunk carries the tokens its text holds
 * when the server sends no usage (docs/metrics.md section 4, token source "tokenizer"), and the
 * whole reply's count can be checked against usage when it is sent. One per stream slot, reused
 * request after request; the per-event path allocates nothing once warm. */
#ifndef STAMPEDE_REPLY_TOKENS_H
#define STAMPEDE_REPLY_TOKENS_H

#include <stdbool.h>
#include <stdint.h>

#include "chunk.h"
#include "tokenizer.h"

typedef struct reply_tokens reply_tokens_t;

/* NULL when memory is exhausted. The tokenizer is borrowed and must outlive it. */
reply_tokens_t *reply_tokens_new(const tokenizer_t *tokenizer);
void reply_tokens_destroy(reply_tokens_t **self_p);
/* Starts a new reply. */
void reply_tokens_reset(reply_tokens_t *self);
/* Counts one token event's text and returns the tokens to credit it with: at least 1 (an event
 * carries a token); when re-tokenising gave a piece fewer tokens than credited before, the excess
 * is taken back from later events above 1, so the credits add up to the reply's count. */
uint32_t reply_tokens_event(reply_tokens_t *self, const chunk_info_t *info);
/* Counts plain (unescaped) text: a non-streaming reply's (reply_tokens_finish gives its count). */
void reply_tokens_text(reply_tokens_t *self, const char *text, size_t len);
/* Ends the reply (again: no change); returns its tokens in the tokenizer (0 when counting failed:
 * out of memory). */
uint32_t reply_tokens_finish(reply_tokens_t *self);
/* The reply could not be counted (out of memory): its chunks fell back to one token each. */
bool reply_tokens_failed(const reply_tokens_t *self);

#endif
