#include "reply_tokens.h"

#include <stdlib.h>

#include "buffer.h"

struct reply_tokens {
    tokenizer_counter_t *counter;
    buffer_t text; /* one event's text, unescaped */
    long owed;     /* tokens credited beyond the count (a piece re-split into fewer) */
    bool failed;
};

reply_tokens_t *reply_tokens_new(const tokenizer_t *tokenizer) {
    reply_tokens_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->counter = tokenizer_counter_new(tokenizer);
    if (!self->counter) {
        free(self);
        return NULL;
    }
    buffer_init(&self->text);
    return self;
}

void reply_tokens_destroy(reply_tokens_t **self_p) {
    reply_tokens_t *self = *self_p;
    if (!self)
        return;
    tokenizer_counter_destroy(&self->counter);
    buffer_clear(&self->text);
    free(self);
    *self_p = NULL;
}

void reply_tokens_reset(reply_tokens_t *self) {
    tokenizer_counter_reset(self->counter);
    self->owed = 0;
    self->failed = false;
}

/* Feeds one raw (JSON-escaped) string; unescaping never lengthens it. */
static long feed(reply_tokens_t *self, const char *raw, size_t len) {
    long added = 0;
    if (!raw || len == 0 || self->failed)
        return 0;
    /* room for len bytes at least: unescaping never lengthens */
    buffer_reset(&self->text);
    if (buffer_reserve(&self->text, len) < 0) {
        self->failed = true;
        return 0;
    }
    size_t n = chunk_unescape(raw, len, self->text.data);
    if (tokenizer_counter_feed(self->counter, self->text.data, n, &added) < 0)
        self->failed = true;
    return added;
}

static uint32_t credit(reply_tokens_t *self, long added) {
    if (self->failed)
        return 1;
    long tokens = added - self->owed;
    if (tokens < 1) {
        self->owed = 1 - tokens;
        return 1;
    }
    self->owed = 0;
    return tokens > UINT16_MAX ? UINT16_MAX : (uint32_t)tokens;
}

uint32_t reply_tokens_event(reply_tokens_t *self, const chunk_info_t *info) {
    return credit(self, feed(self, info->reasoning, info->reasoning_len) +
                            feed(self, info->content, info->content_len));
}

void reply_tokens_text(reply_tokens_t *self, const char *text, size_t len) {
    long added = 0;
    if (!self->failed && len > 0 && tokenizer_counter_feed(self->counter, text, len, &added) < 0)
        self->failed = true;
}

uint32_t reply_tokens_finish(reply_tokens_t *self) {
    long added = 0;
    if (!self->failed && tokenizer_counter_finish(self->counter, &added) < 0)
        self->failed = true;
    uint64_t total = tokenizer_counter_total(self->counter);
    return self->failed || total > UINT32_MAX ? 0 : (uint32_t)total;
}

bool reply_tokens_failed(const reply_tokens_t *self) {
    return self->failed;
}
