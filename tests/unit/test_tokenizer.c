#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prompt.h"
#include "reply_tokens.h"
#include "tokenizer.h"

/* A small byte-level BPE tokenizer.json: the 256 byte tokens (id = byte), then ab 256, bc 257,
 * abc 258, aa 259, with merges in rank order "b c", "a b", "ab c", "a a"; the added token <s> 260;
 * the Split regex \p{L}+|\s+|[^\s\p{L}]+ (Isolated) then ByteLevel. */
static char *write_tokenizer(const char *normalizer, bool ignore_merges) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/stampede-tokenizer-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"normalizer\": %s, \"added_tokens\": [{\"id\": 260, \"content\": \"<s>\", "
            "\"special\": true, \"normalized\": false}],\n",
            normalizer);
    fprintf(f, "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
               "\"Split\", \"pattern\": {\"Regex\": \"\\\\p{L}+|\\\\s+|[^\\\\s\\\\p{L}]+\"}, "
               "\"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
               "\"add_prefix_space\": false, \"use_regex\": false}]},\n");
    fprintf(f,
            "\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", "
            "\"ignore_merges\": %s, \"vocab\": {",
            ignore_merges ? "true" : "false");
    int next = 256;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        int cp = printable ? b : next++;
        if (cp == '"' || cp == '\\')
            fprintf(f, "\"\\%c\": %d, ", cp, b);
        else if (cp < 0x80)
            fprintf(f, "\"%c\": %d, ", cp, b);
        else
            fprintf(f, "\"%c%c\": %d, ", 0xC0 | cp >> 6, 0x80 | (cp & 0x3F), b);
    }
    fprintf(f, "\"ab\": 256, \"bc\": 257, \"abc\": 258, \"aa\": 259, \"<s>\": 260}, "
               "\"merges\": [\"b c\", \"a b\", \"ab c\", \"a a\"]}}\n");
    fclose(f);
    return path;
}

static tokenizer_t *load(const char *normalizer, bool ignore_merges) {
    char *path = write_tokenizer(normalizer, ignore_merges);
    char err[512];
    tokenizer_t *tok = NULL;
    int rc = tokenizer_load(path, &tok, err, sizeof err);
    unlink(path);
    if (rc < 0)
        fail_msg("%s", err);
    return tok;
}

/* Encodes text and checks it gives exactly the ids expected (n of them). */
static void expect_ids(const tokenizer_t *tok, const char *text, size_t len,
                       const uint32_t *expected, size_t n) {
    tokenizer_scratch_t *scratch = tokenizer_scratch_new();
    uint32_t ids[64];
    long got = tokenizer_encode(tok, scratch, text, len, ids, 64);
    assert_int_equal(got, (long)n);
    for (size_t i = 0; i < n; i++)
        if (ids[i] != expected[i])
            fail_msg("'%.*s': id %zu is %u, expected %u", (int)len, text, i, ids[i], expected[i]);
    tokenizer_scratch_destroy(&scratch);
}

static void test_tokenizer_merges_apply_lowest_rank_first(void **state) {
    tokenizer_t *tok = load("null", false);
    expect_ids(tok, "abc", 3, (uint32_t[]){'a', 257}, 2); /* "b c" (rank 0) before "a b" */
    expect_ids(tok, "abx", 3, (uint32_t[]){256, 'x'}, 2);
    expect_ids(tok, "aaa", 3, (uint32_t[]){259, 'a'}, 2); /* equal ranks: leftmost first */
    expect_ids(tok, "ab ab", 5, (uint32_t[]){256, ' ', 256}, 3);
    tokenizer_destroy(&tok);
    assert_null(tok);
}

static void test_tokenizer_ignore_merges_takes_a_whole_word_token(void **state) {
    tokenizer_t *tok = load("null", true);
    expect_ids(tok, "abc", 3, (uint32_t[]){258}, 1);
    tokenizer_destroy(&tok);
}

static void test_tokenizer_added_token_splits_the_text_first(void **state) {
    tokenizer_t *tok = load("null", false);
    expect_ids(tok, "x<s>ab", 6, (uint32_t[]){'x', 260, 256}, 3);
    expect_ids(tok, "<s><s>", 6, (uint32_t[]){260, 260}, 2);
    tokenizer_destroy(&tok);
}

static void test_tokenizer_invalid_utf8_becomes_one_replacement_per_maximal_subpart(void **state) {
    tokenizer_t *tok = load("null", false);
    /* \xff alone; \xe4\xb8 a truncated 3-byte character (one subpart); \xed\xa0 a surrogate
     * start (\xed then \xa0 two subparts) */
    expect_ids(tok,
               "a\xff"
               "b",
               3, (uint32_t[]){'a', 0xEF, 0xBF, 0xBD, 'b'}, 5);
    expect_ids(tok, "a\xe4\xb8", 3, (uint32_t[]){'a', 0xEF, 0xBF, 0xBD}, 4);
    expect_ids(tok, "\xed\xa0", 2, (uint32_t[]){0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD}, 6);
    tokenizer_destroy(&tok);
}

static void test_tokenizer_nfc_composes_before_splitting(void **state) {
    tokenizer_t *nfc = load("{\"type\": \"NFC\"}", false), *none = load("null", false);
    expect_ids(nfc, "e\xcc\x81", 3, (uint32_t[]){0xC3, 0xA9}, 2);
    expect_ids(none, "e\xcc\x81", 3, (uint32_t[]){'e', 0xCC, 0x81}, 3);
    tokenizer_destroy(&nfc);
    tokenizer_destroy(&none);
}

static void test_tokenizer_token_ends_count_each_ids_bytes(void **state) {
    tokenizer_t *tok = load("null", false);
    uint32_t ids[] = {256, ' ', 257, 260, 5000}; /* "ab", " ", "bc", "<s>", an id naming nothing */
    assert_int_equal(tokenizer_token_ends(tok, ids, 5), 8);
    static const uint32_t ends[] = {2, 3, 5, 8, 8};
    assert_memory_equal(ids, ends, sizeof ends);
    tokenizer_destroy(&tok);
}

static void test_tokenizer_counter_equals_encode_at_every_split(void **state) {
    tokenizer_t *tok = load("{\"type\": \"NFC\"}", false);
    tokenizer_scratch_t *scratch = tokenizer_scratch_new();
    tokenizer_counter_t *counter = tokenizer_counter_new(tok);
    const char text[] = "aaa abc  <s>x!! e\xcc\x81\xe4\xb8\xad\xff  ab<s";
    size_t len = sizeof text - 1;
    long expected = tokenizer_encode(tok, scratch, text, len, NULL, 0);
    assert_true(expected > 10);
    for (size_t a = 0; a <= len; a++)
        for (size_t b = a; b <= len; b++) {
            long added, sum = 0;
            tokenizer_counter_reset(counter);
            size_t cuts[] = {0, a, b, len};
            for (int i = 0; i < 3; i++) {
                assert_int_equal(
                    tokenizer_counter_feed(counter, text + cuts[i], cuts[i + 1] - cuts[i], &added),
                    0);
                sum += added;
            }
            assert_int_equal(tokenizer_counter_finish(counter, &added), 0);
            sum += added;
            if (sum != expected || (long)tokenizer_counter_total(counter) != expected)
                fail_msg("cut at %zu and %zu: %ld tokens, encoding gives %ld", a, b, sum, expected);
        }
    tokenizer_counter_destroy(&counter);
    tokenizer_scratch_destroy(&scratch);
    tokenizer_destroy(&tok);
}

static void event(reply_tokens_t *r, const char *text, uint32_t chunk, bool usage) {
    chunk_info_t info = {
        .content = text, .content_len = strlen(text), .has_content = true, .has_usage = usage};
    reply_tokens_event(r, &info, chunk);
}

/* A reply's token counter over the null-normalizer tokenizer, made before and destroyed after
 * each reply_tokens test (cmocka's setup and teardown). */
typedef struct reply {
    tokenizer_t *tok;
    tokenizer_scratch_t *scratch;
    reply_tokens_t *r;
} reply_t;

static int reply_setup(void **state) {
    reply_t *reply = calloc(1, sizeof *reply);
    assert_non_null(reply);
    reply->tok = load("null", false);
    reply->scratch = tokenizer_scratch_new();
    reply->r = reply_tokens_new(reply->tok, reply->scratch);
    *state = reply;
    return 0;
}

static int reply_teardown(void **state) {
    reply_t *reply = *state;
    reply_tokens_destroy(&reply->r);
    tokenizer_scratch_destroy(&reply->scratch);
    tokenizer_destroy(&reply->tok);
    free(reply);
    return 0;
}

static void test_reply_tokens_give_each_token_to_the_chunk_it_ended_in(void **state) {
    reply_tokens_t *r = ((reply_t *)*state)->r;
    event(r, "a", 0, false);
    event(r, "a", 1, false);    /* "aa" is one token, ending in chunk 1 */
    event(r, " xyz", 2, false); /* " ", x, y, z */
    uint16_t k[3];
    assert_int_equal(reply_tokens_finish(r, k, 3), 5);
    /* chunk 0 completed no token: it carries 1, and chunk 2 gives it back */
    assert_int_equal(k[0], 1);
    assert_int_equal(k[1], 1);
    assert_int_equal(k[2], 3);
    reply_tokens_reset(r);
    event(r, "ab\\u0020ab", 0, false); /* JSON-escaped text is unescaped first */
    assert_int_equal(reply_tokens_finish(r, k, 1), 3);
    assert_int_equal(k[0], 3);
}

static void test_reply_tokens_leave_chunks_to_usage_on_every_event(void **state) {
    reply_tokens_t *r = ((reply_t *)*state)->r;
    event(r, "x y", 0, true);
    event(r, "z", 1, true);
    uint16_t k[2] = {7, 9};
    assert_int_equal(reply_tokens_finish(r, k, 2), 4);
    assert_int_equal(k[0], 7); /* untouched */
    assert_int_equal(k[1], 9);
}

static void test_tokenizer_refuses_an_unsupported_file_by_name(void **state) {
    char *path = write_tokenizer("{\"type\": \"Lowercase\"}", false);
    char err[512];
    tokenizer_t *tok = NULL;
    assert_int_equal(tokenizer_load(path, &tok, err, sizeof err), -1);
    assert_null(tok);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "normalizer \"Lowercase\" is not supported"));
    unlink(path);
    assert_int_equal(tokenizer_load("/nonexistent/tokenizer.json", &tok, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/tokenizer.json"));
}

static void test_prompt_words_keep_only_single_token_words(void **state) {
    /* In the small tokenizer only one-letter words ("a") are one token: fewer than 100 of the
     * prompt words qualify, so it is refused. */
    tokenizer_t *tok = load("null", false);
    tokenizer_scratch_t *scratch = tokenizer_scratch_new();
    char err[256];
    prompt_words_t *words = prompt_words_new(tok, scratch, err, sizeof err);
    assert_null(words);
    assert_non_null(strstr(err, "one token each"));
    tokenizer_scratch_destroy(&scratch);
    tokenizer_destroy(&tok);
}

static void test_tokenizer_acquire_shares_one_copy_per_path(void **state) {
    char *path = write_tokenizer("null", false);
    char err[512];
    const tokenizer_t *a = NULL, *b = NULL;
    assert_int_equal(tokenizer_acquire(path, &a, err, sizeof err), 0);
    assert_int_equal(tokenizer_acquire(path, &b, err, sizeof err), 0);
    assert_ptr_equal(a, b);
    tokenizer_release(&a);
    assert_null(a);
    expect_ids(b, "abc", 3, (uint32_t[]){'a', 257}, 2); /* still held by b */
    tokenizer_release(&b);
    unlink(path);
}

UNIT_MAIN(
    cmocka_unit_test(test_tokenizer_merges_apply_lowest_rank_first),
    cmocka_unit_test(test_tokenizer_ignore_merges_takes_a_whole_word_token),
    cmocka_unit_test(test_tokenizer_added_token_splits_the_text_first),
    cmocka_unit_test(test_tokenizer_invalid_utf8_becomes_one_replacement_per_maximal_subpart),
    cmocka_unit_test(test_tokenizer_nfc_composes_before_splitting),
    cmocka_unit_test(test_tokenizer_token_ends_count_each_ids_bytes),
    cmocka_unit_test(test_tokenizer_counter_equals_encode_at_every_split),
    cmocka_unit_test_setup_teardown(test_reply_tokens_give_each_token_to_the_chunk_it_ended_in,
                                    reply_setup, reply_teardown),
    cmocka_unit_test_setup_teardown(test_reply_tokens_leave_chunks_to_usage_on_every_event,
                                    reply_setup, reply_teardown),
    cmocka_unit_test(test_tokenizer_refuses_an_unsupported_file_by_name),
    cmocka_unit_test(test_prompt_words_keep_only_single_token_words),
    cmocka_unit_test(test_tokenizer_acquire_shares_one_copy_per_path))
