#include "chunk.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
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

/* A member of the payload's object. The keys a shape holes at the top level (shape_skip_key)
 * must stay keys this function skips. */
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

/* A shape's payloads are at most this long; a longer one is parsed in full every time (chat
 * chunks are 150-400 bytes). */
#define CHUNK_SHAPE_MAX 1024
#define CHUNK_SHAPE_HOLES 8

typedef enum shape_hole_kind {
    HOLE_SKIP,      /* a top-level value top_member skips: any value skip_member_value accepts */
    HOLE_CONTENT,   /* the string read_string gives content */
    HOLE_REASONING, /* the string read_string gives reasoning */
    HOLE_SENT_NS,   /* the one top-level "sent_ns": read again by scan_sent_ns */
} shape_hole_kind_t;

typedef struct shape_hole {
    uint16_t at, len; /* the value's bytes in the shape */
    shape_hole_kind_t kind;
} shape_hole_t;

/* Why a payload Q read from the shape gets chunk_parse's result. The shape P is a payload that
 * chunk_parse accepted, cut into literal runs L0..Ln and holes H1..Hn: P = L0 H1 L1 .. Hn Ln, and
 * Q = L0 V1 L1 .. Vn Ln. chunk_parse reads from left to right, and what it does at a byte depends
 * on the bytes before it and on what the functions that read earlier values returned, which is
 * only where each value ends (a skipped value, the text and sent_ns change nothing the parse
 * decides by). So at each Vi it is in the state it was in at Hi, and calls the function it called
 * there: the shape calls the same one. Each Vi must end where Q's next literal run begins, and
 * the payload where the last one ends. The result's other fields are P's: none of them is a
 * pointer (the shape is made only from such payloads), and none depends on a hole. */
struct chunk_shape {
    size_t len; /* 0: no shape yet */
    int holes_n;
    shape_hole_t holes[CHUNK_SHAPE_HOLES];
    /* P has no raw CR or LF (JSON whitespace from a data event of several lines has): a payload
     * read from it is one SSE line, so chunk_frame_shaped may read it in a stream's bytes */
    bool framable;
    chunk_info_t info; /* P's result, content and reasoning NULL, sent_ns 0 */
    uint64_t hits, misses;
    char bytes[CHUNK_SHAPE_MAX];
};

chunk_shape_t *chunk_shape_new(void) {
    return calloc(1, sizeof(chunk_shape_t));
}

void chunk_shape_destroy(chunk_shape_t **self_p) {
    free(*self_p);
    *self_p = NULL;
}

uint64_t chunk_shape_hits(const chunk_shape_t *self) {
    return self->hits;
}

uint64_t chunk_shape_misses(const chunk_shape_t *self) {
    return self->misses;
}

/* A top-level key whose value top_member skips and that differs between the payloads of one
 * server: per request ("id", "created"), or per replica behind one frontend
 * ("system_fingerprint"). "model" is the same in all of them, so it stays literal: a hole costs a
 * scan, a literal run only its compare. */
static bool shape_skip_key(const char *key, size_t key_len) {
    return KEY_IS("id") || KEY_IS("created") || KEY_IS("system_fingerprint");
}

/* A value a top-level hole may hold, by its first byte: a string or a plain number, as the
 * shape's own was. Neither can span a raw line end, and chunk_parse reads either the same
 * whatever follows it. */
static bool shape_hole_value(char c) {
    return c == '"' || is_digit(c);
}

/* Q against the shape, Q starting at data and ending where the shape's last literal run ends,
 * at most at end: the byte after Q, with *out filled as chunk_parse would fill it for Q alone;
 * NULL when Q does not fit the shape. A hole's value in Q must start as P's did (a string or a
 * number, which chunk_parse reads the same whatever follows them): an object or array, which
 * JSON lets span raw line ends, is left to chunk_parse. */
static const char *shape_read(const chunk_shape_t *self, const char *data, const char *end,
                              chunk_info_t *out) {
    const char *q = data;
    size_t at = 0; /* in the shape */
    *out = self->info;
    for (int i = 0; i < self->holes_n; i++) {
        const shape_hole_t *hole = &self->holes[i];
        size_t literal = hole->at - at;
        if ((size_t)(end - q) <= literal || memcmp(q, self->bytes + at, literal) != 0)
            return NULL;
        q += literal;
        at = (size_t)hole->at + hole->len;
        switch (hole->kind) {
        case HOLE_SKIP:
            q = shape_hole_value(*q) ? skip_member_value(q, end, 1) : NULL;
            break;
        case HOLE_CONTENT: {
            bool escaped = true;
            q = *q == '"' ? scan_string_escapes(q, end, &out->content, &out->content_len, &escaped)
                          : NULL;
            out->content_plain = !escaped;
            break;
        }
        case HOLE_REASONING:
            q = *q == '"' ? scan_string(q, end, &out->reasoning, &out->reasoning_len) : NULL;
            break;
        case HOLE_SENT_NS:
            q = is_digit(*q) ? scan_sent_ns(q, end, 1, out) : NULL;
            break;
        }
        if (!q)
            return NULL;
    }
    size_t tail = self->len - at;
    if ((size_t)(end - q) < tail || memcmp(q, self->bytes + at, tail) != 0)
        return NULL;
    out->has_content = out->content_len > 0;
    out->has_reasoning = out->reasoning_len > 0;
    return q + tail;
}

static bool shape_add_hole(chunk_shape_t *self, size_t at, size_t len, shape_hole_kind_t kind) {
    if (self->holes_n == CHUNK_SHAPE_HOLES)
        return false;
    int i = self->holes_n++;
    for (; i > 0 && self->holes[i - 1].at > at; i--)
        self->holes[i] = self->holes[i - 1];
    self->holes[i] = (shape_hole_t){.at = (uint16_t)at, .len = (uint16_t)len, .kind = kind};
    return true;
}

/* P, which chunk_parse accepted with *info, becomes the shape when it can be one: a token's
 * payload with its text in content or in reasoning and nothing else a pointer. Else the shape
 * is left as it was. */
static void shape_learn(chunk_shape_t *self, const char *data, size_t len,
                        const chunk_info_t *info) {
    if (len > CHUNK_SHAPE_MAX || info->done || info->has_error ||
        !info->content == !info->reasoning || info->refusal || info->finish_reason ||
        info->error_message || info->response_id)
        return;
    /* built aside: a payload that cannot be one leaves the shape as it was */
    chunk_shape_t next = {.len = len, .info = *info, .hits = self->hits, .misses = self->misses};
    const char *text = info->content ? info->content : info->reasoning;
    size_t text_len = info->content ? info->content_len : info->reasoning_len;
    shape_add_hole(&next, (size_t)(text - data) - 1, text_len + 2,
                   info->content ? HOLE_CONTENT : HOLE_REASONING);
    next.info.content = next.info.reasoning = NULL;
    next.info.content_len = next.info.reasoning_len = 0;
    next.info.has_content = next.info.has_reasoning = false;
    const char *end = data + len;
    const char *p = skip_space(data, end) + 1; /* past the '{' chunk_parse found */
    const char *key;
    size_t key_len;
    int sent_ns_keys = 0;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            break;
        const char *value = p;
        if (!(p = skip_value(p, end, 1)))
            return; /* cannot be: chunk_parse accepted it */
        if (shape_skip_key(key, key_len) && shape_hole_value(*value))
            shape_add_hole(&next, (size_t)(value - data), (size_t)(p - value), HOLE_SKIP);
        else if (KEY_IS("sent_ns") && sent_ns_keys++ == 0 && is_digit(*value) &&
                 shape_add_hole(&next, (size_t)(value - data), (size_t)(p - value), HOLE_SENT_NS))
            next.info.has_sent_ns = false, next.info.sent_ns = 0;
    }
    if (sent_ns_keys > 1)
        return; /* the second would read on from the first's value: keep both literal */
    next.framable = !memchr(data, '\n', len) && !memchr(data, '\r', len);
    memcpy(self, &next, offsetof(chunk_shape_t, bytes));
    memcpy(self->bytes, data, len);
}

int chunk_parse_shaped(chunk_shape_t *self, const char *data, size_t len, chunk_info_t *out) {
    if (self->len && shape_read(self, data, data + len, out) == data + len) {
        self->hits++;
        return 0;
    }
    self->misses++;
    int rc = chunk_parse(data, len, out);
    if (rc == 0)
        shape_learn(self, data, len, out);
    return rc;
}

size_t chunk_frame_shaped(chunk_shape_t *self, const char *data, size_t len, chunk_info_t *out) {
    const char *end = data + len;
    const char *after = self->framable ? shape_read(self, data, end, out) : NULL;
    if (!after || end - after < 2 || after[0] != '\n' || after[1] != '\n')
        return 0;
    self->hits++;
    return (size_t)(after - data);
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
