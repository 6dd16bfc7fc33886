#include "mock_tokens.h"

#include <stdbool.h>
#include <stdlib.h>
#include <xxhash.h>

#include "buffer.h"

void mock_tokens_init(mock_tokens_t *self) {
    self->ids = NULL;
    self->len = self->cap = 0;
}

void mock_tokens_clear(mock_tokens_t *self) {
    free(self->ids);
    mock_tokens_init(self);
}

/* Makes room for n more ids. 0 ok, -1 out of memory. */
static int mock_tokens_reserve(mock_tokens_t *self, uint32_t n) {
    if ((uint64_t)self->len + n > UINT32_MAX)
        return -1;
    return buffer_grow_array(&self->ids, &self->cap, (size_t)self->len + n, sizeof(*self->ids));
}

int mock_tokens_push(mock_tokens_t *self, uint64_t id) {
    if (self->len == self->cap && mock_tokens_reserve(self, 1) < 0)
        return -1;
    self->ids[self->len++] = id;
    return 0;
}

uint64_t mock_tokens_word_id(const char *word, size_t len) {
    return XXH3_64bits(word, len);
}

static bool mock_tokens_is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int mock_tokens_add_text(mock_tokens_t *self, const char *text, size_t len) {
    size_t i = 0;
    while (i < len) {
        while (i < len && mock_tokens_is_space(text[i]))
            i++;
        size_t start = i;
        while (i < len && !mock_tokens_is_space(text[i]))
            i++;
        if (i > start && mock_tokens_push(self, mock_tokens_word_id(text + start, i - start)) < 0)
            return -1;
    }
    return 0;
}
