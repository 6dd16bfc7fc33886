#include "think.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

static bool think_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The first occurrence of needle in text[0..len): memchr finds its first byte, so the text of a
 * reply without tags is passed over at memchr's speed. */
static const char *think_find(const char *text, size_t len, const char *needle, size_t needle_len) {
    const char *end = text + len;
    while ((size_t)(end - text) >= needle_len) {
        const char *p = memchr(text, needle[0], (size_t)(end - text) - needle_len + 1);
        if (!p)
            return NULL;
        if (memcmp(p, needle, needle_len) == 0)
            return p;
        text = p + 1;
    }
    return NULL;
}

void think_reset(think_t *self, const think_tags_t *tags) {
    assert(self);
    bool on = tags && tags->open_len && tags->close_len;
    self->phase = on ? THINK_START : THINK_AFTER;
    self->from = 0;
}

size_t think_lookback(const think_t *self, const think_tags_t *tags) {
    assert(self);
    if (self->phase == THINK_START)
        return SIZE_MAX;
    return self->phase == THINK_AFTER ? 0 : tags->close_len - 1;
}

void think_forget(think_t *self, size_t dropped) {
    assert(self && self->phase != THINK_START);
    self->from = self->from > dropped ? self->from - dropped : 0;
}

/* THINK_START: the reply's first text decides whether it opens with the tag. Returns false when
 * the event is decided here (undecided, still). */
static bool think_opening(think_t *self, const think_tags_t *tags, const char *text, size_t len,
                          think_event_t *ev) {
    size_t start = 0;
    while (start < len && think_space(text[start]))
        start++;
    size_t rest = len - start;
    size_t n = rest < tags->open_len ? rest : tags->open_len;
    if (rest == 0 || (rest < tags->open_len && memcmp(text + start, tags->open, n) == 0)) {
        ev->kind = THINK_IS_UNDECIDED;
        return false;
    }
    if (memcmp(text + start, tags->open, n) == 0) {
        self->phase = THINK_INSIDE; /* the undecided events were reasoning, as counted */
        self->from = start + tags->open_len;
    } else {
        self->phase = THINK_ANSWER;
        self->from = start;
        ev->earlier = THINK_EARLIER_UNDECIDED_WERE_ANSWER;
    }
    return true;
}

think_event_t think_feed(think_t *self, const think_tags_t *tags, const char *text,
                         size_t event_from, size_t len) {
    assert(self && event_from <= len);
    think_event_t ev = {THINK_IS_ANSWER, THINK_EARLIER_AS_COUNTED};
    if (self->phase == THINK_AFTER)
        return ev;
    think_phase_t entry = self->phase;
    if (self->phase == THINK_START && !think_opening(self, tags, text, len, &ev))
        return ev;
    /* the closing tag may have begun in the previous event: look back over its last bytes */
    size_t look = event_from > tags->close_len - 1 ? event_from - (tags->close_len - 1) : 0;
    if (look < self->from)
        look = self->from;
    const char *hit = think_find(text + look, len - look, tags->close, tags->close_len);
    if (!hit) {
        ev.kind = self->phase == THINK_INSIDE ? THINK_IS_REASONING : THINK_IS_ANSWER;
        return ev;
    }
    if (self->phase == THINK_ANSWER)
        /* a closing tag with no opening one: the answer so far was reasoning (when the answer
         * began in this very event, the undecided events before it were reasoning, as counted) */
        ev.earlier =
            entry == THINK_ANSWER ? THINK_EARLIER_ANSWER_WAS_REASONING : THINK_EARLIER_AS_COUNTED;
    self->phase = THINK_AFTER;
    ev.kind = (size_t)(hit - text) + tags->close_len < len ? THINK_IS_ANSWER : THINK_IS_REASONING;
    return ev;
}
