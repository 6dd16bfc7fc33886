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

/* A member of choices[0].delta (streaming) or choices[0].message (a non-streaming response). */
static const char *delta_member(const char *p, const char *end, int depth, const char *key,
                                size_t key_len, void *arg) {
    chunk_info_t *out = arg;
    if (KEY_IS("content"))
        return read_string(p, end, depth, &out->content, &out->content_len);
    if (KEY_IS("reasoning_content") || KEY_IS("reasoning"))
        return read_string(p, end, depth, &out->reasoning, &out->reasoning_len);
    if (KEY_IS("tool_calls"))
        return parse_tool_calls(p, end, depth, out);
    if (KEY_IS("refusal") && p < end && *p == '"') /* else null: skipped inline */
        return scan_string(p, end, &out->refusal, &out->refusal_len);
    return skip_member_value(p, end, depth);
}

/* A member of choices[0]. */
static const char *choice_member(const char *p, const char *end, int depth, const char *key,
                                 size_t key_len, void *arg) {
    chunk_info_t *out = arg;
    if ((KEY_IS("delta") || KEY_IS("message")) && p < end && *p == '{')
        return scan_members(p, end, depth, delta_member, out);
    if (KEY_IS("text"))
        return read_string(p, end, depth, &out->content, &out->content_len);
    if (KEY_IS("finish_reason"))
        return read_string(p, end, depth, &out->finish_reason, &out->finish_reason_len);
    return skip_member_value(p, end, depth);
}

/* An element of "choices": only the first is read. */
static const char *choice_element(const char *p, const char *end, int depth, bool first,
                                  void *arg) {
    if (first && p < end && *p == '{')
        return scan_members(p, end, depth, choice_member, arg);
    return skip_member_value(p, end, depth);
}

static const usage_names_t chat_usage = {.prompt = "prompt_tokens",
                                         .completion = "completion_tokens",
                                         .details = "prompt_tokens_details"};

typedef struct chunk_top {
    chunk_info_t *out;
    legacy_error_t legacy;
} chunk_top_t;

/* A member of the payload's object. */
static const char *top_member(const char *p, const char *end, int depth, const char *key,
                              size_t key_len, void *arg) {
    chunk_top_t *top = arg;
    chunk_info_t *out = top->out;
    legacy_error_t *legacy = &top->legacy;
    char c = p < end ? *p : 0;
    if (KEY_IS("choices") && c == '[')
        return scan_elements(p, end, depth, choice_element, out);
    if (KEY_IS("usage") && c == '{')
        return scan_usage(p, end, depth, &chat_usage, out);
    if (KEY_IS("error") && (c == '{' || c == '"'))
        return scan_error(p, end, depth, out);
    if (KEY_IS("sent_ns"))
        return scan_sent_ns(p, end, depth, out);
    if (KEY_IS("object")) {
        const char *value = NULL;
        size_t len = 0;
        p = read_string(p, end, depth, &value, &len);
        legacy->object_is_error = RAW_IS(value, len, "error");
        return p;
    }
    if (KEY_IS("message"))
        return read_string(p, end, depth, &legacy->message, &legacy->message_len);
    if (KEY_IS("code"))
        return read_code(p, end, depth, &legacy->has_code, &legacy->code);
    return skip_member_value(p, end, depth);
}

/* The legacy error form, once every member is read. */
static void chunk_finish(void *arg) {
    chunk_top_t *top = arg;
    const legacy_error_t *legacy = &top->legacy;
    if (legacy->object_is_error && !top->out->has_error) {
        top->out->has_error = true;
        top->out->error_message = legacy->message;
        top->out->error_message_len = legacy->message_len;
        top->out->error_code = legacy->has_code ? legacy->code : 0;
    }
}

int chunk_parse(const char *data, size_t len, chunk_info_t *out) {
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        memset(out, 0, sizeof *out);
        out->done = true;
        return 0;
    }
    chunk_top_t top = {.out = out};
    return scan_chunk(data, len, out, top_member, chunk_finish, &top);
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
