/* The simulated server's tokenizer: one token per whitespace-separated word, each named by the
 * hash of its bytes, so the same word is the same token in a prompt and in a reply. */
#ifndef STAMPEDE_MOCK_TOKENS_H
#define STAMPEDE_MOCK_TOKENS_H

#include <stddef.h>
#include <stdint.h>

/* A growable array of token ids. */
typedef struct mock_tokens {
    uint64_t *ids; /* owned */
    uint32_t len;
    size_t cap;
} mock_tokens_t;

/* Initialises an empty array. */
void mock_tokens_init(mock_tokens_t *self);
/* Frees the ids and empties the array. */
void mock_tokens_clear(mock_tokens_t *self);
/* Appends one id. 0 ok, -1 out of memory. */
int mock_tokens_push(mock_tokens_t *self, uint64_t id);
/* The id of one word: a hash of its bytes. */
uint64_t mock_tokens_word_id(const char *word, size_t len);
/* Appends the ids of the whitespace-separated words of text[0..len). 0 ok, -1 out of memory. */
int mock_tokens_add_text(mock_tokens_t *self, const char *text, size_t len);

#endif
