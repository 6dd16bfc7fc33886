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

/* The counts a "usage" object has (message_delta's usage is cumulative and leaves out what does
 * not apply). */
typedef struct messages_counts {
    uint32_t input, read, creation, output;
    bool has_input, has_read, has_creation, has_output;
} messages_counts_t;

static const char *messages_usage_member(const char *p, const char *end, int depth, const char *key,
                                         size_t key_len, void *arg) {
    messages_counts_t *n = arg;
    if (KEY_IS("input_tokens"))
        return read_u32(p, end, depth, &n->input, &n->has_input);
    if (KEY_IS("output_tokens"))
        return read_u32(p, end, depth, &n->output, &n->has_output);
    if (KEY_IS("cache_read_input_tokens"))
        return read_u32(p, end, depth, &n->read, &n->has_read);
    if (KEY_IS("cache_creation_input_tokens"))
        return read_u32(p, end, depth, &n->creation, &n->has_creation);
    return skip_member_value(p, end, depth);
}

/* A "usage" object, at '{': only the counts it has. */
static const char *messages_usage(const char *p, const char *end, int depth, chunk_info_t *out) {
    messages_counts_t n = {0};
    if (!(p = scan_members(p, end, depth, messages_usage_member, &n)))
        return NULL;
    if (n.has_input || n.has_read || n.has_creation) { /* input_tokens leaves out the cache's */
        uint64_t prompt = (uint64_t)n.input + n.read + n.creation;
        out->prompt_tokens = prompt > UINT32_MAX ? UINT32_MAX : (uint32_t)prompt;
        out->usage_fields |= CHUNK_USAGE_PROMPT;
    }
    if (n.has_read) {
        out->cached_tokens = n.read;
        out->usage_fields |= CHUNK_USAGE_CACHED;
    }
    if (n.has_output) {
        out->completion_tokens = n.output;
        out->usage_fields |= CHUNK_USAGE_COMPLETION;
    }
    out->has_usage = out->usage_fields != 0;
    return p;
}

/* A member of message_start's "message": its usage. */
static const char *message_member(const char *p, const char *end, int depth, const char *key,
                                  size_t key_len, void *arg) {
    if (KEY_IS("usage") && p < end && *p == '{')
        return messages_usage(p, end, depth, arg);
    return skip_member_value(p, end, depth);
}

/* A member of a "content_block" (content_block_start): its type, text, thinking, partial_json
 * and stop_reason. */
static const char *block_member(const char *p, const char *end, int depth, const char *key,
                                size_t key_len, void *arg) {
    messages_event_t *ev = arg;
    if (KEY_IS("type"))
        return read_string(p, end, depth, &ev->block_type, &ev->block_type_len);
    if (KEY_IS("text"))
        return read_string(p, end, depth, &ev->text, &ev->text_len);
    if (KEY_IS("thinking"))
        return read_string(p, end, depth, &ev->thinking, &ev->thinking_len);
    if (KEY_IS("partial_json"))
        return read_string(p, end, depth, &ev->partial_json, &ev->partial_json_len);
    if (KEY_IS("stop_reason"))
        return read_string(p, end, depth, &ev->stop_reason, &ev->stop_reason_len);
    return skip_member_value(p, end, depth);
}

/* A member of a "delta" (content_block_delta, message_delta): a content block's, but for its
 * own type. */
static const char *delta_member(const char *p, const char *end, int depth, const char *key,
                                size_t key_len, void *arg) {
    messages_event_t *ev = arg;
    if (KEY_IS("type"))
        return read_string(p, end, depth, &ev->delta_type, &ev->delta_type_len);
    return block_member(p, end, depth, key, key_len, ev);
}

typedef struct messages_top {
    messages_event_t *ev;
    chunk_info_t *out;
} messages_top_t;

/* A member of the event's object. */
static const char *top_member(const char *p, const char *end, int depth, const char *key,
                              size_t key_len, void *arg) {
    messages_top_t *top = arg;
    char c = p < end ? *p : 0;
    if (KEY_IS("type"))
        return read_string(p, end, depth, &top->ev->type, &top->ev->type_len);
    if (KEY_IS("delta") && c == '{')
        return scan_members(p, end, depth, delta_member, top->ev);
    if (KEY_IS("content_block") && c == '{')
        return scan_members(p, end, depth, block_member, top->ev);
    if (KEY_IS("usage") && c == '{')
        return messages_usage(p, end, depth, top->out);
    if (KEY_IS("message") && c == '{')
        return scan_members(p, end, depth, message_member, top->out);
    if (KEY_IS("error") && (c == '{' || c == '"'))
        return scan_error(p, end, depth, top->out);
    if (KEY_IS("sent_ns"))
        return scan_sent_ns(p, end, depth, top->out);
    return skip_member_value(p, end, depth);
}

/* What the event means, now that its type is known. */
static void messages_apply(void *arg) {
    const messages_top_t *top = arg;
    const messages_event_t *ev = top->ev;
    chunk_info_t *out = top->out;
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
    messages_event_t ev = {0};
    messages_top_t top = {.ev = &ev, .out = out};
    return scan_chunk(data, len, out, top_member, messages_apply, &top);
}
