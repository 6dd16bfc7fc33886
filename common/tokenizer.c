/* Encoding: added tokens, normaliser, Split regexes, then BPE by merge rank over one piece at a
 * time; decoding is the tokens' bytes back to back. */
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <xxhash.h>

#include "tokenizer_internal.h"

/* A candidate merge of the symbol at left with the one after it. */
typedef struct {
    uint32_t rank;
    uint32_t left;
    uint32_t right;
    uint32_t merged;
} bpe_candidate_t;

struct tokenizer_scratch {
    buffer_t clean;      /* the input as valid UTF-8 */
    buffer_t normalized; /* a segment after NFC */
    UChar *utf16[2];     /* NFC goes through ICU's UTF-16 */
    size_t utf16_cap[2];
    uint32_t *ids; /* one piece's ids */
    size_t ids_cap;
    uint32_t *next; /* the BPE symbols as a list (a merged-away symbol's id is TOKENIZER_NO_ID) */
    size_t next_cap;
    uint32_t *prev;
    size_t prev_cap;
    bpe_candidate_t *heap;
    size_t heap_cap;
    pcre2_match_data *match[TOKENIZER_MAX_SPLITS];
    pcre2_jit_stack *jit_stack; /* one for every JIT match of this scratch's thread */
    pcre2_match_context *match_context;
};

tokenizer_scratch_t *tokenizer_scratch_new(void) {
    tokenizer_scratch_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    buffer_init(&self->clean);
    buffer_init(&self->normalized);
    self->jit_stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, NULL);
    self->match_context = pcre2_match_context_create(NULL);
    if (!self->jit_stack || !self->match_context) {
        tokenizer_scratch_destroy(&self);
        return NULL;
    }
    pcre2_jit_stack_assign(self->match_context, NULL, self->jit_stack);
    for (int i = 0; i < TOKENIZER_MAX_SPLITS; i++) {
        self->match[i] = pcre2_match_data_create(4, NULL);
        if (!self->match[i]) {
            tokenizer_scratch_destroy(&self);
            return NULL;
        }
    }
    return self;
}

void tokenizer_scratch_destroy(tokenizer_scratch_t **self_p) {
    tokenizer_scratch_t *self = *self_p;
    if (!self)
        return;
    buffer_clear(&self->clean);
    buffer_clear(&self->normalized);
    free(self->utf16[0]);
    free(self->utf16[1]);
    free(self->ids);
    free(self->next);
    free(self->prev);
    free(self->heap);
    for (int i = 0; i < TOKENIZER_MAX_SPLITS; i++)
        pcre2_match_data_free(self->match[i]);
    pcre2_match_context_free(self->match_context);
    pcre2_jit_stack_free(self->jit_stack);
    free(self);
    *self_p = NULL;
}

uint64_t tokenizer_token_ends(const tokenizer_t *self, uint32_t *ids, size_t n) {
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t len = ids[i] < self->n_tokens ? self->tokens[ids[i]].len : 0;
        at += len == UINT32_MAX ? 0 : len;
        ids[i] = at > UINT32_MAX ? UINT32_MAX : (uint32_t)at;
    }
    return at;
}

static const tokenizer_merge_t *merge_find(const tokenizer_t *self, uint32_t left, uint32_t right) {
    uint64_t pair = (uint64_t)left << 32 | right;
    for (uint64_t h = XXH3_64bits(&pair, sizeof pair);; h++) {
        const tokenizer_merge_t *m = &self->merges[h & self->merge_mask];
        if (m->rank == UINT32_MAX)
            return NULL;
        if (m->pair == pair)
            return m;
    }
}

/* Lower rank first, then the leftmost, as HF's BPE orders its merges. */
static bool candidate_before(const bpe_candidate_t *a, const bpe_candidate_t *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->left < b->left;
}

static void heap_push(bpe_candidate_t *heap, size_t *n, bpe_candidate_t c) {
    size_t i = (*n)++;
    while (i > 0 && candidate_before(&c, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = c;
}

static bpe_candidate_t heap_pop(bpe_candidate_t *heap, size_t *n) {
    bpe_candidate_t top = heap[0], last = heap[--*n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *n)
            break;
        if (child + 1 < *n && candidate_before(&heap[child + 1], &heap[child]))
            child++;
        if (!candidate_before(&heap[child], &last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (*n > 0)
        heap[i] = last;
    return top;
}

static void consider(const tokenizer_t *self, tokenizer_scratch_t *s, size_t *n_heap, uint32_t left,
                     uint32_t right) {
    const tokenizer_merge_t *m = merge_find(self, s->ids[left], s->ids[right]);
    if (m)
        heap_push(
            s->heap, n_heap,
            (bpe_candidate_t){.rank = m->rank, .left = left, .right = right, .merged = m->merged});
}

/* BPE over one piece: leaves its ids in s->ids and returns how many, or -1 (memory). */
static long bpe(const tokenizer_t *self, tokenizer_scratch_t *s, const char *piece, size_t len) {
    if (len > s->ids_cap && buffer_grow_array(&s->ids, &s->ids_cap, len, sizeof *s->ids) < 0)
        return -1;
    if (self->ignore_merges || len == 1) {
        uint32_t id = tokenizer_lookup(self, piece, len);
        if (id != TOKENIZER_NO_ID) {
            s->ids[0] = id;
            return 1;
        }
    }
    if (buffer_grow_array(&s->next, &s->next_cap, len, sizeof *s->next) < 0 ||
        buffer_grow_array(&s->prev, &s->prev_cap, len, sizeof *s->prev) < 0 ||
        buffer_grow_array(&s->heap, &s->heap_cap, 3 * len, sizeof *s->heap) < 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        s->ids[i] = self->byte_ids[(unsigned char)piece[i]];
        s->next[i] = i + 1 < len ? (uint32_t)i + 1 : UINT32_MAX;
        s->prev[i] = i > 0 ? (uint32_t)i - 1 : UINT32_MAX;
    }
    size_t n_heap = 0;
    for (size_t i = 0; i + 1 < len; i++)
        consider(self, s, &n_heap, (uint32_t)i, (uint32_t)i + 1);
    while (n_heap > 0) {
        bpe_candidate_t c = heap_pop(s->heap, &n_heap);
        /* stale when either side has merged since (a dead symbol's id is TOKENIZER_NO_ID) */
        if (s->next[c.left] != c.right || s->ids[c.right] == TOKENIZER_NO_ID ||
            s->ids[c.left] == TOKENIZER_NO_ID)
            continue;
        const tokenizer_merge_t *m = merge_find(self, s->ids[c.left], s->ids[c.right]);
        if (!m || m->merged != c.merged)
            continue;
        s->ids[c.left] = c.merged;
        s->ids[c.right] = TOKENIZER_NO_ID;
        s->next[c.left] = s->next[c.right];
        if (s->next[c.right] != UINT32_MAX)
            s->prev[s->next[c.right]] = c.left;
        if (s->prev[c.left] != UINT32_MAX)
            consider(self, s, &n_heap, s->prev[c.left], c.left);
        if (s->next[c.left] != UINT32_MAX)
            consider(self, s, &n_heap, c.left, s->next[c.left]);
    }
    size_t n = 0;
    for (uint32_t i = 0; i != UINT32_MAX; i = s->next[i])
        s->ids[n++] = s->ids[i];
    return (long)n;
}

typedef struct {
    const tokenizer_t *tok;
    tokenizer_scratch_t *scratch;
    tokenizer_piece_fn piece;
    void *arg;
    long total;
} walk_t;

static int emit_piece(walk_t *w, const char *text, size_t len) {
    long n = bpe(w->tok, w->scratch, text, len);
    if (n < 0)
        return -1;
    w->total += n;
    w->piece(w->arg, text, len, w->scratch->ids, (size_t)n);
    return 0;
}

/* The end of the piece " word" or "word" (lowercase ASCII letters) at text + at, when an ASCII
 * character other than a letter or an apostrophe (or the end) follows it; else 0. */
static size_t ascii_word_end(const char *text, size_t len, size_t at) {
    size_t q = at + (text[at] == ' '), r = q;
    while (r < len && text[r] >= 'a' && text[r] <= 'z')
        r++;
    if (r == q)
        return 0;
    if (r < len) {
        unsigned char c = (unsigned char)text[r];
        if (c >= 0x80 || c == '\'' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            return 0;
    }
    return r;
}

/* Split stage `stage` of text: each match and each gap between matches goes on to the next. */
static int split(walk_t *w, uint32_t stage, const char *text, size_t len) {
    if (len == 0)
        return 0;
    if (stage == w->tok->n_splits)
        return emit_piece(w, text, len);
    pcre2_match_data *md = w->scratch->match[stage];
    size_t at = 0, gap = 0;
    bool ascii_words = w->tok->ascii_words[stage] && stage + 1 == w->tok->n_splits;
    while (at < len) {
        size_t word = ascii_words && at == gap ? ascii_word_end(text, len, at) : 0;
        if (word) {
            if (emit_piece(w, text + at, word - at) < 0)
                return -1;
            at = gap = word;
            continue;
        }
        const pcre2_code *re = w->tok->splits[stage];
        int rc =
            w->tok->jit[stage]
                ? pcre2_jit_match(re, (PCRE2_SPTR)text, len, at, 0, md, w->scratch->match_context)
                : pcre2_match(re, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) /* a match deeper than the JIT stack: interpreted */
            rc = pcre2_match(re, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md,
                             NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            return -1;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) { /* an empty match: step over one character */
            at = ov[0] + 1;
            while (at < len && ((unsigned char)text[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        if (split(w, stage + 1, text + gap, ov[0] - gap) < 0 ||
            split(w, stage + 1, text + ov[0], ov[1] - ov[0]) < 0)
            return -1;
        at = gap = ov[1];
    }
    return split(w, stage + 1, text + gap, len - gap);
}

/* The longest added token starting at text (normalized ones or raw ones), or NULL. */
static const tokenizer_added_t *added_at(const tokenizer_t *self, const char *text, size_t len,
                                         bool normalized) {
    if (!self->added_first_byte[(unsigned char)text[0]])
        return NULL;
    for (uint32_t i = 0; i < self->n_added; i++) {
        const tokenizer_added_t *a = &self->added[i];
        if (a->normalized == normalized && a->len <= len && a->text[0] == text[0] &&
            memcmp(a->text, text, a->len) == 0)
            return a;
    }
    return NULL;
}

/* Splits text at the added tokens of one kind, handing each stretch between them to next. */
static int split_added(walk_t *w, const char *text, size_t len, bool normalized,
                       int (*next)(walk_t *, const char *, size_t)) {
    const tokenizer_t *tok = w->tok;
    uint32_t kind = normalized ? tok->n_added_normalized : tok->n_added - tok->n_added_normalized;
    if (kind == 0 || len == 0)
        return next(w, text, len);
    size_t first = 0;                 /* skip to the first byte an added token could start with */
    if (tok->added_only_first >= 0) { /* "<" in every family here: memchr runs ahead */
        const char *at = memchr(text, tok->added_only_first, len);
        first = at ? (size_t)(at - text) : len;
    } else {
        while (first < len && !tok->added_first_byte[(unsigned char)text[first]])
            first++;
    }
    if (first == len)
        return next(w, text, len);
    size_t start = 0;
    for (size_t i = first; i < len;) {
        const tokenizer_added_t *a = added_at(w->tok, text + i, len - i, normalized);
        if (!a) {
            i++;
            continue;
        }
        if (next(w, text + start, i - start) < 0)
            return -1;
        w->total++;
        w->piece(w->arg, text + i, a->len, &a->id, 1);
        i = start = i + a->len;
    }
    return next(w, text + start, len - start);
}

static int pre_tokenize(walk_t *w, const char *text, size_t len) {
    return split(w, 0, text, len);
}

static int normalized_stretch(walk_t *w, const char *text, size_t len) {
    return split_added(w, text, len, true, pre_tokenize);
}

long tokenizer_walk_clean(const tokenizer_t *self, tokenizer_scratch_t *scratch, const char *text,
                          size_t len, tokenizer_piece_fn piece, void *arg) {
    walk_t w = {.tok = self, .scratch = scratch, .piece = piece, .arg = arg};
    if (len > 0 && split_added(&w, text, len, false, normalized_stretch) < 0)
        return -1;
    return w.total;
}

/* A raw stretch (between non-normalized added tokens): NFC it, then go on. */
static int raw_stretch(walk_t *w, const char *text, size_t len) {
    if (!w->tok->nfc || len == 0)
        return normalized_stretch(w, text, len);
    buffer_t *norm = &w->scratch->normalized;
    buffer_reset(norm);
    if (tokenizer_nfc(w->scratch, text, len, norm) < 0)
        return -1;
    return normalized_stretch(w, norm->data, norm->len);
}

typedef struct {
    uint32_t *ids;
    size_t cap;
    size_t n;
} collect_t;

static void collect(void *arg, const char *piece, size_t len, const uint32_t *ids, size_t n) {
    collect_t *c = arg;
    for (size_t i = 0; i < n; i++, c->n++)
        if (c->n < c->cap)
            c->ids[c->n] = ids[i];
}

/* Length of the valid UTF-8 sequence at s (1-4), 0 when it is invalid, or -(bytes) when it is a
 * valid but truncated start of one. The rules are Unicode's table 3-7 (no overlongs, no
 * surrogates, nothing past U+10FFFF), which also fix what a maximal invalid subpart is. */
static int utf8_sequence(const unsigned char *s, size_t len) {
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((size_t)i >= len)
            return -i;
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
            return i == 1 ? 0 : -100 - i; /* invalid after i good bytes */
    }
    return n;
}

/* Length of the valid UTF-8 prefix of text. */
static size_t tokenizer_utf8_valid_prefix(const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int n = utf8_sequence(s + i, len - i);
        if (n <= 0)
            return i;
        i += (size_t)n;
    }
    return len;
}

long tokenizer_encode(const tokenizer_t *self, tokenizer_scratch_t *scratch, const char *text,
                      size_t len, uint32_t *ids, size_t cap) {
    if (tokenizer_utf8_valid_prefix(text, len) != len) {
        buffer_reset(&scratch->clean);
        if (tokenizer_utf8_clean(text, len, false, &scratch->clean) < 0)
            return -1;
        text = scratch->clean.data;
        len = scratch->clean.len;
    }
    collect_t c = {.ids = ids, .cap = cap};
    walk_t w = {.tok = self, .scratch = scratch, .piece = collect, .arg = &c};
    if (len > 0 && split_added(&w, text, len, false, raw_stretch) < 0)
        return -1;
    return w.total;
}

long tokenizer_utf8_clean(const char *text, size_t len, bool hold_incomplete, buffer_t *out) {
    static const char replacement[] = "\xEF\xBF\xBD";
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        size_t good = tokenizer_utf8_valid_prefix(text + i, len - i);
        if (good > 0 && buffer_append(out, text + i, good) < 0)
            return -1;
        i += good;
        if (i == len)
            break;
        int n = utf8_sequence(s + i, len - i);
        if (n < 0 && n > -100) { /* truncated by the end of the text */
            if (hold_incomplete)
                return (long)(len - i);
            i = len;
        } else {
            i += n == 0 ? 1 : (size_t)(-n - 100); /* the maximal invalid subpart */
        }
        if (buffer_append(out, replacement, 3) < 0)
            return -1;
    }
    return 0;
}

static int grow_utf16(tokenizer_scratch_t *s, int which, size_t need) {
    if (s->utf16_cap[which] >= need)
        return 0;
    size_t cap = need < 256 ? 256 : need * 2;
    UChar *p = realloc(s->utf16[which], cap * sizeof *p);
    if (!p)
        return -1;
    s->utf16[which] = p;
    s->utf16_cap[which] = cap;
    return 0;
}

int tokenizer_nfc(tokenizer_scratch_t *scratch, const char *text, size_t len, buffer_t *out) {
    size_t i = 0;
    while (i < len && (unsigned char)text[i] < 0xCC) /* below U+0300 nothing composes */
        i++;
    if (i == len)
        return len ? buffer_append(out, text, len) : 0;
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2 *nfc = unorm2_getNFCInstance(&err);
    int32_t n16 = 0;
    if (U_FAILURE(err) || len > INT32_MAX / 4 || grow_utf16(scratch, 0, len + 1) < 0)
        return -1;
    u_strFromUTF8(scratch->utf16[0], (int32_t)scratch->utf16_cap[0], &n16, text, (int32_t)len,
                  &err);
    if (U_FAILURE(err) || grow_utf16(scratch, 1, 2 * (size_t)n16 + 16) < 0)
        return -1;
    int32_t m16 = unorm2_normalize(nfc, scratch->utf16[0], n16, scratch->utf16[1],
                                   (int32_t)scratch->utf16_cap[1], &err);
    if (U_FAILURE(err) || buffer_reserve(out, 3 * (size_t)m16 + 1) < 0)
        return -1;
    int32_t n8 = 0;
    u_strToUTF8(out->data + out->len, (int32_t)(out->cap - out->len), &n8, scratch->utf16[1], m16,
                &err);
    if (U_FAILURE(err))
        return -1;
    out->len += (size_t)n8;
    return 0;
}
