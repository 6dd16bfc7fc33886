/* OpenAI Responses stream events (chunk.h, chunk_responses_parse). */
#include <string.h>

#include "chunk.h"
#include "chunk_scan.h"

/* What one pass over an event collects; read once its "type" is known (keys come in any order). */
typedef struct responses_event {
    const char *type, *delta, *reason;
    size_t type_len, delta_len, reason_len;
    bool function_call; /* the response's output holds a function call */
} responses_event_t;

/* usage.input_tokens_details, at '{'. */
static const char *responses_details(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    bool present = false;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        p = KEY_IS("cached_tokens") ? scan_count(p, end, depth, &out->cached_tokens, &present)
                                    : skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* response.usage, at '{': input_tokens (cached ones included), output_tokens. */
static const char *responses_usage(const char *p, const char *end, int depth, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    bool present = false;
    out->has_usage = true;
    out->usage_fields = CHUNK_USAGE_PROMPT | CHUNK_USAGE_COMPLETION | CHUNK_USAGE_CACHED;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        if (KEY_IS("input_tokens"))
            p = scan_count(p, end, depth, &out->prompt_tokens, &present);
        else if (KEY_IS("output_tokens"))
            p = scan_count(p, end, depth, &out->completion_tokens, &present);
        else if (KEY_IS("input_tokens_details") && p < end && *p == '{')
            p = responses_details(p, end, depth, out);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* An object of which only one string member matters (an output item's "type", incomplete_details'
 * "reason"), at '{'. */
static const char *responses_member(const char *p, const char *end, int depth, const char *name,
                                    const char **value, size_t *value_len) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        p = key_is(key, key_len, name, strlen(name)) ? read_string(p, end, depth, value, value_len)
                                                     : skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* response.output, at '[': whether one of its items is a function call. */
static const char *responses_output(const char *p, const char *end, int depth,
                                    responses_event_t *ev) {
    bool closed;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = array_next(p, end, first, &closed)) || closed)
            return p;
        const char *type = NULL;
        size_t type_len = 0;
        p = p < end && *p == '{' ? responses_member(p, end, depth, "type", &type, &type_len)
                                 : skip_value(p, end, depth);
        if (!p)
            return NULL;
        ev->function_call |= RAW_IS(type, type_len, "function_call");
    }
}

/* The "response" object of response.created, .completed, .incomplete, .failed, at '{'. */
static const char *responses_response(const char *p, const char *end, int depth,
                                      responses_event_t *ev, chunk_info_t *out) {
    const char *key;
    size_t key_len;
    if (++depth > CHUNK_MAX_DEPTH)
        return NULL;
    p++;
    for (bool first = true;; first = false) {
        if (!(p = object_next(p, end, first, &key, &key_len)) || !key)
            return p;
        char c = p < end ? *p : 0;
        if (KEY_IS("id"))
            p = read_string(p, end, depth, &out->response_id, &out->response_id_len);
        else if (KEY_IS("usage") && c == '{')
            p = responses_usage(p, end, depth, out);
        else if (KEY_IS("output") && c == '[')
            p = responses_output(p, end, depth, ev);
        else if (KEY_IS("incomplete_details") && c == '{')
            p = responses_member(p, end, depth, "reason", &ev->reason, &ev->reason_len);
        else if (KEY_IS("error") && c == '{') /* response.failed's; null elsewhere */
            p = scan_error(p, end, depth, out);
        else
            p = skip_member_value(p, end, depth);
        if (!p)
            return NULL;
    }
}

/* The event's object: p past its closing '}', or NULL. */
static const char *responses_top(const char *p, const char *end, responses_event_t *ev,
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
        else if (KEY_IS("delta"))
            p = read_string(p, end, depth, &ev->delta, &ev->delta_len);
        else if (KEY_IS("response") && c == '{')
            p = responses_response(p, end, depth, ev, out);
        else if (KEY_IS("message")) /* the "error" event's own message */
            p = read_string(p, end, depth, &out->error_message, &out->error_message_len);
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

/* The finish_reason of a response that ended: cut by max_output_tokens (or a filter), or whole. */
static void responses_finish(const responses_event_t *ev, chunk_info_t *out) {
    const char *reason = ev->function_call ? "tool_calls" : "stop";
    if (RAW_IS(ev->reason, ev->reason_len, "max_output_tokens"))
        reason = "length";
    else if (RAW_IS(ev->reason, ev->reason_len, "content_filter"))
        reason = "content_filter";
    else if (ev->reason)
        reason = "other";
    out->finish_reason = reason;
    out->finish_reason_len = strlen(reason);
    out->done = true;
}

/* What the event means, now that its type is known. */
static void responses_apply(const responses_event_t *ev, chunk_info_t *out) {
    const char *t = ev->type;
    size_t n = ev->type_len;
    bool error_event = RAW_IS(t, n, "error");
    if (!error_event && !out->has_error) { /* "message" is an error's text only in an error */
        out->error_message = NULL;
        out->error_message_len = 0;
    }
    if (RAW_IS(t, n, "response.output_text.delta")) {
        out->content = ev->delta;
        out->content_len = ev->delta_len;
    } else if (RAW_IS(t, n, "response.reasoning_text.delta") ||
               RAW_IS(t, n, "response.reasoning_summary_text.delta")) {
        out->reasoning = ev->delta;
        out->reasoning_len = ev->delta_len;
    } else if (RAW_IS(t, n, "response.refusal.delta")) {
        out->refusal = ev->delta;
        out->refusal_len = ev->delta_len;
    } else if (RAW_IS(t, n, "response.function_call_arguments.delta")) {
        out->has_tool_calls = ev->delta_len > 0;
    } else if (RAW_IS(t, n, "response.completed") || RAW_IS(t, n, "response.incomplete")) {
        responses_finish(ev, out);
    } else if (RAW_IS(t, n, "response.failed") || error_event) {
        out->has_error = true;
    }
}

int chunk_responses_parse(const char *data, size_t len, chunk_info_t *out) {
    memset(out, 0, sizeof *out);
    responses_event_t ev = {0};
    const char *end = data + len;
    const char *p = responses_top(data, end, &ev, out);
    if (!p || skip_space(p, end) != end) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    responses_apply(&ev, out);
    out->has_content = out->content_len > 0;
    out->has_reasoning = out->reasoning_len > 0;
    out->has_refusal = out->refusal_len > 0;
    return 0;
}
