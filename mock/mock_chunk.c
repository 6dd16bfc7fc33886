#include "mock_chunk.h"

#include <stdio.h>
#include <string.h>

#define PUT(p, literal) (memcpy((p), (literal), sizeof(literal) - 1), (p) + sizeof(literal) - 1)

char *mock_chunk_put_u64(char *p, uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

void mock_chunk_head_init(mock_chunk_head_t *self, mock_api_kind_t kind, const char *id,
                          long long created, const char *model_json) {
    self->kind = kind;
    snprintf(self->id, sizeof self->id, "%s", id);
    snprintf(self->model_json, sizeof self->model_json, "%s", model_json);
    self->created = created;
    self->sequence = 0;
    self->block = 0;
    self->reasoning = false;
    int n = snprintf(self->text, sizeof(self->text),
                     "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":\"%s\","
                     "\"choices\":[",
                     id, kind == MOCK_API_CHAT ? "chat.completion.chunk" : "text_completion",
                     created, model_json);
    self->len = n < 0 ? 0 : (size_t)n < sizeof(self->text) ? (size_t)n : sizeof(self->text) - 1;
}

size_t mock_chunk_max_bytes(const mock_chunk_head_t *head, size_t word_len) {
    return head->len + word_len + 400;
}

static char *mock_chunk_usage_object(char *p, const mock_chunk_usage_t *u) {
    p = PUT(p, "{\"prompt_tokens\":");
    p = mock_chunk_put_u64(p, u->prompt_tokens);
    p = PUT(p, ",\"completion_tokens\":");
    p = mock_chunk_put_u64(p, u->completion_tokens);
    p = PUT(p, ",\"total_tokens\":");
    p = mock_chunk_put_u64(p, (uint64_t)u->prompt_tokens + u->completion_tokens);
    p = PUT(p, ",\"prompt_tokens_details\":{\"cached_tokens\":");
    p = mock_chunk_put_u64(p, u->cached_tokens);
    return PUT(p, "}}");
}

static char *mock_chunk_tail(char *p, int64_t sent_ns) {
    if (sent_ns >= 0) {
        p = PUT(p, ",\"sent_ns\":");
        p = mock_chunk_put_u64(p, (uint64_t)sent_ns);
    }
    return PUT(p, "}\n\n");
}

static char *mock_chunk_start(char *p, const mock_chunk_head_t *head) {
    memcpy(p, head->text, head->len);
    return p + head->len;
}

char *mock_chunk_role(char *p, const mock_chunk_head_t *head, int64_t sent_ns) {
    p = mock_chunk_start(p, head);
    p = PUT(p, "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
               "\"finish_reason\":null}]");
    return mock_chunk_tail(p, sent_ns);
}

char *mock_chunk_token_open(char *p, const mock_chunk_head_t *head, bool reasoning) {
    p = mock_chunk_start(p, head);
    if (head->kind == MOCK_API_CHAT)
        return reasoning ? PUT(p, "{\"index\":0,\"delta\":{\"reasoning_content\":\"")
                         : PUT(p, "{\"index\":0,\"delta\":{\"content\":\"");
    return PUT(p, "{\"index\":0,\"text\":\"");
}

char *mock_chunk_token_close(char *p, const mock_chunk_head_t *head, const char *finish,
                             const mock_chunk_usage_t *usage, int64_t sent_ns) {
    p = head->kind == MOCK_API_CHAT ? PUT(p, "\"},\"logprobs\":null,\"finish_reason\":")
                                    : PUT(p, "\",\"logprobs\":null,\"finish_reason\":");
    if (finish) {
        *p++ = '"';
        size_t n = strlen(finish);
        memcpy(p, finish, n);
        p += n;
        p = PUT(p, "\",\"stop_reason\":null}]");
    } else {
        p = head->kind == MOCK_API_CHAT ? PUT(p, "null}]") : PUT(p, "null,\"stop_reason\":null}]");
    }
    if (usage) {
        p = PUT(p, ",\"usage\":");
        p = mock_chunk_usage_object(p, usage);
    }
    return mock_chunk_tail(p, sent_ns);
}

char *mock_chunk_usage(char *p, const mock_chunk_head_t *head, const mock_chunk_usage_t *usage,
                       int64_t sent_ns) {
    p = mock_chunk_start(p, head);
    p = PUT(p, "],\"usage\":");
    p = mock_chunk_usage_object(p, usage);
    return mock_chunk_tail(p, sent_ns);
}

char *mock_chunk_malformed(char *p, const mock_chunk_head_t *head) {
    p = mock_chunk_start(p, head);
    return PUT(p, "{\"index\":0,\"delta\":{\"content\n\n");
}

char *mock_chunk_truncated(char *p, const mock_chunk_head_t *head) {
    p = mock_chunk_start(p, head);
    return PUT(p, "{\"index\":0,\"delta\":{\"con");
}

char *mock_chunk_error_event(char *p) {
    return PUT(p, "event: error\ndata: {\"error\":{\"object\":\"error\",\"message\":"
                  "\"simulated engine error (--faults event-error)\",\"type\":"
                  "\"InternalServerError\",\"param\":null,\"code\":500}}\n\n");
}

char *mock_chunk_done(char *p) {
    return PUT(p, "data: [DONE]\n\n");
}
