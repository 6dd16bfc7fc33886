/* The words the simulated server replies with: the prompt vocabulary (common/prompt.h), each
 * word pre-escaped for JSON with and without its leading space and with its token id, so
 * emitting a token is one table lookup and a copy. */
#ifndef STAMPEDE_MOCK_VOCAB_H
#define STAMPEDE_MOCK_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mock_vocab mock_vocab_t;

/* Builds the table from the prompt vocabulary. NULL on allocation failure. */
mock_vocab_t *mock_vocab_new(void);
/* Frees the table and sets *self_p to NULL. */
void mock_vocab_destroy(mock_vocab_t **self_p);
/* Which word is token i of the reply to a prompt whose key is key (a pure function). */
uint32_t mock_vocab_reply_word(const mock_vocab_t *self, uint64_t key, uint32_t i);
/* Word w as the content of a JSON string (escaped, without quotes), preceded by a space when
 * spaced is true (every reply token but the first). Borrowed; *len receives its length. */
const char *mock_vocab_json(const mock_vocab_t *self, uint32_t w, bool spaced, size_t *len);
/* The token id of word w (mock_tokens_word_id of its bytes). */
uint64_t mock_vocab_token(const mock_vocab_t *self, uint32_t w);

#endif
