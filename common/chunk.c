#include "chunk.h"

#include <limits.h>
#include <string.h>

/* Deeper nesting than any real chunk has; bounds the recursion of skip_value. */
#define CHUNK_MAX_DEPTH 128

typedef struct scanner {
    const char *p;
    const char *end;
    int depth;
} scanner_t;

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

#define KEY_IS(literal)                                                                            \
    (key_len == sizeof(literal) - 1 && memcmp(key, literal, sizeof(literal) - 1) == 0)

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

static void skip_ws(scanner_t *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

static bool at(const scanner_t *s, char c) {
    return s->p < s->end && *s->p == c;
}

/* At '"': validates the string and returns its raw body. */
static int scan_string(scanner_t *s, const char **body, size_t *body_len) {
    const char *p = s->p + 1;
    const char *end = s->end;
    const char *begin = p;
    for (;;) {
        while (p < end && string_plain[(unsigned char)*p])
            p++;
        if (p >= end || *p != '\\')
            break;
        if (end - p < 2)
            return -1;
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
                return -1;
            p += 6;
            break;
        }
        default:
            return -1;
        }
    }
    if (p >= end || *p != '"')
        return -1; /* unterminated, or a raw control character */
    *body = begin;
    *body_len = (size_t)(p - begin);
    s->p = p + 1;
    return 0;
}

static const char *skip_digits(const char *p, const char *end) {
    while (p < end && is_digit(*p))
        p++;
    return p;
}

/* JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(scanner_t *s) {
    const char *p = s->p;
    const char *end = s->end;
    if (p < end && *p == '-')
        p++;
    if (p >= end || !is_digit(*p))
        return -1;
    p = *p == '0' ? p + 1 : skip_digits(p, end);
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p))
            return -1;
        p = skip_digits(p, end);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit(*p))
            return -1;
        p = skip_digits(p, end);
    }
    s->p = p;
    return 0;
}

static int scan_literal(scanner_t *s, const char *literal, size_t len) {
    if ((size_t)(s->end - s->p) < len || memcmp(s->p, literal, len) != 0)
        return -1;
    s->p += len;
    return 0;
}

static int open_container(scanner_t *s) {
    if (++s->depth > CHUNK_MAX_DEPTH)
        return -1;
    s->p++;
    return 0;
}

/* Moves to the next member of an object: 1 with the key read and p at its value, 0 after the
 * closing brace, -1 when malformed. count is the caller's member counter, 0 at the start. */
static int object_next(scanner_t *s, int *count, const char **key, size_t *key_len) {
    skip_ws(s);
    if (at(s, '}')) {
        s->p++;
        s->depth--;
        return 0;
    }
    if (*count > 0) {
        if (!at(s, ','))
            return -1;
        s->p++;
        skip_ws(s);
    }
    if (!at(s, '"') || scan_string(s, key, key_len))
        return -1;
    skip_ws(s);
    if (!at(s, ':'))
        return -1;
    s->p++;
    skip_ws(s);
    (*count)++;
    return 1;
}

/* Moves to the next element of an array: 1 with p at it, 0 after the bracket, -1 malformed. */
static int array_next(scanner_t *s, int *count) {
    skip_ws(s);
    if (at(s, ']')) {
        s->p++;
        s->depth--;
        return 0;
    }
    if (*count > 0) {
        if (!at(s, ','))
            return -1;
        s->p++;
        skip_ws(s);
    }
    (*count)++;
    return 1;
}

static int skip_value(scanner_t *s);

static int skip_object(scanner_t *s) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    if (open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1)
        if (skip_value(s))
            return -1;
    return rc;
}

static int skip_array(scanner_t *s) {
    int count = 0;
    int rc;
    if (open_container(s))
        return -1;
    while ((rc = array_next(s, &count)) == 1)
        if (skip_value(s))
            return -1;
    return rc;
}

static int skip_value(scanner_t *s) {
    if (s->p >= s->end)
        return -1;
    switch (*s->p) {
    case '"': {
        const char *body;
        size_t len;
        return scan_string(s, &body, &len);
    }
    case '{':
        return skip_object(s);
    case '[':
        return skip_array(s);
    case 't':
        return scan_literal(s, "true", 4);
    case 'f':
        return scan_literal(s, "false", 5);
    case 'n':
        return scan_literal(s, "null", 4);
    default:
        return scan_number(s);
    }
}

/* A string value is returned raw; null or any other type leaves *body untouched. */
static int read_string(scanner_t *s, const char **body, size_t *body_len) {
    if (at(s, '"'))
        return scan_string(s, body, body_len);
    return skip_value(s);
}

/* A number value is returned as its token; any other type gives *len = 0. */
static int read_number(scanner_t *s, const char **token, size_t *len) {
    *len = 0;
    if (s->p < s->end && (*s->p == '-' || is_digit(*s->p))) {
        const char *begin = s->p;
        if (scan_number(s))
            return -1;
        *token = begin;
        *len = (size_t)(s->p - begin);
        return 0;
    }
    return skip_value(s);
}

/* The value of a validated number token, truncated toward zero and saturated to [min, max]:
 * the digits before the decimal point once the exponent has moved it. */
static int64_t number_clamped(const char *p, size_t len, int64_t min, int64_t max) {
    const char *end = p + len;
    bool negative = p < end && *p == '-';
    p += negative;
    const char *digits = p;
    p = skip_digits(p, end);
    size_t int_len = (size_t)(p - digits);
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
    uint64_t limit = !negative ? (uint64_t)max : min >= 0 ? 0 : (uint64_t)(-(min + 1)) + 1;
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
    if (!negative)
        return (int64_t)v;
    return v == 0 ? 0 : -(int64_t)(v - 1) - 1;
}

static int read_u32(scanner_t *s, uint32_t *value) {
    const char *token = NULL;
    size_t len;
    if (read_number(s, &token, &len))
        return -1;
    if (len)
        *value = (uint32_t)number_clamped(token, len, 0, UINT32_MAX);
    return 0;
}

static int parse_tool_calls(scanner_t *s, chunk_info_t *out) {
    if (!at(s, '['))
        return skip_value(s);
    scanner_t peek = {s->p + 1, s->end, 0};
    skip_ws(&peek);
    if (peek.p < peek.end && *peek.p != ']')
        out->has_tool_calls = true;
    return skip_array(s);
}

/* choices[0].delta (streaming) or choices[0].message (a non-streaming response). */
static int parse_delta(scanner_t *s, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    if (open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1) {
        if (KEY_IS("content"))
            rc = read_string(s, &out->content, &out->content_len);
        else if (KEY_IS("reasoning_content") || KEY_IS("reasoning"))
            rc = read_string(s, &out->reasoning, &out->reasoning_len);
        else if (KEY_IS("tool_calls"))
            rc = parse_tool_calls(s, out);
        else
            rc = skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

static int parse_choice(scanner_t *s, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    if (open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1) {
        if ((KEY_IS("delta") || KEY_IS("message")) && at(s, '{'))
            rc = parse_delta(s, out);
        else if (KEY_IS("text"))
            rc = read_string(s, &out->content, &out->content_len);
        else if (KEY_IS("finish_reason"))
            rc = read_string(s, &out->finish_reason, &out->finish_reason_len);
        else
            rc = skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

static int parse_choices(scanner_t *s, chunk_info_t *out) {
    int count = 0;
    int rc;
    if (open_container(s))
        return -1;
    while ((rc = array_next(s, &count)) == 1) {
        rc = count == 1 && at(s, '{') ? parse_choice(s, out) : skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

static int parse_prompt_details(scanner_t *s, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    if (open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1) {
        rc = KEY_IS("cached_tokens") ? read_u32(s, &out->cached_tokens) : skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

static int parse_usage(scanner_t *s, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    out->has_usage = true;
    if (open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1) {
        if (KEY_IS("prompt_tokens"))
            rc = read_u32(s, &out->prompt_tokens);
        else if (KEY_IS("completion_tokens"))
            rc = read_u32(s, &out->completion_tokens);
        else if (KEY_IS("prompt_tokens_details") && at(s, '{'))
            rc = parse_prompt_details(s, out);
        else
            rc = skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

static int read_code(scanner_t *s, bool *has_code, int *code) {
    const char *token = NULL;
    size_t len;
    if (read_number(s, &token, &len))
        return -1;
    if (len) {
        *has_code = true;
        *code = (int)number_clamped(token, len, INT_MIN, INT_MAX);
    }
    return 0;
}

static int parse_error(scanner_t *s, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    bool has_code = false;
    out->has_error = true;
    if (at(s, '"'))
        return scan_string(s, &out->error_message, &out->error_message_len);
    if (open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1) {
        if (KEY_IS("message"))
            rc = read_string(s, &out->error_message, &out->error_message_len);
        else if (KEY_IS("code"))
            rc = read_code(s, &has_code, &out->error_code);
        else
            rc = skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

static int parse_top(scanner_t *s, chunk_info_t *out, legacy_error_t *legacy) {
    const char *key;
    size_t key_len;
    int count = 0;
    int rc;
    skip_ws(s);
    if (!at(s, '{') || open_container(s))
        return -1;
    while ((rc = object_next(s, &count, &key, &key_len)) == 1) {
        if (KEY_IS("choices") && at(s, '['))
            rc = parse_choices(s, out);
        else if (KEY_IS("usage") && at(s, '{'))
            rc = parse_usage(s, out);
        else if (KEY_IS("error") && (at(s, '{') || at(s, '"')))
            rc = parse_error(s, out);
        else if (KEY_IS("sent_ns")) {
            const char *token = NULL;
            size_t len;
            rc = read_number(s, &token, &len);
            if (!rc && len) {
                out->has_sent_ns = true;
                out->sent_ns = number_clamped(token, len, INT64_MIN, INT64_MAX);
            }
        } else if (KEY_IS("object")) {
            const char *value = NULL;
            size_t len = 0;
            rc = read_string(s, &value, &len);
            legacy->object_is_error = value && len == 5 && memcmp(value, "error", 5) == 0;
        } else if (KEY_IS("message"))
            rc = read_string(s, &legacy->message, &legacy->message_len);
        else if (KEY_IS("code"))
            rc = read_code(s, &legacy->has_code, &legacy->code);
        else
            rc = skip_value(s);
        if (rc)
            return -1;
    }
    return rc;
}

int chunk_parse(const char *data, size_t len, chunk_info_t *out) {
    memset(out, 0, sizeof *out);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = true;
        return 0;
    }
    scanner_t s = {data, data + len, 0};
    legacy_error_t legacy = {0};
    int rc = parse_top(&s, out, &legacy);
    if (rc == 0) {
        skip_ws(&s);
        if (s.p != s.end)
            rc = -1;
    }
    if (rc) {
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
