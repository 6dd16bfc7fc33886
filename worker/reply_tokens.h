/* A stream's reply counted in the target's tokenizer (target.tokenizer). Each token event's text
 * (reasoning and content, unescaped) is kept with the index of the chunk it came in; when the
 * reply ends it is tokenised once, whole, and each token is given to the chunk in which its last
 * byte arrived. So a chunk carries the tokens its text completed when the server sends no usage
 * (docs/metrics.md section 4, token source "tokenizer"), and the reply's count is exact (HF's
 * encoding of the whole text). Counting once at the end, rather than again at every event,
 * costs the loop one pass over the text per reply. One per stream slot, reused request after
 * request; its buffers grow to the longest reply and are kept. */
#ifndef STAMPEDE_REPLY_TOKENS_H
#define STAMPEDE_REPLY_TOKENS_H

#include <stdbool.h>
#include <stdint.h>

#include "chunk.h"
#include "tokenizer.h"

typedef struct reply_tokens reply_tokens_t;

/* NULL when memory is exhausted. The tokenizer and the scratch are borrowed and must outlive it;
 * the scratch may be shared by the counters of one thread (its engine's streams). */
reply_tokens_t *reply_tokens_new(const tokenizer_t *tokenizer, tokenizer_scratch_t *scratch);
void reply_tokens_destroy(reply_tokens_t **self_p);
/* Starts a new reply. */
void reply_tokens_reset(reply_tokens_t *self);
/* Keeps a token event's text (JSON-escaped reasoning and content) as part of chunk `chunk`
 * (chunks in order, from 0). */
void reply_tokens_event(reply_tokens_t *self, const chunk_info_t *info, uint32_t chunk);
/* Keeps plain (unescaped) text as part of chunk `chunk`: a non-streaming reply's. */
void reply_tokens_text(reply_tokens_t *self, const char *text, size_t len, uint32_t chunk);
/* Tokenises the reply kept and returns its tokens (0 when it could not: out of memory). When
 * chunk_tokens is not NULL and no two token events carried usage (which then says what each
 * carried), writes there the tokens of each of the n_chunks chunks: those whose
 * last byte came in it, at least 1 (a chunk whose text completed no token, a word cut across
 * chunks, gets 1 and the next chunk with more than 1 gives it back, so they add up to the count
 * whenever they can). */
uint32_t reply_tokens_finish(reply_tokens_t *self, uint16_t *chunk_tokens, uint32_t n_chunks);
/* The last reply could not be counted (out of memory). */
bool reply_tokens_failed(const reply_tokens_t *self);

#endif
