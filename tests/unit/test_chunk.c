#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "chunk.h"
#include "chunk_case.h"
#include "chunk_same.h"
#include "record.h"
#include "sse.h"

/* The reply that the chat fixtures stream, token by token (tests/data/sse/make_fixtures.py). */
static const char fixture_reply[] = "Sure! Here is a \"quoted\" word,\na tab\there, café, naïve, "
                                    "日本語, 😀 and a backslash \\ done.";

static int parse_exact(const char *json, size_t len, chunk_info_t *out) {
    return chunk_case_parse(chunk_parse, json, len, out);
}

static chunk_info_t parse_ok(const char *json) {
    chunk_info_t info;
    int rc = parse_exact(json, strlen(json), &info);
    if (rc != 0)
        fail_msg("chunk_parse returned %d for %s", rc, json);
    return info;
}

/* Each payload is refused: -1, and out left all zero. */
static void assert_refused(const char *const *bad, size_t n) {
    for (size_t i = 0; i < n; i++) {
        chunk_info_t c;
        memset(&c, 0x5A, sizeof c);
        if (parse_exact(bad[i], strlen(bad[i]), &c) != -1)
            fail_msg("accepted malformed JSON #%zu: %s", i, bad[i]);
        chunk_info_t zero;
        memset(&zero, 0, sizeof zero);
        assert_memory_equal(&c, &zero, sizeof c);
    }
}

static void test_chunk_vllm_role_chunk_has_empty_content(void **state) {
    chunk_info_t c = parse_ok("{\"id\":\"chatcmpl-9f3c\",\"object\":\"chat.completion.chunk\","
                              "\"created\":1740000000,\"model\":\"Qwen/Qwen2.5-7B-Instruct\","
                              "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                              "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}");
    assert_false(c.done);
    assert_raw(c.content, c.content_len, "");
    assert_false(c.has_content);
    assert_null(c.finish_reason);
    assert_false(c.has_usage);
    assert_false(c.has_error);
    assert_false(c.has_sent_ns);
    assert_false(c.has_tool_calls);
    assert_false(c.has_reasoning);
}

static void test_chunk_vllm_content_chunk(void **state) {
    chunk_info_t c = parse_ok(
        "{\"id\":\"chatcmpl-9f3c\",\"object\":\"chat.completion.chunk\",\"created\":1740000000,"
        "\"model\":\"Qwen/Qwen2.5-7B-Instruct\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
        "\" \\\"quoted\\\"\"},\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}");
    assert_raw(c.content, c.content_len, " \\\"quoted\\\"");
    assert_true(c.has_content);
    assert_null(c.finish_reason);
}

static void test_chunk_vllm_finish_chunk(void **state) {
    chunk_info_t c = parse_ok("{\"id\":\"chatcmpl-9f3c\",\"object\":\"chat.completion.chunk\","
                              "\"created\":1740000000,\"model\":\"m\",\"choices\":[{\"index\":0,"
                              "\"delta\":{\"content\":\"\"},\"logprobs\":null,\"finish_reason\":"
                              "\"length\",\"stop_reason\":null}]}");
    assert_raw(c.finish_reason, c.finish_reason_len, "length");
    assert_false(c.has_content);
}

static void test_chunk_vllm_usage_chunk_with_cached_tokens(void **state) {
    chunk_info_t c = parse_ok("{\"id\":\"chatcmpl-9f3c\",\"object\":\"chat.completion.chunk\","
                              "\"created\":1740000000,\"model\":\"m\",\"choices\":[],\"usage\":{"
                              "\"prompt_tokens\":27,\"total_tokens\":50,\"completion_tokens\":23,"
                              "\"prompt_tokens_details\":{\"cached_tokens\":16}}}");
    assert_true(c.has_usage);
    assert_int_equal(c.prompt_tokens, 27);
    assert_int_equal(c.completion_tokens, 23);
    assert_int_equal(c.cached_tokens, 16);
    assert_null(c.content);
    assert_null(c.finish_reason);
}

static void test_chunk_sglang_nulls_are_absent_values(void **state) {
    chunk_info_t c = parse_ok(
        "{\"id\":\"6d1f\",\"object\":\"chat.completion.chunk\",\"created\":1740000000,\"model\":"
        "\"default\",\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":\"Sure\","
        "\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":null,"
        "\"matched_stop\":null}],\"usage\":null}");
    assert_raw(c.content, c.content_len, "Sure");
    assert_null(c.reasoning);
    assert_false(c.has_reasoning);
    assert_false(c.has_tool_calls);
    assert_false(c.has_usage);

    c = parse_ok("{\"id\":\"6d1f\",\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":"
                 "null,\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,"
                 "\"finish_reason\":\"stop\",\"matched_stop\":151645}],\"usage\":null}");
    assert_null(c.content);
    assert_false(c.has_content);
    assert_raw(c.finish_reason, c.finish_reason_len, "stop");

    c = parse_ok("{\"id\":\"6d1f\",\"choices\":[],\"usage\":{\"prompt_tokens\":27,"
                 "\"total_tokens\":33,\"completion_tokens\":6,\"prompt_tokens_details\":null}}");
    assert_true(c.has_usage);
    assert_int_equal(c.prompt_tokens, 27);
    assert_int_equal(c.completion_tokens, 6);
    assert_int_equal(c.cached_tokens, 0);
}

static void test_chunk_reasoning_content_and_reasoning(void **state) {
    chunk_info_t c = parse_ok("{\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":"
                              "\"Okay\"},\"logprobs\":null,\"finish_reason\":null}]}");
    assert_raw(c.reasoning, c.reasoning_len, "Okay");
    assert_true(c.has_reasoning);
    assert_null(c.content);
    assert_false(c.has_content);

    c = parse_ok("{\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\" the\",\"content\":null},"
                 "\"finish_reason\":null}]}");
    assert_raw(c.reasoning, c.reasoning_len, " the");

    /* A null under one name does not hide a string under the other. */
    c = parse_ok("{\"choices\":[{\"delta\":{\"reasoning\":\"x\",\"reasoning_content\":null}}]}");
    assert_raw(c.reasoning, c.reasoning_len, "x");
}

static void test_chunk_completions_text(void **state) {
    chunk_info_t c = parse_ok("{\"id\":\"cmpl-3e5f\",\"object\":\"text_completion\",\"created\":"
                              "1740000000,\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":"
                              "\" Paris\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":"
                              "null}],\"usage\":null}");
    assert_raw(c.content, c.content_len, " Paris");
    assert_true(c.has_content);
    assert_false(c.has_usage);
}

static void test_chunk_tool_calls_present_only_when_non_empty(void **state) {
    chunk_info_t c = parse_ok(
        "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"chatcmpl-tool-6c1e\","
        "\"type\":\"function\",\"index\":0,\"function\":{\"name\":\"get_weather\",\"arguments\":"
        "\"\"}}]},\"logprobs\":null,\"finish_reason\":null}]}");
    assert_true(c.has_tool_calls);
    assert_null(c.content);

    c = parse_ok("{\"choices\":[{\"delta\":{\"content\":\"\",\"tool_calls\":[ ]}}]}");
    assert_false(c.has_tool_calls);
    c = parse_ok("{\"choices\":[{\"delta\":{\"tool_calls\":null}}]}");
    assert_false(c.has_tool_calls);
}

static void test_chunk_content_only_from_choices_0_delta(void **state) {
    /* "content" also names logprobs lists, tool arguments, other choices, and top-level keys. */
    chunk_info_t c = parse_ok(
        "{\"content\":\"top\",\"delta\":{\"content\":\"top delta\"},\"choices\":[{\"index\":0,"
        "\"logprobs\":{\"content\":[{\"token\":\"Hello\",\"logprob\":-0.25,\"bytes\":[72,101],"
        "\"top_logprobs\":[{\"token\":\"Hi\",\"content\":\"no\"}]}]},\"delta\":{\"tool_calls\":[{"
        "\"function\":{\"content\":\"nested\",\"arguments\":\"{}\"}}],\"content\":\"Hello\",\"x\":{"
        "\"content\":\"deeper\"}},\"finish_reason\":null},{\"index\":1,\"delta\":{\"content\":"
        "\"second choice\"},\"finish_reason\":\"stop\"}],\"usage\":null}");
    assert_raw(c.content, c.content_len, "Hello");
    assert_null(c.finish_reason);
    assert_true(c.has_tool_calls);
}

static void test_chunk_error_object_forms(void **state) {
    static const struct {
        const char *json;
        const char *message;
        int code;
    } forms[] = {
        {"{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens.\","
         "\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}",
         "This model's maximum context length is 4096 tokens.", 400},
        {"{\"object\":\"error\",\"message\":\"The model `x` does not exist.\",\"type\":"
         "\"NotFoundError\",\"param\":null,\"code\":404}",
         "The model `x` does not exist.", 404},
        {"{\"error\":\"overloaded\"}", "overloaded", 0},
    };
    chunk_info_t c;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        c = parse_ok(forms[i].json);
        assert_true(c.has_error);
        assert_raw(c.error_message, c.error_message_len, forms[i].message);
        assert_int_equal(c.error_code, forms[i].code);
    }

    c = parse_ok("{\"error\":{\"message\":\"bad key\",\"code\":\"invalid_api_key\"}}");
    assert_true(c.has_error);
    assert_int_equal(c.error_code, 0);

    c = parse_ok("{\"error\":null,\"message\":\"not an error\",\"choices\":[]}");
    assert_false(c.has_error);
    assert_null(c.error_message);
}

static void test_chunk_sent_ns_is_read_as_int64(void **state) {
    chunk_info_t c = parse_ok("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],"
                              "\"sent_ns\":9123456789012345678}");
    assert_true(c.has_sent_ns);
    assert_true(c.sent_ns == INT64_C(9123456789012345678));
    c = parse_ok("{\"sent_ns\":-5}");
    assert_true(c.sent_ns == -5);
    c = parse_ok("{\"sent_ns\":99999999999999999999999}");
    assert_true(c.sent_ns == INT64_MAX);
    c = parse_ok("{\"sent_ns\":null}");
    assert_false(c.has_sent_ns);
}

/* The first n of digits as sent_ns, followed by pad spaces: read as strtoll reads them; a ':' or
 * a 0xFA byte in place of the byte after them makes the payload malformed. */
static void assert_integer_read(const char *digits, int n, int pad) {
    char json[64], expected[20];
    int len = snprintf(json, sizeof json, "{\"sent_ns\":%.*s%*s}", n, digits, pad, "");
    snprintf(expected, sizeof expected, "%.*s", n, digits);
    chunk_info_t c = parse_ok(json);
    assert_true(c.has_sent_ns);
    if (c.sent_ns != strtoll(expected, NULL, 10))
        fail_msg("%s: %lld, expected %s", json, (long long)c.sent_ns, expected);
    for (int k = 0; k < 2; k++) {
        json[11 + n] = k ? (char)0xFA : ':';
        chunk_info_t bad;
        if (parse_exact(json, (size_t)len, &bad) == 0)
            fail_msg("%.*s was read as a number", 11 + n + 1, json);
    }
}

/* Integers of every length from 1 to 19 digits (two sets of digits, with and without zeros), each
 * at every distance from the payload's end (0 to 20 bytes of space after it), so that the digits
 * are scanned 16, 8 and 1 at a time: the value is strtoll's, and a byte that is no digit right
 * after them ends them (':' and 0xFA, which a digit test by nibbles could take for one, make the
 * payload malformed). */
static void test_chunk_integers_of_every_length_end_where_their_digits_do(void **state) {
    for (int n = 1; n <= 19; n++)
        for (int pad = 0; pad <= 20; pad++) {
            assert_integer_read("9223372036854775807", n, pad);
            assert_integer_read("1020304050607080900", n, pad);
        }
}

/* The values a member loop reads inline, not through skip_value: a null finish_reason, an
 * integer that is a lone 0 ("index"), keep the JSON grammar at each one's edges. */
static void test_chunk_inlined_null_and_zero_keep_the_grammar(void **state) {
    chunk_info_t c = parse_ok("{\"choices\":[{\"index\":0,\"finish_reason\":null}]}");
    assert_null(c.finish_reason);
    c = parse_ok("{\"choices\":[{\"index\":0 ,\"delta\":{\"content\":\"x\"},"
                 "\"finish_reason\":null }]}");
    assert_raw(c.content, c.content_len, "x");
    c = parse_ok("{\"choices\":[{\"index\":0.5e1,\"finish_reason\":\"stop\"}],\"index\":0}");
    assert_raw(c.finish_reason, c.finish_reason_len, "stop");
    static const char *bad[] = {
        "{\"choices\":[{\"finish_reason\":nul}]}",
        "{\"choices\":[{\"finish_reason\":nulls}]}",
        "{\"choices\":[{\"finish_reason\":null",
        "{\"choices\":[{\"index\":01}]}",
        "{\"choices\":[{\"index\":0.}]}",
        "{\"choices\":[{\"index\":0e}]}",
        "{\"choices\":[{\"index\":0",
        "{\"index\":00}",
        "{\"choices\":[{\"index\":0x1}]}",
    };
    assert_refused(bad, sizeof bad / sizeof *bad);
}

/* A comma right after a value takes a shorter path than one after space: both read the next
 * member, and what may not follow a comma is refused either way. */
static void test_chunk_member_separators_with_and_without_space(void **state) {
    static const char *good[] = {
        "{\"x\":1,\"sent_ns\":7}",   "{\"x\":1 ,\"sent_ns\":7}",    "{\"x\":1, \"sent_ns\":7}",
        "{\"x\":1,\n\"sent_ns\":7}", "{\"x\":1\t,\t\"sent_ns\":7}", "{\"x\":\"a\",\"sent_ns\":7 }",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        chunk_info_t c = parse_ok(good[i]);
        if (!c.has_sent_ns || c.sent_ns != 7)
            fail_msg("%s: sent_ns not read", good[i]);
    }
    static const char *bad[] = {"{\"x\":1,}",       "{\"x\":1, }",       "{\"x\":1,,\"sent_ns\":7}",
                                "{\"x\":1,",        "{\"x\":1 ,",        "{\"x\":1,sent_ns:7}",
                                "{\"x\":1,:\"a\"}", "{\"x\":1 \"s\":2}", "{,\"x\":1}"};
    assert_refused(bad, sizeof bad / sizeof *bad);
}

static void test_chunk_usage_numbers_saturate(void **state) {
    chunk_info_t c = parse_ok("{\"usage\":{\"prompt_tokens\":4294967296,\"completion_tokens\":-3,"
                              "\"prompt_tokens_details\":{\"cached_tokens\":1.5e3}}}");
    assert_int_equal(c.prompt_tokens, UINT32_MAX);
    assert_int_equal(c.completion_tokens, 0);
    assert_int_equal(c.cached_tokens, 1500);
    c = parse_ok("{\"usage\":{\"prompt_tokens\":27.9,\"completion_tokens\":2E1,"
                 "\"prompt_tokens_details\":{\"cached_tokens\":1e-9}}}");
    assert_int_equal(c.prompt_tokens, 27);
    assert_int_equal(c.completion_tokens, 20);
    assert_int_equal(c.cached_tokens, 0);
    c = parse_ok("{\"usage\":{\"prompt_tokens\":0e999999999,\"completion_tokens\":1e999999999}}");
    assert_int_equal(c.prompt_tokens, 0);
    assert_int_equal(c.completion_tokens, UINT32_MAX);
}

static void test_chunk_done_only_when_exact(void **state) {
    chunk_info_t c;
    assert_int_equal(parse_exact("[DONE]", 6, &c), 0);
    assert_true(c.done);
    assert_int_equal(parse_exact("[DONE] ", 7, &c), -1);
    assert_false(c.done);
    assert_int_equal(parse_exact("[DONE", 5, &c), -1);
    assert_int_equal(parse_exact("", 0, &c), -1);
}

static void test_chunk_pretty_printed_json_with_whitespace(void **state) {
    chunk_info_t c = parse_ok("\r\n { \"choices\" : [ { \"delta\" :\t{ \"content\" : \"x\" } ,\n"
                              " \"finish_reason\" : \"stop\" } ] , \"usage\" : { "
                              "\"prompt_tokens\" : 3 } } \n");
    assert_raw(c.content, c.content_len, "x");
    assert_raw(c.finish_reason, c.finish_reason_len, "stop");
    assert_int_equal(c.prompt_tokens, 3);
}

static void test_chunk_malformed_json_returns_minus_1_and_zeroes(void **state) {
    static const char *bad[] = {
        "{",
        "}",
        "[1]",
        "\"str\"",
        "42",
        "null",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"a\":1 \"b\":2}",
        "{,\"a\":1}",
        "{a:1}",
        "{'a':1}",
        "{\"a\":[1,]}",
        "{\"a\":[,1]}",
        "{\"a\":01}",
        "{\"a\":-}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":1e}",
        "{\"a\":+1}",
        "{\"a\":tru}",
        "{\"a\":nul}",
        "{\"a\":True}",
        "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u12G4\"}",
        "{\"a\":\"\\u12\"}",
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"unterminated}",
        "{\"a\":1}}",
        "{\"a\":1} x",
        "{\"a\":[1}",
        "{\"a\":{\"b\":1]}",
        "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]",
        "{\"choices\":[{\"delta\":{\"content\":\"x\",}}]}",
        "{\"usage\":{\"prompt_tokens\":}}",
        "{\"error\":{\"message\":\"x\"",
    };
    assert_refused(bad, sizeof bad / sizeof bad[0]);
    chunk_info_t c;
    assert_int_equal(parse_exact("{\"a\":1}\0", 8, &c), -1);    /* a NUL after the object */
    assert_int_equal(parse_exact("{\"a\":\"\0\"}", 8, &c), -1); /* a raw NUL in a string */
}

static void test_chunk_every_strict_prefix_of_a_chunk_is_malformed(void **state) {
    static const char chunk[] =
        "{\"id\":\"chatcmpl-9f3c\",\"object\":\"chat.completion.chunk\",\"created\":1740000000,"
        "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\\u00e9\\\"\"},"
        "\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],\"usage\":{"
        "\"prompt_tokens\":27,\"prompt_tokens_details\":{\"cached_tokens\":16}},\"sent_ns\":-1.5e-"
        "3,"
        "\"flags\":[true,false,null,{}]}";
    chunk_info_t c;
    for (size_t len = 0; len < sizeof chunk - 1; len++)
        if (parse_exact(chunk, len, &c) != -1)
            fail_msg("accepted the first %zu bytes", len);
    assert_int_equal(parse_exact(chunk, sizeof chunk - 1, &c), 0);
    assert_raw(c.content, c.content_len, "a\\u00e9\\\"");
    assert_int_equal(c.cached_tokens, 16);
}

/* {"x":[[...]]} with depth arrays, into out (room for 2 * depth + 16); returns its length. */
static size_t nested_arrays(char *out, size_t depth) {
    size_t n = (size_t)sprintf(out, "{\"x\":");
    for (size_t i = 0; i < depth; i++)
        out[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        out[n++] = ']';
    out[n++] = '}';
    return n;
}

static void test_chunk_deep_nesting_is_refused_without_crashing(void **state) {
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 16);
    chunk_info_t c;
    assert_int_equal(parse_exact(deep, nested_arrays(deep, depth), &c), -1);
    assert_int_equal(parse_exact(deep, nested_arrays(deep, 100), &c), 0);
    free(deep);
}

static void assert_unescapes_to(const char *escaped, const char *expected, size_t expected_len) {
    size_t len = strlen(escaped);
    char *in = malloc(len ? len : 1);
    char *out = malloc(len ? len : 1);
    memcpy(in, escaped, len);
    size_t n = chunk_unescape(in, len, out);
    if (n != expected_len || memcmp(out, expected, n) != 0)
        fail_msg("unescape of %s gave %zu bytes, expected %zu", escaped, n, expected_len);
    /* In place, as the header allows. */
    assert_int_equal(chunk_unescape(in, len, in), expected_len);
    assert_memory_equal(in, expected, expected_len);
    free(in);
    free(out);
}

#define UNESCAPES_TO(escaped, expected) assert_unescapes_to(escaped, expected, sizeof expected - 1)

static void test_chunk_unescape_simple_escapes(void **state) {
    UNESCAPES_TO("plain text", "plain text");
    UNESCAPES_TO("", "");
    UNESCAPES_TO("a\\nb\\tc\\rd", "a\nb\tc\rd");
    UNESCAPES_TO("\\\"q\\\" \\\\ \\/ \\b\\f", "\"q\" \\ / \b\f");
}

static void test_chunk_unescape_unicode_and_surrogate_pairs(void **state) {
    UNESCAPES_TO("caf\\u00e9", "café");
    UNESCAPES_TO("\\u20AC\\u20ac", "€€");
    UNESCAPES_TO("\\u65e5\\u672c\\u8a9e", "日本語");
    UNESCAPES_TO("\\ud83d\\ude00!", "😀!");
    UNESCAPES_TO("\\uD83D\\uDE00", "😀");
    UNESCAPES_TO("\\u0041\\u007f", "A\x7f");
    UNESCAPES_TO("\\u0000", "\0");
}

static void test_chunk_unescape_lone_surrogates_and_bad_escapes(void **state) {
    UNESCAPES_TO("\\ud83dx", "\xEF\xBF\xBDx");
    UNESCAPES_TO("\\ude00", "\xEF\xBF\xBD");
    UNESCAPES_TO("\\ud83d\\u0041", "\xEF\xBF\xBD"
                                   "A");
    UNESCAPES_TO("\\ud83d\\ud83d\\ude00", "\xEF\xBF\xBD😀");
    UNESCAPES_TO("\\x41", "\\x41");
    UNESCAPES_TO("end\\", "end\\");
    UNESCAPES_TO("\\u12", "\\u12");
    UNESCAPES_TO("\\u12G4", "\\u12G4");
}

typedef struct stream_check {
    const char *name;
    char reply[4096];
    size_t reply_len;
    size_t events;
    size_t content_events;
    bool done;
    chunk_info_t last_usage;
    char finish[32]; /* the last finish_reason, unescaped */
    size_t errors;
    int error_code;
    size_t tool_call_events;
    size_t reasoning_events;
} stream_check_t;

/* What chunk_parse makes of a JSON number: truncated toward zero, saturated to uint32. */
static uint32_t expected_u32(json_t *v) {
    if (!json_is_number(v))
        return 0;
    double d = json_number_value(v);
    return d <= 0 ? 0 : d >= 4294967295.0 ? UINT32_MAX : (uint32_t)d;
}

static const char *json_string_or_null(json_t *object, const char *key) {
    json_t *v = object ? json_object_get(object, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void assert_same_string(const char *raw, size_t raw_len, const char *expected,
                               const char *what) {
    if (!expected) {
        if (raw)
            fail_msg("%s: jansson sees no string, chunk_parse sees %.*s", what, (int)raw_len, raw);
        return;
    }
    if (!raw)
        fail_msg("%s: chunk_parse missed \"%s\"", what, expected);
    char decoded[4096];
    assert_true(raw_len <= sizeof decoded);
    size_t n = chunk_unescape(raw, raw_len, decoded);
    if (n != strlen(expected) || memcmp(decoded, expected, n) != 0)
        fail_msg("%s: chunk_parse gives '%.*s', jansson '%s'", what, (int)n, decoded, expected);
}

/* Checks chunk_parse against jansson's DOM on one payload that jansson accepts as an object. */
static void assert_matches_jansson(const chunk_info_t *c, json_t *root, const char *what) {
    json_t *choices = json_object_get(root, "choices");
    json_t *choice = json_is_array(choices) ? json_array_get(choices, 0) : NULL;
    choice = json_is_object(choice) ? choice : NULL;
    json_t *delta = choice ? json_object_get(choice, "delta") : NULL;
    delta = json_is_object(delta) ? delta : NULL;
    const char *content = json_string_or_null(delta, "content");
    if (!content)
        content = json_string_or_null(choice, "text");
    assert_same_string(c->content, c->content_len, content, what);
    const char *reasoning = json_string_or_null(delta, "reasoning_content");
    if (!reasoning)
        reasoning = json_string_or_null(delta, "reasoning");
    assert_same_string(c->reasoning, c->reasoning_len, reasoning, what);
    assert_same_string(c->finish_reason, c->finish_reason_len,
                       json_string_or_null(choice, "finish_reason"), what);
    json_t *tools = delta ? json_object_get(delta, "tool_calls") : NULL;
    assert_int_equal(c->has_tool_calls, json_is_array(tools) && json_array_size(tools) > 0);
    json_t *usage = json_object_get(root, "usage");
    assert_int_equal(c->has_usage, json_is_object(usage));
    if (json_is_object(usage)) {
        json_t *prompt = json_object_get(usage, "prompt_tokens");
        json_t *completion = json_object_get(usage, "completion_tokens");
        json_t *details = json_object_get(usage, "prompt_tokens_details");
        json_t *cached = json_is_object(details) ? json_object_get(details, "cached_tokens") : 0;
        assert_int_equal(c->prompt_tokens, expected_u32(prompt));
        assert_int_equal(c->completion_tokens, expected_u32(completion));
        assert_int_equal(c->cached_tokens, expected_u32(cached));
    }
    json_t *error = json_object_get(root, "error");
    if (json_is_object(error)) {
        assert_true(c->has_error);
        assert_same_string(c->error_message, c->error_message_len,
                           json_string_or_null(error, "message"), what);
    }
}

static int check_event(void *arg, const sse_event_t *event) {
    stream_check_t *check = arg;
    chunk_info_t c;
    check->events++;
    if (parse_exact(event->data, event->data_len, &c) != 0)
        fail_msg("%s: event %zu did not parse: %.*s", check->name, check->events,
                 (int)event->data_len, event->data);
    if (c.done) {
        check->done = true;
        return 0;
    }
    json_error_t error;
    json_t *root = json_loadb(event->data, event->data_len, 0, &error);
    if (!root)
        fail_msg("%s: jansson rejects event %zu: %s", check->name, check->events, error.text);
    assert_matches_jansson(&c, root, check->name);
    json_decref(root);
    if (c.has_content) {
        check->content_events++;
        assert_true(check->reply_len + c.content_len <= sizeof check->reply);
        check->reply_len +=
            chunk_unescape(c.content, c.content_len, check->reply + check->reply_len);
    }
    check->tool_call_events += c.has_tool_calls;
    check->reasoning_events += c.has_reasoning;
    if (c.has_usage)
        check->last_usage = c;
    if (c.finish_reason) {
        assert_true(c.finish_reason_len < sizeof check->finish);
        check->finish[chunk_unescape(c.finish_reason, c.finish_reason_len, check->finish)] = 0;
    }
    if (c.has_error) {
        check->errors++;
        check->error_code = c.error_code;
    }
    return 0;
}

/* Opens tests/data/sse/NAME (under $STAMPEDE_DATA when set); fails the test when it cannot. */
static FILE *fixture_open(const char *name) {
    const char *dir = getenv("STAMPEDE_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/sse/%s", dir ? dir : "tests/data", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open fixture %s", path);
    return f;
}

static stream_check_t *check_fixture(const char *name) {
    FILE *f = fixture_open(name);
    stream_check_t *check = calloc(1, sizeof *check);
    check->name = name;
    sse_parser_t *parser = sse_parser_new(check_event, check);
    char buf[333]; /* an odd size, so events straddle reads */
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        assert_int_equal(sse_parser_feed(parser, buf, n), 0);
    assert_int_equal(sse_parser_finish(parser), 0);
    sse_parser_destroy(&parser);
    fclose(f);
    return check;
}

static void test_chunk_vllm_stream_reassembles_the_reply(void **state) {
    stream_check_t *s = check_fixture("vllm_chat.sse");
    assert_int_equal(s->events, 27);
    assert_int_equal(s->content_events, 23);
    assert_true(s->done);
    assert_int_equal(s->reply_len, sizeof fixture_reply - 1);
    assert_memory_equal(s->reply, fixture_reply, s->reply_len);
    assert_string_equal(s->finish, "stop");
    assert_int_equal(s->last_usage.prompt_tokens, 27);
    assert_int_equal(s->last_usage.completion_tokens, 23);
    assert_int_equal(s->last_usage.cached_tokens, 16);
    free(s);
}

static void test_chunk_ascii_escaped_stream_gives_the_same_reply(void **state) {
    stream_check_t *s = check_fixture("python_json_chat.sse");
    assert_int_equal(s->content_events, 23);
    assert_int_equal(s->reply_len, sizeof fixture_reply - 1);
    assert_memory_equal(s->reply, fixture_reply, s->reply_len);
    free(s);
}

static void test_chunk_reasoning_stream_counts_thoughts_then_answer(void **state) {
    stream_check_t *s = check_fixture("vllm_reasoning.sse");
    assert_int_equal(s->reasoning_events, 8);
    assert_int_equal(s->content_events, 7);
    assert_int_equal(s->reply_len, strlen("Hello! How can I help?"));
    assert_memory_equal(s->reply, "Hello! How can I help?", s->reply_len);
    assert_int_equal(s->last_usage.completion_tokens, 15);
    free(s);
}

static void test_chunk_tool_call_stream(void **state) {
    stream_check_t *s = check_fixture("vllm_tool_calls.sse");
    assert_int_equal(s->tool_call_events, 3);
    assert_int_equal(s->content_events, 0);
    assert_string_equal(s->finish, "tool_calls");
    assert_int_equal(s->last_usage.cached_tokens, 128);
    free(s);
}

static void test_chunk_sglang_and_completions_streams(void **state) {
    stream_check_t *s = check_fixture("sglang_chat.sse");
    assert_int_equal(s->content_events, 6);
    assert_memory_equal(s->reply, "Sure! Here is a \"quoted\"", s->reply_len);
    assert_int_equal(s->last_usage.completion_tokens, 6);
    free(s);
    s = check_fixture("vllm_completions.sse");
    assert_int_equal(s->content_events, 7);
    assert_int_equal(s->reply_len, strlen(" The capital of France is Paris."));
    assert_memory_equal(s->reply, " The capital of France is Paris.", s->reply_len);
    assert_string_equal(s->finish, "length");
    free(s);
}

static void test_chunk_error_event_stream(void **state) {
    stream_check_t *s = check_fixture("error_event.sse");
    assert_int_equal(s->events, 4);
    assert_int_equal(s->content_events, 2);
    assert_int_equal(s->errors, 1);
    assert_int_equal(s->error_code, 502);
    assert_false(s->done);
    free(s);
}

static uint64_t rng_state;

static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

typedef struct payloads {
    char *bytes[128];
    size_t len[128];
    size_t count;
} payloads_t;

static int collect_payload(void *arg, const sse_event_t *event) {
    payloads_t *p = arg;
    if (p->count < 128) {
        p->bytes[p->count] = malloc(event->data_len);
        memcpy(p->bytes[p->count], event->data, event->data_len);
        p->len[p->count++] = event->data_len;
    }
    return 0;
}

static bool ascii_without_unicode_escapes(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80 || (p[i] == '\\' && i + 1 < n && p[i + 1] == 'u'))
            return false;
    return true;
}

static const char *const fixture_names[] = {"vllm_chat.sse",        "sglang_chat.sse",
                                            "vllm_reasoning.sse",   "vllm_tool_calls.sse",
                                            "vllm_completions.sse", "error_event.sse"};

/* Every event's data from every fixture, in order (77 in all). */
static void load_fixture_payloads(payloads_t *p) {
    for (size_t f = 0; f < sizeof fixture_names / sizeof fixture_names[0]; f++) {
        FILE *file = fixture_open(fixture_names[f]);
        char buf[8192];
        size_t n = fread(buf, 1, sizeof buf, file);
        fclose(file);
        sse_parser_t *parser = sse_parser_new(collect_payload, p);
        assert_int_equal(sse_parser_feed(parser, buf, n), 0);
        sse_parser_destroy(&parser);
    }
    assert_int_equal(p->count, 77);
}

static void free_payloads(payloads_t *p) {
    for (size_t i = 0; i < p->count; i++)
        free(p->bytes[i]);
}

/* Parses work[0..n) with chunk_parse and jansson, failing unless they agree on validity and on
 * every field: 1 when both accept it, 0 when both refuse it, -1 when jansson cannot judge (not
 * ASCII, \u escapes, [DONE]: its UTF-8 and NUL rules are stricter; numbers beyond a double). */
static int agree_with_jansson(const char *work, size_t n, const char *what) {
    chunk_info_t c;
    int rc = parse_exact(work, n, &c);
    if (c.done || !ascii_without_unicode_escapes(work, n))
        return -1;
    json_error_t error;
    json_t *root = json_loadb(work, n, JSON_DECODE_INT_AS_REAL, &error);
    if (!root && strstr(error.text, "overflow"))
        return -1;
    bool jansson_ok = root && json_is_object(root);
    if (jansson_ok != (rc == 0))
        fail_msg("%s: chunk_parse %d, jansson %s on: %.*s", what, rc,
                 jansson_ok ? "ok" : error.text, (int)n, work);
    if (jansson_ok)
        assert_matches_jansson(&c, root, what);
    json_decref(root);
    return jansson_ok;
}

/* Mutated real chunks: chunk_parse must agree with jansson on validity (where both define it the
 * same way: ASCII, no \u escapes, whose UTF-8 and NUL rules differ) and on every field. */
static void test_chunk_fuzzed_chunks_agree_with_jansson_and_never_crash(void **state) {
    static const char alphabet[] = "{}[]\",:0123456789-+.eEtrufalsn \t\n\\/x";
    payloads_t p = {0};
    load_fixture_payloads(&p);

    rng_state = 0xD1B54A32D192ED03ull;
    size_t compared = 0, rejected = 0;
    char *work = malloc(4096);
    for (int iter = 0; iter < 20000; iter++) {
        size_t k = next_random() % p.count;
        size_t n = p.len[k];
        memcpy(work, p.bytes[k], n);
        int ops = 1 + (int)(next_random() % 3);
        for (int op = 0; op < ops && n > 0; op++) {
            size_t at = next_random() % n;
            char ch = alphabet[next_random() % (sizeof alphabet - 1)];
            switch (next_random() % 3) {
            case 0:
                work[at] = ch;
                break;
            case 1:
                memmove(work + at + 1, work + at, n - at);
                work[at] = ch;
                n++;
                break;
            default:
                memmove(work + at, work + at + 1, n - at - 1);
                n--;
                break;
            }
        }
        int verdict = agree_with_jansson(work, n, "fuzz");
        compared += verdict == 1;
        rejected += verdict == 0;
    }
    /* Both outcomes must be well represented for the comparison to mean anything. */
    assert_true(compared > 1000);
    assert_true(rejected > 1000);

    for (int iter = 0; iter < 20000; iter++) { /* noise: only "no crash, no overread" */
        size_t n = next_random() % 64;
        for (size_t i = 0; i < n; i++)
            work[i] =
                iter % 2 ? alphabet[next_random() % (sizeof alphabet - 1)] : (char)next_random();
        chunk_info_t c;
        parse_exact(work, n, &c);
        size_t m = chunk_unescape(work, n, work + 2048);
        assert_true(m <= n);
    }
    free(work);
    free_payloads(&p);
}

/* Each byte offset of every fixture event, replaced by each byte that ends or breaks a token:
 * chunk_parse agrees with jansson on validity and fields, wherever the byte falls relative to
 * the 16- and 8-byte steps of the string scan and to the payload's end. */
static void
test_chunk_every_byte_of_every_fixture_event_replaced_agrees_with_jansson(void **state) {
    static const char replacements[] = {'"', '\\', '\x01', '\x1f', ' ', '}',
                                        ']', ',',  ':',    'x',    '0', 'n'};
    payloads_t p = {0};
    load_fixture_payloads(&p);
    char *work = malloc(4096);
    size_t compared = 0, rejected = 0;
    for (size_t k = 0; k < p.count; k++) {
        size_t n = p.len[k];
        memcpy(work, p.bytes[k], n);
        for (size_t at = 0; at < n; at++) {
            char saved = work[at];
            for (size_t r = 0; r < sizeof replacements; r++) {
                if (replacements[r] == saved)
                    continue;
                work[at] = replacements[r];
                int verdict = agree_with_jansson(work, n, "replaced byte");
                compared += verdict == 1;
                rejected += verdict == 0;
            }
            work[at] = saved;
        }
    }
    assert_true(compared > 5000);
    assert_true(rejected > 50000);
    free(work);
    free_payloads(&p);
}

/* Every strict prefix of every fixture event is refused (none ends in whitespace), and the
 * whole event is accepted. */
static void test_chunk_every_prefix_of_every_fixture_event_is_refused(void **state) {
    payloads_t p = {0};
    load_fixture_payloads(&p);
    for (size_t k = 0; k < p.count; k++) {
        chunk_info_t c;
        for (size_t len = 0; len < p.len[k]; len++)
            if (parse_exact(p.bytes[k], len, &c) != -1)
                fail_msg("event %zu: accepted its first %zu bytes", k, len);
        assert_int_equal(parse_exact(p.bytes[k], p.len[k], &c), 0);
    }
    free_payloads(&p);
}

/* A string of n bytes, 'a' but for special at offset at, as content (more bytes follow it) and as
 * an error message (one byte follows it): found whole, or refused when special is a raw '"' or
 * control, for every length and offset around the string scan's 16- and 8-byte steps. */
static void test_chunk_string_scan_finds_each_special_byte_at_every_offset(void **state) {
    static const struct {
        const char *bytes; /* inserted at the offset */
        bool valid;
    } specials[] = {
        {"\\\"", true},  {"\\\\", true},    {"\\u00e9", true},  {"\\ud83d\\ude00", true},
        {"\\n", true},   {"\x7f", true},    {"\xc3\xa9", true}, {"\xff", true},
        {"\x01", false}, {"\x1f", false},   {"\"", false},      {"\\", false},
        {"\\x", false},  {"\\u12G", false},
    };
    char text[128], json[256];
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++) {
        size_t special_len = strlen(specials[s].bytes);
        for (size_t n = 0; n <= 40; n++) {
            for (size_t at = 0; at <= n; at++) {
                memset(text, 'a', n);
                memcpy(text + at, specials[s].bytes, special_len);
                memset(text + at + special_len, 'a', n - at);
                size_t text_len = n + special_len;
                text[text_len] = 0;
                static const char *const forms[] = {
                    "{\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}", "{\"error\":\"%s\"}"};
                for (size_t f = 0; f < 2; f++) {
                    int len = snprintf(json, sizeof json, forms[f], text);
                    chunk_info_t c;
                    int rc = parse_exact(json, (size_t)len, &c);
                    if (rc != (specials[s].valid ? 0 : -1))
                        fail_msg("special #%zu at %zu of %zu: rc %d on %s", s, at, n, rc, json);
                    if (!specials[s].valid)
                        continue;
                    if (f == 0)
                        assert_raw(c.content, c.content_len, text);
                    else
                        assert_raw(c.error_message, c.error_message_len, text);
                    /* Cut anywhere inside the string: unterminated. */
                    const char *body = f == 0 ? c.content : c.error_message;
                    size_t cut = (size_t)(body - json) + text_len;
                    assert_int_equal(parse_exact(json, cut, &c), -1);
                }
            }
        }
    }
}

/* Inserts whitespace of each kind before and after every structural character outside strings. */
static size_t spread_tokens(const char *in, size_t n, char *out) {
    static const char spaces[] = " \t\r\n";
    size_t o = 0, k = 0;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char ch = in[i];
        bool structural = !in_string && strchr("{}[],:", ch) && ch;
        if (structural)
            out[o++] = spaces[k++ % 4];
        out[o++] = ch;
        if (structural) {
            out[o++] = spaces[k++ % 4];
            out[o++] = spaces[k++ % 4];
        }
        if (in_string && ch == '\\' && i + 1 < n)
            out[o++] = in[++i];
        else if (ch == '"')
            in_string = !in_string;
    }
    return o;
}

static void assert_same_raw(const char *a, size_t a_len, const char *b, size_t b_len) {
    assert_int_equal(a == NULL, b == NULL);
    assert_int_equal(a_len, b_len);
    if (a)
        assert_memory_equal(a, b, a_len);
}

/* Two results of the same chunk written differently: equal fields, strings by their bytes. */
static void assert_same_info(const chunk_info_t *a, const chunk_info_t *b) {
    assert_same_raw(a->content, a->content_len, b->content, b->content_len);
    assert_same_raw(a->reasoning, a->reasoning_len, b->reasoning, b->reasoning_len);
    assert_same_raw(a->finish_reason, a->finish_reason_len, b->finish_reason, b->finish_reason_len);
    assert_same_raw(a->error_message, a->error_message_len, b->error_message, b->error_message_len);
    assert_int_equal(a->done, b->done);
    assert_int_equal(a->has_content, b->has_content);
    assert_int_equal(a->has_reasoning, b->has_reasoning);
    assert_int_equal(a->has_tool_calls, b->has_tool_calls);
    assert_int_equal(a->has_usage, b->has_usage);
    assert_int_equal(a->prompt_tokens, b->prompt_tokens);
    assert_int_equal(a->completion_tokens, b->completion_tokens);
    assert_int_equal(a->cached_tokens, b->cached_tokens);
    assert_int_equal(a->has_error, b->has_error);
    assert_int_equal(a->error_code, b->error_code);
    assert_int_equal(a->has_sent_ns, b->has_sent_ns);
    assert_true(a->sent_ns == b->sent_ns);
}

static void
test_chunk_whitespace_around_every_token_of_every_fixture_event_changes_nothing(void **state) {
    payloads_t p = {0};
    load_fixture_payloads(&p);
    char *spread = malloc(4 * 4096);
    for (size_t k = 0; k < p.count; k++) {
        chunk_info_t compact, spaced;
        assert_int_equal(parse_exact(p.bytes[k], p.len[k], &compact), 0);
        size_t n = spread_tokens(p.bytes[k], p.len[k], spread);
        assert_true(n > p.len[k] || compact.done);
        if (compact.done)
            continue;
        assert_int_equal(parse_exact(spread, n, &spaced), 0);
        assert_same_info(&compact, &spaced);
    }
    free(spread);
    free_payloads(&p);
}

/* The fields do not depend on where their keys stand among the others, nor on nested objects and
 * arrays (holding the same key names) before them. */
static void test_chunk_fields_found_in_any_key_order(void **state) {
    static const char *const orders[] = {
        "{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{"
        "\"role\":\"assistant\",\"content\":\"a\\\"b\\u00e9\"},\"logprobs\":null,\"finish_reason\":"
        "\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2},\"sent_ns\":7}",
        "{\"sent_ns\":7,\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":5},\"choices\":[{"
        "\"finish_reason\":\"stop\",\"logprobs\":null,\"delta\":{\"content\":\"a\\\"b\\u00e9\","
        "\"role\":\"assistant\"},\"index\":0}],\"object\":\"chat.completion.chunk\",\"id\":\"x\"}",
        "{\"meta\":{\"content\":\"no\",\"choices\":[{\"delta\":{\"content\":\"no\"}}]},\"choices\":"
        "[{"
        "\"logprobs\":{\"content\":[{\"token\":\"no\",\"bytes\":[1,2]}]},\"delta\":{\"x\":{"
        "\"content\":\"no\"},\"content\":\"a\\\"b\\u00e9\",\"role\":\"assistant\"},"
        "\"finish_reason\":\"stop\"}],\"usage\":{\"x\":[{\"prompt_tokens\":9}],\"prompt_tokens\":5,"
        "\"completion_tokens\":2},\"sent_ns\":7}",
    };
    chunk_info_t first = parse_ok(orders[0]);
    assert_raw(first.content, first.content_len, "a\\\"b\\u00e9");
    assert_raw(first.finish_reason, first.finish_reason_len, "stop");
    assert_int_equal(first.prompt_tokens, 5);
    assert_int_equal(first.completion_tokens, 2);
    assert_true(first.sent_ns == 7);
    for (size_t i = 1; i < sizeof orders / sizeof orders[0]; i++) {
        chunk_info_t c = parse_ok(orders[i]);
        assert_same_info(&first, &c);
    }
    chunk_info_t c = parse_ok("{\"choices\":[{\"delta\":{\"content\":null,\"reasoning\":\"r\"}}]}");
    assert_null(c.content);
    assert_false(c.has_content);
    assert_raw(c.reasoning, c.reasoning_len, "r");
}

/* {"x":[[...]]}: the top object and 127 arrays are 128 levels, the most accepted. */
static void test_chunk_nesting_limit_is_128_levels(void **state) {
    char deep[512];
    chunk_info_t c;
    assert_int_equal(parse_exact(deep, nested_arrays(deep, 127), &c), 0);
    assert_int_equal(parse_exact(deep, nested_arrays(deep, 128), &c), -1);
}

/* A key one byte off a known key is some other key: its value is not taken, as under an unrelated
 * key. */
static void test_chunk_keys_match_only_exactly(void **state) {
    static const struct {
        const char *format; /* %s: the key */
        const char *key;
    } cases[] = {
        {"{\"choices\":[{\"delta\":{\"%s\":\"v\"}}]}", "content"},
        {"{\"choices\":[{\"delta\":{\"%s\":\"v\"}}]}", "reasoning_content"},
        {"{\"choices\":[{\"delta\":{\"%s\":\"v\"}}]}", "reasoning"},
        {"{\"choices\":[{\"delta\":{\"%s\":[1]}}]}", "tool_calls"},
        {"{\"choices\":[{\"%s\":{\"content\":\"v\"}}]}", "delta"},
        {"{\"choices\":[{\"%s\":\"v\"}]}", "text"},
        {"{\"choices\":[{\"%s\":\"v\"}]}", "finish_reason"},
        {"{\"%s\":[{\"text\":\"v\"}]}", "choices"},
        {"{\"usage\":{\"%s\":1}}", "prompt_tokens"},
        {"{\"usage\":{\"%s\":1}}", "completion_tokens"},
        {"{\"usage\":{\"%s\":{\"cached_tokens\":1}}}", "prompt_tokens_details"},
        {"{\"usage\":{\"prompt_tokens_details\":{\"%s\":1}}}", "cached_tokens"},
        {"{\"%s\":1}", "sent_ns"},
        {"{\"%s\":\"v\"}", "error"},
    };
    char key[64], json[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(json, sizeof json, cases[i].format, cases[i].key);
        chunk_info_t exact = parse_ok(json);
        snprintf(json, sizeof json, cases[i].format, "unrelated");
        chunk_info_t unrelated = parse_ok(json);
        if (memcmp(&exact, &unrelated, sizeof exact) == 0)
            fail_msg("the exact key %s took nothing", cases[i].key);
        size_t key_len = strlen(cases[i].key);
        for (size_t at = 0; at < key_len; at++) {
            memcpy(key, cases[i].key, key_len + 1);
            key[at] ^= 0x20; /* another letter's case, or '_' <-> DEL */
            snprintf(json, sizeof json, cases[i].format, key);
            chunk_info_t off = parse_ok(json);
            if (memcmp(&off, &unrelated, sizeof off) != 0)
                fail_msg("%s took a field", json);
        }
    }
}

/* Plain integers of up to 19 digits take a shorter path than longer ones, fractions and
 * exponents: the same saturation on both sides of each field's limits. */
static void test_chunk_integers_at_the_limits_of_each_field(void **state) {
    static const struct {
        const char *token;
        int64_t sent_ns;
        uint32_t tokens;
        int code;
    } cases[] = {
        {"0", 0, 0, 0},
        {"-0", 0, 0, 0},
        {"7", 7, 7, 7},
        {"4294967295", 4294967295, UINT32_MAX, INT_MAX},
        {"4294967296", 4294967296, UINT32_MAX, INT_MAX},
        {"2147483647", 2147483647, 2147483647, INT_MAX},
        {"-2147483648", -2147483648LL, 0, INT_MIN},
        {"-2147483649", -2147483649LL, 0, INT_MIN},
        {"9223372036854775807", INT64_MAX, UINT32_MAX, INT_MAX},
        {"9223372036854775808", INT64_MAX, UINT32_MAX, INT_MAX},
        {"9999999999999999999", INT64_MAX, UINT32_MAX, INT_MAX},
        {"18446744073709551616", INT64_MAX, UINT32_MAX, INT_MAX},
        {"-9223372036854775808", INT64_MIN, 0, INT_MIN},
        {"-9223372036854775809", INT64_MIN, 0, INT_MIN},
        {"-9999999999999999999", INT64_MIN, 0, INT_MIN},
        {"0000000000000000001", 0, 0, 0}, /* not JSON: refused below */
        {"1763957123456789012", 1763957123456789012LL, UINT32_MAX, INT_MAX},
        {"1763957123456789012.9", 1763957123456789012LL, UINT32_MAX, INT_MAX},
        {"17639571234567890.12e2", 1763957123456789012LL, UINT32_MAX, INT_MAX},
    };
    char json[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(json, sizeof json,
                 "{\"sent_ns\":%s,\"usage\":{\"prompt_tokens\":%s},\"error\":{\"code\":%s}}",
                 cases[i].token, cases[i].token, cases[i].token);
        chunk_info_t c;
        if (cases[i].token[0] == '0' && cases[i].token[1]) {
            assert_int_equal(parse_exact(json, strlen(json), &c), -1);
            continue;
        }
        c = parse_ok(json);
        if (c.sent_ns != cases[i].sent_ns)
            fail_msg("%s: sent_ns %lld", cases[i].token, (long long)c.sent_ns);
        if (c.prompt_tokens != cases[i].tokens)
            fail_msg("%s: prompt_tokens %u", cases[i].token, c.prompt_tokens);
        if (c.error_code != cases[i].code)
            fail_msg("%s: code %d", cases[i].token, c.error_code);
    }
}

/* A number of 1 to 40 digits ended by each kind of byte, with many bytes after it (the 16-byte
 * digit scan) or one (the byte loop): refused where the byte cannot follow a number, else read. */
static void test_chunk_number_scan_stops_at_every_offset(void **state) {
    static const struct {
        const char *after; /* the digits, then this */
        bool valid;
    } ends[] = {
        {",\"pad\":\"0123456789abcdef\"}", true},
        {"}", true},
        {" }", true},
        {".5,\"pad\":\"0123456789abcdef\"}", true},
        {"/,\"pad\":\"0123456789abcdef\"}", false}, /* '0' - 1 */
        {":,\"pad\":\"0123456789abcdef\"}", false}, /* '9' + 1 */
        {"\x80,\"pad\":\"0123456789abcdef\"}", false},
        {"\xb0}", false}, /* '0' | 0x80 */
        {"a}", false},
        {"", false},
    };
    char digits[48], json[128];
    for (size_t n = 1; n <= 40; n++) {
        for (size_t i = 0; i < n; i++)
            digits[i] = (char)('1' + i % 9);
        digits[n] = 0;
        for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
            int len = snprintf(json, sizeof json, "{\"sent_ns\":%s%s", digits, ends[e].after);
            chunk_info_t c;
            int rc = parse_exact(json, (size_t)len, &c);
            if (rc != (ends[e].valid ? 0 : -1))
                fail_msg("%zu digits then end #%zu: rc %d", n, e, rc);
            if (!ends[e].valid)
                continue;
            int64_t expected = n <= 18 ? strtoll(digits, NULL, 10) : INT64_MAX;
            if (n == 19)
                expected = strtoll(digits, NULL, 10); /* 1234567891... < INT64_MAX */
            if (c.sent_ns != expected)
                fail_msg("%zu digits then end #%zu: %lld", n, e, (long long)c.sent_ns);
        }
    }
}

/* OpenAI's structured outputs answer a refusal in delta.refusal, content null (the shape of
 * its recorded streams: an empty refusal on the role chunk, then one piece per event). */
static void test_chunk_refusal_delta_is_read_and_its_empty_first_piece_is_no_token(void **state) {
    chunk_info_t role =
        parse_ok("{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
                 "\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"},"
                 "\"logprobs\":{\"content\":null,\"refusal\":[]},"
                 "\"finish_reason\":null}]}");
    assert_false(role.has_refusal);
    assert_false(role.has_content);
    assert_raw(role.refusal, 0, "");
    chunk_info_t piece =
        parse_ok("{\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\" I\\u2019m\"},"
                 "\"logprobs\":null,\"finish_reason\":null}]}");
    assert_true(piece.has_refusal);
    assert_false(piece.has_content);
    assert_raw(piece.refusal, piece.refusal_len, " I\\u2019m");
    chunk_info_t null_refusal =
        parse_ok("{\"choices\":[{\"delta\":{\"content\":\"x\",\"refusal\":null}}]}");
    assert_false(null_refusal.has_refusal);
    assert_null(null_refusal.refusal);
    assert_true(null_refusal.has_content);
}

static void test_chunk_finish_reasons_map_to_their_class(void **state) {
    static const struct {
        const char *raw;
        finish_reason_t reason;
        const char *name;
    } cases[] = {{"stop", FINISH_STOP, "stop"},
                 {"length", FINISH_LENGTH, "length"},
                 {"tool_calls", FINISH_TOOL_CALLS, "tool_calls"},
                 {"function_call", FINISH_TOOL_CALLS, "tool_calls"},
                 {"content_filter", FINISH_CONTENT_FILTER, "content_filter"},
                 {"abort", FINISH_OTHER, "other"},
                 {"stopped", FINISH_OTHER, "other"},
                 {"", FINISH_OTHER, "other"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[128];
        snprintf(json, sizeof json, "{\"choices\":[{\"delta\":{},\"finish_reason\":\"%s\"}]}",
                 cases[i].raw);
        chunk_info_t c = parse_ok(json);
        assert_raw(c.finish_reason, c.finish_reason_len, cases[i].raw);
        finish_reason_t r = finish_reason_parse(c.finish_reason, c.finish_reason_len);
        assert_int_equal(r, cases[i].reason);
        assert_string_equal(finish_reason_name(r), cases[i].name);
    }
    assert_string_equal(finish_reason_name(FINISH_NONE), "none");
}

/* chunk_parse_shaped(shape) and chunk_parse on the same exact-size copy of json[0..len) give the
 * same return value and the same fields, pointers included. */
static void assert_shaped_as_parsed(chunk_shape_t *shape, const char *json, size_t len,
                                    const char *what) {
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, json, len);
    chunk_info_t a, b;
    memset(&a, 0x5A, sizeof a);
    int rc_shaped = chunk_parse_shaped(shape, copy, len, &a);
    int rc = chunk_parse(copy, len, &b);
    bool same = rc_shaped == rc && chunk_info_same(&a, &b);
    if (!same)
        fail_msg("%s: chunk_parse_shaped %d and chunk_parse %d differ on: %.*s", what, rc_shaped,
                 rc, (int)len, json);
    free(copy);
}

/* chunk_frame_shaped on json[0..len) as an SSE data line, "\n\n" and the next event after it,
 * against chunk_parse on the line the SSE parser would cut there (up to the first CR or LF):
 * when the shape reads a payload, it is that whole line, with chunk_parse's result on it. The
 * shape's hits go up by one exactly then. Returns whether it read one. */
static bool assert_framed_as_parsed(chunk_shape_t *shape, const char *json, size_t len,
                                    const char *what) {
    static const char after[] = "\n\ndata: {\"next\":1}\n\n";
    size_t total = len + sizeof after - 1;
    char *stream = malloc(total);
    assert_non_null(stream);
    memcpy(stream, json, len);
    memcpy(stream + len, after, sizeof after - 1);
    size_t eol = 0;
    while (stream[eol] != '\n' && stream[eol] != '\r')
        eol++;
    uint64_t hits = chunk_shape_hits(shape);
    chunk_info_t a, b;
    memset(&a, 0x5A, sizeof a);
    size_t n = chunk_frame_shaped(shape, stream, total, &a);
    assert_int_equal(chunk_shape_hits(shape), hits + (n > 0));
    if (n) {
        int rc = chunk_parse(stream, eol, &b);
        if (n != eol || stream[eol + 1] != '\n' || rc != 0 || !chunk_info_same(&a, &b))
            fail_msg("%s: chunk_frame_shaped read %zu bytes, the line is %zu (chunk_parse %d): "
                     "%.*s",
                     what, n, eol, rc, (int)len, json);
    }
    free(stream);
    return n > 0;
}

/* The mock's token payload for stream s, token t: what differs between streams and tokens is
 * the id, created, the text and sent_ns. */
static size_t mock_payload(char *out, size_t cap, int s, int t, const char *text) {
    int n = snprintf(out, cap,
                     "{\"id\":\"chatcmpl-%08x%08x\",\"object\":\"chat.completion.chunk\","
                     "\"created\":%d,\"model\":\"mock-llama\",\"choices\":[{\"index\":0,"
                     "\"delta\":{\"content\":\"%s\"},\"logprobs\":null,\"finish_reason\":null}],"
                     "\"sent_ns\":%lld}",
                     s * 2654435761u, (unsigned)s, 1795967341 + s % 3, text,
                     40660411355956LL + (long long)t * 4991237 + s);
    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

/* Interleaved streams of one server: every token payload after the first is read from the
 * shape, with chunk_parse's result; so is every event of every fixture, in order. */
static void test_chunk_shape_reads_each_servers_payloads_as_chunk_parse_does(void **state) {
    static const char *const texts[] = {"risk", " so",  "", "a \\\"quoted\\\" \\u00e9 word",
                                        "\\n",  " step"};
    chunk_shape_t *shape = chunk_shape_new();
    assert_non_null(shape);
    char buf[512];
    int n = 0;
    for (int t = 0; t < 10; t++)
        for (int s = 0; s < 5; s++, n++) {
            size_t len = mock_payload(buf, sizeof buf, s, t, texts[(s + t) % 6]);
            /* the shape reads each in a stream's bytes too, once it has one */
            assert_true(assert_framed_as_parsed(shape, buf, len, "mock") == (n > 0));
            assert_shaped_as_parsed(shape, buf, len, "mock");
        }
    assert_int_equal(chunk_shape_hits(shape), 2 * (n - 1));
    assert_int_equal(chunk_shape_misses(shape), 1);

    payloads_t p = {0};
    load_fixture_payloads(&p);
    uint64_t framed = 0;
    for (size_t k = 0; k < p.count; k++) {
        framed += assert_framed_as_parsed(shape, p.bytes[k], p.len[k], "fixture");
        assert_shaped_as_parsed(shape, p.bytes[k], p.len[k], "fixture");
    }
    /* vLLM's, SGLang's and the reasoning fixture's token payloads each repeat one shape */
    assert_true(chunk_shape_hits(shape) - framed - (uint64_t)(2 * (n - 1)) > p.count / 2);
    assert_true(framed > p.count / 2);
    free_payloads(&p);
    chunk_shape_destroy(&shape);
    assert_null(shape);
}

/* Every byte of the next payload replaced, inserted before or deleted, with the shape made from
 * the payload before it: inside a hole (the id, the text, sent_ns) the shape still reads it,
 * elsewhere it parses in full; chunk_parse's result either way. */
static void
test_chunk_shape_every_byte_of_the_next_payload_changed_reads_as_chunk_parse(void **state) {
    static const char bytes[] = {'"', '\\', '\x01', ' ', '}', ']', ',', ':',  'x',
                                 '0', '9',  '-',    '.', 'e', 'n', '{', '\n', '\r'};
    static const char *const shapes[][2] = {
        {"{\"id\":\"a1\",\"created\":17,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":"
         "{\"content\":\"tok\"},\"finish_reason\":null}],\"sent_ns\":123456789}",
         "{\"id\":\"b22\",\"created\":18,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":"
         "{\"content\":\"x\\\"y\"},\"finish_reason\":null}],\"sent_ns\":1234567890123}"},
        {"{\"id\":\"r\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":"
         "{\"reasoning_content\":\"hm\"}}],\"usage\":{\"completion_tokens\":3}}",
         "{\"id\":\"r\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":"
         "{\"reasoning_content\":\"so \"}}],\"usage\":{\"completion_tokens\":3}}"},
        {"{ \"id\" : \"s\" , \"choices\" : [ { \"text\" : \"a\" } ] , \"sent_ns\" : 5 }",
         "{ \"id\" : \"t\" , \"choices\" : [ { \"text\" : \"bc\" } ] , \"sent_ns\" : 60 }"},
        /* "object" is read (vLLM's older error form): never a hole */
        {"{\"object\":\"chat.completion.chunk\",\"message\":\"m\",\"choices\":[{\"delta\":"
         "{\"content\":\"a\"}}]}",
         "{\"object\":\"error\",\"message\":\"m\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}"},
    };
    char work[512];
    uint64_t hits = 0, misses = 0, framed = 0, unframed = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const char *first = shapes[k][0], *next = shapes[k][1];
        size_t n = strlen(next);
        for (size_t at = 0; at <= n; at++)
            for (size_t b = 0; b < sizeof bytes + 1; b++)
                for (int op = 0; op < 3; op++) {
                    chunk_shape_t *shape = chunk_shape_new();
                    assert_shaped_as_parsed(shape, first, strlen(first), "first");
                    size_t len = n;
                    memcpy(work, next, n);
                    if (op == 0 && at < n && b < sizeof bytes) { /* replaced */
                        work[at] = bytes[b];
                    } else if (op == 1 && b < sizeof bytes) { /* inserted */
                        memmove(work + at + 1, work + at, n - at);
                        work[at] = bytes[b];
                        len++;
                    } else if (op == 2 && at < n && b == sizeof bytes) { /* deleted */
                        memmove(work + at, work + at + 1, n - at - 1);
                        len--;
                    } else {
                        chunk_shape_destroy(&shape);
                        continue;
                    }
                    bool read = assert_framed_as_parsed(shape, work, len, "changed");
                    framed += read;
                    unframed += !read;
                    assert_shaped_as_parsed(shape, work, len, "changed");
                    hits += chunk_shape_hits(shape);
                    misses += chunk_shape_misses(shape) - 1;
                    chunk_shape_destroy(&shape);
                }
    }
    /* both ways are taken often, or the comparison shows nothing */
    assert_true(hits > 500);
    assert_true(misses > 5000);
    assert_true(framed > 250);
    assert_true(unframed > 5000);
}

/* A shape made from a data event of several lines, joined with LF, has raw LF between its JSON
 * tokens: a payload read from it is not one SSE line, so it is never read from a stream's bytes
 * (chunk_parse_shaped still reads the joined payloads from it). A payload cut short of its "\n\n",
 * or ended with CRLFs, is not read either: the SSE parser gets it. */
static void test_chunk_frame_reads_one_line_only(void **state) {
    static const char joined[] = "{\"id\":\"a\",\n\"choices\":[{\"delta\":{\"content\":\"x\"}}]}";
    static const char joined2[] = "{\"id\":\"b\",\n\"choices\":[{\"delta\":{\"content\":\"y\"}}]}";
    static const char token[] = "{\"id\":\"a\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}";
    static const char *const ends[] = {"", "\n", "\r\n\r\n", "\n\r\n", " \n\n"};
    chunk_shape_t *shape = chunk_shape_new();
    chunk_info_t info;
    assert_int_equal(chunk_frame_shaped(shape, token, strlen(token), &info), 0); /* no shape */
    assert_shaped_as_parsed(shape, joined, strlen(joined), "joined");
    assert_false(assert_framed_as_parsed(shape, joined2, strlen(joined2), "joined"));
    uint64_t hits = chunk_shape_hits(shape);
    assert_shaped_as_parsed(shape, joined2, strlen(joined2), "joined");
    assert_int_equal(chunk_shape_hits(shape), hits + 1);

    assert_shaped_as_parsed(shape, token, strlen(token), "token"); /* the shape now */
    char buf[256];
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        int n = snprintf(buf, sizeof buf, "%s%s", token, ends[i]);
        assert_int_equal(chunk_frame_shaped(shape, buf, (size_t)n, &info), 0);
    }
    int n = snprintf(buf, sizeof buf, "%s\n\n", token);
    assert_int_equal(chunk_frame_shaped(shape, buf, (size_t)n, &info), strlen(token));
    assert_true(info.has_content && info.content == buf + strlen(token) - 6);
    chunk_shape_destroy(&shape);
}

/* content_plain: the shape's read says the text has no escape (its raw bytes are the text), only
 * when it has none; chunk_parse does not know and says false. */
static void test_chunk_shape_says_when_the_content_needs_no_decoding(void **state) {
    static const char token[] = "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}";
    static const char plain[] = "{\"id\":\"y\",\"choices\":[{\"delta\":{\"content\":\"b c\"}}]}";
    static const char escaped[] =
        "{\"id\":\"y\",\"choices\":[{\"delta\":{\"content\":\"b\\nc\"}}]}";
    chunk_shape_t *shape = chunk_shape_new();
    chunk_info_t info;
    assert_int_equal(chunk_parse_shaped(shape, token, strlen(token), &info), 0); /* learns */
    uint64_t hits = chunk_shape_hits(shape);
    assert_int_equal(chunk_parse_shaped(shape, plain, strlen(plain), &info), 0);
    assert_true(info.content_plain);
    assert_int_equal(info.content_len, 3);
    assert_int_equal(chunk_parse_shaped(shape, escaped, strlen(escaped), &info), 0);
    assert_false(info.content_plain);
    assert_int_equal(info.content_len, 4);
    assert_int_equal(chunk_shape_hits(shape), hits + 2);
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s\n\n", plain);
    assert_int_equal(chunk_frame_shaped(shape, buf, (size_t)n, &info), strlen(plain));
    assert_true(info.content_plain);
    assert_int_equal(chunk_parse(plain, strlen(plain), &info), 0);
    assert_false(info.content_plain);
    chunk_shape_destroy(&shape);
}

/* A payload that cannot be a shape (a finish_reason, an error, [DONE], two texts, too long) is
 * parsed in full and leaves the shape as it was, so the stream's next token is read from it. */
static void test_chunk_shape_is_kept_across_payloads_that_cannot_be_one(void **state) {
    static const char token[] = "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}";
    static const char token2[] = "{\"id\":\"yy\",\"choices\":[{\"delta\":{\"content\":\"b\"}}]}";
    static const char *const others[] = {
        "{\"id\":\"x\",\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}",
        "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}",
        "{\"error\":{\"message\":\"boom\",\"code\":500}}",
        "[DONE]",
        "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\",\"reasoning\":\"b\"}}]}",
        "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\",\"refusal\":\"no\"}}]}",
        "{\"object\":\"error\",\"message\":\"m\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
        "{\"sent_ns\":1,\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"sent_ns\":2}",
        "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]",
    };
    chunk_shape_t *shape = chunk_shape_new();
    assert_shaped_as_parsed(shape, token, strlen(token), "token");
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        uint64_t hits = chunk_shape_hits(shape);
        assert_shaped_as_parsed(shape, others[i], strlen(others[i]), "other");
        assert_shaped_as_parsed(shape, others[i], strlen(others[i]), "other again");
        assert_int_equal(chunk_shape_hits(shape), hits);
        assert_shaped_as_parsed(shape, token2, strlen(token2), "next token");
        assert_int_equal(chunk_shape_hits(shape), hits + 1);
    }
    /* of another shape, and longer than a shape holds: parsed in full every time (a long
     * text in the shape's own hole is still read from it) */
    char big[1400];
    int n = snprintf(
        big, sizeof big,
        "{\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"%01200d\"}}]}", 7);
    uint64_t hits = chunk_shape_hits(shape);
    assert_shaped_as_parsed(shape, big, (size_t)n, "long");
    assert_shaped_as_parsed(shape, big, (size_t)n, "long again");
    assert_int_equal(chunk_shape_hits(shape), hits);
    chunk_shape_destroy(&shape);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_vllm_role_chunk_has_empty_content),
        cmocka_unit_test(test_chunk_shape_says_when_the_content_needs_no_decoding),
        cmocka_unit_test(test_chunk_refusal_delta_is_read_and_its_empty_first_piece_is_no_token),
        cmocka_unit_test(test_chunk_finish_reasons_map_to_their_class),
        cmocka_unit_test(test_chunk_vllm_content_chunk),
        cmocka_unit_test(test_chunk_vllm_finish_chunk),
        cmocka_unit_test(test_chunk_vllm_usage_chunk_with_cached_tokens),
        cmocka_unit_test(test_chunk_sglang_nulls_are_absent_values),
        cmocka_unit_test(test_chunk_reasoning_content_and_reasoning),
        cmocka_unit_test(test_chunk_completions_text),
        cmocka_unit_test(test_chunk_tool_calls_present_only_when_non_empty),
        cmocka_unit_test(test_chunk_content_only_from_choices_0_delta),
        cmocka_unit_test(test_chunk_error_object_forms),
        cmocka_unit_test(test_chunk_sent_ns_is_read_as_int64),
        cmocka_unit_test(test_chunk_integers_of_every_length_end_where_their_digits_do),
        cmocka_unit_test(test_chunk_inlined_null_and_zero_keep_the_grammar),
        cmocka_unit_test(test_chunk_member_separators_with_and_without_space),
        cmocka_unit_test(test_chunk_usage_numbers_saturate),
        cmocka_unit_test(test_chunk_done_only_when_exact),
        cmocka_unit_test(test_chunk_pretty_printed_json_with_whitespace),
        cmocka_unit_test(test_chunk_malformed_json_returns_minus_1_and_zeroes),
        cmocka_unit_test(test_chunk_every_strict_prefix_of_a_chunk_is_malformed),
        cmocka_unit_test(test_chunk_deep_nesting_is_refused_without_crashing),
        cmocka_unit_test(test_chunk_unescape_simple_escapes),
        cmocka_unit_test(test_chunk_unescape_unicode_and_surrogate_pairs),
        cmocka_unit_test(test_chunk_unescape_lone_surrogates_and_bad_escapes),
        cmocka_unit_test(test_chunk_vllm_stream_reassembles_the_reply),
        cmocka_unit_test(test_chunk_ascii_escaped_stream_gives_the_same_reply),
        cmocka_unit_test(test_chunk_reasoning_stream_counts_thoughts_then_answer),
        cmocka_unit_test(test_chunk_tool_call_stream),
        cmocka_unit_test(test_chunk_sglang_and_completions_streams),
        cmocka_unit_test(test_chunk_error_event_stream),
        cmocka_unit_test(test_chunk_fuzzed_chunks_agree_with_jansson_and_never_crash),
        cmocka_unit_test(test_chunk_every_byte_of_every_fixture_event_replaced_agrees_with_jansson),
        cmocka_unit_test(test_chunk_every_prefix_of_every_fixture_event_is_refused),
        cmocka_unit_test(test_chunk_string_scan_finds_each_special_byte_at_every_offset),
        cmocka_unit_test(
            test_chunk_whitespace_around_every_token_of_every_fixture_event_changes_nothing),
        cmocka_unit_test(test_chunk_fields_found_in_any_key_order),
        cmocka_unit_test(test_chunk_nesting_limit_is_128_levels),
        cmocka_unit_test(test_chunk_keys_match_only_exactly),
        cmocka_unit_test(test_chunk_integers_at_the_limits_of_each_field),
        cmocka_unit_test(test_chunk_number_scan_stops_at_every_offset),
        cmocka_unit_test(test_chunk_shape_reads_each_servers_payloads_as_chunk_parse_does),
        cmocka_unit_test(
            test_chunk_shape_every_byte_of_the_next_payload_changed_reads_as_chunk_parse),
        cmocka_unit_test(test_chunk_shape_is_kept_across_payloads_that_cannot_be_one),
        cmocka_unit_test(test_chunk_frame_reads_one_line_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
