#include "mock_api.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mock_api_fail(char *err, size_t errlen, const char *fmt, const char *field) {
    snprintf(err, errlen, fmt, field);
    return 400;
}

/* An optional non-negative integer field; absent or null leaves *present false. */
static int mock_api_uint(json_t *root, const char *field, uint32_t min, uint32_t *out,
                         bool *present, char *err, size_t errlen) {
    json_t *v = json_object_get(root, field);
    *present = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min ||
        json_integer_value(v) > (json_int_t)UINT32_MAX) {
        snprintf(err, errlen, "'%s' must be an integer >= %u", field, min);
        return 400;
    }
    *out = (uint32_t)json_integer_value(v);
    *present = true;
    return 0;
}

static int mock_api_bool(json_t *root, const char *field, bool *out, char *err, size_t errlen) {
    json_t *v = json_object_get(root, field);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return mock_api_fail(err, errlen, "'%s' must be a boolean", field);
    *out = json_is_true(v);
    return 0;
}

static int mock_api_add_text(mock_api_request_t *out, json_t *text, char *err, size_t errlen) {
    if (mock_tokens_add_text(&out->prompt, json_string_value(text), json_string_length(text)) < 0)
        return mock_api_fail(err, errlen, "%s", "out of memory tokenizing the prompt");
    return 0;
}

/* A message content: a string, null, or an array of parts whose "text" parts count. */
static int mock_api_add_content(mock_api_request_t *out, json_t *content, size_t index, char *err,
                                size_t errlen) {
    if (!content || json_is_null(content))
        return 0;
    if (json_is_string(content))
        return mock_api_add_text(out, content, err, errlen);
    if (!json_is_array(content)) {
        snprintf(err, errlen, "'messages[%zu].content' must be a string or an array of parts",
                 index);
        return 400;
    }
    size_t i;
    json_t *part;
    json_array_foreach(content, i, part) {
        json_t *text = json_object_get(part, "text");
        if (json_is_string(text) && mock_api_add_text(out, text, err, errlen))
            return 400;
        json_t *result = json_object_get(part, "content"); /* Messages' tool_result block */
        if (json_is_string(result) && mock_api_add_text(out, result, err, errlen))
            return 400;
    }
    return 0;
}

static int mock_api_parse_messages(json_t *root, mock_api_request_t *out, char *err,
                                   size_t errlen) {
    json_t *messages = json_object_get(root, "messages");
    if (!json_is_array(messages) || json_array_size(messages) == 0)
        return mock_api_fail(err, errlen, "%s",
                             "'messages' is required and must be a non-empty array");
    size_t i;
    json_t *message;
    json_array_foreach(messages, i, message) {
        if (!json_is_object(message)) {
            snprintf(err, errlen, "'messages[%zu]' must be an object", i);
            return 400;
        }
        if (mock_api_add_content(out, json_object_get(message, "content"), i, err, errlen))
            return 400;
    }
    return 0;
}

/* The tools array counts as prompt, ahead of the messages as a chat template renders it: each
 * function's description (names and schemas are left out): chat nests it under "function",
 * Messages and Responses do not. */
static int mock_api_parse_tools(json_t *root, mock_api_request_t *out, char *err, size_t errlen) {
    size_t i;
    json_t *tool;
    json_array_foreach(json_object_get(root, "tools"), i, tool) {
        json_t *function = json_object_get(tool, "function");
        json_t *text = json_object_get(function ? function : tool, "description");
        if (json_is_string(text) && mock_api_add_text(out, text, err, errlen))
            return 400;
    }
    return 0;
}

/* A system prompt apart from the messages (Messages' "system", Responses' "instructions"): a
 * string or an array of text blocks. */
static int mock_api_parse_system(json_t *root, const char *field, mock_api_request_t *out,
                                 char *err, size_t errlen) {
    json_t *system = json_object_get(root, field);
    if (!system || json_is_null(system) || json_is_array(system))
        return mock_api_add_content(out, system, 0, err, errlen);
    if (!json_is_string(system))
        return mock_api_fail(err, errlen, "'%s' must be a string or an array of text blocks",
                             field);
    return mock_api_add_text(out, system, err, errlen);
}

/* Responses' "input": a string, or items (messages with a string or parts, function call
 * outputs, function calls). */
static int mock_api_parse_input(json_t *root, mock_api_request_t *out, char *err, size_t errlen) {
    json_t *input = json_object_get(root, "input");
    if (json_is_string(input))
        return mock_api_add_text(out, input, err, errlen);
    if (!json_is_array(input) || json_array_size(input) == 0)
        return mock_api_fail(err, errlen, "%s",
                             "'input' is required: a string or a non-empty array of items");
    size_t i;
    json_t *item;
    json_array_foreach(input, i, item) {
        if (!json_is_object(item)) {
            snprintf(err, errlen, "'input[%zu]' must be an object", i);
            return 400;
        }
        json_t *output = json_object_get(item, "output");
        if (json_is_string(output) && mock_api_add_text(out, output, err, errlen))
            return 400;
        if (mock_api_add_content(out, json_object_get(item, "content"), i, err, errlen))
            return 400;
    }
    return 0;
}

static int mock_api_parse_prompt(json_t *root, mock_api_request_t *out, char *err, size_t errlen);

/* What each API sends besides the common fields: its messages (or input, or prompt), tools and
 * system prompt. */
static int mock_api_parse_history(json_t *root, mock_api_request_t *out, char *err, size_t errlen) {
    switch (out->kind) {
    case MOCK_API_CHAT:
        return mock_api_parse_tools(root, out, err, errlen)
                   ? 400
                   : mock_api_parse_messages(root, out, err, errlen);
    case MOCK_API_MESSAGES:
        if (!out->has_max_tokens) /* Anthropic requires it */
            return mock_api_fail(err, errlen, "%s", "max_tokens: Field required");
        return mock_api_parse_tools(root, out, err, errlen) ||
                       mock_api_parse_system(root, "system", out, err, errlen)
                   ? 400
                   : mock_api_parse_messages(root, out, err, errlen);
    case MOCK_API_RESPONSES:
        return mock_api_parse_tools(root, out, err, errlen) ||
                       mock_api_parse_system(root, "instructions", out, err, errlen)
                   ? 400
                   : mock_api_parse_input(root, out, err, errlen);
    default:
        return mock_api_parse_prompt(root, out, err, errlen);
    }
}

/* A prompt: a string, one string in an array, or token ids (one array of integers). */
static int mock_api_parse_prompt(json_t *root, mock_api_request_t *out, char *err, size_t errlen) {
    json_t *prompt = json_object_get(root, "prompt");
    if (json_is_array(prompt) && json_array_size(prompt) == 1 &&
        !json_is_integer(json_array_get(prompt, 0)))
        prompt = json_array_get(prompt, 0);
    if (json_is_string(prompt))
        return mock_api_add_text(out, prompt, err, errlen);
    if (json_is_array(prompt) && json_array_size(prompt) > 0) {
        size_t i;
        json_t *id;
        json_array_foreach(prompt, i, id) {
            if (!json_is_integer(id))
                return mock_api_fail(err, errlen, "%s",
                                     "'prompt' must be a string or one list of token ids (the "
                                     "mock serves one prompt per request)");
            uint64_t value = (uint64_t)json_integer_value(id);
            if (mock_tokens_push(&out->prompt, mock_tokens_word_id((char *)&value, 8)) < 0)
                return mock_api_fail(err, errlen, "%s", "out of memory");
        }
        return 0;
    }
    return mock_api_fail(err, errlen, "%s",
                         "'prompt' is required: a string or a list of token ids");
}

static int mock_api_parse_fields(json_t *root, mock_api_request_t *out, char *err, size_t errlen) {
    if (!json_is_object(root))
        return mock_api_fail(err, errlen, "%s", "the request body must be a JSON object");
    json_t *model = json_object_get(root, "model");
    if (model && !json_is_null(model)) {
        if (!json_is_string(model))
            return mock_api_fail(err, errlen, "'%s' must be a string", "model");
        snprintf(out->model, sizeof(out->model), "%s", json_string_value(model));
    }
    if (mock_api_bool(root, "stream", &out->stream, err, errlen) ||
        mock_api_bool(root, "ignore_eos", &out->ignore_eos, err, errlen))
        return 400;
    json_t *options = json_object_get(root, "stream_options");
    if (options && !json_is_null(options)) {
        if (!json_is_object(options))
            return mock_api_fail(err, errlen, "'%s' must be an object", "stream_options");
        if (mock_api_bool(options, "include_usage", &out->include_usage, err, errlen) ||
            mock_api_bool(options, "continuous_usage_stats", &out->continuous_usage, err, errlen))
            return 400;
    }
    bool present;
    uint32_t n = 1;
    if (mock_api_uint(root, "n", 1, &n, &present, err, errlen))
        return 400;
    if (n != 1)
        return mock_api_fail(err, errlen, "%s", "'n' must be 1 (the mock returns one choice)");
    if (mock_api_uint(root, "max_tokens", 1, &out->max_tokens, &out->has_max_tokens, err, errlen))
        return 400;
    uint32_t max_completion;
    if (mock_api_uint(root, "max_completion_tokens", 1, &max_completion, &present, err, errlen))
        return 400;
    if (present) { /* OpenAI's newer name wins, as in vLLM */
        out->max_tokens = max_completion;
        out->has_max_tokens = true;
    }
    if (out->kind == MOCK_API_RESPONSES &&
        mock_api_uint(root, "max_output_tokens", 1, &out->max_tokens, &out->has_max_tokens, err,
                      errlen))
        return 400;
    if (mock_api_uint(root, "min_tokens", 0, &out->min_tokens, &present, err, errlen))
        return 400;
    return mock_api_parse_history(root, out, err, errlen);
}

int mock_api_parse(mock_api_kind_t kind, const char *body, size_t len, mock_api_request_t *out,
                   char *err, size_t errlen) {
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    mock_tokens_init(&out->prompt);
    json_error_t jerr;
    json_t *root = json_loadb(body, len, 0, &jerr);
    if (!root) {
        snprintf(err, errlen, "invalid JSON in the request body at line %d, column %d: %s",
                 jerr.line, jerr.column, jerr.text);
        return 400;
    }
    int status = mock_api_parse_fields(root, out, err, errlen);
    json_decref(root);
    if (status)
        mock_api_request_clear(out);
    return status;
}

void mock_api_request_clear(mock_api_request_t *self) {
    mock_tokens_clear(&self->prompt);
}

static const char *mock_api_error_type(int status) {
    switch (status) {
    case 400:
        return "BadRequestError";
    case 401:
        return "AuthenticationError";
    case 403:
        return "PermissionDeniedError";
    case 404:
        return "NotFoundError";
    case 413:
        return "RequestTooLargeError";
    case 429:
        return "RateLimitError";
    case 503:
        return "ServiceUnavailableError";
    default:
        return status < 500 ? "BadRequestError" : "InternalServerError";
    }
}

static int mock_api_dump(buffer_t *out, json_t *value) {
    if (!value)
        return -1;
    char *text = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(value);
    if (!text)
        return -1;
    int rc = buffer_append(out, text, strlen(text));
    free(text);
    return rc;
}

int mock_api_error_body(buffer_t *out, int status, const char *message, bool flat) {
    if (flat)
        return mock_api_dump(out, json_pack("{s:s, s:s, s:s, s:n, s:i}", "object", "error",
                                            "message", message, "type", mock_api_error_type(status),
                                            "param", "code", status));
    return mock_api_dump(out,
                         json_pack("{s:{s:s, s:s, s:n, s:i}}", "error", "message", message, "type",
                                   mock_api_error_type(status), "param", "code", status));
}

int mock_api_anthropic_error_body(buffer_t *out, int status, const char *message) {
    const char *type = status == 400   ? "invalid_request_error"
                       : status == 401 ? "authentication_error"
                       : status == 403 ? "permission_error"
                       : status == 404 ? "not_found_error"
                       : status == 413 ? "request_too_large"
                       : status == 429 ? "rate_limit_error"
                       : status == 529 ? "overloaded_error"
                       : status < 500  ? "invalid_request_error"
                                       : "api_error";
    return mock_api_dump(out, json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
                                        type, "message", message));
}

int mock_api_models_body(buffer_t *out, const char *model, uint32_t max_model_len,
                         long long created) {
    json_t *entry = json_pack("{s:s, s:s, s:I, s:s, s:s, s:n, s:i, s:[]}", "id", model, "object",
                              "model", "created", (json_int_t)created, "owned_by", "vllm", "root",
                              model, "parent", "max_model_len", (int)max_model_len, "permission");
    return mock_api_dump(out, json_pack("{s:s, s:[o]}", "object", "list", "data", entry));
}
