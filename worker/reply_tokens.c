#include "reply_tokens.h"

#include <stdlib.h>

#include "buffer.h"

struct reply_tokens {
    const tokenizer_t *tokenizer;
    tokenizer_scratch_t *scratch; /* borrowed */
    buffer_t text;                /* every event's text, unescaped, in arrival order */
    uint32_t *chunk_end;          /* by chunk: the text's length after its last event */
    size_t chunk_cap;
    uint32_t n_chunks;     /* chunks seen so far (the last index + 1) */
    uint32_t usage_events; /* token events that carried usage: 2 or more credit the chunks */
    uint32_t *ids;         /* the reply's ids, at the end */
    size_t ids_cap;
    bool failed;
};

reply_tokens_t *reply_tokens_new(const tokenizer_t *tokenizer, tokenizer_scratch_t *scratch) {
    reply_tokens_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->tokenizer = tokenizer;
    self->scratch = scratch;
    buffer_init(&self->text);
    return self;
}

void reply_tokens_destroy(reply_tokens_t **self_p) {
    reply_tokens_t *self = *self_p;
    if (!self)
        return;
    buffer_clear(&self->text);
    free(self->chunk_end);
    free(self->ids);
    free(self);
    *self_p = NULL;
}

void reply_tokens_reset(reply_tokens_t *self) {
    buffer_reset(&self->text);
    self->n_chunks = 0;
    self->usage_events = 0;
    self->failed = false;
}

bool reply_tokens_failed(const reply_tokens_t *self) {
    return self->failed;
}

/* Marks the text so far as chunk `chunk`'s (chunks skipped end where the one before did). */
static void end_chunk(reply_tokens_t *self, uint32_t chunk) {
    if (chunk >= self->chunk_cap &&
        buffer_grow_array(&self->chunk_end, &self->chunk_cap, (size_t)chunk + 1,
                          sizeof *self->chunk_end) < 0) {
        self->failed = true;
        return;
    }
    for (uint32_t c = self->n_chunks; c < chunk; c++)
        self->chunk_end[c] = c ? self->chunk_end[c - 1] : 0;
    if (chunk >= self->n_chunks)
        self->n_chunks = chunk + 1;
    self->chunk_end[chunk] = (uint32_t)self->text.len;
}

/* Appends one raw (JSON-escaped) string; unescaping never lengthens it. */
static void keep_escaped(reply_tokens_t *self, const char *raw, size_t len) {
    if (!raw || len == 0 || self->failed)
        return;
    if (self->text.len + len > self->text.cap && buffer_reserve(&self->text, len) < 0) {
        self->failed = true;
        return;
    }
    self->text.len += chunk_unescape(raw, len, self->text.data + self->text.len);
}

void reply_tokens_event(reply_tokens_t *self, const chunk_info_t *info, uint32_t chunk) {
    self->usage_events += info->has_usage;
    keep_escaped(self, info->reasoning, info->reasoning_len);
    keep_escaped(self, info->content, info->content_len);
    if (!self->failed)
        end_chunk(self, chunk);
}

void reply_tokens_text(reply_tokens_t *self, const char *text, size_t len, uint32_t chunk) {
    if (!self->failed && len > 0 && buffer_append(&self->text, text, len) < 0)
        self->failed = true;
    if (!self->failed)
        end_chunk(self, chunk);
}

/* The reply's ids in self->ids; their count, or -1. A token is a byte at least, but a U+FFFD
 * stands for 1 byte of the text in 3, so room for 3 per byte always suffices. */
static long encode(reply_tokens_t *self) {
    const char *text = self->text.data ? self->text.data : "";
    size_t need = 3 * self->text.len + 1;
    if (need > self->ids_cap &&
        buffer_grow_array(&self->ids, &self->ids_cap, need, sizeof *self->ids) < 0)
        return -1;
    long n = tokenizer_encode(self->tokenizer, self->scratch, text, self->text.len, self->ids,
                              self->ids_cap);
    return n > (long)self->ids_cap ? -1 : n; /* never: the bound holds */
}

/* Gives each token to the chunk its last byte came in, then makes every chunk at least 1. Token
 * ends are offsets in the text kept, unless NFC or a U+FFFD changed its length: then they are
 * scaled to it (a chunk boundary may then be off by a token). */
static void share_out(reply_tokens_t *self, long n, uint16_t *chunk_tokens, uint32_t n_chunks) {
    for (uint32_t c = 0; c < n_chunks; c++)
        chunk_tokens[c] = 0;
    uint32_t *ends = self->ids; /* each id becomes its token's end, in place */
    uint64_t at = tokenizer_token_ends(self->tokenizer, ends, (size_t)n);
    if (at != self->text.len && at > 0)
        for (long i = 0; i < n; i++)
            ends[i] = (uint32_t)((uint64_t)ends[i] * self->text.len / at);
    uint32_t c = 0;
    for (long i = 0; i < n; i++) {
        while (c + 1 < n_chunks && (c >= self->n_chunks || self->chunk_end[c] < ends[i]))
            c++;
        if (chunk_tokens[c] < UINT16_MAX)
            chunk_tokens[c]++;
    }
    long owed = 0;
    for (c = 0; c < n_chunks; c++) {
        long k = (long)chunk_tokens[c] - owed;
        owed = k < 1 ? 1 - k : 0;
        chunk_tokens[c] = (uint16_t)(k < 1 ? 1 : k);
    }
}

uint32_t reply_tokens_finish(reply_tokens_t *self, uint16_t *chunk_tokens, uint32_t n_chunks) {
    long n = self->failed ? -1 : encode(self);
    if (n < 0) {
        self->failed = true;
        return 0;
    }
    /* usage on every token event (continuous usage stats) already says what each chunk carried */
    if (chunk_tokens && n_chunks > 0 && self->usage_events < 2)
        share_out(self, n, chunk_tokens, n_chunks);
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}
