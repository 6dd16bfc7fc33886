#include "record.h"

#include <string.h>

const char *error_class_name(error_class_t cls) {
    switch (cls) {
    case ERROR_NONE:
        return "none";
    case ERROR_CONNECT:
        return "connect";
    case ERROR_TIMEOUT:
        return "timeout";
    case ERROR_HTTP_4XX:
        return "http_4xx";
    case ERROR_HTTP_5XX:
        return "http_5xx";
    case ERROR_INCOMPLETE:
        return "incomplete";
    case ERROR_PROTOCOL:
        return "protocol";
    case ERROR_CANCELLED:
        return "cancelled";
    case ERROR_HTTP_429:
        return "http_429";
    case ERROR_CONTEXT_LENGTH:
        return "context_length";
    case ERROR_SERVER_ERROR_EVENT:
        return "server_error_event";
    case ERROR_NOT_SSE:
        return "not_sse";
    case ERROR_NO_DONE:
        return "no_done";
    case ERROR_REFUSED:
        return "refused";
    case ERROR_RESET_BEFORE_HEADERS:
        return "reset_before_headers";
    case ERROR_RESET_MID_STREAM:
        return "reset_mid_stream";
    case ERROR_TRUNCATED_JSON:
        return "truncated_json";
    case ERROR_MALFORMED_SSE:
        return "malformed_sse";
    case ERROR_HTTP_500:
        return "http_500";
    case ERROR_HTTP_503:
        return "http_503";
    case ERROR_CLIENT_FD_LIMIT:
        return "client_fd_limit";
    case ERROR_HTTP_529:
        return "http_529";
    case ERROR__COUNT:
        break;
    }
    return "unknown";
}

const char *finish_reason_name(finish_reason_t reason) {
    static const char *const names[FINISH__COUNT] = {"none",       "stop",           "length",
                                                     "tool_calls", "content_filter", "other"};
    return reason < FINISH__COUNT ? names[reason] : "unknown";
}

finish_reason_t finish_reason_parse(const char *raw, size_t len) {
    static const struct {
        const char *text;
        finish_reason_t reason;
    } known[] = {{"stop", FINISH_STOP},
                 {"length", FINISH_LENGTH},
                 {"tool_calls", FINISH_TOOL_CALLS},
                 {"function_call", FINISH_TOOL_CALLS},
                 {"content_filter", FINISH_CONTENT_FILTER},
                 /* Anthropic Messages' stop_reason */
                 {"end_turn", FINISH_STOP},
                 {"stop_sequence", FINISH_STOP},
                 {"max_tokens", FINISH_LENGTH},
                 {"tool_use", FINISH_TOOL_CALLS},
                 {"refusal", FINISH_CONTENT_FILTER}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i].text) == len && memcmp(raw, known[i].text, len) == 0)
            return known[i].reason;
    return FINISH_OTHER;
}

const char *record_phase_name(record_phase_t phase) {
    static const char *const names[RECORD_PHASE__COUNT] = {
        "blocked", "dns", "connecting", "tls", "sending", "waiting", "receiving"};
    return phase < RECORD_PHASE__COUNT ? names[phase] : "unknown";
}

uint32_t record_chunk_tokens(const request_record_t *rec) {
    if (!rec->chunk_tokens)
        return rec->n_chunks;
    uint32_t total = 0;
    for (uint32_t i = 0; i < rec->n_chunks; i++) /* a token chunk carries one token at least */
        total += rec->chunk_tokens[i] ? rec->chunk_tokens[i] : 1;
    return total;
}

uint32_t record_output_tokens(const request_record_t *rec, bool *from_usage) {
    if (from_usage)
        *from_usage = rec->has_usage;
    return rec->has_usage ? rec->completion_tokens : record_chunk_tokens(rec);
}
