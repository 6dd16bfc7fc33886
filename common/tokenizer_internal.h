/* The tokenizer's tables, shared by tokenizer_load.c (which fills them), tokenizer.c (encode,
 * decode) and tokenizer_counter.c. Nothing outside common/tokenizer*.c includes this. */
#ifndef STAMPEDE_TOKENIZER_INTERNAL_H
#define STAMPEDE_TOKENIZER_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>

#include "tokenizer.h"

#define TOKENIZER_MAX_SPLITS 8
#define TOKENIZER_NO_ID UINT32_MAX

typedef struct {
    uint32_t offset; /* into tokenizer_t.bytes */
    uint32_t len;
} tokenizer_token_t;

/* One (left, right) → merged entry of the merge-rank hash table; rank UINT32_MAX marks a free
 * slot. */
typedef struct {
    uint64_t pair; /* left id << 32 | right id */
    uint32_t rank;
    uint32_t merged;
} tokenizer_merge_t;

typedef struct {
    uint32_t id;
    uint32_t len;
    const char *text; /* into tokenizer_t.bytes */
    bool normalized;  /* matched in the normalised text, not the raw input */
} tokenizer_added_t;

struct tokenizer {
    char *bytes; /* every token's bytes, back to back */
    size_t bytes_len;
    tokenizer_token_t *tokens; /* by id; len UINT32_MAX for an id that names nothing */
    uint32_t n_tokens;
    uint32_t *vocab_slots; /* open addressing over token bytes → id, TOKENIZER_NO_ID = free */
    uint32_t vocab_mask;
    tokenizer_merge_t *merges;
    uint32_t merge_mask;
    uint32_t byte_ids[256]; /* each byte's one-byte token */
    bool ignore_merges;     /* a word that is a token is that token, merges unseen */
    bool nfc;
    tokenizer_added_t *added; /* longest first */
    uint32_t n_added;
    bool added_first_byte[256]; /* some added token starts with this byte */
    uint32_t max_added_len;
    int added_only_first;        /* the one byte every added token starts with, or -1 */
    uint32_t n_added_normalized; /* of them, matched in the normalised text */
    pcre2_code *splits[TOKENIZER_MAX_SPLITS];
    bool jit[TOKENIZER_MAX_SPLITS]; /* compiled to machine code: matched by pcre2_jit_match */
    /* the regex is one of the families' own (tokenizer_load.c), for which a space then
     * lowercase ASCII letters then an ASCII non-letter other than ' is one piece, always */
    bool ascii_words[TOKENIZER_MAX_SPLITS];
    uint32_t n_splits;
};

/* The id of a token's bytes, or TOKENIZER_NO_ID. */
uint32_t tokenizer_lookup(const tokenizer_t *self, const char *text, size_t len);

/* Called for each pre-tokenizer piece with its token ids (valid during the call only). */
typedef void (*tokenizer_piece_fn)(void *arg, const char *piece, size_t len, const uint32_t *ids,
                                   size_t n);
/* Tokenises text that is already valid UTF-8 and normalised (no copy is made: every piece points
 * into text), calling piece for each piece in order. Returns the total ids or -1 (memory). */
long tokenizer_walk_clean(const tokenizer_t *self, tokenizer_scratch_t *scratch, const char *text,
                          size_t len, tokenizer_piece_fn piece, void *arg);
/* Appends text[0..len) to out as valid UTF-8: each maximal invalid subpart becomes U+FFFD. When
 * hold_incomplete, a truncated but so far valid character at the end is not written; returns its
 * bytes (0-3) so the caller can keep them. -1 on allocation failure. */
long tokenizer_utf8_clean(const char *text, size_t len, bool hold_incomplete, buffer_t *out);
/* Appends the NFC form of valid UTF-8 text to out. 0 or -1. */
int tokenizer_nfc(tokenizer_scratch_t *scratch, const char *text, size_t len, buffer_t *out);

#endif
