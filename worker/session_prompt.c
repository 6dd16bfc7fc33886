#include "session_prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "prompt.h"
#include "rng.h"
#include "session_alloc.h"

/* The draw of a node's tool result: a field of the prompt stream that no other draw uses. */
#define SESSION_PROMPT_FIELD_TOOL 0x746f6f6cu /* "tool" */

void session_prompt_reset(session_prompt_t *self, const workload_session_t *shape,
                          uint32_t n_nodes) {
    size_t need = (size_t)n_nodes + 1;
    session_alloc_grow(&self->turns, &self->turns_cap, need, sizeof *self->turns);
    session_alloc_grow(&self->stack, &self->stack_cap, need, sizeof *self->stack);
    session_alloc_grow(&self->mark, &self->mark_cap, need, sizeof *self->mark);
    memset(self->turns, 0, need * sizeof *self->turns);
    memset(self->mark, 0, need * sizeof *self->mark);
    self->shape = shape;
    self->epoch = 0;
    self->text_len = 0;
    self->compactions = 0;
    self->inherited = 0;
}

/* Makes room for `extra` more bytes (and a NUL) at the end of the text. */
static void session_prompt_reserve(session_prompt_t *self, size_t extra) {
    size_t need = self->text_len + extra + 1;
    if (need > self->text_cap)
        session_alloc_grow(&self->text, &self->text_cap, need < 4096 ? 4096 : need, 1);
}

/* Keeps a copy of text at the end of the text (room made here) and counts its words into *words;
 * returns its offset. */
static size_t session_prompt_copy(session_prompt_t *self, const char *text, size_t len,
                                  uint32_t *words) {
    session_prompt_reserve(self, len);
    size_t off = self->text_len;
    memcpy(self->text + off, text, len);
    self->text_len += len;
    *words = (uint32_t)prompt_count_words(text, len);
    return off;
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
    session_prompt_reserve(
        self, replies + workload_fresh_max_bytes(cfg, self->shape->index, j, shape->input_tokens));
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
        session_alloc_die("fresh prompt text larger than workload_fresh_max_bytes");
    turn->fresh_len = (size_t)n;
    self->text_len += (size_t)n;
    turn->user_len = self->text_len - turn->user_off;
}

void session_prompt_add_reply(session_prompt_t *self, uint32_t j, const char *reply,
                              size_t reply_len) {
    session_prompt_turn_t *turn = &self->turns[j];
    turn->reply_off = session_prompt_copy(self, reply, reply_len, &turn->reply_words);
    turn->reply_len = reply_len;
}

void session_prompt_set_reply_tokens(session_prompt_t *self, uint32_t j, uint32_t tokens) {
    self->turns[j].reply_words = tokens;
}

void session_prompt_set_response_id(session_prompt_t *self, uint32_t j, const char *id) {
    size_t len = strlen(id);
    session_prompt_reserve(self, len);
    memcpy(self->text + self->text_len, id, len);
    self->turns[j].response_id_off = self->text_len;
    self->turns[j].response_id_len = len;
    self->text[self->text_len + len] = '\0'; /* kept: the NUL is part of what it takes */
    self->text_len += len + 1;
}

uint64_t session_prompt_fresh_hash(const session_prompt_t *self, uint32_t j) {
    const session_prompt_turn_t *turn = &self->turns[j];
    return XXH3_64bits(self->text + turn->user_off + turn->user_len - turn->fresh_len,
                       turn->fresh_len);
}

/* Marks the ancestors of node `index` with a fresh epoch; returns how many there are. */
static uint32_t session_prompt_mark_ancestors(session_prompt_t *self, uint32_t index) {
    if (++self->epoch == 0) {
        for (uint32_t j = 0; j < self->shape->n_nodes && j < self->mark_cap; j++)
            self->mark[j] = 0;
        self->epoch = 1;
    }
    return workload_session_mark_ancestors(self->shape, index, self->mark, self->epoch,
                                           self->stack);
}

/* ANCESTORS history: the latest kept ancestors, in node order, into stack[0..n); none before the
 * latest compacted one, whose summary replaced them. The node's conversation is then recorded as
 * a chain through the latest kept ancestor (exact for chats, whose ancestors are a chain).
 * Returns n. */
static uint32_t session_prompt_ancestors(session_prompt_t *self, uint32_t index) {
    const workload_node_t *shape = &self->shape->nodes[index];
    session_prompt_turn_t *turn = &self->turns[index];
    uint32_t ancestors = session_prompt_mark_ancestors(self, index), from = 0;
    if (turn->compacted) {
        ancestors = 0;
        from = index;
    } else if (self->compactions) {
        for (uint32_t j = index; j-- > 0;)
            if (self->mark[j] == self->epoch && self->turns[j].compacted) {
                from = j;
                break;
            }
        ancestors = 0;
        for (uint32_t j = from; j < index; j++)
            ancestors += self->mark[j] == self->epoch;
    }
    uint32_t keep = workload_node_kept_turns(shape, ancestors);
    uint32_t skip = ancestors - keep, n = 0;
    turn->conv_prev = UINT32_MAX;
    turn->conv_len = keep + 1;
    for (uint32_t j = from; j < index && n < keep; j++) {
        if (self->mark[j] != self->epoch)
            continue;
        if (skip) {
            skip--;
            continue;
        }
        self->stack[n++] = j;
        turn->conv_prev = j;
    }
    return n;
}

/* CHAIN history: the latest kept turns of the history parent's conversation (its own history, its
 * user text and its reply), oldest first, into stack[0..n). A root has none, nor a compacted node.
 * Returns n. */
static uint32_t session_prompt_chain(session_prompt_t *self, uint32_t index) {
    const workload_node_t *shape = &self->shape->nodes[index];
    session_prompt_turn_t *turn = &self->turns[index];
    uint32_t n = 0;
    if (shape->n_parents == 0 || turn->compacted) {
        turn->conv_prev = UINT32_MAX;
        turn->conv_len = 1;
        return 0;
    }
    uint32_t hp = shape->history_parent;
    uint32_t keep = workload_node_kept_turns(shape, self->turns[hp].conv_len);
    for (uint32_t j = hp; n < keep && j != UINT32_MAX; j = self->turns[j].conv_prev)
        self->stack[n++] = j;
    turn->conv_prev = n ? hp : UINT32_MAX;
    turn->conv_len = n + 1;
    for (uint32_t a = 0, b = n; a + 1 < b; a++, b--) { /* newest first -> oldest first */
        uint32_t t = self->stack[a];
        self->stack[a] = self->stack[b - 1];
        self->stack[b - 1] = t;
    }
    return n;
}

/* Whether node j answers a call of one of its role's `tools` tools, and which: drawn from (seed,
 * session, node) only. */
static void session_prompt_draw_tool(session_prompt_t *self, const config_t *cfg, uint32_t j,
                                     uint32_t tools) {
    double share = cfg->workload.scaffold.tool_results;
    session_prompt_turn_t *turn = &self->turns[j];
    turn->tool_result = false;
    if (!(share > 0) || tools == 0)
        return;
    rng_t rng;
    rng_init(&rng, cfg->seed, RNG_STREAM_PROMPT, self->shape->index, j, SESSION_PROMPT_FIELD_TOOL);
    turn->tool_result = rng_next_double(&rng) < share;
    turn->tool = (uint32_t)rng_next_below(&rng, tools);
}

/* "call_SESSION_NODE" and "tool_K" of node j's tool call. */
static void session_prompt_tool_names(const session_prompt_t *self, uint32_t j, char *call,
                                      size_t call_len, char *name, size_t name_len) {
    snprintf(call, call_len, "call_%llu_%u", (unsigned long long)self->shape->index, (unsigned)j);
    snprintf(name, name_len, "tool_%u", (unsigned)self->turns[j].tool);
}

/* Turn a's user text: a tool result when it is one and a turn precedes it in this body. */
static void session_prompt_add_user(const session_prompt_t *self, uint32_t a, bool first,
                                    body_t *body) {
    const session_prompt_turn_t *turn = &self->turns[a];
    if (turn->compacted) /* the summary it continues from, then its own text */
        body_add(body, "user", self->text + turn->summary_off, turn->summary_len);
    if (turn->tool_result && !first) {
        char call[48], name[24];
        session_prompt_tool_names(self, a, call, sizeof call, name, sizeof name);
        body_add_tool_result(body, call, self->text + turn->user_off, turn->user_len);
    } else {
        body_add(body, "user", self->text + turn->user_off, turn->user_len);
    }
}

/* Turn a's reply: it calls a tool when the turn after it in this body is that tool's result. */
static void session_prompt_add_assistant(const session_prompt_t *self, uint32_t a, uint32_t next,
                                         body_t *body) {
    const session_prompt_turn_t *turn = &self->turns[a];
    if (next != UINT32_MAX && self->turns[next].tool_result) {
        char call[48], name[24];
        session_prompt_tool_names(self, next, call, sizeof call, name, sizeof name);
        body_add_tool_call(body, self->text + turn->reply_off, turn->reply_len, call, name);
    } else {
        body_add(body, "assistant", self->text + turn->reply_off, turn->reply_len);
    }
}

/* Words a turn adds to a prompt that inherits it. */
static uint64_t session_prompt_turn_words(const session_prompt_turn_t *turn) {
    return turn->user_words + turn->reply_words + (turn->compacted ? turn->summary_words : 0);
}

/* Words of turn a's user text that are the protocol's envelopes around its appended replies: the
 * framework sending them does not count them. */
static uint64_t session_prompt_envelope_words(const session_prompt_t *self, const config_t *cfg,
                                              uint32_t a) {
    const workload_node_t *node = &self->shape->nodes[a];
    if (!node->append_parent_replies || self->turns[a].compacted)
        return 0;
    uint64_t words = (uint64_t)cfg->workload.graph.message_overhead_tokens * node->n_parents;
    return words < self->turns[a].user_words ? words : self->turns[a].user_words;
}

/* Node j's max_tokens: its output_tokens, capped by what workload.graph.context_limit leaves
 * after the words the framework counts (words sent, less the envelopes). */
static uint32_t session_prompt_max_tokens(const session_prompt_t *self, const config_t *cfg,
                                          uint32_t j, uint32_t n, uint64_t words) {
    const config_graph_t *g = &cfg->workload.graph;
    uint32_t asked = self->shape->nodes[j].output_tokens;
    if (g->context_limit == 0) /* set only under workload.graph */
        return asked;
    uint64_t envelopes = session_prompt_envelope_words(self, cfg, j);
    for (uint32_t i = 0; i < n; i++)
        envelopes += session_prompt_envelope_words(self, cfg, self->stack[i]);
    uint64_t counted = words - (envelopes < words ? envelopes : words);
    uint64_t budget = (uint64_t)g->context_limit;
    budget = budget > counted + g->context_margin ? budget - counted - g->context_margin : 1;
    return budget < asked ? (uint32_t)budget : asked;
}

/* With target.previous_response_id, the response node j's body continues: the newest of the n
 * inherited turns when they are its whole conversation (a chat, no compaction in between) and its
 * reply has an id; NULL otherwise (the history is sent). The id is NUL-terminated in text. */
static const char *session_prompt_previous(const session_prompt_t *self, const config_t *cfg,
                                           uint32_t n) {
    if (!cfg->target.previous_response_id || n == 0)
        return NULL;
    const session_prompt_turn_t *last = &self->turns[self->stack[n - 1]];
    if (!last->response_id_len || last->conv_len != n)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (self->turns[self->stack[i]].compacted)
            return NULL;
    return self->text + last->response_id_off;
}

/* Node j's body, or with summarise the summarise request sent in its place: the same scaffold and
 * inherited turns, then the instruction instead of the node's own text. */
static uint64_t session_prompt_render(session_prompt_t *self, const config_t *cfg,
                                      const session_scaffold_t *scaffold, uint32_t j,
                                      bool summarise, body_t *body) {
    const workload_node_t *shape = &self->shape->nodes[j];
    const session_scaffold_role_t *kind = session_scaffold_of(scaffold, shape->role);
    body_options_t options = {.api = cfg->target.api,
                              .model = cfg->target.model,
                              .max_tokens = summarise ? cfg->workload.compaction.summary_tokens
                                                      : shape->output_tokens,
                              .max_completion_tokens = cfg->target.max_completion_tokens,
                              .stream = cfg->target.stream,
                              .ignore_eos = cfg->target.ignore_eos,
                              .thinking_tokens = cfg->target.thinking_tokens,
                              .min_tokens = cfg->target.min_tokens,
                              .continuous_usage = cfg->target.continuous_usage,
                              .tools_json = kind->tools_json,
                              .tools_len = kind->tools_len};
    uint64_t words = kind->words;
    uint32_t n = shape->history == WORKLOAD_HISTORY_CHAIN ? session_prompt_chain(self, j)
                                                          : session_prompt_ancestors(self, j);
    self->inherited = n;
    if (!summarise) { /* the words it will send, for what the context limit leaves */
        uint64_t sent = words + self->turns[j].user_words +
                        (self->turns[j].compacted ? self->turns[j].summary_words : 0);
        for (uint32_t i = 0; i < n; i++)
            sent += session_prompt_turn_words(&self->turns[self->stack[i]]);
        options.max_tokens = session_prompt_max_tokens(self, cfg, j, n, sent);
    }
    self->max_tokens = options.max_tokens;
    body_begin(body, &options);
    if (kind->system_len)
        body_add(body, "system", kind->system_text, kind->system_len);
    if (!summarise) {
        session_prompt_draw_tool(self, cfg, j, kind->tools);
        /* with no turn before it (or a summary instead) there is no call to answer */
        self->turns[j].tool_result &= n > 0 && !self->turns[j].compacted;
    }
    uint32_t last = summarise ? UINT32_MAX : j;
    const char *previous = summarise ? NULL : session_prompt_previous(self, cfg, n);
    if (previous) { /* the server holds the history: only the new turn goes, as a user message */
        body->options.previous_response_id = previous;
        self->turns[j].tool_result = false;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = self->stack[i];
        if (!previous) {
            session_prompt_add_user(self, a, i == 0, body);
            session_prompt_add_assistant(self, a, i + 1 < n ? self->stack[i + 1] : last, body);
        }
        words += session_prompt_turn_words(&self->turns[a]); /* the server reads them all */
    }
    if (summarise) {
        body_add(body, "user", scaffold->compact_text, scaffold->compact_len);
        words += scaffold->compact_words;
    } else {
        session_prompt_add_user(self, j, n == 0, body);
        const session_prompt_turn_t *turn = &self->turns[j];
        words += turn->user_words + (turn->compacted ? turn->summary_words : 0);
    }
    if (body_end(body) != 0)
        session_alloc_die("out of memory building a request body");
    return words;
}

uint64_t session_prompt_build(session_prompt_t *self, const config_t *cfg,
                              const session_scaffold_t *scaffold, uint32_t j, body_t *body) {
    return session_prompt_render(self, cfg, scaffold, j, false, body);
}

uint64_t session_prompt_build_summarise(session_prompt_t *self, const config_t *cfg,
                                        const session_scaffold_t *scaffold, uint32_t j,
                                        body_t *body) {
    return session_prompt_render(self, cfg, scaffold, j, true, body);
}

void session_prompt_compact(session_prompt_t *self, uint32_t j, const char *summary,
                            size_t summary_len) {
    session_prompt_turn_t *turn = &self->turns[j];
    turn->summary_off = session_prompt_copy(self, summary, summary_len, &turn->summary_words);
    turn->summary_len = summary_len;
    turn->compacted = true;
    turn->tool_result = false;
    turn->conv_prev = UINT32_MAX;
    turn->conv_len = 1;
    self->compactions++;
}

void session_prompt_free(session_prompt_t *self) {
    free(self->turns);
    free(self->stack);
    free(self->mark);
    free(self->text);
    memset(self, 0, sizeof *self);
}
