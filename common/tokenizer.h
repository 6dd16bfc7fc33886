/* A target model's tokenizer: a Hugging Face tokenizer.json with a byte-level BPE model (the
 * Llama-3, Qwen2/3, DeepSeek-V3 and GPT-OSS families), loaded once and then shared read-only by
 * every thread. Its pipeline is HF's: added tokens split out first, the normaliser (none or NFC),
 * the pre-tokenizer's Split regexes (PCRE2, Unicode properties), the ByteLevel byte-to-character
 * mapping, then the BPE merges by rank. Invalid UTF-8 in the input becomes U+FFFD per maximal
 * invalid subpart first, as a WHATWG TextDecoder (and Rust's from_utf8_lossy) does. Working
 * memory lives in a tokenizer_scratch_t owned by one thread: it grows to the longest text seen and
 * is reused, so tokenising touches no allocator once warm. */
#ifndef STAMPEDE_TOKENIZER_H
#define STAMPEDE_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "buffer.h"

typedef struct tokenizer tokenizer_t;
typedef struct tokenizer_scratch tokenizer_scratch_t;
typedef struct tokenizer_counter tokenizer_counter_t;

/* Loads path. 0 ok (*out owned by the caller); -1 with err naming the file and what it cannot
 * handle (a model other than byte-level BPE, an unknown normaliser or pre-tokenizer, ...). */
int tokenizer_load(const char *path, tokenizer_t **out, char *err, size_t err_len);
/* Frees *self_p and sets it to NULL. */
void tokenizer_destroy(tokenizer_t **self_p);
/* tokenizer_load, shared: the threads of one process that ask for the same path while it is held
 * get one copy (a worker's --threads each prepare the run). Release each with tokenizer_release. */
int tokenizer_acquire(const char *path, const tokenizer_t **out, char *err, size_t err_len);
/* Lets go of *self_p (freed with its last holder) and sets it to NULL. */
void tokenizer_release(const tokenizer_t **self_p);

/* Working memory for one thread (NULL when memory is exhausted). */
tokenizer_scratch_t *tokenizer_scratch_new(void);
void tokenizer_scratch_destroy(tokenizer_scratch_t **self_p);

/* Encodes text[0..len) (no special tokens added around it; added and special tokens written in
 * the text are recognised, as HF's encode does). Writes the first cap ids to ids (ids may be NULL
 * with cap 0 to count only) and returns how many there are in all, or -1 when memory is exhausted.
 */
long tokenizer_encode(const tokenizer_t *self, tokenizer_scratch_t *scratch, const char *text,
                      size_t len, uint32_t *ids, size_t cap);
/* Replaces each of ids[0..n) by the offset at which its token ends in their bytes put back to
 * back (an id that names nothing counts no bytes), and returns the bytes in all. */
uint64_t tokenizer_token_ends(const tokenizer_t *self, uint32_t *ids, size_t n);

/* Counts the tokens of a text that arrives in pieces (a streamed reply): after each piece, the
 * tokens of everything fed so far minus those already reported. Re-tokenises only the last two
 * pre-tokenizer pieces of what came before (their split may change with more text), so each feed
 * costs the new text, not the whole reply. NULL when memory is exhausted. */
tokenizer_counter_t *tokenizer_counter_new(const tokenizer_t *tokenizer);
void tokenizer_counter_destroy(tokenizer_counter_t **self_p);
/* Starts a new text (keeps the memory). */
void tokenizer_counter_reset(tokenizer_counter_t *self);
/* Feeds text[0..len) and sets *added to the tokens it adds: the count of the whole text so far
 * minus the count reported before (usually this piece's tokens; 0 or even less when it completed
 * or re-split a token begun before, so that the sum stays exact). An incomplete UTF-8 character
 * at the end waits for the next feed. 0, or -1 when memory is exhausted (the counter then counts
 * nothing more until reset). */
int tokenizer_counter_feed(tokenizer_counter_t *self, const char *text, size_t len, long *added);
/* Ends the text: a character left incomplete counts as U+FFFD; *added as for feed. 0 or -1. */
int tokenizer_counter_finish(tokenizer_counter_t *self, long *added);
/* Tokens of everything fed so far (the sum of what feed and finish returned). */
uint64_t tokenizer_counter_total(const tokenizer_counter_t *self);

#endif
