/* Anthropic Messages stream events (chunk.h, chunk_messages_parse). */
#include <string.h>

#include "chunk.h"
#include "chunk_scan.h"

/* What one pass over an event collects; read once its "type" is known (keys come in any order). */
typedef struct messages_event {
    const char *type, *delta_type, *block_type, *text, *thinking, *partial_json, *stop_reason;
    size_t type_len, delta_type_len, block_type_len, text_len, thinking_len, partial_json_len,
        stop_reason_len;
} messages_event_t;

/* A "usage" object, at '{': only the counts it has (message_delta's usage is cumulative and
 * leaves out what does not apply). */
static const char *messages_usage(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    uint32_t input = 0, read = 0, creation = 0, output = 0;
    bool has_input = false, has_read = false, has_creation = false, has_output = false;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)))
            return NULL;
        if (!key)
            break;
        if (KEY_IS("input_tokens"))
            p = scan_count(p, end, depth, &input, &has_input);
        else if (KEY_IS("output_tokens"))
            p = scan_count(p, end, depth, &output, &has_output);
        else if (KEY_IS("cache_read_input_tokens"))
            p = scan_count(p, end, depth, &read, &has_read);
        else if (KEY_IS("cache_creation_input_tokens"))
            p = scan_count(p, end, depth, &creation, &has_creation);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
    if (has_input || has_read || has_creation) { /* input_tokens leaves out the cache's share */
        uint64_t prompt = (uint64_t)input + read + creation;
        out->prompt_tokens = prompt > UINT32_MAX ? UINT32_MAX : (uint32_t)prompt;
        out->usage_fields |= CHUNK_USAGE_PROMPT;
    }
    if (has_read) {
        out->cached_tokens = read;
        out->usage_fields |= CHUNK_USAGE_CACHED;
    }
    if (has_output) {
        out->completion_tokens = output;
        out->usage_fields |= CHUNK_USAGE_COMPLETION;
    }
    out->has_usage = out->usage_fields != 0;
    return p;
}

/* message_start's "message", at '{': its usage. */
static const char *messages_message(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        p = KEY_IS("usage") && p < end && *p == '{' ? messages_usage(p, end, depth, out)
                                                    : skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* A "delta" (content_block_delta, message_delta) or a "content_block" (content_block_start), at
 * '{': its type, text, thinking, partial_json and stop_reason. */
static const char *messages_block(const char *p, const char *end, int depth, messages_event_t *ev,
                                  bool is_delta) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (KEY_IS("type") && is_delta)
            p = read_string(p, end, depth, &ev->delta_type, &ev->delta_type_len);
        else if (KEY_IS("type"))
            p = read_string(p, end, depth, &ev->block_type, &ev->block_type_len);
        else if (KEY_IS("text"))
            p = read_string(p, end, depth, &ev->text, &ev->text_len);
        else if (KEY_IS("thinking"))
            p = read_string(p, end, depth, &ev->thinking, &ev->thinking_len);
        else if (KEY_IS("partial_json"))
            p = read_string(p, end, depth, &ev->partial_json, &ev->partial_json_len);
        else if (KEY_IS("stop_reason"))
            p = read_string(p, end, depth, &ev->stop_reason, &ev->stop_reason_len);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* The event's object: p past its closing '}', or NULL. */
static const char *messages_top(const char *p, const char *end, messages_event_t *ev,
                                chunk_info_t *out) {
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
        if (KEY_IS("type"))
            p = read_string(p, end, depth, &ev->type, &ev->type_len);
        else if (KEY_IS("delta") && c == '{')
            p = messages_block(p, end, depth, ev, true);
        else if (KEY_IS("content_block") && c == '{')
            p = messages_block(p, end, depth, ev, false);
        else if (KEY_IS("usage") && c == '{')
            p = messages_usage(p, end, depth, out);
        else if (KEY_IS("message") && c == '{')
            p = messages_message(p, end, depth, out);
        else if (KEY_IS("error") && (c == '{' || c == '"'))
            p = scan_error(p, end, depth, out);
        else if (KEY_IS("sent_ns"))
            p = scan_sent_ns(p, end, depth, out);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* What the event means, now that its type is known. */
static void messages_apply(const messages_event_t *ev, chunk_info_t *out) {
    if (RAW_IS(ev->type, ev->type_len, "content_block_delta")) {
        if (RAW_IS(ev->delta_type, ev->delta_type_len, "text_delta")) {
            out->content = ev->text;
            out->content_len = ev->text_len;
        } else if (RAW_IS(ev->delta_type, ev->delta_type_len, "thinking_delta")) {
            out->reasoning = ev->thinking;
            out->reasoning_len = ev->thinking_len;
        } else if (RAW_IS(ev->delta_type, ev->delta_type_len, "input_json_delta")) {
            out->has_tool_calls = ev->partial_json_len > 0; /* the first is often "" */
        }
    } else if (RAW_IS(ev->type, ev->type_len, "content_block_start")) {
        /* a block opens empty; text already in it is generated text all the same */
        if (RAW_IS(ev->block_type, ev->block_type_len, "text")) {
            out->content = ev->text;
            out->content_len = ev->text_len;
        } else if (RAW_IS(ev->block_type, ev->block_type_len, "thinking")) {
            out->reasoning = ev->thinking;
            out->reasoning_len = ev->thinking_len;
        }
    } else if (RAW_IS(ev->type, ev->type_len, "message_delta")) {
        out->finish_reason = ev->stop_reason;
        out->finish_reason_len = ev->stop_reason_len;
    } else if (RAW_IS(ev->type, ev->type_len, "message_stop")) {
        out->done = true;
    } else if (RAW_IS(ev->type, ev->type_len, "error")) {
        out->has_error = true;
    }
}

int chunk_messages_parse(const char *data, size_t len, chunk_info_t *out) {
    memset(out, 0, sizeof *out);
    messages_event_t ev = {0};
    const char *end = data + len;
    const char *p = messages_top(data, end, &ev, out);
    if (!p || skip_space(p, end) != end) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    messages_apply(&ev, out);
    out->has_content = out->content_len > 0;
    out->has_reasoning = out->reasoning_len > 0;
    return 0;
}
