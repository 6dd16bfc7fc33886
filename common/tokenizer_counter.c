/* Counting a streamed reply's tokens as it arrives: the text since the last stable point is kept
 * and tokenised again with each piece of new text. A pre-tokenizer piece can still grow or split
 * differently while text follows it (a word, a run of spaces, a group of digits), but the
 * Split regexes of these files only ever look one piece back: the last two pieces are kept, the
 * rest is final. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/unorm2.h>
#include <unicode/utf8.h>

#include "tokenizer_internal.h"

struct tokenizer_counter {
    const tokenizer_t *tok;
    tokenizer_scratch_t *scratch;
    buffer_t incoming; /* held bytes + new text, raw */
    buffer_t cleaned;  /* the same as valid UTF-8 */
    buffer_t tail;     /* clean, normalised text from the last stable point */
    char held[4];      /* a character cut by the end of the last feed */
    size_t n_held;
    long tail_tokens; /* what the tail counted last time (already reported) */
    uint64_t total;
    bool failed;
};

typedef struct {
    const char *base;
    size_t start[2]; /* the last two pieces: their offsets in the tail and their tokens */
    size_t tokens[2];
    size_t n;
    size_t guard;       /* where an added token may be starting (the tail's length if nowhere) */
    size_t guard_start; /* the start of the piece before the one holding guard, and the tokens
                           from there on */
    size_t guard_tokens;
} last_pieces_t;

static void remember(void *arg, const char *piece, size_t len, const uint32_t *ids, size_t n) {
    last_pieces_t *p = arg;
    p->start[0] = p->start[1];
    p->tokens[0] = p->tokens[1];
    p->start[1] = (size_t)(piece - p->base);
    p->tokens[1] = n;
    p->n++;
    if (p->guard_start != SIZE_MAX) {
        p->guard_tokens += n;
    } else if (p->start[1] + len > p->guard) {
        /* the piece before it too: once the added token splits off, that text ends a segment, and
         * a lookahead such as \s+(?!\S) may split it otherwise */
        bool before = p->n >= 2;
        p->guard_start = before ? p->start[0] : p->start[1];
        p->guard_tokens = (before ? p->tokens[0] : 0) + n;
    }
}

tokenizer_counter_t *tokenizer_counter_new(const tokenizer_t *tokenizer) {
    tokenizer_counter_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->tok = tokenizer;
    self->scratch = tokenizer_scratch_new();
    if (!self->scratch) {
        free(self);
        return NULL;
    }
    buffer_init(&self->incoming);
    buffer_init(&self->cleaned);
    buffer_init(&self->tail);
    return self;
}

void tokenizer_counter_destroy(tokenizer_counter_t **self_p) {
    tokenizer_counter_t *self = *self_p;
    if (!self)
        return;
    tokenizer_scratch_destroy(&self->scratch);
    buffer_clear(&self->incoming);
    buffer_clear(&self->cleaned);
    buffer_clear(&self->tail);
    free(self);
    *self_p = NULL;
}

void tokenizer_counter_reset(tokenizer_counter_t *self) {
    buffer_reset(&self->incoming);
    buffer_reset(&self->cleaned);
    buffer_reset(&self->tail);
    self->n_held = 0;
    self->tail_tokens = 0;
    self->total = 0;
    self->failed = false;
}

uint64_t tokenizer_counter_total(const tokenizer_counter_t *self) {
    return self->total;
}

/* buffer_append, which must not be given no bytes at a NULL (an empty buffer's data). */
static int append(buffer_t *b, const char *bytes, size_t n) {
    return n ? buffer_append(b, bytes, n) : 0;
}

/* Appends the NFC form of tail + clean text: the tail's last characters from its last NFC
 * boundary on are normalised again with the new text (a combining mark may compose with them). */
static int append_nfc(tokenizer_counter_t *self, const char *clean, size_t len) {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2 *nfc = unorm2_getNFCInstance(&err);
    if (U_FAILURE(err))
        return -1;
    int32_t at = (int32_t)self->tail.len;
    while (at > 0) {
        UChar32 c;
        U8_PREV((const uint8_t *)self->tail.data, 0, at, c);
        if (c < 0 || unorm2_hasBoundaryBefore(nfc, c))
            break;
    }
    buffer_reset(&self->incoming);
    if (append(&self->incoming, self->tail.data + at, self->tail.len - (size_t)at) < 0 ||
        append(&self->incoming, clean, len) < 0)
        return -1;
    self->tail.len = (size_t)at;
    return tokenizer_nfc(self->scratch, self->incoming.data, self->incoming.len, &self->tail);
}

/* The first offset from which the tail's end could still grow into an added token (the text
 * there is a proper prefix of one), or the tail's length: a token such as <|im_end|> that
 * arrives over several feeds must stay in the tail to be matched whole. */
static size_t added_prefix_start(const tokenizer_t *tok, const buffer_t *tail) {
    size_t from = tail->len >= tok->max_added_len ? tail->len - tok->max_added_len + 1 : 0;
    for (size_t p = from; p < tail->len; p++) {
        if (!tok->added_first_byte[(unsigned char)tail->data[p]])
            continue;
        size_t rest = tail->len - p;
        for (uint32_t i = 0; i < tok->n_added; i++) {
            const tokenizer_added_t *a = &tok->added[i];
            if (a->len > rest && a->text[0] == tail->data[p] &&
                memcmp(a->text, tail->data + p, rest) == 0)
                return p;
        }
    }
    return tail->len;
}

/* Appends clean text to the tail, re-counts it and moves the stable point. */
static int count_tail(tokenizer_counter_t *self, const char *clean, size_t len, long *added) {
    if ((self->tok->nfc ? append_nfc(self, clean, len) : append(&self->tail, clean, len)) < 0)
        return -1;
    last_pieces_t last = {.base = self->tail.data,
                          .guard = added_prefix_start(self->tok, &self->tail),
                          .guard_start = SIZE_MAX};
    long n = tokenizer_walk_clean(self->tok, self->scratch, self->tail.data, self->tail.len,
                                  remember, &last);
    if (n < 0)
        return -1;
    *added = n - self->tail_tokens;
    self->tail_tokens = n;
    self->total += (uint64_t)*added; /* *added may be negative: the sum stays exact */
    if (last.n < 2)
        return 0;
    size_t cut = last.start[0];
    long kept = (long)(last.tokens[0] + last.tokens[1]);
    if (last.guard_start < cut) {
        cut = last.guard_start;
        kept = (long)last.guard_tokens;
    }
    if (cut == 0)
        return 0;
    memmove(self->tail.data, self->tail.data + cut, self->tail.len - cut);
    self->tail.len -= cut;
    self->tail_tokens = kept;
    return 0;
}

int tokenizer_counter_feed(tokenizer_counter_t *self, const char *text, size_t len, long *added) {
    *added = 0;
    if (self->failed)
        return -1;
    buffer_reset(&self->incoming);
    buffer_reset(&self->cleaned);
    long held = -1;
    if (append(&self->incoming, self->held, self->n_held) == 0 &&
        append(&self->incoming, text, len) == 0)
        held = tokenizer_utf8_clean(self->incoming.data, self->incoming.len, true, &self->cleaned);
    if (held < 0) {
        self->failed = true;
        return -1;
    }
    self->n_held = (size_t)held;
    if (self->n_held)
        memcpy(self->held, self->incoming.data + self->incoming.len - self->n_held, self->n_held);
    if (self->cleaned.len > 0 &&
        count_tail(self, self->cleaned.data, self->cleaned.len, added) < 0) {
        self->failed = true;
        return -1;
    }
    return 0;
}

int tokenizer_counter_finish(tokenizer_counter_t *self, long *added) {
    *added = 0;
    if (self->failed)
        return -1;
    if (self->n_held == 0)
        return 0;
    self->n_held = 0;
    if (count_tail(self, "\xEF\xBF\xBD", 3, added) < 0) {
        self->failed = true;
        return -1;
    }
    return 0;
}
