/* The mock's streamed chunks: vLLM's JSON shape, sent_ns, usage, and its helpers (word
 * tokenizer, reply words, metric text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "mock_chunk.h"
#include "mock_metrics.h"
#include "mock_tokens.h"
#include "mock_vocab.h"
#include "prompt.h"
#include "support.h"

static json_t *parse_event(const char *start, const char *end) {
    assert_true(end - start > 8);
    assert_memory_equal(start, "data: ", 6);
    assert_memory_equal(end - 2, "\n\n", 2);
    json_error_t err;
    json_t *v = json_loadb(start + 6, (size_t)(end - start - 8), 0, &err);
    if (!v)
        fail_msg("chunk is not JSON: %s: %.*s", err.text, (int)(end - start), start);
    return v;
}

/* Writes the event of a token `word` that does not end the stream into buf (to *end); parsed. */
static json_t *token_event(const mock_chunk_head_t *head, const char *word, int64_t sent_ns,
                           char *buf, char **end) {
    *end = mock_chunk_token(buf, head, word, strlen(word), false, NULL, NULL, sent_ns);
    return parse_event(buf, *end);
}

/* Fails quoting `text` unless it contains `needle`. */
static void assert_contains(const char *text, const char *needle) {
    if (!strstr(text, needle))
        fail_msg("no \"%s\" in:\n%s", needle, text);
}

static void test_mock_chunk_token_matches_vllms_chat_chunk(void **state) {
    mock_chunk_head_t head;
    mock_chunk_head_init(&head, MOCK_API_CHAT, "chatcmpl-abc", 1700000000, "m\\\"q");
    char buf[2048], *end;
    json_t *got = token_event(&head, " word", 123456789012345, buf, &end);
    json_t *want =
        json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:{s:s}, s:n, s:n}], s:I}", "id", "chatcmpl-abc",
                  "object", "chat.completion.chunk", "created", (json_int_t)1700000000, "model",
                  "m\"q", "choices", "index", 0, "delta", "content", " word", "logprobs",
                  "finish_reason", "sent_ns", (json_int_t)123456789012345);
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    /* The same object, key for key in vLLM's order. */
    const char *expected = "data: {\"id\":\"chatcmpl-abc\",\"object\":\"chat.completion.chunk\","
                           "\"created\":1700000000,\"model\":\"m\\\"q\",\"choices\":[{\"index\":0,"
                           "\"delta\":{\"content\":\" word\"},\"logprobs\":null,\"finish_reason\":"
                           "null}],\"sent_ns\":123456789012345}\n\n";
    assert_int_equal(end - buf, (long)strlen(expected));
    assert_memory_equal(buf, expected, strlen(expected));
    assert_true((size_t)(end - buf) <= mock_chunk_max_bytes(&head, 5));
}

static void test_mock_chunk_last_token_and_usage_chunk(void **state) {
    mock_chunk_head_t head;
    mock_chunk_head_init(&head, MOCK_API_CHAT, "chatcmpl-x", 1, "m");
    mock_chunk_usage_t usage = {.prompt_tokens = 12, .completion_tokens = 4, .cached_tokens = 2};
    char buf[4096];
    char *p = mock_chunk_token(buf, &head, "w", 1, true, "length", &usage, 5);
    json_t *last = parse_event(buf, p);
    json_t *choice = json_array_get(json_object_get(last, "choices"), 0);
    assert_string_equal(json_string_value(json_object_get(choice, "finish_reason")), "length");
    assert_true(json_is_null(json_object_get(choice, "stop_reason")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(choice, "delta"), "reasoning_content")),
        "w");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(last, "usage"), "total_tokens")), 16);
    json_decref(last);
    char *q = mock_chunk_usage(p, &head, &usage, 6);
    json_t *u = parse_event(p, q);
    json_t *want = json_pack("{s:i, s:i, s:i, s:{s:i}}", "prompt_tokens", 12, "completion_tokens",
                             4, "total_tokens", 16, "prompt_tokens_details", "cached_tokens", 2);
    assert_true(json_equal(json_object_get(u, "usage"), want));
    assert_int_equal(json_array_size(json_object_get(u, "choices")), 0);
    json_decref(u);
    json_decref(want);
    char *r = mock_chunk_done(q);
    assert_memory_equal(q, "data: [DONE]\n\n", (size_t)(r - q));
}

static void test_mock_chunk_completions_and_role_chunks(void **state) {
    mock_chunk_head_t head;
    mock_chunk_head_init(&head, MOCK_API_COMPLETIONS, "cmpl-1", 2, "m");
    char buf[2048], *p;
    json_t *c = token_event(&head, " t", 7, buf, &p);
    assert_string_equal(json_string_value(json_object_get(c, "object")), "text_completion");
    json_t *choice = json_array_get(json_object_get(c, "choices"), 0);
    assert_string_equal(json_string_value(json_object_get(choice, "text")), " t");
    assert_true(json_is_null(json_object_get(choice, "stop_reason")));
    json_decref(c);
    mock_chunk_head_init(&head, MOCK_API_CHAT, "chatcmpl-1", 2, "m");
    p = mock_chunk_role(buf, &head, 9);
    c = parse_event(buf, p);
    json_t *delta = json_object_get(json_array_get(json_object_get(c, "choices"), 0), "delta");
    assert_string_equal(json_string_value(json_object_get(delta, "role")), "assistant");
    assert_string_equal(json_string_value(json_object_get(delta, "content")), "");
    json_decref(c);
    p = mock_chunk_malformed(buf, &head);
    json_error_t err;
    assert_null(json_loadb(buf + 6, (size_t)(p - buf - 8), 0, &err));
}

static void test_mock_chunk_integers(void **state) {
    char buf[64];
    *mock_chunk_put_u64(buf, 0) = '\0';
    assert_string_equal(buf, "0");
    *mock_chunk_put_u64(buf, UINT64_MAX) = '\0';
    assert_string_equal(buf, "18446744073709551615");
}

static void test_mock_tokens_count_whitespace_separated_words(void **state) {
    const char *text = "  one two\tthree\n\nfour  ";
    mock_tokens_t t;
    mock_tokens_init(&t);
    assert_int_equal(mock_tokens_add_text(&t, text, strlen(text)), 0);
    assert_int_equal(t.len, 4);
    assert_true(t.ids[0] == mock_tokens_word_id("one", 3));
    assert_true(t.ids[3] == mock_tokens_word_id("four", 4));
    mock_tokens_clear(&t);
}

static void test_mock_vocab_reply_words_are_deterministic_vocabulary_words(void **state) {
    mock_vocab_t *v = mock_vocab_new();
    uint32_t last = prompt_vocabulary_size() - 1; /* the table holds the whole vocabulary */
    size_t last_len;
    const char *last_word = mock_vocab_json(v, last, false, &last_len);
    assert_int_equal(last_len, strlen(prompt_word(last)));
    assert_memory_equal(last_word, prompt_word(last), last_len);
    uint32_t seen_differ = 0;
    for (uint32_t i = 0; i < 200; i++) {
        uint32_t w = mock_vocab_reply_word(v, 42, i);
        assert_true(w <= last);
        assert_int_equal(w, mock_vocab_reply_word(v, 42, i));
        seen_differ += w != mock_vocab_reply_word(v, 43, i);
        size_t len;
        const char *spaced = mock_vocab_json(v, w, true, &len);
        assert_int_equal(spaced[0], ' ');
        assert_memory_equal(spaced + 1, prompt_word(w), len - 1);
        assert_true(mock_vocab_token(v, w) ==
                    mock_tokens_word_id(prompt_word(w), strlen(prompt_word(w))));
    }
    assert_true(seen_differ > 150); /* another prompt, another reply */
    mock_vocab_destroy(&v);
    assert_null(v);
}

static void test_mock_metrics_histograms_render_cumulative_buckets(void **state) {
    mock_metrics_t m;
    assert_int_equal(mock_metrics_init(&m, "m\"1", 4096), 0);
    prom_histogram_observe(&m.ttft, 0.003);
    prom_histogram_observe(&m.ttft, 0.005); /* le is inclusive */
    prom_histogram_observe(&m.ttft, 3000);
    m.generation_tokens = 80;
    mock_metrics_gauges_t g = {.kv_usage = 0.25};
    buffer_t out;
    buffer_init(&out);
    assert_int_equal(mock_metrics_render(&m, &g, &out), 0);
    assert_int_equal(buffer_append(&out, "", 1), 0);
    const char *text = out.data;
    assert_contains(text, "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.001\","
                          "model_name=\"m\\\"1\"} 0.0\n");
    assert_contains(text, "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.005\","
                          "model_name=\"m\\\"1\"} 2.0\n");
    assert_contains(text, "le=\"2560.0\",model_name=\"m\\\"1\"} 2.0\n");
    assert_contains(text, "le=\"+Inf\",model_name=\"m\\\"1\"} 3.0\n");
    assert_contains(text, "vllm:time_to_first_token_seconds_count{engine=\"0\","
                          "model_name=\"m\\\"1\"} 3.0\n");
    assert_contains(text, "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\\\"1\"} "
                          "80.0\n");
    assert_contains(text, "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\\\"1\"} "
                          "0.25\n");
    /* vLLM's 1-2-5 token buckets stop at max_model_len. */
    assert_contains(text, "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"2000.0\"");
    assert_null(strstr(text, "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"5000.0\""));
    buffer_clear(&out);
    mock_metrics_clear(&m);
}

UNIT_MAIN(cmocka_unit_test(test_mock_chunk_token_matches_vllms_chat_chunk),
          cmocka_unit_test(test_mock_chunk_last_token_and_usage_chunk),
          cmocka_unit_test(test_mock_chunk_completions_and_role_chunks),
          cmocka_unit_test(test_mock_chunk_integers),
          cmocka_unit_test(test_mock_tokens_count_whitespace_separated_words),
          cmocka_unit_test(test_mock_vocab_reply_words_are_deterministic_vocabulary_words),
          cmocka_unit_test(test_mock_metrics_histograms_render_cumulative_buckets))
