#include "chunk.h"

#include <limits.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Deeper nesting than any real chunk has; bounds the recursion of skip_value. */
#define CHUNK_MAX_DEPTH 128

/* The scanner's functions take p, the next byte, and end, and return p past what they read, or
 * NULL when the payload is malformed there: cursors stay in registers, never behind a pointer
 * that a store into chunk_info_t could alias. depth is the nesting of the enclosing container. */

/* vLLM's older error form puts message and code at the top level beside "object":"error". */
typedef struct legacy_error {
    bool object_is_error;
    const char *message;
    size_t message_len;
    bool has_code;
    int code;
} legacy_error_t;

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

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads 4 hex digits at p (the caller checked that 4 bytes are there). */
static bool hex4(const char *p, uint32_t *value) {
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
static const char *scan_escaped(const char *p, const char *end) {
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

/* At '"': validates the string and returns its raw body and the byte after its closing quote. */
static inline const char *scan_string(const char *p, const char *end, const char **body,
                                      size_t *body_len) {
    const char *begin = p + 1;
    p = skip_plain(begin, end);
    if (p < end && *p == '\\')
        p = scan_escaped(p, end);
    if (!p || p >= end || *p != '"')
        return NULL; /* unterminated, or a raw control character */
    *body = begin;
    *body_len = (size_t)(p - begin);
    return p + 1;
}

/* The first byte at or after p that is not a digit, or end: sixteen bytes a step with SSE2. */
static const char *skip_digits(const char *p, const char *end) {
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
    while (p < end && is_digit(*p))
        p++;
    return p;
}

/* JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *scan_number(const char *p, const char *end) {
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

static const char *scan_literal(const char *p, const char *end, const char *literal, size_t len) {
    if ((size_t)(end - p) < len || memcmp(p, literal, len) != 0)
        return NULL;
    return p + len;
}

/* The next member of an object, from just after its '{' (first) or after a member's value:
 * p at the member's value with its key read, or p past the closing '}' with *key NULL; NULL
 * when malformed. */
static inline __attribute__((always_inline)) const char *
object_next(const char *p, const char *end, bool first, const char **key, size_t *key_len) {
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
        if (p < end && *p != '"') /* space is rare: test for the quote first */
            p = skip_space(p, end);
    }
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

static const char *skip_value(const char *p, const char *end, int depth);

/* At '{': skips the object. */
static const char *skip_object(const char *p, const char *end, int depth) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (!(p = skip_value(p, end, depth)))
            return NULL;
    }
}

/* At '[': skips the array. */
static const char *skip_array(const char *p, const char *end, int depth) {
    bool closed;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = array_next(p, end, first, &closed)) || closed)
            return p;
        if (!(p = skip_value(p, end, depth)))
            return NULL;
    }
}

static const char *skip_value(const char *p, const char *end, int depth) {
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
    return skip_value(p, end, depth);
}

/* A string value is returned raw; null or any other type leaves *body untouched. */
static const char *read_string(const char *p, const char *end, int depth, const char **body,
                               size_t *body_len) {
    if (p < end && *p == '"')
        return scan_string(p, end, body, body_len);
    return skip_value(p, end, depth);
}

/* A number value is returned as its token; any other type gives *len = 0. */
static const char *read_number(const char *p, const char *end, int depth, const char **token,
                               size_t *len) {
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
static uint64_t number_magnitude(const char *digits, size_t int_len, const char *p, const char *end,
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
static int64_t number_clamped(const char *p, size_t len, int64_t min, int64_t max) {
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

static const char *read_u32(const char *p, const char *end, int depth, uint32_t *value) {
    const char *token = NULL;
    size_t len;
    p = read_number(p, end, depth, &token, &len);
    if (p && len)
        *value = (uint32_t)number_clamped(token, len, 0, UINT32_MAX);
    return p;
}

static const char *parse_tool_calls(const char *p, const char *end, int depth, chunk_info_t *out) {
    if (p >= end || *p != '[')
        return skip_value(p, end, depth);
    const char *first = skip_space(p + 1, end);
    if (first < end && *first != ']')
        out->has_tool_calls = true;
    return skip_array(p, end, depth);
}

/* choices[0].delta (streaming) or choices[0].message (a non-streaming response), at '{'. */
static const char *parse_delta(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (KEY_IS("content"))
            p = read_string(p, end, depth, &out->content, &out->content_len);
        else if (KEY_IS("reasoning_content") || KEY_IS("reasoning"))
            p = read_string(p, end, depth, &out->reasoning, &out->reasoning_len);
        else if (KEY_IS("tool_calls"))
            p = parse_tool_calls(p, end, depth, out);
        else if (KEY_IS("refusal") && p < end && *p == '"') /* else null: skipped inline */
            p = scan_string(p, end, &out->refusal, &out->refusal_len);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* choices[0], at '{'. */
static const char *parse_choice(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if ((KEY_IS("delta") || KEY_IS("message")) && p < end && *p == '{')
            p = parse_delta(p, end, depth, out);
        else if (KEY_IS("text"))
            p = read_string(p, end, depth, &out->content, &out->content_len);
        else if (KEY_IS("finish_reason"))
            p = read_string(p, end, depth, &out->finish_reason, &out->finish_reason_len);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* The "choices" array, at '['. */
static const char *parse_choices(const char *p, const char *end, int depth, chunk_info_t *out) {
    bool closed;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = array_next(p, end, first, &closed)) || closed)
            return p;
        p = first && p < end && *p == '{' ? parse_choice(p, end, depth, out)
                                          : skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* usage.prompt_tokens_details, at '{'. */
static const char *parse_prompt_details(const char *p, const char *end, int depth,
                                        chunk_info_t *out) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        p = KEY_IS("cached_tokens") ? read_u32(p, end, depth, &out->cached_tokens)
                                    : skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* The top-level "usage" object, at '{'. */
static const char *parse_usage(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    out->has_usage = true;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (KEY_IS("prompt_tokens"))
            p = read_u32(p, end, depth, &out->prompt_tokens);
        else if (KEY_IS("completion_tokens"))
            p = read_u32(p, end, depth, &out->completion_tokens);
        else if (KEY_IS("prompt_tokens_details") && p < end && *p == '{')
            p = parse_prompt_details(p, end, depth, out);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

static const char *read_code(const char *p, const char *end, int depth, bool *has_code, int *code) {
    const char *token = NULL;
    size_t len;
    p = read_number(p, end, depth, &token, &len);
    if (p && len) {
        *has_code = true;
        *code = (int)number_clamped(token, len, INT_MIN, INT_MAX);
    }
    return p;
}

/* The top-level "error", at '{' or '"'. */
static const char *parse_error(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    bool has_code = false;
    out->has_error = true;
    if (*p == '"')
        return scan_string(p, end, &out->error_message, &out->error_message_len);
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (KEY_IS("message"))
            p = read_string(p, end, depth, &out->error_message, &out->error_message_len);
        else if (KEY_IS("code"))
            p = read_code(p, end, depth, &has_code, &out->error_code);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* The payload's object: p past its closing '}', or NULL. */
static const char *parse_top(const char *p, const char *end, chunk_info_t *out,
                             legacy_error_t *legacy) {
    const char *key;
    size_t key_len;
    const int depth = 1;
    p = skip_space(p, end);
    if (p >= end || *p != '{')
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        char c = p < end ? *p : 0;
        if (KEY_IS("choices") && c == '[')
            p = parse_choices(p, end, depth, out);
        else if (KEY_IS("usage") && c == '{')
            p = parse_usage(p, end, depth, out);
        else if (KEY_IS("error") && (c == '{' || c == '"'))
            p = parse_error(p, end, depth, out);
        else if (KEY_IS("sent_ns")) {
            const char *token = NULL;
            size_t len;
            p = read_number(p, end, depth, &token, &len);
            if (p && len) {
                out->has_sent_ns = true;
                out->sent_ns = number_clamped(token, len, INT64_MIN, INT64_MAX);
            }
        } else if (KEY_IS("object")) {
            const char *value = NULL;
            size_t len = 0;
            p = read_string(p, end, depth, &value, &len);
            legacy->object_is_error = value && len == 5 && memcmp(value, "error", 5) == 0;
        } else if (KEY_IS("message"))
            p = read_string(p, end, depth, &legacy->message, &legacy->message_len);
        else if (KEY_IS("code"))
            p = read_code(p, end, depth, &legacy->has_code, &legacy->code);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

int chunk_parse(const char *data, size_t len, chunk_info_t *out) {
    memset(out, 0, sizeof *out);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = true;
        return 0;
    }
    const char *end = data + len;
    legacy_error_t legacy = {0};
    const char *p = parse_top(data, end, out, &legacy);
    if (!p || skip_space(p, end) != end) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    if (legacy.object_is_error && !out->has_error) {
        out->has_error = true;
        out->error_message = legacy.message;
        out->error_message_len = legacy.message_len;
        out->error_code = legacy.has_code ? legacy.code : 0;
    }
    out->has_content = out->content_len > 0;
    out->has_reasoning = out->reasoning_len > 0;
    out->has_refusal = out->refusal_len > 0;
    return 0;
}

static size_t utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At "\uXXXX" (6 bytes present): the code point, joining a following low surrogate. */
static uint32_t unescape_code_point(const char **pp, const char *end, uint32_t high) {
    const char *p = *pp;
    uint32_t low;
    if (high >= 0xDC00 && high <= 0xDFFF)
        return 0xFFFD;
    if (high < 0xD800 || high > 0xDBFF)
        return high;
    if (end - p >= 6 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &low) && low >= 0xDC00 &&
        low <= 0xDFFF) {
        *pp = p + 6;
        return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
    }
    return 0xFFFD;
}

static char simple_escape(char c) {
    switch (c) {
    case '"':
    case '\\':
    case '/':
        return c;
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    default:
        return 0;
    }
}

size_t chunk_unescape(const char *escaped, size_t len, char *out) {
    const char *p = escaped;
    const char *end = escaped + len;
    char *o = out;
    while (p < end) {
        const char *backslash = memchr(p, '\\', (size_t)(end - p));
        size_t run = (size_t)((backslash ? backslash : end) - p);
        memmove(o, p, run); /* memmove: decoding in place (out == escaped) is allowed */
        o += run;
        p += run;
        if (!backslash)
            break;
        char plain = end - p >= 2 ? simple_escape(p[1]) : 0;
        uint32_t cp;
        if (plain) {
            *o++ = plain;
            p += 2;
        } else if (end - p >= 6 && p[1] == 'u' && hex4(p + 2, &cp)) {
            p += 6;
            o += utf8_encode(unescape_code_point(&p, end, cp), o);
        } else {
            *o++ = *p++; /* an invalid escape: keep the backslash, the rest follows as text */
        }
    }
    return (size_t)(o - out);
}
