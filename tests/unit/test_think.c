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

/* A reply's events and, per event, the kind and `earlier` verdict they must get. kinds: R
 * reasoning, A answer, U undecided; earlier: = as counted, a the undecided ones were answer, r the
 * answer was reasoning; '.' is not checked. */
typedef struct think_case {
    const char *name;
    const think_tags_t *tags;
    const char *events[9]; /* NULL after the last */
    const char *kinds, *earlier;
} think_case_t;

static const think_tags_t off = {0};
static const think_tags_t custom = {"[THINK]", 7, "[/THINK]", 8};

static const think_case_t cases[] = {
    /* both tags belong to the block */
    {"a Qwen3 block, then the answer",
     &tags,
     {"<think>", "\n", "Okay", ".", "</think>", "\n\n", "The", " end"},
     "RRRRRAAA",
     "========"},
    /* "<thi" could still be an answer; the next event says it was reasoning; the tag ends in the
     * fifth event, where the answer begins */
    {"tags split across events are found",
     &tags,
     {"<thi", "nk>Let me", " see</th", "in", "k>\n\nYes", "!"},
     "URRRAA",
     ".=...."},
    {"open, close and answer in one event",
     &tags,
     {"<think>\n\n</think>\n\nHello", " there"},
     "AA",
     ".."},
    /* leading whitespace is undecided; "<b>" is not "<think>"; an opening tag counts only at the
     * start */
    {"a reply without tags is answer from its first text",
     &tags,
     {"\n", "<b>", "Hi", " <think> is a tag"},
     "UAAA",
     ".a.="},
    /* an R1 distill whose template wrote <think> into the prompt: only the closing tag comes */
    {"a closing tag without an opening moves the answer to reasoning",
     &tags,
     {"Okay", ", so", "</think>", "\n\n", "Paris"},
     "AARAA",
     "..r=."},
    {"only the first closing tag counts",
     &tags,
     {"<think>", "a", "</think>", "b", "</think>", "c"},
     "...AA.",
     "....=."},
    {"off makes every event answer", &off, {"<think>", "a", "</think>", "b"}, "AAAA", "===="},
    {"other tags are honoured",
     &custom,
     {"[THINK]", "hm", "<think>", "[/THI", "NK]ok"},
     "R.RRA",
     "....."},
};

static char kind_letter(think_kind_t kind) {
    return kind == THINK_IS_REASONING ? 'R' : kind == THINK_IS_ANSWER ? 'A' : 'U';
}

static char earlier_letter(int earlier) {
    return earlier == THINK_EARLIER_UNDECIDED_WERE_ANSWER  ? 'a'
           : earlier == THINK_EARLIER_ANSWER_WAS_REASONING ? 'r'
                                                           : '=';
}

/* Feeds each case's events one after another as a stream does (the reply text grows by each one):
 * every event gets the kind and `earlier` verdict the case gives it. */
static void test_think_events_get_the_kind_the_reply_so_far_says(void **state) {
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const think_case_t *tc = &cases[c];
        char reply[1024];
        size_t len = 0, n = 0;
        think_t think;
        think_reset(&think, tc->tags);
        for (; tc->events[n]; n++) {
            size_t from = len, add = strlen(tc->events[n]);
            assert_true(len + add < sizeof reply);
            memcpy(reply + len, tc->events[n], add);
            len += add;
            think_event_t ev = think_feed(&think, tc->tags, reply, from, len);
            char kind = kind_letter(ev.kind), earlier = earlier_letter((int)ev.earlier);
            if (tc->kinds[n] != '.' && tc->kinds[n] != kind)
                fail_msg("%s: event %zu is %c, expected %c", tc->name, n, kind, tc->kinds[n]);
            if (tc->earlier[n] != '.' && tc->earlier[n] != earlier)
                fail_msg("%s: event %zu says earlier %c, expected %c", tc->name, n, earlier,
                         tc->earlier[n]);
        }
        assert_int_equal(strlen(tc->kinds), n);
        assert_int_equal(strlen(tc->earlier), n);
    }
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

UNIT_MAIN(cmocka_unit_test(test_think_events_get_the_kind_the_reply_so_far_says),
          cmocka_unit_test(test_think_any_split_agrees_with_the_whole_text))
