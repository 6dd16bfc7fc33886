#include "session_prompt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "prompt.h"
#include "session_alloc.h"

/* Whitespace-separated words of a reply (what the simulated server counts as tokens). */
static size_t session_prompt_count_words(const char *text, size_t len) {
    size_t words = 0;
    int in_word = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        int space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

void session_prompt_reset(session_prompt_t *self, const workload_session_t *shape,
                          uint32_t n_nodes) {
    size_t need = (size_t)n_nodes + 1;
    session_alloc_grow(&self->turns, &self->turns_cap, need, sizeof *self->turns);
    session_alloc_grow(&self->stack, &self->stack_cap, need, sizeof *self->stack);
    memset(self->turns, 0, need * sizeof *self->turns);
    self->shape = shape;
    self->epoch = 0;
    self->text_len = 0;
}

/* Makes room for `extra` more bytes (and a NUL) at the end of the text. */
static void session_prompt_reserve(session_prompt_t *self, size_t extra) {
    size_t need = self->text_len + extra + 1;
    if (need > self->text_cap)
        session_alloc_grow(&self->text, &self->text_cap, need < 4096 ? 4096 : need, 1);
}

/* Copies len bytes to the end of the text (room already reserved). */
static void session_prompt_put(session_prompt_t *self, const char *text, size_t len) {
    memmove(self->text + self->text_len, text, len);
    self->text_len += len;
}

void session_prompt_add_fresh(session_prompt_t *self, const config_t *cfg, uint32_t j) {
    const workload_node_t *shape = &self->shape->nodes[j];
    session_prompt_turn_t *turn = &self->turns[j];
    size_t replies = 0;
    turn->user_words = shape->input_tokens;
    if (shape->append_parent_replies)
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            replies += self->turns[shape->parents[p]].reply_len + 2;
            turn->user_words += self->turns[shape->parents[p]].reply_words;
        }
    session_prompt_reserve(self, replies + prompt_max_bytes(shape->input_tokens));
    turn->user_off = self->text_len;
    if (shape->append_parent_replies)
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            const session_prompt_turn_t *parent = &self->turns[shape->parents[p]];
            /* text holds both ends; reserved above, so the source does not move */
            session_prompt_put(self, self->text + parent->reply_off, parent->reply_len);
            session_prompt_put(self, "\n\n", 2);
        }
    long n = workload_fresh_text(cfg, self->shape->index, j, shape->input_tokens,
                                 self->text + self->text_len, self->text_cap - self->text_len);
    if (n < 0)
        session_alloc_die("fresh prompt text larger than prompt_max_bytes");
    turn->fresh_len = (size_t)n;
    self->text_len += (size_t)n;
    turn->user_len = self->text_len - turn->user_off;
}

void session_prompt_add_reply(session_prompt_t *self, uint32_t j, const char *reply,
                              size_t reply_len) {
    session_prompt_turn_t *turn = &self->turns[j];
    session_prompt_reserve(self, reply_len);
    memcpy(self->text + self->text_len, reply, reply_len);
    turn->reply_off = self->text_len;
    turn->reply_len = reply_len;
    turn->reply_words = (uint32_t)session_prompt_count_words(reply, reply_len);
    self->text_len += reply_len;
}

uint64_t session_prompt_fresh_hash(const session_prompt_t *self, uint32_t j) {
    const session_prompt_turn_t *turn = &self->turns[j];
    return XXH3_64bits(self->text + turn->user_off + turn->user_len - turn->fresh_len,
                       turn->fresh_len);
}

/* Marks the ancestors of node `index` with a fresh epoch; returns how many there are. */
static uint32_t session_prompt_mark_ancestors(session_prompt_t *self, uint32_t index) {
    if (++self->epoch == 0) {
        for (uint32_t j = 0; j < self->shape->n_nodes && j < self->turns_cap; j++)
            self->turns[j].mark = 0;
        self->epoch = 1;
    }
    uint32_t top = 0, count = 0;
    self->stack[top++] = index;
    while (top) {
        const workload_node_t *shape = &self->shape->nodes[self->stack[--top]];
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            uint32_t parent = shape->parents[p];
            if (self->turns[parent].mark == self->epoch)
                continue;
            self->turns[parent].mark = self->epoch;
            self->stack[top++] = parent;
            count++;
        }
    }
    return count;
}

/* Keeps round(inherit x n) of n turns (all when inherit >= 1, none when <= 0). */
static uint32_t session_prompt_keep(double inherit, uint32_t n) {
    if (inherit >= 1)
        return n;
    if (!(inherit > 0))
        return 0;
    return (uint32_t)llround(inherit * n);
}

/* One earlier turn: its user text and the reply; returns its words. */
static uint64_t session_prompt_add_turn(const session_prompt_t *self, uint32_t a, body_t *body) {
    const session_prompt_turn_t *turn = &self->turns[a];
    body_add(body, "user", self->text + turn->user_off, turn->user_len);
    body_add(body, "assistant", self->text + turn->reply_off, turn->reply_len);
    return turn->user_words + turn->reply_words;
}

/* ANCESTORS history: the latest kept ancestors in node order. The node's conversation is then
 * recorded as a chain through the latest kept ancestor (exact for chats, whose ancestors are a
 * chain). */
static uint64_t session_prompt_add_ancestors(session_prompt_t *self, uint32_t index, body_t *body) {
    const workload_node_t *shape = &self->shape->nodes[index];
    session_prompt_turn_t *turn = &self->turns[index];
    uint32_t ancestors = session_prompt_mark_ancestors(self, index);
    uint32_t keep = session_prompt_keep(shape->inherit, ancestors);
    uint32_t skip = ancestors - keep;
    uint64_t words = 0;
    turn->conv_prev = UINT32_MAX;
    turn->conv_len = keep + 1;
    for (uint32_t j = 0; j < index && keep; j++) {
        if (self->turns[j].mark != self->epoch)
            continue;
        if (skip) {
            skip--;
            continue;
        }
        words += session_prompt_add_turn(self, j, body);
        turn->conv_prev = j;
        keep--;
    }
    return words;
}

/* CHAIN history: the latest kept turns of the history parent's conversation (its own history, its
 * user text and its reply), oldest first. A root has none. */
static uint64_t session_prompt_add_chain(session_prompt_t *self, uint32_t index, body_t *body) {
    const workload_node_t *shape = &self->shape->nodes[index];
    session_prompt_turn_t *turn = &self->turns[index];
    uint32_t n = 0;
    if (shape->n_parents == 0) {
        turn->conv_prev = UINT32_MAX;
        turn->conv_len = 1;
        return 0;
    }
    uint32_t hp = shape->history_parent;
    uint32_t keep = session_prompt_keep(shape->inherit, self->turns[hp].conv_len);
    for (uint32_t j = hp; n < keep && j != UINT32_MAX; j = self->turns[j].conv_prev)
        self->stack[n++] = j;
    turn->conv_prev = n ? hp : UINT32_MAX;
    turn->conv_len = n + 1;
    uint64_t words = 0;
    while (n)
        words += session_prompt_add_turn(self, self->stack[--n], body);
    return words;
}

uint64_t session_prompt_build(session_prompt_t *self, const config_t *cfg,
                              const session_scaffold_t *scaffold, uint32_t j, body_t *body) {
    const workload_node_t *shape = &self->shape->nodes[j];
    const session_prompt_turn_t *turn = &self->turns[j];
    body_options_t options = {.api = cfg->target.api,
                              .model = cfg->target.model,
                              .max_tokens = shape->output_tokens,
                              .stream = cfg->target.stream,
                              .ignore_eos = cfg->target.ignore_eos,
                              .min_tokens = cfg->target.min_tokens};
    uint64_t words = 0;
    body_begin(body, &options);
    if (scaffold->system_len) {
        body_add(body, "system", scaffold->system_text, scaffold->system_len);
        words += scaffold->system_words;
    }
    if (shape->history == WORKLOAD_HISTORY_CHAIN)
        words += session_prompt_add_chain(self, j, body);
    else
        words += session_prompt_add_ancestors(self, j, body);
    body_add(body, "user", self->text + turn->user_off, turn->user_len);
    words += turn->user_words;
    if (body_end(body) != 0)
        session_alloc_die("out of memory building a request body");
    return words;
}

void session_prompt_free(session_prompt_t *self) {
    free(self->turns);
    free(self->stack);
    free(self->text);
    memset(self, 0, sizeof *self);
}
