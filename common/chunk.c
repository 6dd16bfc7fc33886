#include "chunk.h"

#include <limits.h>
#include <string.h>

#include "chunk_scan.h"

/* vLLM's older error form puts message and code at the top level beside "object":"error". */
typedef struct legacy_error {
    bool object_is_error;
    const char *message;
    size_t message_len;
    bool has_code;
    int code;
} legacy_error_t;

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
    out->usage_fields = CHUNK_USAGE_PROMPT | CHUNK_USAGE_COMPLETION | CHUNK_USAGE_CACHED;
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
            p = scan_error(p, end, depth, out);
        else if (KEY_IS("sent_ns"))
            p = scan_sent_ns(p, end, depth, out);
        else if (KEY_IS("object")) {
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
