/* The request bodies the simulated server accepts (OpenAI chat completions, completions and
 * Responses, Anthropic Messages; parsed with jansson once per request) and its non-streaming
 * response bodies: vLLM's error object, Anthropic's, the model list. */
#ifndef STAMPEDE_MOCK_API_H
#define STAMPEDE_MOCK_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "mock_tokens.h"

typedef enum mock_api_kind {
    MOCK_API_CHAT,        /* POST /v1/chat/completions */
    MOCK_API_COMPLETIONS, /* POST /v1/completions */
    MOCK_API_MESSAGES,    /* POST /v1/messages (Anthropic) */
    MOCK_API_RESPONSES,   /* POST /v1/responses (OpenAI Responses) */
} mock_api_kind_t;

/* What the simulation needs from one request body. */
typedef struct mock_api_request {
    mock_api_kind_t kind;
    bool stream;
    bool include_usage;    /* stream_options.include_usage */
    bool continuous_usage; /* stream_options.continuous_usage_stats (vLLM) */
    bool has_max_tokens;   /* max_tokens, max_completion_tokens or max_output_tokens given */
    uint32_t max_tokens;
    uint32_t min_tokens;
    bool ignore_eos;
    char model[256];      /* "" when absent */
    mock_tokens_t prompt; /* one id per whitespace-separated word of every message or prompt */
} mock_api_request_t;

/* Parses a request body. 0 ok (out->prompt is owned by the caller: mock_api_request_clear);
 * otherwise the HTTP status to answer (400) with a message naming the field in err. */
int mock_api_parse(mock_api_kind_t kind, const char *body, size_t len, mock_api_request_t *out,
                   char *err, size_t errlen);
/* Frees what mock_api_parse allocated. */
void mock_api_request_clear(mock_api_request_t *self);

/* The error body current OpenAI and vLLM send, {"error": {"message", "type", "param": null,
 * "code": status}}; flat: older vLLM's {"object":"error","message",...} (--flat-errors), which
 * some proxies still expect. */
int mock_api_error_body(buffer_t *out, int status, const char *message, bool flat);
/* Anthropic's error body, {"type": "error", "error": {"type", "message"}}, its type named by
 * the status (400 invalid_request_error ... 529 overloaded_error). */
int mock_api_anthropic_error_body(buffer_t *out, int status, const char *message);
/* The /v1/models list with one model. */
int mock_api_models_body(buffer_t *out, const char *model, uint32_t max_model_len,
                         long long created);

#endif
