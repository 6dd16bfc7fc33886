/* Reading a tokenizer.json (jansson) into the tables of tokenizer_internal.h, refusing, with the
 * file and the component named, whatever the encoder would not reproduce exactly. */
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "tokenizer_internal.h"

/* The GPT-2 split ByteLevel applies itself when its use_regex is true. */
static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* The split regexes whose match at " word" (or "word") followed by an ASCII character that is
 * neither a letter nor an apostrophe is exactly that: tokenizer.c takes such a piece without
 * PCRE2, the commonest piece of English text at a tenth of the cost. Each pattern's alternatives
 * before its letter run need an apostrophe or punctuation first, and its letter run stops at a
 * non-letter: checked by hand for these exact strings, and against the JavaScript tokenizers on
 * the corpus (test_tokenizer_js). The GPT-2 split is ByteLevel's own. */
static const char *const ascii_word_patterns[] = {
    /* llama3 */
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    /* qwen3 */
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    /* gptoss */
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'"
    "s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}"
    "\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    /* deepseek_v3 */
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    gpt2_pattern,
};

typedef struct {
    tokenizer_t *tok;
    const char *path;
    char *err;
    size_t err_len;
    int16_t char_to_byte[324]; /* ByteLevel's character for each byte, inverted; -1 none */
    buffer_t raw;              /* a token's bytes, decoded from its ByteLevel characters */
} loader_t;

static int refuse(loader_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(loader_t *self, const char *fmt, ...) {
    int n = snprintf(self->err, self->err_len, "%s: ", self->path);
    if (n >= 0 && (size_t)n < self->err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(self->err + n, self->err_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes for
 * U+0100 onwards in byte order. */
static void byte_level_table(loader_t *self) {
    memset(self->char_to_byte, -1, sizeof self->char_to_byte);
    int next = 256;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        self->char_to_byte[printable ? b : next++] = (int16_t)b;
    }
}

/* Decodes a ByteLevel string (UTF-8 of characters U+0000..U+0143) into self->raw. 0 or -1. */
static int byte_level_decode(loader_t *self, const char *s, size_t len) {
    buffer_reset(&self->raw);
    if (buffer_reserve(&self->raw, len) < 0)
        return -1;
    for (size_t i = 0; i < len;) {
        unsigned c = (unsigned char)s[i];
        unsigned cp;
        if (c < 0x80) {
            cp = c;
            i++;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < len) {
            cp = (c & 0x1F) << 6 | ((unsigned char)s[i + 1] & 0x3F);
            i += 2;
        } else {
            return -1;
        }
        if (cp >= 324 || self->char_to_byte[cp] < 0)
            return -1;
        self->raw.data[self->raw.len++] = (char)self->char_to_byte[cp];
    }
    return 0;
}

static uint64_t hash_bytes(const char *s, size_t len) {
    return XXH3_64bits(s, len);
}

uint32_t tokenizer_lookup(const tokenizer_t *self, const char *text, size_t len) {
    for (uint64_t h = hash_bytes(text, len);; h++) {
        uint32_t id = self->vocab_slots[h & self->vocab_mask];
        if (id == TOKENIZER_NO_ID)
            return TOKENIZER_NO_ID;
        const tokenizer_token_t *t = &self->tokens[id];
        if (t->len == len && memcmp(self->bytes + t->offset, text, len) == 0)
            return id;
    }
}

static uint32_t table_size(size_t n) {
    uint32_t size = 1024;
    while (size < 2 * n)
        size *= 2;
    return size;
}

/* Gives id the bytes text[0..len) (appended to the byte store); the tables are sized before. */
static int set_token(loader_t *self, uint32_t id, const char *text, size_t len, bool hashed) {
    tokenizer_t *tok = self->tok;
    if (id >= tok->n_tokens)
        return refuse(self, "token id %u is beyond the %u ids counted", id, tok->n_tokens);
    if (tok->tokens[id].len != UINT32_MAX)
        return refuse(self, "token id %u appears twice", id);
    uint32_t existing = tokenizer_lookup(tok, text, len);
    tok->tokens[id].offset = (uint32_t)tok->bytes_len;
    tok->tokens[id].len = (uint32_t)len;
    memcpy(tok->bytes + tok->bytes_len, text, len);
    tok->bytes_len += len;
    if (!hashed || existing != TOKENIZER_NO_ID) /* a second spelling of bytes: the first wins */
        return 0;
    uint64_t h = hash_bytes(text, len);
    while (tok->vocab_slots[h & tok->vocab_mask] != TOKENIZER_NO_ID)
        h++;
    tok->vocab_slots[h & tok->vocab_mask] = id;
    return 0;
}

static int load_vocab(loader_t *self, json_t *vocab, json_t *added) {
    tokenizer_t *tok = self->tok;
    size_t bytes = 0, count = json_object_size(vocab) + json_array_size(added);
    uint32_t max_id = 0;
    const char *key;
    json_t *value;
    json_object_foreach(vocab, key, value) {
        if (!json_is_integer(value) || json_integer_value(value) < 0 ||
            json_integer_value(value) >= (json_int_t)INT32_MAX)
            return refuse(self, "model.vocab[\"%s\"] is not a token id", key);
        max_id = (uint32_t)json_integer_value(value) > max_id ? (uint32_t)json_integer_value(value)
                                                              : max_id;
        bytes += strlen(key);
    }
    size_t i;
    json_array_foreach(added, i, value) {
        json_t *id = json_object_get(value, "id"), *content = json_object_get(value, "content");
        if (!json_is_integer(id) || json_integer_value(id) < 0 ||
            json_integer_value(id) >= (json_int_t)INT32_MAX || !json_is_string(content))
            return refuse(self, "added_tokens[%zu] has no integer id and string content", i);
        max_id =
            (uint32_t)json_integer_value(id) > max_id ? (uint32_t)json_integer_value(id) : max_id;
        bytes += json_string_length(content);
    }
    tok->n_tokens = max_id + 1;
    tok->tokens = malloc(tok->n_tokens * sizeof *tok->tokens);
    tok->bytes = malloc(bytes + 1);
    uint32_t slots = table_size(count);
    tok->vocab_slots = malloc(slots * sizeof *tok->vocab_slots);
    if (!tok->tokens || !tok->bytes || !tok->vocab_slots)
        return refuse(self, "out of memory");
    tok->vocab_mask = slots - 1;
    memset(tok->vocab_slots, 0xFF, slots * sizeof *tok->vocab_slots);
    memset(tok->tokens, 0xFF, tok->n_tokens * sizeof *tok->tokens);
    json_object_foreach(vocab, key, value) {
        /* An entry outside ByteLevel's alphabet (DeepSeek-V3 lists its special tokens there) can
         * never come out of the merges: it keeps its text, for added tokens and decoding. */
        bool byte_level = byte_level_decode(self, key, strlen(key)) == 0;
        if (set_token(self, (uint32_t)json_integer_value(value), byte_level ? self->raw.data : key,
                      byte_level ? self->raw.len : strlen(key), byte_level) < 0)
            return -1;
    }
    json_array_foreach(added, i, value) {
        uint32_t id = (uint32_t)json_integer_value(json_object_get(value, "id"));
        json_t *content = json_object_get(value, "content");
        if (tok->tokens[id].len != UINT32_MAX) /* the vocabulary has it already */
            continue;
        if (set_token(self, id, json_string_value(content), json_string_length(content), true) < 0)
            return -1;
    }
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        tok->byte_ids[b] = tokenizer_lookup(tok, &c, 1);
        if (tok->byte_ids[b] == TOKENIZER_NO_ID)
            return refuse(self, "model.vocab has no token for the byte 0x%02x", b);
    }
    return 0;
}

/* The id of a ByteLevel-spelled vocabulary entry, or TOKENIZER_NO_ID. */
static uint32_t byte_level_id(loader_t *self, const char *s, size_t len) {
    if (byte_level_decode(self, s, len) < 0)
        return TOKENIZER_NO_ID;
    return tokenizer_lookup(self->tok, self->raw.data, self->raw.len);
}

static int add_merge(loader_t *self, uint32_t rank, const char *left, size_t left_len,
                     const char *right, size_t right_len) {
    tokenizer_t *tok = self->tok;
    uint32_t a = byte_level_id(self, left, left_len), b = byte_level_id(self, right, right_len);
    if (a == TOKENIZER_NO_ID || b == TOKENIZER_NO_ID)
        return refuse(self, "model.merges[%u] names a token not in model.vocab", rank);
    size_t joined_len = tok->tokens[a].len + tok->tokens[b].len;
    char stack[256], *joined = joined_len <= sizeof stack ? stack : malloc(joined_len);
    if (!joined)
        return refuse(self, "out of memory");
    memcpy(joined, tok->bytes + tok->tokens[a].offset, tok->tokens[a].len);
    memcpy(joined + tok->tokens[a].len, tok->bytes + tok->tokens[b].offset, tok->tokens[b].len);
    uint32_t merged = tokenizer_lookup(tok, joined, joined_len);
    if (joined != stack)
        free(joined);
    if (merged == TOKENIZER_NO_ID)
        return refuse(self, "model.merges[%u] makes a token not in model.vocab", rank);
    uint64_t pair = (uint64_t)a << 32 | b;
    for (uint64_t h = XXH3_64bits(&pair, sizeof pair);; h++) {
        tokenizer_merge_t *m = &tok->merges[h & tok->merge_mask];
        if (m->rank == UINT32_MAX) {
            *m = (tokenizer_merge_t){.pair = pair, .rank = rank, .merged = merged};
            return 0;
        }
        if (m->pair == pair) /* a repeated merge keeps its first (lowest) rank */
            return 0;
    }
}

static int load_merges(loader_t *self, json_t *merges) {
    tokenizer_t *tok = self->tok;
    uint32_t slots = table_size(json_array_size(merges));
    tok->merges = malloc(slots * sizeof *tok->merges);
    if (!tok->merges)
        return refuse(self, "out of memory");
    tok->merge_mask = slots - 1;
    for (uint32_t i = 0; i < slots; i++)
        tok->merges[i].rank = UINT32_MAX;
    size_t i;
    json_t *m;
    json_array_foreach(merges, i, m) {
        int rc;
        if (json_is_string(m)) { /* "left right" */
            const char *s = json_string_value(m), *space = strchr(s, ' ');
            if (!space || strchr(space + 1, ' '))
                return refuse(self, "model.merges[%zu] is not \"left right\"", i);
            rc = add_merge(self, (uint32_t)i, s, (size_t)(space - s), space + 1, strlen(space + 1));
        } else if (json_is_array(m) && json_array_size(m) == 2 &&
                   json_is_string(json_array_get(m, 0)) && json_is_string(json_array_get(m, 1))) {
            json_t *l = json_array_get(m, 0), *r = json_array_get(m, 1);
            rc = add_merge(self, (uint32_t)i, json_string_value(l), json_string_length(l),
                           json_string_value(r), json_string_length(r));
        } else {
            return refuse(self, "model.merges[%zu] is neither \"left right\" nor [left, right]", i);
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

static bool is_null_or(json_t *v, const char *empty) {
    return !v || json_is_null(v) || (json_is_string(v) && strcmp(json_string_value(v), empty) == 0);
}

static int load_model(loader_t *self, json_t *model, json_t *added) {
    const char *type = json_string_value(json_object_get(model, "type"));
    if (!type || strcmp(type, "BPE") != 0)
        return refuse(self,
                      "model.type \"%s\" is not supported (byte-level BPE only; SentencePiece "
                      "models are not, docs/workloads.md)",
                      type ? type : "(none)");
    json_t *dropout = json_object_get(model, "dropout");
    if (!is_null_or(dropout, "") && !(json_is_number(dropout) && json_number_value(dropout) == 0))
        return refuse(self, "model.dropout is not supported (it makes encoding random)");
    if (json_is_true(json_object_get(model, "byte_fallback")))
        return refuse(self, "model.byte_fallback is not supported (byte-level BPE only)");
    if (!is_null_or(json_object_get(model, "continuing_subword_prefix"), "") ||
        !is_null_or(json_object_get(model, "end_of_word_suffix"), ""))
        return refuse(self, "model.continuing_subword_prefix and end_of_word_suffix are not "
                            "supported");
    json_t *vocab = json_object_get(model, "vocab"), *merges = json_object_get(model, "merges");
    if (!json_is_object(vocab) || !json_is_array(merges))
        return refuse(self, "model has no vocab object and merges array");
    self->tok->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
    if (load_vocab(self, vocab, added) < 0)
        return -1;
    return load_merges(self, merges);
}

static int add_split(loader_t *self, const char *pattern, size_t len, const char *where) {
    tokenizer_t *tok = self->tok;
    if (tok->n_splits == TOKENIZER_MAX_SPLITS)
        return refuse(self, "%s: more than %d Split pre-tokenizers", where, TOKENIZER_MAX_SPLITS);
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_UCP, &code, &offset, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        return refuse(self, "%s: the regex does not compile at offset %zu: %s", where,
                      (size_t)offset, (const char *)msg);
    }
    for (size_t i = 0; i < sizeof ascii_word_patterns / sizeof ascii_word_patterns[0]; i++)
        if (strlen(ascii_word_patterns[i]) == len &&
            memcmp(ascii_word_patterns[i], pattern, len) == 0)
            tok->ascii_words[tok->n_splits] = true;
    /* without JIT (an unsupported CPU) it still matches, through the interpreter */
    tok->jit[tok->n_splits] = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    tok->splits[tok->n_splits++] = re;
    return 0;
}

static int load_pre_tokenizer(loader_t *self, json_t *pre, const char *where, bool last) {
    const char *type = json_string_value(json_object_get(pre, "type"));
    if (type && strcmp(type, "Sequence") == 0) {
        json_t *list = json_object_get(pre, "pretokenizers");
        size_t i, n = json_array_size(list);
        json_t *item;
        json_array_foreach(list, i, item) {
            if (load_pre_tokenizer(self, item, where, last && i + 1 == n) < 0)
                return -1;
        }
        return 0;
    }
    if (type && strcmp(type, "Split") == 0) {
        json_t *pattern = json_object_get(pre, "pattern");
        json_t *regex = json_object_get(pattern, "Regex"),
               *plain = json_object_get(pattern, "String");
        const char *behavior = json_string_value(json_object_get(pre, "behavior"));
        if (!behavior || strcmp(behavior, "Isolated") != 0 ||
            json_is_true(json_object_get(pre, "invert")))
            return refuse(self,
                          "%s: a Split with behavior \"%s\"%s is not supported (Isolated "
                          "only)",
                          where, behavior ? behavior : "(none)",
                          json_is_true(json_object_get(pre, "invert")) ? " inverted" : "");
        if (json_is_string(regex))
            return add_split(self, json_string_value(regex), json_string_length(regex), where);
        if (json_is_string(plain)) { /* a literal: quoted so PCRE2 matches it as is */
            char quoted[512];
            int n = snprintf(quoted, sizeof quoted, "\\Q%s\\E", json_string_value(plain));
            if (n < 0 || (size_t)n >= sizeof quoted || strstr(json_string_value(plain), "\\E"))
                return refuse(self, "%s: the Split string is too long or holds \\E", where);
            return add_split(self, quoted, (size_t)n, where);
        }
        return refuse(self, "%s: a Split without a Regex or String pattern", where);
    }
    if (type && strcmp(type, "ByteLevel") == 0) {
        if (!last)
            return refuse(self, "%s: ByteLevel before another pre-tokenizer is not supported",
                          where);
        if (json_is_true(json_object_get(pre, "add_prefix_space")))
            return refuse(self, "%s: ByteLevel add_prefix_space is not supported", where);
        json_t *use_regex = json_object_get(pre, "use_regex");
        if (!use_regex || json_is_true(use_regex)) /* HF's default is true */
            return add_split(self, gpt2_pattern, sizeof gpt2_pattern - 1, where);
        return 0;
    }
    return refuse(self, "%s: pre-tokenizer \"%s\" is not supported (Split, ByteLevel, Sequence)",
                  where, type ? type : "(none)");
}

static int load_normalizer(loader_t *self, json_t *norm) {
    if (!norm || json_is_null(norm))
        return 0;
    const char *type = json_string_value(json_object_get(norm, "type"));
    if (type && strcmp(type, "NFC") == 0) {
        self->tok->nfc = true;
        return 0;
    }
    if (type && strcmp(type, "Sequence") == 0) {
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(norm, "normalizers"), i, item) {
            if (load_normalizer(self, item) < 0)
                return -1;
        }
        return 0;
    }
    return refuse(self, "normalizer \"%s\" is not supported (NFC, or none)",
                  type ? type : "(none)");
}

static int compare_added(const void *a, const void *b) {
    const tokenizer_added_t *x = a, *y = b;
    return x->len != y->len ? (x->len > y->len ? -1 : 1) : (x->id > y->id) - (x->id < y->id);
}

static int load_added(loader_t *self, json_t *added) {
    tokenizer_t *tok = self->tok;
    tok->added = calloc(json_array_size(added) + 1, sizeof *tok->added);
    if (!tok->added)
        return refuse(self, "out of memory");
    size_t i;
    json_t *a;
    json_array_foreach(added, i, a) {
        const char *flags[] = {"lstrip", "rstrip", "single_word"};
        for (size_t f = 0; f < 3; f++)
            if (json_is_true(json_object_get(a, flags[f])))
                return refuse(self, "added_tokens[%zu]: %s is not supported", i, flags[f]);
        uint32_t id = (uint32_t)json_integer_value(json_object_get(a, "id"));
        json_t *content = json_object_get(a, "content");
        if (json_string_length(content) == 0)
            continue;
        bool special = json_is_true(json_object_get(a, "special"));
        tok->added[tok->n_added++] = (tokenizer_added_t){
            .id = id,
            .len = (uint32_t)json_string_length(content),
            .text = tok->bytes + tok->tokens[id].offset,
            .normalized = !special && json_is_true(json_object_get(a, "normalized")),
        };
        tok->added_first_byte[(unsigned char)json_string_value(content)[0]] = true;
        tok->n_added_normalized += tok->added[tok->n_added - 1].normalized;
        if (json_string_length(content) > tok->max_added_len)
            tok->max_added_len = (uint32_t)json_string_length(content);
        if (tok->tokens[id].len != json_string_length(content) ||
            memcmp(tok->added[tok->n_added - 1].text, json_string_value(content),
                   json_string_length(content)) != 0)
            return refuse(self, "added_tokens[%zu] gives id %u other bytes than model.vocab", i,
                          id);
    }
    qsort(tok->added, tok->n_added, sizeof *tok->added, compare_added);
    tok->added_only_first = tok->n_added ? (unsigned char)tok->added[0].text[0] : -1;
    for (uint32_t a = 1; a < tok->n_added; a++)
        if ((unsigned char)tok->added[a].text[0] != tok->added_only_first)
            tok->added_only_first = -1;
    return 0;
}

static int check_decoder(loader_t *self, json_t *decoder) {
    const char *type = json_string_value(json_object_get(decoder, "type"));
    if (!decoder || json_is_null(decoder) || (type && strcmp(type, "ByteLevel") == 0))
        return 0;
    return refuse(self, "decoder \"%s\" is not supported (ByteLevel only)", type ? type : "(none)");
}

int tokenizer_load(const char *path, tokenizer_t **out, char *err, size_t err_len) {
    *out = NULL;
    loader_t loader = {.path = path, .err = err, .err_len = err_len};
    byte_level_table(&loader);
    buffer_init(&loader.raw);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        snprintf(err, err_len, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
        return -1;
    }
    loader.tok = calloc(1, sizeof *loader.tok);
    int rc = loader.tok ? 0 : refuse(&loader, "out of memory");
    json_t *added = json_object_get(root, "added_tokens");
    if (rc == 0 && !json_is_object(json_object_get(root, "model")))
        rc = refuse(&loader, "no \"model\" object (not a Hugging Face tokenizer.json)");
    if (rc == 0)
        rc = load_model(&loader, json_object_get(root, "model"), added);
    if (rc == 0)
        rc = load_added(&loader, added);
    if (rc == 0)
        rc = load_normalizer(&loader, json_object_get(root, "normalizer"));
    json_t *pre = json_object_get(root, "pre_tokenizer");
    if (rc == 0 && pre && !json_is_null(pre))
        rc = load_pre_tokenizer(&loader, pre, "pre_tokenizer", true);
    if (rc == 0)
        rc = check_decoder(&loader, json_object_get(root, "decoder"));
    json_decref(root);
    buffer_clear(&loader.raw);
    if (rc < 0) {
        tokenizer_destroy(&loader.tok);
        return -1;
    }
    *out = loader.tok;
    return 0;
}

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *path;
    tokenizer_t *tok;
    unsigned holders;
} shared;

int tokenizer_acquire(const char *path, const tokenizer_t **out, char *err, size_t err_len) {
    pthread_mutex_lock(&shared_lock);
    int rc = 0;
    if (shared.holders == 0 || strcmp(shared.path, path) != 0) {
        tokenizer_t *tok;
        rc = tokenizer_load(path, &tok, err, err_len);
        if (rc == 0 && shared.holders > 0) { /* another file is held: this one goes unshared */
            *out = tok;
            pthread_mutex_unlock(&shared_lock);
            return 0;
        }
        char *copy = rc == 0 ? strdup(path) : NULL;
        if (rc == 0 && !copy) {
            tokenizer_destroy(&tok);
            snprintf(err, err_len, "%s: out of memory", path);
            rc = -1;
        }
        if (rc == 0) {
            free(shared.path);
            shared.path = copy;
            shared.tok = tok;
        }
    }
    if (rc == 0) {
        shared.holders++;
        *out = shared.tok;
    }
    pthread_mutex_unlock(&shared_lock);
    return rc;
}

void tokenizer_release(const tokenizer_t **self_p) {
    if (!*self_p)
        return;
    pthread_mutex_lock(&shared_lock);
    if (*self_p == shared.tok && shared.holders > 0) {
        if (--shared.holders == 0) {
            tokenizer_destroy(&shared.tok);
            free(shared.path);
            shared.path = NULL;
        }
    } else {
        tokenizer_t *own = (tokenizer_t *)*self_p;
        tokenizer_destroy(&own);
    }
    pthread_mutex_unlock(&shared_lock);
    *self_p = NULL;
}

void tokenizer_destroy(tokenizer_t **self_p) {
    tokenizer_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t i = 0; i < self->n_splits; i++)
        pcre2_code_free(self->splits[i]);
    free(self->bytes);
    free(self->tokens);
    free(self->vocab_slots);
    free(self->merges);
    free(self->added);
    free(self);
    *self_p = NULL;
}
