#include "mock_events.h"

#include <string.h>

#define PUT(p, literal) (memcpy((p), (literal), sizeof(literal) - 1), (p) + sizeof(literal) - 1)

static char *put_text(char *p, const char *text) {
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

/* The hex part of the response's id ("msg_3f.." or "resp_3f.."): the items' ids reuse it. */
static const char *mock_events_suffix(const mock_chunk_head_t *head) {
    const char *underscore = strchr(head->id, '_');
    return underscore ? underscore + 1 : head->id;
}

static char *put_item_id(char *p, const mock_chunk_head_t *head, bool reasoning) {
    p = reasoning ? PUT(p, "rs_") : PUT(p, "msg_");
    return put_text(p, mock_events_suffix(head));
}

/* Responses: the event's start up to its sequence_number's value, which it takes. */
static char *put_responses_event(char *p, mock_chunk_head_t *head, const char *type) {
    p = PUT(p, "event: ");
    p = put_text(p, type);
    p = PUT(p, "\ndata: {\"type\":\"");
    p = put_text(p, type);
    p = PUT(p, "\",\"sequence_number\":");
    return mock_chunk_put_u64(p, head->sequence++);
}

/* Responses: a response object's start, up to the closing quote of its model. */
static char *put_response_head(char *p, const mock_chunk_head_t *head) {
    p = PUT(p, ",\"response\":{\"id\":\"");
    p = put_text(p, head->id);
    p = PUT(p, "\",\"object\":\"response\",\"created_at\":");
    p = mock_chunk_put_u64(p, head->created > 0 ? (uint64_t)head->created : 0);
    p = PUT(p, ",\"model\":\"");
    return put_text(p, head->model_json);
}

/* Responses: the response object of response.created and response.in_progress. */
static char *put_response_in_progress(char *p, const mock_chunk_head_t *head) {
    p = put_response_head(p, head);
    return PUT(p, "\",\"status\":\"in_progress\",\"error\":null,\"incomplete_details\":null,"
                  "\"output\":[],\"usage\":null}}\n\n");
}

/* Messages: a content block's start (index head->block). */
static char *put_block_start(char *p, const mock_chunk_head_t *head) {
    p = PUT(p, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":");
    p = mock_chunk_put_u64(p, head->block);
    return head->reasoning ? PUT(p, ",\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\","
                                    "\"signature\":\"\"}}\n\n")
                           : PUT(p, ",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
}

static char *put_block_stop(char *p, const mock_chunk_head_t *head) {
    p = PUT(p, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":");
    p = mock_chunk_put_u64(p, head->block);
    return PUT(p, "}\n\n");
}

/* Responses: the output item head->block's added event and its content part's. */
static char *put_item_added(char *p, mock_chunk_head_t *head) {
    p = put_responses_event(p, head, "response.output_item.added");
    p = PUT(p, ",\"output_index\":");
    p = mock_chunk_put_u64(p, head->block);
    p = head->reasoning ? PUT(p, ",\"item\":{\"type\":\"reasoning\",\"id\":\"")
                        : PUT(p, ",\"item\":{\"type\":\"message\",\"id\":\"");
    p = put_item_id(p, head, head->reasoning);
    p = head->reasoning ? PUT(p, "\",\"summary\":[],\"content\":[]}}\n\n")
                        : PUT(p, "\",\"status\":\"in_progress\",\"role\":\"assistant\","
                                 "\"content\":[]}}\n\n");
    p = put_responses_event(p, head, "response.content_part.added");
    p = PUT(p, ",\"item_id\":\"");
    p = put_item_id(p, head, head->reasoning);
    p = PUT(p, "\",\"output_index\":");
    p = mock_chunk_put_u64(p, head->block);
    return head->reasoning
               ? PUT(p, ",\"content_index\":0,\"part\":{\"type\":\"reasoning_text\",\"text\":\"\"}}"
                        "\n\n")
               : PUT(p, ",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\","
                        "\"annotations\":[]}}\n\n");
}

char *mock_events_start(char *p, mock_chunk_head_t *head, bool reasoning,
                        const mock_chunk_usage_t *usage) {
    head->block = 0;
    head->reasoning = reasoning;
    if (head->kind == MOCK_API_RESPONSES) {
        p = put_responses_event(p, head, "response.created");
        p = put_response_in_progress(p, head);
        p = put_responses_event(p, head, "response.in_progress");
        p = put_response_in_progress(p, head);
        return put_item_added(p, head);
    }
    p = PUT(p, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"");
    p = put_text(p, head->id);
    p = PUT(p, "\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"");
    p = put_text(p, head->model_json);
    p = PUT(p, "\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":"
               "{\"input_tokens\":");
    p = mock_chunk_put_u64(p, usage->prompt_tokens - usage->cached_tokens);
    p = PUT(p, ",\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":");
    p = mock_chunk_put_u64(p, usage->cached_tokens);
    p = PUT(p, ",\"output_tokens\":1}}}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n");
    return put_block_start(p, head);
}

char *mock_events_switch(char *p, mock_chunk_head_t *head) {
    if (head->kind == MOCK_API_RESPONSES) {
        p = put_responses_event(p, head, "response.output_item.done");
        p = PUT(p, ",\"output_index\":");
        p = mock_chunk_put_u64(p, head->block);
        p = PUT(p, ",\"item\":{\"type\":\"reasoning\",\"id\":\"");
        p = put_item_id(p, head, true);
        p = PUT(p, "\",\"summary\":[]}}\n\n");
        head->block++;
        head->reasoning = false;
        return put_item_added(p, head);
    }
    p = put_block_stop(p, head);
    head->block++;
    head->reasoning = false;
    return put_block_start(p, head);
}

char *mock_events_token_open(char *p, mock_chunk_head_t *head) {
    if (head->kind == MOCK_API_RESPONSES) {
        p = put_responses_event(p, head,
                                head->reasoning ? "response.reasoning_text.delta"
                                                : "response.output_text.delta");
        p = PUT(p, ",\"item_id\":\"");
        p = put_item_id(p, head, head->reasoning);
        p = PUT(p, "\",\"output_index\":");
        p = mock_chunk_put_u64(p, head->block);
        return PUT(p, ",\"content_index\":0,\"delta\":\"");
    }
    p = PUT(p, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":");
    p = mock_chunk_put_u64(p, head->block);
    return head->reasoning ? PUT(p, ",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"")
                           : PUT(p, ",\"delta\":{\"type\":\"text_delta\",\"text\":\"");
}

char *mock_events_token_close(char *p, mock_chunk_head_t *head, int64_t sent_ns) {
    if (head->kind == MOCK_API_RESPONSES)
        p = head->reasoning ? PUT(p, "\"") : PUT(p, "\",\"logprobs\":[]");
    else
        p = PUT(p, "\"}");
    if (sent_ns >= 0) {
        p = PUT(p, ",\"sent_ns\":");
        p = mock_chunk_put_u64(p, (uint64_t)sent_ns);
    }
    return PUT(p, "}\n\n");
}

char *mock_events_messages_end(char *p, mock_chunk_head_t *head, bool length,
                               const mock_chunk_usage_t *usage) {
    p = put_block_stop(p, head);
    p = PUT(p,
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":");
    p = length ? PUT(p, "\"max_tokens\"") : PUT(p, "\"end_turn\"");
    p = PUT(p, ",\"stop_sequence\":null},\"usage\":{\"output_tokens\":");
    p = mock_chunk_put_u64(p, usage->completion_tokens);
    return PUT(p, "}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
}

char *mock_events_completed_open(char *p, mock_chunk_head_t *head, bool length) {
    p = put_responses_event(p, head, "response.completed");
    p = put_response_head(p, head);
    p = length ? PUT(p, "\",\"status\":\"incomplete\",\"error\":null,\"incomplete_details\":"
                        "{\"reason\":\"max_output_tokens\"},\"output\":[")
               : PUT(p, "\",\"status\":\"completed\",\"error\":null,\"incomplete_details\":null,"
                        "\"output\":[");
    return p;
}

char *mock_events_item_open(char *p, const mock_chunk_head_t *head, bool reasoning, bool first) {
    if (!first)
        *p++ = ',';
    p = reasoning ? PUT(p, "{\"type\":\"reasoning\",\"id\":\"")
                  : PUT(p, "{\"type\":\"message\",\"id\":\"");
    p = put_item_id(p, head, reasoning);
    return reasoning ? PUT(p, "\",\"summary\":[],\"content\":[{\"type\":\"reasoning_text\","
                              "\"text\":\"")
                     : PUT(p, "\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":"
                              "[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"");
}

char *mock_events_item_close(char *p) {
    return PUT(p, "\"}]}");
}

char *mock_events_completed_close(char *p, const mock_chunk_usage_t *usage, uint32_t reasoning) {
    p = PUT(p, "],\"usage\":{\"input_tokens\":");
    p = mock_chunk_put_u64(p, usage->prompt_tokens);
    p = PUT(p, ",\"input_tokens_details\":{\"cached_tokens\":");
    p = mock_chunk_put_u64(p, usage->cached_tokens);
    p = PUT(p, "},\"output_tokens\":");
    p = mock_chunk_put_u64(p, usage->completion_tokens);
    p = PUT(p, ",\"output_tokens_details\":{\"reasoning_tokens\":");
    p = mock_chunk_put_u64(p, reasoning);
    p = PUT(p, "},\"total_tokens\":");
    p = mock_chunk_put_u64(p, (uint64_t)usage->prompt_tokens + usage->completion_tokens);
    return PUT(p, "}}}\n\n");
}

char *mock_events_error(char *p, mock_chunk_head_t *head) {
    if (head->kind == MOCK_API_RESPONSES) {
        p = put_responses_event(p, head, "error");
        return PUT(p, ",\"code\":\"server_error\",\"message\":\"simulated engine error (--faults "
                      "event-error)\",\"param\":null}\n\n");
    }
    return PUT(p,
               "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
               "\"message\":\"simulated engine error (--faults event-error)\"}}\n\n");
}

char *mock_events_malformed(char *p, mock_chunk_head_t *head) {
    p = mock_events_token_open(p, head);
    return PUT(p, "\n\n"); /* the text's string never closes */
}

char *mock_events_truncated(char *p, mock_chunk_head_t *head) {
    p = mock_events_token_open(p, head);
    return PUT(p, "wo");
}

const char *mock_events_preflight(mock_api_kind_t kind) {
    if (kind == MOCK_API_RESPONSES)
        return "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":"
               "0,\"response\":{\"id\":\"resp_preflight\",\"object\":\"response\",\"status\":"
               "\"in_progress\",\"output\":[],\"usage\":null}}\n\n"
               "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\","
               "\"sequence_number\":1,\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":"
               "\"msg_preflight\",\"role\":\"assistant\",\"content\":[]}}\n\n"
               "event: response.content_part.added\ndata: {\"type\":"
               "\"response.content_part.added\",\"sequence_number\":2,\"item_id\":\"msg_"
               "preflight\","
               "\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":"
               "\"\",\"annotations\":[]}}\n\n"
               "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
               "\"sequence_number\":3,\"item_id\":\"msg_preflight\",\"output_index\":0,"
               "\"content_index\":0,\"delta\":\"ok\"}\n\n"
               "event: response.completed\ndata: {\"type\":\"response.completed\","
               "\"sequence_number\":4,\"response\":{\"id\":\"resp_preflight\",\"object\":"
               "\"response\",\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":"
               "\"max_output_tokens\"},\"output\":[{\"type\":\"message\",\"id\":\"msg_preflight\","
               "\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"ok\","
               "\"annotations\":[]}]}],\"usage\":{\"input_tokens\":1,\"output_tokens\":1,"
               "\"total_tokens\":2}}}\n\n";
    return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"
           "\"msg_preflight\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],"
           "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
           "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
           "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
           "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
           "\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"
           "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
           "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
           "\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n"
           "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}
