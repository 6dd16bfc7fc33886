/* What a session has said so far: each node's fresh user text and the server's reply, kept in
 * the run's text buffer, and the body a node sends (system, the history it inherits, its text). */
#include <math.h>
#include <string.h>

#include "buffer.h"
#include "prompt.h"
#include "session_internal.h"

/* Whitespace-separated words of a reply (what the simulated server counts as tokens). */
static size_t session_history_count_words(const char *text, size_t len) {
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

/* Makes room for `extra` more bytes (and a NUL) at the end of the run's text. */
static void session_history_reserve(session_run_t *run, size_t extra) {
    size_t need = run->text_len + extra + 1;
    if (need > run->text_cap &&
        buffer_grow_array(&run->text, &run->text_cap, need < 4096 ? 4096 : need, 1) < 0)
        session_die("out of memory");
}

/* Marks the ancestors of node `index` with a fresh epoch; returns how many there are. */
static uint32_t session_history_mark_ancestors(session_run_t *run, uint32_t index) {
    if (++run->epoch == 0) {
        for (uint32_t j = 0; j < run->n_nodes; j++)
            run->nodes[j].mark = 0;
        run->epoch = 1;
    }
    uint32_t top = 0, count = 0;
    run->stack[top++] = index;
    while (top) {
        const workload_node_t *shape = &run->shape.nodes[run->stack[--top]];
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            session_node_t *parent = &run->nodes[shape->parents[p]];
            if (parent->mark == run->epoch)
                continue;
            parent->mark = run->epoch;
            run->stack[top++] = parent->index;
            count++;
        }
    }
    return count;
}

/* Copies len bytes to the end of the run's text (room already reserved). */
static void session_history_put(session_run_t *run, const char *text, size_t len) {
    memmove(run->text + run->text_len, text, len);
    run->text_len += len;
}

void session_history_add_fresh(const session_executor_t *self, session_run_t *run,
                               session_node_t *node) {
    const workload_node_t *shape = &run->shape.nodes[node->index];
    size_t replies = 0;
    node->user_words = shape->input_tokens;
    if (shape->append_parent_replies)
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            replies += run->nodes[shape->parents[p]].reply_len + 2;
            node->user_words += run->nodes[shape->parents[p]].reply_words;
        }
    session_history_reserve(run, replies + prompt_max_bytes(shape->input_tokens));
    node->user_off = run->text_len;
    if (shape->append_parent_replies)
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            const session_node_t *parent = &run->nodes[shape->parents[p]];
            /* run->text holds both ends; reserved above, so the source does not move */
            session_history_put(run, run->text + parent->reply_off, parent->reply_len);
            session_history_put(run, "\n\n", 2);
        }
    long n = workload_fresh_text(self->cfg, run->shape.index, node->index, shape->input_tokens,
                                 run->text + run->text_len, run->text_cap - run->text_len);
    if (n < 0)
        session_die("fresh prompt text larger than prompt_max_bytes");
    node->fresh_len = (size_t)n;
    run->text_len += (size_t)n;
    node->user_len = run->text_len - node->user_off;
}

void session_history_add_reply(session_run_t *run, session_node_t *node, const char *reply,
                               size_t reply_len) {
    session_history_reserve(run, reply_len);
    memcpy(run->text + run->text_len, reply, reply_len);
    node->reply_off = run->text_len;
    node->reply_len = reply_len;
    node->reply_words = (uint32_t)session_history_count_words(reply, reply_len);
    run->text_len += reply_len;
}

/* Keeps round(inherit x n) of n turns (all when inherit >= 1, none when <= 0). */
static uint32_t session_history_keep(double inherit, uint32_t n) {
    if (inherit >= 1)
        return n;
    if (!(inherit > 0))
        return 0;
    return (uint32_t)llround(inherit * n);
}

/* One earlier turn: its user text and the reply; returns its words. */
static uint64_t session_history_add_turn(const session_run_t *run, const session_node_t *a,
                                         body_t *body) {
    body_add(body, "user", run->text + a->user_off, a->user_len);
    body_add(body, "assistant", run->text + a->reply_off, a->reply_len);
    return a->user_words + a->reply_words;
}

/* ANCESTORS history: the latest kept ancestors in node order. The node's conversation is then
 * recorded as a chain through the latest kept ancestor (exact for chats, whose ancestors are a
 * chain). */
static uint64_t session_history_add_ancestors(session_run_t *run, session_node_t *node,
                                              body_t *body) {
    const workload_node_t *shape = &run->shape.nodes[node->index];
    uint32_t ancestors = session_history_mark_ancestors(run, node->index);
    uint32_t keep = session_history_keep(shape->inherit, ancestors);
    uint32_t skip = ancestors - keep;
    uint64_t words = 0;
    node->conv_prev = UINT32_MAX;
    node->conv_len = keep + 1;
    for (uint32_t j = 0; j < node->index && keep; j++) {
        const session_node_t *a = &run->nodes[j];
        if (a->mark != run->epoch)
            continue;
        if (skip) {
            skip--;
            continue;
        }
        words += session_history_add_turn(run, a, body);
        node->conv_prev = j;
        keep--;
    }
    return words;
}

/* CHAIN history: the latest kept turns of the history parent's conversation (its own history, its
 * user text and its reply), oldest first. A root has none. */
static uint64_t session_history_add_chain(session_run_t *run, session_node_t *node, body_t *body) {
    const workload_node_t *shape = &run->shape.nodes[node->index];
    uint32_t n = 0;
    if (shape->n_parents == 0) {
        node->conv_prev = UINT32_MAX;
        node->conv_len = 1;
        return 0;
    }
    const session_node_t *hp = &run->nodes[shape->history_parent];
    uint32_t keep = session_history_keep(shape->inherit, hp->conv_len);
    for (uint32_t j = hp->index; n < keep && j != UINT32_MAX; j = run->nodes[j].conv_prev)
        run->stack[n++] = j;
    node->conv_prev = n ? hp->index : UINT32_MAX;
    node->conv_len = n + 1;
    uint64_t words = 0;
    while (n)
        words += session_history_add_turn(run, &run->nodes[run->stack[--n]], body);
    return words;
}

uint64_t session_history_build_body(const session_executor_t *self, session_run_t *run,
                                    session_node_t *node, body_t *body) {
    const config_t *cfg = self->cfg;
    const workload_node_t *shape = &run->shape.nodes[node->index];
    body_options_t options = {.api = cfg->target.api,
                              .model = cfg->target.model,
                              .max_tokens = shape->output_tokens,
                              .stream = cfg->target.stream,
                              .ignore_eos = cfg->target.ignore_eos,
                              .min_tokens = cfg->target.min_tokens};
    uint64_t words = 0;
    body_begin(body, &options);
    if (self->system_len) {
        body_add(body, "system", self->system_text, self->system_len);
        words += cfg->workload.system_prompt_tokens;
    }
    if (shape->history == WORKLOAD_HISTORY_CHAIN)
        words += session_history_add_chain(run, node, body);
    else
        words += session_history_add_ancestors(run, node, body);
    body_add(body, "user", run->text + node->user_off, node->user_len);
    words += node->user_words;
    if (body_end(body) != 0)
        session_die("out of memory building a request body");
    return words;
}
