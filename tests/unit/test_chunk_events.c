/* The Anthropic Messages and OpenAI Responses event parsers (common/chunk_messages.c,
 * common/chunk_responses.c): each event type gives the fields the stream counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chunk.h"
#include "chunk_case.h"
#include "record.h"
#include "unit_main.h"

static int parse(chunk_case_parse_fn fn, const char *json, chunk_info_t *out) {
    return chunk_case_parse(fn, json, strlen(json), out);
}

static bool is_token(const chunk_info_t *i) {
    return i->has_content || i->has_reasoning || i->has_tool_calls || i->has_refusal;
}

/* A structure event: no token, no usage, no error, and the reply goes on. */
static void assert_carries_nothing(const chunk_info_t *i, const char *event) {
    if (is_token(i) || i->has_usage || i->has_error || i->done)
        fail_msg("%s: token %d, usage %d, error %d, done %d; expected none of them", event,
                 is_token(i), i->has_usage, i->has_error, i->done);
}

static void test_messages_message_start_gives_prompt_with_the_cache_and_no_token(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(
        parse(chunk_messages_parse,
              "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
              "\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,"
              "\"usage\":{\"input_tokens\":20,\"cache_creation_input_tokens\":4,"
              "\"cache_read_input_tokens\":64,\"output_tokens\":1}}}",
              &i),
        0);
    assert_true(i.has_usage);
    assert_int_equal(i.usage_fields,
                     CHUNK_USAGE_PROMPT | CHUNK_USAGE_COMPLETION | CHUNK_USAGE_CACHED);
    assert_int_equal(i.prompt_tokens, 88); /* 20 + 4 + 64: input_tokens leaves the cache out */
    assert_int_equal(i.cached_tokens, 64);
    assert_int_equal(i.completion_tokens, 1);
    assert_false(is_token(&i));
    assert_false(i.done);
}

static void test_messages_each_delta_kind_is_its_kind_of_token(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                           "\"thinking_delta\",\"thinking\":\"Let me\"}}",
                           &i),
                     0);
    assert_true(i.has_reasoning);
    assert_false(i.has_content);
    assert_raw(i.reasoning, i.reasoning_len, "Let me");
    /* keys in another order: the delta before the type */
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"delta\":{\"text\":\"Hi \\\"x\\\"\",\"type\":\"text_delta\"},"
                           "\"index\":1,\"type\":\"content_block_delta\"}",
                           &i),
                     0);
    assert_true(i.has_content);
    assert_raw(i.content, i.content_len, "Hi \\\"x\\\"");
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":"
                           "\"input_json_delta\",\"partial_json\":\"{\\\"loc\"}}",
                           &i),
                     0);
    assert_true(i.has_tool_calls);
    assert_false(i.has_content);
    /* the first input_json_delta of a block is often empty: no token */
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":"
                           "\"input_json_delta\",\"partial_json\":\"\"}}",
                           &i),
                     0);
    assert_false(is_token(&i));
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                           "\"signature_delta\",\"signature\":\"EqQB\"}}",
                           &i),
                     0);
    assert_false(is_token(&i));
}

static void test_messages_structure_events_carry_no_token(void **state) {
    (void)state;
    static const char *const events[] = {
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
        "\"text\":\"\"}}",
        "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\","
        "\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}",
        "{\"type\":\"content_block_stop\",\"index\":0}",
        "{\"type\":\"ping\"}",
    };
    for (size_t k = 0; k < sizeof events / sizeof events[0]; k++) {
        chunk_info_t i;
        assert_int_equal(parse(chunk_messages_parse, events[k], &i), 0);
        assert_carries_nothing(&i, events[k]);
    }
}

static void test_messages_message_delta_and_stop_end_the_reply(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\","
                           "\"stop_sequence\":null},\"usage\":{\"output_tokens\":42}}",
                           &i),
                     0);
    assert_int_equal(finish_reason_parse(i.finish_reason, i.finish_reason_len), FINISH_LENGTH);
    assert_int_equal(i.usage_fields, CHUNK_USAGE_COMPLETION); /* the prompt's count stays */
    assert_int_equal(i.completion_tokens, 42);
    assert_false(i.done);
    assert_int_equal(parse(chunk_messages_parse, "{\"type\":\"message_stop\"}", &i), 0);
    assert_true(i.done);
    assert_int_equal(finish_reason_parse("tool_use", 8), FINISH_TOOL_CALLS);
    assert_int_equal(finish_reason_parse("end_turn", 8), FINISH_STOP);
}

static void test_messages_error_event_gives_its_message(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(parse(chunk_messages_parse,
                           "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                           "\"message\":\"Overloaded\"}}",
                           &i),
                     0);
    assert_true(i.has_error);
    assert_raw(i.error_message, i.error_message_len, "Overloaded");
    assert_int_equal(parse(chunk_messages_parse, "{\"type\":\"content_block_delta\",", &i), -1);
    assert_false(i.has_error);
}

static void test_responses_each_delta_kind_is_its_kind_of_token(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(parse(chunk_responses_parse,
                           "{\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\","
                           "\"output_index\":1,\"content_index\":0,\"delta\":\"Hello\","
                           "\"logprobs\":[],\"sequence_number\":7}",
                           &i),
                     0);
    assert_true(i.has_content);
    assert_raw(i.content, i.content_len, "Hello");
    static const char *const reasoning[] = {
        "{\"type\":\"response.reasoning_text.delta\",\"item_id\":\"rs_1\",\"delta\":\"hmm\"}",
        "{\"delta\":\"hmm\",\"type\":\"response.reasoning_summary_text.delta\",\"summary_index\":"
        "0}",
    };
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(parse(chunk_responses_parse, reasoning[k], &i), 0);
        assert_true(i.has_reasoning);
        assert_false(i.has_content);
        assert_raw(i.reasoning, i.reasoning_len, "hmm");
    }
    assert_int_equal(parse(chunk_responses_parse,
                           "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":"
                           "\"fc_1\",\"delta\":\"{\\\"a\\\":\"}",
                           &i),
                     0);
    assert_true(i.has_tool_calls);
    assert_int_equal(
        parse(chunk_responses_parse, "{\"type\":\"response.refusal.delta\",\"delta\":\"No\"}", &i),
        0);
    assert_true(i.has_refusal);
    static const char created[] = "{\"type\":\"response.created\",\"response\":{\"id\":"
                                  "\"resp_1\",\"status\":\"in_progress\",\"error\":null,"
                                  "\"usage\":null,\"output\":[]},\"sequence_number\":0}";
    assert_int_equal(parse(chunk_responses_parse, created, &i), 0);
    assert_carries_nothing(&i, created);
}

static void test_responses_completed_gives_usage_and_the_end(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(
        parse(chunk_responses_parse,
              "{\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":"
              "\"completed\",\"error\":null,\"incomplete_details\":null,\"output\":[{\"type\":"
              "\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello\"}]}],"
              "\"usage\":{\"input_tokens\":30,\"input_tokens_details\":{\"cached_tokens\":16},"
              "\"output_tokens\":5,\"output_tokens_details\":{\"reasoning_tokens\":0},"
              "\"total_tokens\":35}},\"sequence_number\":9}",
              &i),
        0);
    assert_true(i.done);
    assert_true(i.has_usage);
    assert_int_equal(i.prompt_tokens, 30); /* input_tokens counts the cached ones */
    assert_int_equal(i.cached_tokens, 16);
    assert_int_equal(i.completion_tokens, 5);
    assert_int_equal(finish_reason_parse(i.finish_reason, i.finish_reason_len), FINISH_STOP);
    assert_false(is_token(&i));
    assert_false(i.has_error);
    /* a function call in the output: tool_calls */
    assert_int_equal(parse(chunk_responses_parse,
                           "{\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":"
                           "\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}],\"usage\":"
                           "{\"input_tokens\":3,\"output_tokens\":2}}}",
                           &i),
                     0);
    assert_int_equal(finish_reason_parse(i.finish_reason, i.finish_reason_len), FINISH_TOOL_CALLS);
    assert_int_equal(parse(chunk_responses_parse,
                           "{\"type\":\"response.incomplete\",\"response\":{\"status\":"
                           "\"incomplete\",\"incomplete_details\":{\"reason\":"
                           "\"max_output_tokens\"},\"usage\":{\"input_tokens\":3,"
                           "\"output_tokens\":16}}}",
                           &i),
                     0);
    assert_true(i.done);
    assert_int_equal(finish_reason_parse(i.finish_reason, i.finish_reason_len), FINISH_LENGTH);
}

static void test_responses_failed_and_error_events_give_their_message(void **state) {
    (void)state;
    chunk_info_t i;
    assert_int_equal(parse(chunk_responses_parse,
                           "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\","
                           "\"error\":{\"code\":\"server_error\",\"message\":\"engine died\"}}}",
                           &i),
                     0);
    assert_true(i.has_error);
    assert_raw(i.error_message, i.error_message_len, "engine died");
    assert_false(i.done);
    assert_int_equal(parse(chunk_responses_parse,
                           "{\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":"
                           "\"slow down\",\"param\":null,\"sequence_number\":3}",
                           &i),
                     0);
    assert_true(i.has_error);
    assert_raw(i.error_message, i.error_message_len, "slow down");
}

UNIT_MAIN(cmocka_unit_test(test_messages_message_start_gives_prompt_with_the_cache_and_no_token),
          cmocka_unit_test(test_messages_each_delta_kind_is_its_kind_of_token),
          cmocka_unit_test(test_messages_structure_events_carry_no_token),
          cmocka_unit_test(test_messages_message_delta_and_stop_end_the_reply),
          cmocka_unit_test(test_messages_error_event_gives_its_message),
          cmocka_unit_test(test_responses_each_delta_kind_is_its_kind_of_token),
          cmocka_unit_test(test_responses_completed_gives_usage_and_the_end),
          cmocka_unit_test(test_responses_failed_and_error_events_give_their_message))
