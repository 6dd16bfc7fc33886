/* Reasoning written inside the reply's content between tags (target.reasoning_tags, by default
 * <think> and </think>), as Qwen3 and the DeepSeek-R1 distills send it when the server runs no
 * reasoning parser. Fed the reply text event by event, it says whether each content event was
 * reasoning or answer, so that TTFC and the reasoning/answer counts are those of a server that
 * parses the reasoning out. Allocates nothing: it reads the reply text the stream keeps, so a
 * tag split across events is found by looking back over the previous event's last bytes.
 *
 * The opening tag counts only as the reply's first text (whitespace before it allowed). Until
 * the first closing tag, a reply that did not open with the tag is answer; when one comes
 * anyway (an R1 distill whose chat template already wrote <think> into the prompt), everything
 * before it was reasoning, and the caller moves those events over (think_event_t). Only the
 * first closing tag counts: after it, every event is answer. */
#ifndef STAMPEDE_THINK_H
#define STAMPEDE_THINK_H

#include <stdbool.h>
#include <stddef.h>

/* The longest tag target.reasoning_tags accepts, in bytes. */
#define THINK_TAG_MAX 64

/* The tags, not owned; open_len 0 turns the detection off (every content event is answer). */
typedef struct think_tags {
    const char *open;
    size_t open_len;
    const char *close;
    size_t close_len;
} think_tags_t;

typedef enum think_phase {
    THINK_START,  /* only whitespace, or a part of the opening tag, so far */
    THINK_INSIDE, /* after the opening tag, before the closing one */
    THINK_ANSWER, /* the reply began without the tag; a closing tag may still come */
    THINK_AFTER,  /* the closing tag passed (or detection is off): answer from now on */
} think_phase_t;

/* The per-reply state; zero it (think_reset) for each reply. */
typedef struct think {
    think_phase_t phase;
    size_t from; /* where the text still to search begins: past the opening tag, or the answer */
} think_t;

typedef enum think_kind {
    THINK_IS_ANSWER,    /* the event carries answer text */
    THINK_IS_REASONING, /* the event is reasoning (a tag included) */
    /* not known yet (whitespace, or a part of the opening tag, opening the reply): count it as
     * reasoning for now; a later event's `earlier` says what it was */
    THINK_IS_UNDECIDED,
} think_kind_t;

typedef struct think_event {
    think_kind_t kind;
    /* What the events counted before this one turn out to be: undecided ones that were answer
     * (the reply did not open with the tag), or answer ones that were reasoning (a closing tag
     * with no opening one). */
    enum {
        THINK_EARLIER_AS_COUNTED,
        THINK_EARLIER_UNDECIDED_WERE_ANSWER,
        THINK_EARLIER_ANSWER_WAS_REASONING
    } earlier;
} think_event_t;

/* Starts a reply: THINK_START, or THINK_AFTER when tags is off. */
void think_reset(think_t *self, const think_tags_t *tags);

/* How many of the reply text's last bytes the next think_feed may read besides its event's: all
 * of them (SIZE_MAX) while the reply has not got past its opening, none once detection is over,
 * else the closing tag's length - 1 (a tag split across events). A caller that keeps no more of the
 * text than this calls think_forget for what it dropped. */
size_t think_lookback(const think_t *self, const think_tags_t *tags);

/* The caller dropped the first `dropped` bytes of the reply text (keeping think_lookback's): the
 * positions think keeps move back with it. */
void think_forget(think_t *self, size_t dropped);

/* Classifies one content event whose text is text[event_from..len) of the reply text so far
 * (text[0..event_from) was fed before). */
think_event_t think_feed(think_t *self, const think_tags_t *tags, const char *text,
                         size_t event_from, size_t len);

#endif
