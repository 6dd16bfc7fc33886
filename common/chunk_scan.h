/* The validating JSON scanner the chunk parsers share (chunk.c, chunk_messages.c,
 * chunk_responses.c): no DOM, no allocation. Internal to common/chunk*.c. Each function keeps
 * the qualifier it had inside chunk.c (inline, always_inline, or static left to the compiler,
 * marked unused for the files that do not call it): making them all inline cost the chat path
 * 8 % (bench_sse, 107 -> 116 ns an event). */
#ifndef STAMPEDE_CHUNK_SCAN_H
#define STAMPEDE_CHUNK_SCAN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "chunk.h"

/* Deeper nesting than any real chunk has; bounds the recursion of skip_value. */
#define CHUNK_MAX_DEPTH 128

/* The scanner's functions take p, the next byte, and end, and return p past what they read, or
 * NULL when the payload is malformed there: cursors stay in registers, never behind a pointer
 * that a store into chunk_info_t could alias. depth is the nesting of the enclosing container. */

/* Bytes that may appear unescaped inside a JSON string: not a control, '"' or '\\'. */
static const unsigned char string_plain[256] = {
    [0x20 ... 0x21] = 1,
    [0x23 ... 0x5b] = 1,
    [0x5d ... 0xff] = 1,
};

/* Bytes that JSON allows between tokens. */
static const unsigned char json_space[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

#define BYTES_ONES 0x0101010101010101ull
#define BYTES_HIGHS 0x8080808080808080ull

#define KEY_IS(literal) key_is(key, key_len, literal, sizeof(literal) - 1)

/* key == literal, as two overlapping words of 4 or 8 bytes for 4 to 16 bytes: compilers call
 * memcmp for the odd sizes. */
static inline bool key_is(const char *key, size_t key_len, const char *literal, size_t len) {
    if (key_len != len)
        return false;
    if (len >= 8 && len <= 16) {
        uint64_t a, b, c, d;
        memcpy(&a, key, 8);
        memcpy(&b, literal, 8);
        memcpy(&c, key + len - 8, 8);
        memcpy(&d, literal + len - 8, 8);
        return a == b && c == d;
    }
    if (len >= 4 && len < 8) {
        uint32_t a, b, c, d;
        memcpy(&a, key, 4);
        memcpy(&b, literal, 4);
        memcpy(&c, key + len - 4, 4);
        memcpy(&d, literal + len - 4, 4);
        return a == b && c == d;
    }
    return memcmp(key, literal, len) == 0;
}

static __attribute__((unused)) bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static __attribute__((unused)) int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads 4 hex digits at p (the caller checked that 4 bytes are there). */
static __attribute__((unused)) bool hex4(const char *p, uint32_t *value) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(p[i]);
        if (h < 0)
            return false;
        v = v << 4 | (uint32_t)h;
    }
    *value = v;
    return true;
}

static inline const char *skip_space(const char *p, const char *end) {
    while (p < end && json_space[(unsigned char)*p])
        p++;
    return p;
}

/* The high bit of each byte of word that is '"', '\\' or a control, exact up to the first such
 * byte (above it, a borrow may set more): so the lowest bit set marks the first one. */
static inline uint64_t string_stops(uint64_t word) {
    uint64_t quote = word ^ (BYTES_ONES * '"');
    uint64_t backslash = word ^ (BYTES_ONES * '\\');
    return (((quote - BYTES_ONES) & ~quote) | ((backslash - BYTES_ONES) & ~backslash) |
            ((word - BYTES_ONES * 0x20) & ~word)) &
           BYTES_HIGHS;
}

/* The first byte at or after p that may not appear unescaped in a string, or end: sixteen bytes
 * a step with SSE2, then eight while eight remain, then one. */
static inline const char *skip_plain(const char *p, const char *end) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i stops =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(v, control), control)); /* <= 0x1f */
        unsigned mask = (unsigned)_mm_movemask_epi8(stops);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (end - p >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        uint64_t stops = string_stops(word);
        if (stops) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + (__builtin_ctzll(stops) >> 3);
#else
            break;
#endif
        }
        p += 8;
    }
    while (p < end && string_plain[(unsigned char)*p])
        p++;
    return p;
}

/* The rest of a string from its first escape at p: validates up to the closing quote. */
static __attribute__((unused)) const char *scan_escaped(const char *p, const char *end) {
    for (;;) {
        if (end - p < 2)
            return NULL;
        switch (p[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            p += 2;
            break;
        case 'u': {
            uint32_t unused;
            if (end - p < 6 || !hex4(p + 2, &unused))
                return NULL;
            p += 6;
            break;
        }
        default:
            return NULL;
        }
        p = skip_plain(p, end);
        if (p >= end || *p != '\\')
            return p;
    }
}

/* At '"': validates the string and returns its raw body and the byte after its closing quote;
 * *escaped says whether the body holds an escape (else its bytes are its text). */
static inline const char *scan_string_escapes(const char *p, const char *end, const char **body,
                                              size_t *body_len, bool *escaped) {
    const char *begin = p + 1;
    p = skip_plain(begin, end);
    *escaped = p < end && *p == '\\';
    if (*escaped)
        p = scan_escaped(p, end);
    if (!p || p >= end || *p != '"')
        return NULL; /* unterminated, or a raw control character */
    *body = begin;
    *body_len = (size_t)(p - begin);
    return p + 1;
}

/* At '"': validates the string and returns its raw body and the byte after its closing quote. */
static inline const char *scan_string(const char *p, const char *end, const char **body,
                                      size_t *body_len) {
    bool escaped;
    return scan_string_escapes(p, end, body, body_len, &escaped);
}

/* The first byte at or after p that is not a digit, or end: sixteen bytes a step with SSE2. */
static __attribute__((unused)) const char *skip_digits(const char *p, const char *end) {
#ifdef __SSE2__
    if (end - p >= 16) { /* signed compares: bytes from 0x80 are below '0' */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
        unsigned other = ~(unsigned)_mm_movemask_epi8(digit) & 0xffff;
        if (other)
            return p + __builtin_ctz(other);
        p += 16;
    }
#endif
    if (end - p >= 8) { /* a byte is a digit when its high nibble is 3 and adding 6 keeps it so */
        uint64_t word;
        memcpy(&word, p, 8);
        uint64_t other = ((word & BYTES_ONES * 0xF0) ^ BYTES_ONES * 0x30) |
                         (((word + BYTES_ONES * 0x06) & BYTES_ONES * 0xF0) ^ BYTES_ONES * 0x30);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* a carry out of a byte comes only from a byte above 0xF9, not a digit, and moves only
         * the bytes after it: the lowest byte set is the first that is not a digit */
        if (other)
            return p + (__builtin_ctzll(other) >> 3);
        p += 8;
#endif
    }
    while (p < end && is_digit(*p))
        p++;
    return p;
}

/* JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static __attribute__((unused)) const char *scan_number(const char *p, const char *end) {
    if (p < end && *p == '-')
        p++;
    if (p >= end || !is_digit(*p))
        return NULL;
    p = *p == '0' ? p + 1 : skip_digits(p, end);
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p))
            return NULL;
        p = skip_digits(p, end);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit(*p))
            return NULL;
        p = skip_digits(p, end);
    }
    return p;
}

static __attribute__((unused)) const char *scan_literal(const char *p, const char *end,
                                                        const char *literal, size_t len) {
    if ((size_t)(end - p) < len || memcmp(p, literal, len) != 0)
        return NULL;
    return p + len;
}

/* The next member of an object, from just after its '{' (first) or after a member's value:
 * p at the member's value with its key read, or p past the closing '}' with *key NULL; NULL
 * when malformed. */
static inline __attribute__((always_inline)) const char *
object_next(const char *p, const char *end, bool first, const char **key, size_t *key_len) {
    if (p >= end)
        return NULL;
    if (!first && *p == ',') { /* a value followed at once by the next member: the common case */
        p++;
    } else {
        p = skip_space(p, end);
        if (p >= end)
            return NULL;
        if (*p == '}') {
            *key = NULL;
            return p + 1;
        }
        if (!first) {
            if (*p != ',')
                return NULL;
            p++;
        }
    }
    if (p < end && *p != '"') /* space is rare: test for the quote first */
        p = skip_space(p, end);
    if (p >= end || *p != '"' || !(p = scan_string(p, end, key, key_len)))
        return NULL;
    if (p >= end || *p != ':') {
        p = skip_space(p, end);
        if (p >= end || *p != ':')
            return NULL;
    }
    return skip_space(p + 1, end);
}

/* The next element of an array, from just after its '[' (first) or after an element: p at the
 * element, or p past the closing ']' with *closed set; NULL when malformed. */
static inline const char *array_next(const char *p, const char *end, bool first, bool *closed) {
    p = skip_space(p, end);
    if (p >= end)
        return NULL;
    *closed = *p == ']';
    if (*closed)
        return p + 1;
    if (!first) {
        if (*p != ',')
            return NULL;
        p = skip_space(p + 1, end);
    }
    return p;
}

/* What a walk over an object hands each member: p at its value, the key read; returns p past
 * the value, or NULL when malformed. depth is the object's own. */
typedef const char *(*member_fn)(const char *p, const char *end, int depth, const char *key,
                                 size_t key_len, void *arg);
/* What a walk over an array hands each element: p at it, first for element 0. */
typedef const char *(*element_fn)(const char *p, const char *end, int depth, bool first, void *arg);

/* At '{': hands each member to member; p past the closing '}', or NULL. Always inlined, so that
 * member, a constant at every call, is a direct call the compiler may inline as well. */
static inline __attribute__((always_inline)) const char *
scan_members(const char *p, const char *end, int depth, member_fn member, void *arg) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (!(p = member(p, end, depth, key, key_len, arg)))
            return NULL;
    }
}

/* At '[': hands each element to element; p past the closing ']', or NULL. */
static inline __attribute__((always_inline)) const char *
scan_elements(const char *p, const char *end, int depth, element_fn element, void *arg) {
    bool closed;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = array_next(p, end, first, &closed)) || closed)
            return p;
        if (!(p = element(p, end, depth, first, arg)))
            return NULL;
    }
}

static __attribute__((unused)) const char *skip_value(const char *p, const char *end, int depth);

static __attribute__((unused)) const char *skip_member(const char *p, const char *end, int depth,
                                                       const char *key, size_t key_len, void *arg) {
    (void)key, (void)key_len, (void)arg;
    return skip_value(p, end, depth);
}

static __attribute__((unused)) const char *skip_element(const char *p, const char *end, int depth,
                                                        bool first, void *arg) {
    (void)first, (void)arg;
    return skip_value(p, end, depth);
}

/* At '{': skips the object. */
static __attribute__((unused)) const char *skip_object(const char *p, const char *end, int depth) {
    return scan_members(p, end, depth, skip_member, NULL);
}

/* At '[': skips the array. */
static __attribute__((unused)) const char *skip_array(const char *p, const char *end, int depth) {
    return scan_elements(p, end, depth, skip_element, NULL);
}

static __attribute__((unused)) const char *skip_value(const char *p, const char *end, int depth) {
    if (p >= end)
        return NULL;
    switch (*p) {
    case '"': {
        const char *body;
        size_t len;
        return scan_string(p, end, &body, &len);
    }
    case '{':
        return skip_object(p, end, depth);
    case '[':
        return skip_array(p, end, depth);
    case 't':
        return scan_literal(p, end, "true", 4);
    case 'f':
        return scan_literal(p, end, "false", 5);
    case 'n':
        return scan_literal(p, end, "null", 4);
    default:
        return scan_number(p, end);
    }
}

/* skip_value with its commonest cases, a string and null, inlined into the member loops. */
static inline __attribute__((always_inline)) const char *
skip_member_value(const char *p, const char *end, int depth) {
    if (p < end && *p == '"') {
        const char *body;
        size_t len;
        return scan_string(p, end, &body, &len);
    }
    if (p < end && *p == 'n')
        return scan_literal(p, end, "null", 4);
    if (p < end && *p >= '0' && *p <= '9') { /* a plain integer ("created", "index") */
        /* a leading 0 is the whole integer part: a digit after it fails at the member's end */
        const char *after = *p == '0' ? p + 1 : skip_digits(p, end);
        if (after >= end || (*after != '.' && *after != 'e' && *after != 'E'))
            return after;
    }
    return skip_value(p, end, depth);
}

/* A string value is returned raw; null or any other type leaves *body untouched. */
static __attribute__((unused)) const char *read_string(const char *p, const char *end, int depth,
                                                       const char **body, size_t *body_len) {
    if (p < end && *p == '"')
        return scan_string(p, end, body, body_len);
    if (p < end && *p == 'n') /* "finish_reason": null on every token but the last */
        return scan_literal(p, end, "null", 4);
    return skip_value(p, end, depth);
}

/* A number value is returned as its token; any other type gives *len = 0. */
static __attribute__((unused)) const char *read_number(const char *p, const char *end, int depth,
                                                       const char **token, size_t *len) {
    *len = 0;
    if (p < end && (*p == '-' || is_digit(*p))) {
        const char *after = scan_number(p, end);
        if (after) {
            *token = p;
            *len = (size_t)(after - p);
        }
        return after;
    }
    return skip_value(p, end, depth);
}

/* The magnitude of a validated number token, truncated toward zero and saturated to limit: the
 * digits before the decimal point once the exponent has moved it. digits[0..int_len) are the
 * integer part; p is where it ends. */
static __attribute__((unused)) uint64_t number_magnitude(const char *digits, size_t int_len,
                                                         const char *p, const char *end,
                                                         uint64_t limit) {
    const char *fraction = p;
    size_t fraction_len = 0;
    if (p < end && *p == '.') {
        fraction = p + 1;
        p = skip_digits(fraction, end);
        fraction_len = (size_t)(p - fraction);
    }
    int64_t exponent = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool exponent_negative = p < end && *p == '-';
        p += p < end && (*p == '-' || *p == '+');
        for (; p < end && is_digit(*p); p++)
            if (exponent < 1000000)
                exponent = exponent * 10 + (*p - '0');
        exponent = exponent_negative ? -exponent : exponent;
    }
    int64_t whole = (int64_t)int_len + exponent; /* digits left of the moved decimal point */
    uint64_t v = 0;
    for (int64_t i = 0; i < whole; i++) {
        size_t at = (size_t)i;
        uint64_t digit = at < int_len                  ? (uint64_t)(digits[at] - '0')
                         : at - int_len < fraction_len ? (uint64_t)(fraction[at - int_len] - '0')
                                                       : 0;
        if (v == 0 && digit == 0 && at >= int_len + fraction_len)
            break; /* only zeros remain and the value is zero */
        if (digit > limit || v > (limit - digit) / 10) {
            v = limit;
            break;
        }
        v = v * 10 + digit;
    }
    return v;
}

/* The value of a validated number token, truncated toward zero and saturated to [min, max]. */
static __attribute__((unused)) int64_t number_clamped(const char *p, size_t len, int64_t min,
                                                      int64_t max) {
    const char *end = p + len;
    bool negative = p < end && *p == '-';
    p += negative;
    const char *digits = p;
    p = skip_digits(p, end);
    size_t int_len = (size_t)(p - digits);
    uint64_t limit = !negative ? (uint64_t)max : min >= 0 ? 0 : (uint64_t)(-(min + 1)) + 1;
    uint64_t v = 0;
    if (p == end && int_len <= 19) {
        /* A plain integer below 10^19 fits in uint64_t: no saturating step (a division each). */
        for (size_t i = 0; i < int_len; i++)
            v = v * 10 + (uint64_t)(digits[i] - '0');
        v = v < limit ? v : limit;
    } else {
        v = number_magnitude(digits, int_len, p, end, limit);
    }
    if (!negative)
        return (int64_t)v;
    return v == 0 ? 0 : -(int64_t)(v - 1) - 1;
}

/* The value of the eight digits at p, three multiplications instead of eight steps: pairs of
 * digits, then pairs of pairs, then the two halves (the first digit is the most significant). */
/* The value of eight digits as a little-endian word (a zero byte counts as the digit 0). */
static inline uint64_t eight_digits_word(uint64_t v) {
    v = ((v & 0x0F0F0F0F0F0F0F0Full) * (10 * 256 + 1)) >> 8;
    v = ((v & 0x00FF00FF00FF00FFull) * (100 * 65536 + 1)) >> 16;
    return ((v & 0x0000FFFF0000FFFFull) * (10000ull * 4294967296ull + 1)) >> 32;
}

static inline uint64_t eight_digits(const char *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return eight_digits_word(v);
#else
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    return v;
#endif
}

/* The value of the n (1 to 8) digits at p, with eight bytes readable from p: shifted up to the
 * word's top, the bytes after them gone and zero bytes below. */
static inline uint64_t eight_digits_head(const char *p, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return eight_digits_word(v << (8 * (8 - n)));
#else
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    return v;
#endif
}

/* An integer member: a number value, truncated toward zero and saturated to [min, max], goes to
 * *value and sets *present; any other type is skipped and leaves both untouched. */
static __attribute__((unused)) const char *read_integer(const char *p, const char *end, int depth,
                                                        int64_t min, int64_t max, int64_t *value,
                                                        bool *present) {
    /* The common case, a plain integer of up to 18 digits (no sign, fraction or exponent): its
     * value as it is scanned, with no second pass over its digits. */
    if (p < end && is_digit(*p)) {
        const char *after = *p == '0' ? p + 1 : skip_digits(p, end);
        size_t n = (size_t)(after - p);
        if (n <= 18 && (after >= end || (*after != '.' && *after != 'e' && *after != 'E'))) {
            uint64_t v = 0;
            size_t i = 0;
            if (n > 8 && n <= 16) { /* the last eight, and the n - 8 before them in one word */
                v = eight_digits_head(p, n - 8) * 100000000u + eight_digits(p + n - 8);
                i = n;
            } else if (n >= 8) {
                v = eight_digits(p);
                i = 8;
            }
            for (; i < n; i++)
                v = v * 10 + (uint64_t)(p[i] - '0');
            *value = v < (uint64_t)max ? (int64_t)v : max;
            *present = true;
            return after;
        }
    }
    const char *token = NULL;
    size_t len;
    p = read_number(p, end, depth, &token, &len);
    if (p && len) {
        *value = number_clamped(token, len, min, max);
        *present = true;
    }
    return p;
}

/* A count (read_integer over [0, UINT32_MAX]); present may be NULL. */
static __attribute__((unused)) const char *read_u32(const char *p, const char *end, int depth,
                                                    uint32_t *value, bool *present) {
    int64_t v = 0;
    bool got = false;
    p = read_integer(p, end, depth, 0, UINT32_MAX, &v, &got);
    if (got) {
        *value = (uint32_t)v;
        if (present)
            *present = true;
    }
    return p;
}

/* An error's "code" (read_integer over the range of int). */
static __attribute__((unused)) const char *read_code(const char *p, const char *end, int depth,
                                                     bool *has_code, int *code) {
    int64_t v = 0;
    bool got = false;
    p = read_integer(p, end, depth, INT_MIN, INT_MAX, &v, &got);
    if (got) {
        *code = (int)v;
        *has_code = true;
    }
    return p;
}

static __attribute__((unused)) const char *error_member(const char *p, const char *end, int depth,
                                                        const char *key, size_t key_len,
                                                        void *arg) {
    chunk_info_t *out = arg;
    bool has_code = false;
    if (KEY_IS("message"))
        return read_string(p, end, depth, &out->error_message, &out->error_message_len);
    if (KEY_IS("code"))
        return read_code(p, end, depth, &has_code, &out->error_code);
    return skip_member_value(p, end, depth);
}

/* An "error" (an object with "message" and "code", or a string), at '{' or '"'. */
static __attribute__((unused)) const char *scan_error(const char *p, const char *end, int depth,
                                                      chunk_info_t *out) {
    out->has_error = true;
    if (*p == '"')
        return scan_string(p, end, &out->error_message, &out->error_message_len);
    return scan_members(p, end, depth, error_member, out);
}

/* A top-level "sent_ns" (the stampede mock's send time), at its value. */
static __attribute__((unused)) const char *scan_sent_ns(const char *p, const char *end, int depth,
                                                        chunk_info_t *out) {
    return read_integer(p, end, depth, INT64_MIN, INT64_MAX, &out->sent_ns, &out->has_sent_ns);
}

/* The names an OpenAI "usage" object gives its counts: Chat Completions' prompt_tokens,
 * completion_tokens and prompt_tokens_details, or the Responses API's input_ and output_ forms. */
typedef struct usage_names {
    const char *prompt, *completion, *details;
} usage_names_t;

typedef struct usage_scan {
    const usage_names_t *names;
    chunk_info_t *out;
} usage_scan_t;

static __attribute__((unused)) const char *usage_details_member(const char *p, const char *end,
                                                                int depth, const char *key,
                                                                size_t key_len, void *arg) {
    chunk_info_t *out = arg;
    if (KEY_IS("cached_tokens"))
        return read_u32(p, end, depth, &out->cached_tokens, NULL);
    return skip_member_value(p, end, depth);
}

static __attribute__((unused)) const char *usage_member(const char *p, const char *end, int depth,
                                                        const char *key, size_t key_len,
                                                        void *arg) {
    usage_scan_t *usage = arg;
    const usage_names_t *names = usage->names;
    if (key_is(key, key_len, names->prompt, strlen(names->prompt)))
        return read_u32(p, end, depth, &usage->out->prompt_tokens, NULL);
    if (key_is(key, key_len, names->completion, strlen(names->completion)))
        return read_u32(p, end, depth, &usage->out->completion_tokens, NULL);
    if (key_is(key, key_len, names->details, strlen(names->details)) && p < end && *p == '{')
        return scan_members(p, end, depth, usage_details_member, usage->out);
    return skip_member_value(p, end, depth);
}

/* An OpenAI "usage" object, at '{': its three counts, 0 where absent. */
static __attribute__((unused)) const char *scan_usage(const char *p, const char *end, int depth,
                                                      const usage_names_t *names,
                                                      chunk_info_t *out) {
    usage_scan_t usage = {.names = names, .out = out};
    out->has_usage = true;
    out->usage_fields = CHUNK_USAGE_PROMPT | CHUNK_USAGE_COMPLETION | CHUNK_USAGE_CACHED;
    return scan_members(p, end, depth, usage_member, &usage);
}

/* Parses a payload into out (cleared first): each member of its one object through
 * member(arg), then finish(arg) once all are read, as keys come in any order. 0, or -1 with out
 * cleared when the payload is not one valid JSON object with nothing but space after it. */
static inline __attribute__((always_inline)) int scan_chunk(const char *data, size_t len,
                                                            chunk_info_t *out, member_fn member,
                                                            void (*finish)(void *arg), void *arg) {
    const char *end = data + len;
    memset(out, 0, sizeof *out);
    const char *p = skip_space(data, end);
    if (p >= end || *p != '{' || !(p = scan_members(p, end, 0, member, arg)) ||
        skip_space(p, end) != end) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    finish(arg);
    out->has_content = out->content_len > 0;
    out->has_reasoning = out->reasoning_len > 0;
    out->has_refusal = out->refusal_len > 0;
    return 0;
}

/* A raw string equals a literal. */
#define RAW_IS(raw, raw_len, literal)                                                              \
    ((raw) && (raw_len) == sizeof(literal) - 1 && memcmp((raw), (literal), (raw_len)) == 0)

#endif
