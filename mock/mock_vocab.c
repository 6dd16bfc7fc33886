#include "mock_vocab.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "mock_tokens.h"
#include "prompt.h"

typedef struct mock_vocab_word {
    char *json; /* " word", escaped; the unspaced form starts at json + 1 */
    size_t len; /* of the spaced form */
    uint64_t token;
} mock_vocab_word_t;

struct mock_vocab {
    mock_vocab_word_t *words;
    uint32_t n;
};

/* " word" escaped for a JSON string body, once at start-up (what the vocabulary holds is plain,
 * but a quote or control byte must never break a chunk); NULL without memory. */
static char *mock_vocab_escape(const char *word, size_t *len) {
    buffer_t json;
    buffer_init(&json);
    if (buffer_append(&json, " ", 1) < 0 || escape_json_append(&json, word, strlen(word)) < 0) {
        buffer_clear(&json);
        return NULL;
    }
    *len = json.len;
    return json.data; /* the buffer's storage, now the word's */
}

mock_vocab_t *mock_vocab_new(void) {
    mock_vocab_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->n = prompt_vocabulary_size();
    self->words = calloc(self->n, sizeof(*self->words));
    if (!self->words) {
        mock_vocab_destroy(&self);
        return NULL;
    }
    for (uint32_t i = 0; i < self->n; i++) {
        const char *word = prompt_word(i);
        self->words[i].json = mock_vocab_escape(word, &self->words[i].len);
        if (!self->words[i].json) {
            mock_vocab_destroy(&self);
            return NULL;
        }
        self->words[i].token = mock_tokens_word_id(word, strlen(word));
    }
    return self;
}

void mock_vocab_destroy(mock_vocab_t **self_p) {
    mock_vocab_t *self = *self_p;
    if (!self)
        return;
    if (self->words)
        for (uint32_t i = 0; i < self->n; i++)
            free(self->words[i].json);
    free(self->words);
    free(self);
    *self_p = NULL;
}

/* splitmix64's finaliser: a cheap, well-mixed function of (key, i). */
static uint64_t mock_vocab_mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

uint32_t mock_vocab_reply_word(const mock_vocab_t *self, uint64_t key, uint32_t i) {
    uint64_t x = mock_vocab_mix(key + 0x9e3779b97f4a7c15ull * ((uint64_t)i + 1));
    return (uint32_t)(((unsigned __int128)x * self->n) >> 64);
}

const char *mock_vocab_json(const mock_vocab_t *self, uint32_t w, bool spaced, size_t *len) {
    const mock_vocab_word_t *word = &self->words[w];
    *len = spaced ? word->len : word->len - 1;
    return spaced ? word->json : word->json + 1;
}

uint64_t mock_vocab_token(const mock_vocab_t *self, uint32_t w) {
    return self->words[w].token;
}
