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

static const usage_names_t responses_usage = {
    .prompt = "input_tokens", .completion = "output_tokens", .details = "input_tokens_details"};

/* The one string member that matters of an object (an output item's "type", incomplete_details'
 * "reason"). */
typedef struct named_string {
    const char *name;
    const char *value;
    size_t value_len;
} named_string_t;

static const char *named_member(const char *p, const char *end, int depth, const char *key,
                                size_t key_len, void *arg) {
    named_string_t *wanted = arg;
    if (key_is(key, key_len, wanted->name, strlen(wanted->name)))
        return read_string(p, end, depth, &wanted->value, &wanted->value_len);
    return skip_member_value(p, end, depth);
}

/* An item of response.output: whether it is a function call. */
static const char *output_element(const char *p, const char *end, int depth, bool first,
                                  void *arg) {
    responses_event_t *ev = arg;
    named_string_t type = {.name = "type"};
    (void)first;
    if (p >= end || *p != '{')
        return skip_value(p, end, depth);
    p = scan_members(p, end, depth, named_member, &type);
    ev->function_call |= RAW_IS(type.value, type.value_len, "function_call");
    return p;
}

typedef struct responses_top {
    responses_event_t *ev;
    chunk_info_t *out;
} responses_top_t;

/* A member of the "response" object of response.created, .completed, .incomplete, .failed. */
static const char *response_member(const char *p, const char *end, int depth, const char *key,
                                   size_t key_len, void *arg) {
    responses_top_t *top = arg;
    char c = p < end ? *p : 0;
    if (KEY_IS("id"))
        return read_string(p, end, depth, &top->out->response_id, &top->out->response_id_len);
    if (KEY_IS("usage") && c == '{')
        return scan_usage(p, end, depth, &responses_usage, top->out);
    if (KEY_IS("output") && c == '[')
        return scan_elements(p, end, depth, output_element, top->ev);
    if (KEY_IS("incomplete_details") && c == '{') {
        named_string_t reason = {.name = "reason"};
        p = scan_members(p, end, depth, named_member, &reason);
        if (reason.value) {
            top->ev->reason = reason.value;
            top->ev->reason_len = reason.value_len;
        }
        return p;
    }
    if (KEY_IS("error") && c == '{') /* response.failed's; null elsewhere */
        return scan_error(p, end, depth, top->out);
    return skip_member_value(p, end, depth);
}

/* A member of the event's object. */
static const char *top_member(const char *p, const char *end, int depth, const char *key,
                              size_t key_len, void *arg) {
    responses_top_t *top = arg;
    char c = p < end ? *p : 0;
    if (KEY_IS("type"))
        return read_string(p, end, depth, &top->ev->type, &top->ev->type_len);
    if (KEY_IS("delta"))
        return read_string(p, end, depth, &top->ev->delta, &top->ev->delta_len);
    if (KEY_IS("response") && c == '{')
        return scan_members(p, end, depth, response_member, top);
    if (KEY_IS("message")) /* the "error" event's own message */
        return read_string(p, end, depth, &top->out->error_message, &top->out->error_message_len);
    if (KEY_IS("error") && (c == '{' || c == '"'))
        return scan_error(p, end, depth, top->out);
    if (KEY_IS("sent_ns"))
        return scan_sent_ns(p, end, depth, top->out);
    return skip_member_value(p, end, depth);
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
static void responses_apply(void *arg) {
    const responses_top_t *top = arg;
    const responses_event_t *ev = top->ev;
    chunk_info_t *out = top->out;
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
    responses_event_t ev = {0};
    responses_top_t top = {.ev = &ev, .out = out};
    return scan_chunk(data, len, out, top_member, responses_apply, &top);
}
