/* common/think: reasoning between tags inside the reply's content, event by event. */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <string.h>

#include "think.h"

static const think_tags_t tags = {"<think>", 7, "</think>", 8};

/* Feeds the events one after another as a stream does (the reply text grows by each one) and
 * writes each event's kind and `earlier` verdict. */
static void feed_all(const think_tags_t *t, const char *const *events, size_t n,
                     think_kind_t *kinds, int *earlier) {
    char reply[1024];
    size_t len = 0;
    think_t think;
    think_reset(&think, t);
    for (size_t i = 0; i < n; i++) {
        size_t from = len;
        size_t add = strlen(events[i]);
        assert_true(len + add < sizeof reply);
        memcpy(reply + len, events[i], add);
        len += add;
        think_event_t ev = think_feed(&think, t, reply, from, len);
        kinds[i] = ev.kind;
        earlier[i] = (int)ev.earlier;
    }
}

static void test_think_qwen3_block_then_answer(void **state) {
    const char *events[] = {"<think>", "\n", "Okay", ".", "</think>", "\n\n", "The", " end"};
    think_kind_t k[8];
    int e[8];
    feed_all(&tags, events, 8, k, e);
    for (int i = 0; i < 5; i++)
        assert_int_equal(k[i], THINK_IS_REASONING); /* both tags belong to the block */
    for (int i = 5; i < 8; i++)
        assert_int_equal(k[i], THINK_IS_ANSWER);
    for (int i = 0; i < 8; i++)
        assert_int_equal(e[i], THINK_EARLIER_AS_COUNTED);
}

static void test_think_tags_split_across_events_are_found(void **state) {
    const char *events[] = {"<thi", "nk>Let me", " see</th", "in", "k>\n\nYes", "!"};
    think_kind_t k[6];
    int e[6];
    feed_all(&tags, events, 6, k, e);
    assert_int_equal(k[0], THINK_IS_UNDECIDED); /* could still be an answer starting "<thi" */
    assert_int_equal(k[1], THINK_IS_REASONING);
    assert_int_equal(e[1], THINK_EARLIER_AS_COUNTED); /* so the undecided one was reasoning */
    assert_int_equal(k[2], THINK_IS_REASONING);
    assert_int_equal(k[3], THINK_IS_REASONING);
    assert_int_equal(k[4], THINK_IS_ANSWER); /* the tag ends here and the answer begins */
    assert_int_equal(k[5], THINK_IS_ANSWER);
}

static void test_think_open_close_and_answer_in_one_event(void **state) {
    const char *events[] = {"<think>\n\n</think>\n\nHello", " there"};
    think_kind_t k[2];
    int e[2];
    feed_all(&tags, events, 2, k, e);
    assert_int_equal(k[0], THINK_IS_ANSWER);
    assert_int_equal(k[1], THINK_IS_ANSWER);
}

static void test_think_reply_without_tags_is_answer_from_its_first_text(void **state) {
    const char *events[] = {"\n", "<b>", "Hi", " <think> is a tag"};
    think_kind_t k[4];
    int e[4];
    feed_all(&tags, events, 4, k, e);
    assert_int_equal(k[0], THINK_IS_UNDECIDED); /* leading whitespace */
    assert_int_equal(k[1], THINK_IS_ANSWER);    /* "<b>" is not "<think>" */
    assert_int_equal(e[1], THINK_EARLIER_UNDECIDED_WERE_ANSWER);
    assert_int_equal(k[2], THINK_IS_ANSWER);
    assert_int_equal(k[3], THINK_IS_ANSWER); /* an opening tag counts only at the start */
    assert_int_equal(e[3], THINK_EARLIER_AS_COUNTED);
}

/* An R1 distill whose chat template wrote <think> into the prompt: only the closing tag comes. */
static void test_think_closing_tag_without_opening_moves_the_answer_to_reasoning(void **state) {
    const char *events[] = {"Okay", ", so", "</think>", "\n\n", "Paris"};
    think_kind_t k[5];
    int e[5];
    feed_all(&tags, events, 5, k, e);
    assert_int_equal(k[0], THINK_IS_ANSWER);
    assert_int_equal(k[1], THINK_IS_ANSWER);
    assert_int_equal(k[2], THINK_IS_REASONING);
    assert_int_equal(e[2], THINK_EARLIER_ANSWER_WAS_REASONING);
    assert_int_equal(k[3], THINK_IS_ANSWER);
    assert_int_equal(e[3], THINK_EARLIER_AS_COUNTED);
    assert_int_equal(k[4], THINK_IS_ANSWER);
}

static void test_think_only_the_first_closing_tag_counts(void **state) {
    const char *events[] = {"<think>", "a", "</think>", "b", "</think>", "c"};
    think_kind_t k[6];
    int e[6];
    feed_all(&tags, events, 6, k, e);
    assert_int_equal(k[3], THINK_IS_ANSWER);
    assert_int_equal(k[4], THINK_IS_ANSWER);
    assert_int_equal(e[4], THINK_EARLIER_AS_COUNTED);
}

static void test_think_off_makes_every_event_answer(void **state) {
    const think_tags_t off = {0};
    const char *events[] = {"<think>", "a", "</think>", "b"};
    think_kind_t k[4];
    int e[4];
    feed_all(&off, events, 4, k, e);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(k[i], THINK_IS_ANSWER);
        assert_int_equal(e[i], THINK_EARLIER_AS_COUNTED);
    }
}

static void test_think_other_tags_are_honoured(void **state) {
    const think_tags_t custom = {"[THINK]", 7, "[/THINK]", 8};
    const char *events[] = {"[THINK]", "hm", "<think>", "[/THI", "NK]ok"};
    think_kind_t k[5];
    int e[5];
    feed_all(&custom, events, 5, k, e);
    assert_int_equal(k[0], THINK_IS_REASONING);
    assert_int_equal(k[2], THINK_IS_REASONING);
    assert_int_equal(k[3], THINK_IS_REASONING);
    assert_int_equal(k[4], THINK_IS_ANSWER);
}

/* What the events are when the whole reply is known: reasoning up to the end of the first closing
 * tag when the reply opens with the tag or a closing tag comes (to its end when none closes it),
 * answer once an event ends after that point. */
static size_t whole_text_reasoning_end(const char *reply, size_t len) {
    size_t ws = 0;
    while (ws < len && strchr(" \n\r\t", reply[ws]))
        ws++;
    const char *close;
    if (len - ws >= 7 && memcmp(reply + ws, "<think>", 7) == 0) {
        close = memmem(reply + ws + 7, len - ws - 7, "</think>", 8);
        return close ? (size_t)(close - reply) + 8 : len + 1;
    }
    close = memmem(reply, len, "</think>", 8);
    return close ? (size_t)(close - reply) + 8 : 0;
}

/* Random replies of tag pieces, split at random points: fed event by event with the corrections
 * a stream applies (think_event_t.earlier, undecided ones resolved as answer at the end), every
 * event gets the class the whole text says. */
static void test_think_any_split_agrees_with_the_whole_text(void **state) {
    static const char *const pieces[] = {"<think>", "</think>", "<th", "ink>", "</th",     "a", " ",
                                         "\n",      "<",        "/",   ">",    "x</think", "k"};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 20000; round++) {
        char reply[256];
        size_t len = 0;
        int n_pieces = 1 + (int)((seed >> 33) % 8);
        for (int i = 0; i < n_pieces; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const char *p = pieces[(seed >> 33) % (sizeof pieces / sizeof pieces[0])];
            memcpy(reply + len, p, strlen(p));
            len += strlen(p);
        }
        size_t ends[256];
        size_t n_events = 0;
        for (size_t at = 0; at < len;) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t step = 1 + (seed >> 33) % 6;
            at = at + step < len ? at + step : len;
            ends[n_events++] = at;
        }
        think_t think;
        think_reset(&think, &tags);
        think_kind_t label[256];
        for (size_t i = 0; i < n_events; i++) {
            think_event_t ev = think_feed(&think, &tags, reply, i ? ends[i - 1] : 0, ends[i]);
            for (size_t j = 0; j < i; j++) {
                if (ev.earlier == THINK_EARLIER_UNDECIDED_WERE_ANSWER &&
                    label[j] == THINK_IS_UNDECIDED)
                    label[j] = THINK_IS_ANSWER;
                if (ev.earlier == THINK_EARLIER_ANSWER_WAS_REASONING && label[j] == THINK_IS_ANSWER)
                    label[j] = THINK_IS_REASONING;
                if (ev.kind != THINK_IS_UNDECIDED && label[j] == THINK_IS_UNDECIDED)
                    label[j] = THINK_IS_REASONING;
            }
            label[i] = ev.kind;
        }
        size_t end = whole_text_reasoning_end(reply, len);
        for (size_t i = 0; i < n_events; i++) {
            think_kind_t want = ends[i] > end ? THINK_IS_ANSWER : THINK_IS_REASONING;
            think_kind_t got = label[i] == THINK_IS_UNDECIDED ? THINK_IS_ANSWER : label[i];
            if (got != want)
                fail_msg("round %d: '%.*s' event %zu (ending at %zu): %d, expected %d", round,
                         (int)len, reply, i, ends[i], got, want);
        }
    }
}

UNIT_MAIN(cmocka_unit_test(test_think_qwen3_block_then_answer),
          cmocka_unit_test(test_think_tags_split_across_events_are_found),
          cmocka_unit_test(test_think_open_close_and_answer_in_one_event),
          cmocka_unit_test(test_think_reply_without_tags_is_answer_from_its_first_text),
          cmocka_unit_test(test_think_closing_tag_without_opening_moves_the_answer_to_reasoning),
          cmocka_unit_test(test_think_only_the_first_closing_tag_counts),
          cmocka_unit_test(test_think_off_makes_every_event_answer),
          cmocka_unit_test(test_think_other_tags_are_honoured),
          cmocka_unit_test(test_think_any_split_agrees_with_the_whole_text))
