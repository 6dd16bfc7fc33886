#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <jansson.h>
#include <string.h>

#include "body.h"
#include "rng.h"

/* Each test's body, initialised before it and freed after it (cmocka's setup and teardown). */
static int body_setup(void **state) {
    body_t *body = malloc(sizeof *body);
    assert_non_null(body);
    body_init(body);
    *state = body;
    return 0;
}

static int body_teardown(void **state) {
    body_free(*state);
    free(*state);
    return 0;
}

#define BODY_TEST(f) cmocka_unit_test_setup_teardown(f, body_setup, body_teardown)

/* Options of a streamed request of api to model, limited to max_tokens. */
static body_options_t streamed_options(config_api_t api, const char *model, uint32_t max_tokens) {
    body_options_t o = {.api = api, .model = model, .max_tokens = max_tokens, .stream = true};
    return o;
}

static body_options_t chat_options(void) {
    return streamed_options(API_CHAT, "m\"odel", 128);
}

static json_t *parse(const body_t *body) {
    json_error_t err;
    json_t *root = json_loadb(body->data, body->len, JSON_ALLOW_NUL, &err);
    if (!root)
        fail_msg("body is not JSON (%s at %d): %.*s", err.text, err.position, (int)body->len,
                 body->data);
    return root;
}

static void assert_json_string(json_t *value, const char *expected, size_t len) {
    assert_true(json_is_string(value));
    if (json_string_length(value) != len || memcmp(json_string_value(value), expected, len) != 0)
        fail_msg("string differs: got %zu bytes '%s', expected %zu bytes '%s'",
                 json_string_length(value), json_string_value(value), len, expected);
}

static const char tricky_reply[] = "He said \"hi\\there\"\nline2\r\n\ttab \b\f\x01\x1f\x7f end";
static const char utf8_text[] = "h\xc3\xa9llo \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac "
                                "\xf0\x9f\x9a\x80 \xe2\x80\xa8 \xef\xbf\xbf";

static void test_body_chat_round_trips_every_message_through_jansson(void **state) {
    body_t *body = *state;
    body_options_t o = chat_options();
    body_begin(body, &o);
    body_add(body, "system", "You are a scaffold.", 19);
    body_add(body, "user", "first question", 14);
    body_add(body, "assistant", tricky_reply, sizeof tricky_reply - 1);
    body_add(body, "user", utf8_text, sizeof utf8_text - 1);
    assert_int_equal(body_end(body), 0);
    assert_int_equal(strlen(body->data), body->len);

    json_t *root = parse(body);
    assert_json_string(json_object_get(root, "model"), "m\"odel", 6);
    json_t *messages = json_object_get(root, "messages");
    assert_int_equal(json_array_size(messages), 4);
    const char *roles[] = {"system", "user", "assistant", "user"};
    const char *texts[] = {"You are a scaffold.", "first question", tricky_reply, utf8_text};
    size_t lens[] = {19, 14, sizeof tricky_reply - 1, sizeof utf8_text - 1};
    for (size_t i = 0; i < 4; i++) {
        json_t *m = json_array_get(messages, i);
        assert_json_string(json_object_get(m, "role"), roles[i], strlen(roles[i]));
        assert_json_string(json_object_get(m, "content"), texts[i], lens[i]);
    }
    assert_int_equal(json_integer_value(json_object_get(root, "max_tokens")), 128);
    assert_true(json_is_true(json_object_get(root, "stream")));
    assert_true(
        json_is_true(json_object_get(json_object_get(root, "stream_options"), "include_usage")));
    assert_null(json_object_get(root, "ignore_eos"));
    assert_null(json_object_get(root, "min_tokens"));
    json_decref(root);
}

static void test_body_keeps_nul_bytes_of_a_reply(void **state) {
    body_t *body = *state;
    static const char reply[] = "a\0b\0";
    body_options_t o = chat_options();
    body_begin(body, &o);
    body_add(body, "assistant", reply, 4);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    assert_json_string(
        json_object_get(json_array_get(json_object_get(root, "messages"), 0), "content"), reply, 4);
    json_decref(root);
}

static void test_body_replaces_each_invalid_utf8_byte_with_u_fffd(void **state) {
    body_t *body = *state;
    /* lone continuation, overlong '/', a UTF-16 surrogate, a truncated 3-byte sequence, 0xFF */
    static const char bad[] = "a\x80"
                              "b\xc0\xaf"
                              "c\xed\xa0\x80"
                              "d\xe6\x97"
                              "e\xff";
    static const char expected[] = "a\xef\xbf\xbd"
                                   "b\xef\xbf\xbd\xef\xbf\xbd"
                                   "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                   "d\xef\xbf\xbd\xef\xbf\xbd"
                                   "e\xef\xbf\xbd";
    body_options_t o = chat_options();
    body_begin(body, &o);
    body_add(body, "user", bad, sizeof bad - 1);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    assert_json_string(
        json_object_get(json_array_get(json_object_get(root, "messages"), 0), "content"), expected,
        sizeof expected - 1);
    json_decref(root);
}

static void test_body_completions_joins_the_texts_into_one_prompt(void **state) {
    body_t *body = *state;
    body_options_t o = streamed_options(API_COMPLETIONS, "llama", 7);
    o.ignore_eos = true;
    o.min_tokens = true;
    body_begin(body, &o);
    body_add(body, "system", "sys words", 9);
    body_add(body, "user", "ask", 3);
    body_add(body, "assistant", tricky_reply, sizeof tricky_reply - 1);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    char expected[256];
    int n = snprintf(expected, sizeof expected, "sys words\nask\n%s", tricky_reply);
    assert_json_string(json_object_get(root, "prompt"), expected, (size_t)n);
    assert_null(json_object_get(root, "messages"));
    assert_int_equal(json_integer_value(json_object_get(root, "max_tokens")), 7);
    assert_true(json_is_true(json_object_get(root, "ignore_eos")));
    assert_int_equal(json_integer_value(json_object_get(root, "min_tokens")), 7);
    assert_true(json_is_true(json_object_get(root, "stream")));
    json_decref(root);
}

/* target.max_tokens_param: max_completion_tokens names the limit so, and only so. */
static void test_body_max_completion_tokens_names_the_limit(void **state) {
    body_t *body = *state;
    body_options_t o = {
        .api = API_CHAT, .model = "llama", .max_tokens = 9, .max_completion_tokens = true};
    body_begin(body, &o);
    body_add(body, "user", "ask", 3);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    assert_int_equal(json_integer_value(json_object_get(root, "max_completion_tokens")), 9);
    assert_null(json_object_get(root, "max_tokens"));
    json_decref(root);
}

static void test_body_without_stream_asks_for_no_stream_options(void **state) {
    body_t *body = *state;
    body_options_t o = chat_options();
    o.stream = false;
    body_begin(body, &o);
    body_add(body, "user", "x", 1);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    assert_true(json_is_false(json_object_get(root, "stream")));
    assert_null(json_object_get(root, "stream_options"));
    json_decref(root);
}

static void test_body_buffer_is_reused_and_fully_rewritten(void **state) {
    body_t *body = *state;
    static char big[100000];
    memset(big, 'w', sizeof big);
    body_options_t o = chat_options();
    body_begin(body, &o);
    body_add(body, "user", big, sizeof big);
    assert_int_equal(body_end(body), 0);
    char *data = body->data;
    size_t cap = body->cap;
    assert_true(cap >= sizeof big);
    body_begin(body, &o);
    body_add(body, "user", "small", 5);
    assert_int_equal(body_end(body), 0);
    assert_ptr_equal(body->data, data);
    assert_int_equal(body->cap, cap);
    json_t *root = parse(body);
    assert_json_string(
        json_object_get(json_array_get(json_object_get(root, "messages"), 0), "content"), "small",
        5);
    json_decref(root);
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static void test_body_random_valid_utf8_round_trips_and_random_bytes_stay_json(void **state) {
    body_t *body = *state;
    rng_t rng;
    rng_init(&rng, 42, RNG_STREAM_TEST, 0, 0, 0);
    body_options_t o = chat_options();
    for (int round = 0; round < 2000; round++) {
        char text[512];
        size_t len = 0;
        size_t n = rng_next_below(&rng, 100);
        bool raw = round % 2 == 1; /* odd rounds: arbitrary bytes, possibly invalid UTF-8 */
        for (size_t i = 0; i < n; i++) {
            if (raw) {
                text[len++] = (char)rng_next_below(&rng, 256);
                continue;
            }
            uint32_t cp;
            do
                cp = (uint32_t)rng_next_below(&rng, rng_next_below(&rng, 2) ? 0x80 : 0x110000);
            while (cp >= 0xD800 && cp <= 0xDFFF);
            len += put_utf8(text + len, cp);
        }
        body_begin(body, &o);
        body_add(body, "assistant", text, len);
        assert_int_equal(body_end(body), 0);
        json_t *root = parse(body);
        json_t *content =
            json_object_get(json_array_get(json_object_get(root, "messages"), 0), "content");
        assert_true(json_is_string(content));
        if (!raw)
            assert_json_string(content, text, len);
        json_decref(root);
    }
}

/* A session's history in the Messages shape: the system prompt apart, the tool call an assistant
 * tool_use block, its answer a user tool_result block, the limit max_tokens, no stream_options. */
static void test_body_messages_puts_the_system_apart_and_tools_in_blocks(void **state) {
    body_t *body = *state;
    body_options_t o = streamed_options(API_MESSAGES, "claude", 64);
    o.max_completion_tokens = true; /* chat's name only: Messages keeps its own */
    o.thinking_tokens = 1024;
    o.tools_json = "[{\"name\":\"tool_0\"}]";
    o.tools_len = 19;
    body_begin(body, &o);
    body_add(body, "system", "be brief", 8);
    body_add(body, "user", "hi", 2);
    body_add_tool_call(body, "calling", 7, "call_1", "tool_0");
    body_add_tool_result(body, "call_1", "42", 2);
    body_add(body, "user", tricky_reply, sizeof tricky_reply - 1);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    assert_json_string(json_object_get(root, "system"), "be brief", 8);
    assert_int_equal(json_integer_value(json_object_get(root, "max_tokens")), 64);
    assert_null(json_object_get(root, "max_completion_tokens"));
    assert_null(json_object_get(root, "stream_options"));
    assert_true(json_is_true(json_object_get(root, "stream")));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(root, "thinking"), "budget_tokens")),
        1024);
    json_t *messages = json_object_get(root, "messages");
    assert_int_equal(json_array_size(messages), 4);
    json_t *call = json_object_get(json_array_get(messages, 1), "content");
    assert_string_equal(json_string_value(json_object_get(json_array_get(call, 0), "type")),
                        "text");
    json_t *use = json_array_get(call, 1);
    assert_string_equal(json_string_value(json_object_get(use, "type")), "tool_use");
    assert_string_equal(json_string_value(json_object_get(use, "id")), "call_1");
    json_t *result = json_array_get(json_object_get(json_array_get(messages, 2), "content"), 0);
    assert_string_equal(json_string_value(json_object_get(json_array_get(messages, 2), "role")),
                        "user");
    assert_string_equal(json_string_value(json_object_get(result, "tool_use_id")), "call_1");
    assert_json_string(json_object_get(json_array_get(messages, 3), "content"), tricky_reply,
                       sizeof tricky_reply - 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(root, "tools"), 0), "name")),
                        "tool_0");
    json_decref(root);
}

/* The Responses shape: instructions, input items (a function_call and its function_call_output),
 * max_output_tokens, previous_response_id. */
static void test_body_responses_writes_instructions_input_and_function_items(void **state) {
    body_t *body = *state;
    body_options_t o = streamed_options(API_RESPONSES, "gpt", 32);
    o.previous_response_id = "resp_1";
    body_begin(body, &o);
    body_add(body, "system", "be brief", 8);
    body_add(body, "user", "hi", 2);
    body_add_tool_call(body, "", 0, "call_1", "tool_0");
    body_add_tool_result(body, "call_1", "42", 2);
    assert_int_equal(body_end(body), 0);
    json_t *root = parse(body);
    assert_json_string(json_object_get(root, "instructions"), "be brief", 8);
    assert_string_equal(json_string_value(json_object_get(root, "previous_response_id")), "resp_1");
    assert_int_equal(json_integer_value(json_object_get(root, "max_output_tokens")), 32);
    assert_null(json_object_get(root, "max_tokens"));
    assert_null(json_object_get(root, "stream_options"));
    json_t *input = json_object_get(root, "input");
    assert_int_equal(json_array_size(input), 3); /* an empty reply adds no message item */
    assert_string_equal(json_string_value(json_object_get(json_array_get(input, 1), "type")),
                        "function_call");
    assert_string_equal(json_string_value(json_object_get(json_array_get(input, 2), "type")),
                        "function_call_output");
    assert_string_equal(json_string_value(json_object_get(json_array_get(input, 2), "output")),
                        "42");
    json_decref(root);
}

UNIT_MAIN(BODY_TEST(test_body_chat_round_trips_every_message_through_jansson),
          BODY_TEST(test_body_keeps_nul_bytes_of_a_reply),
          BODY_TEST(test_body_replaces_each_invalid_utf8_byte_with_u_fffd),
          BODY_TEST(test_body_completions_joins_the_texts_into_one_prompt),
          BODY_TEST(test_body_max_completion_tokens_names_the_limit),
          BODY_TEST(test_body_without_stream_asks_for_no_stream_options),
          BODY_TEST(test_body_buffer_is_reused_and_fully_rewritten),
          BODY_TEST(test_body_random_valid_utf8_round_trips_and_random_bytes_stay_json),
          BODY_TEST(test_body_messages_puts_the_system_apart_and_tools_in_blocks),
          BODY_TEST(test_body_responses_writes_instructions_input_and_function_items))
