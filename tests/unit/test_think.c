/* common/think: reasoning between tags inside the reply's content, event by event. */
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

UNIT_MAIN(cmocka_unit_test(test_think_qwen3_block_then_answer),
          cmocka_unit_test(test_think_tags_split_across_events_are_found),
          cmocka_unit_test(test_think_open_close_and_answer_in_one_event),
          cmocka_unit_test(test_think_reply_without_tags_is_answer_from_its_first_text),
          cmocka_unit_test(test_think_closing_tag_without_opening_moves_the_answer_to_reasoning),
          cmocka_unit_test(test_think_only_the_first_closing_tag_counts),
          cmocka_unit_test(test_think_off_makes_every_event_answer),
          cmocka_unit_test(test_think_other_tags_are_honoured))
