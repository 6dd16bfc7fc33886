/* What one session has said and what a node sends: each node's user text (its parents' replies
 * when it appends them, then its fresh text) and the server's reply, kept in one text buffer per
 * session, and the body a node sends: the scaffold, the turns it inherits, its user text.
 *
 * The turns inherited: ANCESTORS history, the last round(inherit x n) of its n ancestors in node
 * order (a chat turn inherits every previous turn); CHAIN history, the last round(inherit x n) of
 * the n turns of its history parent's conversation (that parent's inherited turns and its own), so
 * inherit 1 is `full` and 0 is `none` (a sub-agent).
 *
 * Tool results (workload.scaffold.tool_results): a node is one with that probability, drawn from
 * (seed, session, node) alone. Its user text then goes as a role "tool" message answering the
 * tool call the assistant message before it makes (call id call_SESSION_NODE, tool
 * tool_K with K drawn the same way), as agents send them. A node with no turn before it in its
 * prompt has no call to answer: its text then goes as a user message.
 *
 * Compaction (workload.compaction): a compacted node starts a fresh conversation from the summary
 * the server returned; no turn before it is sent again, by it or by the turns that inherit it. */
#ifndef STAMPEDE_SESSION_PROMPT_H
#define STAMPEDE_SESSION_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "body.h"
#include "config.h"
#include "session_scaffold.h"
#include "workload.h"

/* One node's part of the session's text. */
typedef struct session_prompt_turn {
    size_t user_off; /* user text in text, once sent: the parents' replies when the node appends
                        them, then its fresh text */
    size_t user_len;
    size_t fresh_len;    /* the fresh text: the last fresh_len bytes of the user text */
    uint64_t user_words; /* words of the user text */
    uint32_t conv_prev;  /* the turn before this node's in its conversation (UINT32_MAX: none) */
    uint32_t conv_len;   /* turns in its conversation, its own included (set when sent) */
    size_t reply_off;    /* the server's reply in text, once done */
    size_t reply_len;
    uint32_t reply_words;
    bool tool_result; /* its user text answers the previous turn's tool call */
    uint32_t tool;    /* tool_result: the index of the tool called */
    bool compacted;   /* its conversation restarted from a summary (the server's reply) */
    size_t summary_off, summary_len; /* compacted: the summary in text */
    uint32_t summary_words;
    size_t response_id_off, response_id_len; /* the Responses API's id of its reply in text (len
                                                0: none) */
} session_prompt_turn_t;

/* One session's text; pooled with its run, so it grows only with the largest session seen. */
typedef struct session_prompt {
    const workload_session_t *shape; /* the session being run (borrowed) */
    session_prompt_turn_t *turns;
    uint32_t *stack; /* ancestor and conversation walks */
    uint32_t *mark;  /* per node: equals epoch when marked by the current ancestor walk */
    size_t turns_cap, stack_cap, mark_cap;
    uint32_t epoch;
    char *text; /* fresh texts and replies of this session's nodes */
    size_t text_len, text_cap;
    uint32_t compactions; /* turns compacted in this session */
    uint32_t inherited;   /* turns the last body built inherited */
    uint32_t max_tokens;  /* the last body's max_tokens */
} session_prompt_t;

/* Forgets the previous session and sizes the turns for the first n_nodes nodes of shape. */
void session_prompt_reset(session_prompt_t *self, const workload_session_t *shape,
                          uint32_t n_nodes);
/* Writes node j's user text: its parents' replies first when it appends them (each followed by a
 * blank line), then its fresh text. */
void session_prompt_add_fresh(session_prompt_t *self, const config_t *cfg, uint32_t j);
/* Keeps the server's reply (verbatim) for node j's descendants, and its word count. */
void session_prompt_add_reply(session_prompt_t *self, uint32_t j, const char *reply,
                              size_t reply_len);
/* Node j's reply is `tokens` long in the target's tokenizer: what its turn adds to a later prompt
 * counts that instead of its words. */
void session_prompt_set_reply_tokens(session_prompt_t *self, uint32_t j, uint32_t tokens);
/* Keeps node j's reply's id (Responses): with target.previous_response_id, a turn that inherits
 * j's whole conversation names it instead of sending that history. */
void session_prompt_set_response_id(session_prompt_t *self, uint32_t j, const char *id);
/* XXH3 of node j's fresh text only (never a reply): part of the request's workload hash. */
uint64_t session_prompt_fresh_hash(const session_prompt_t *self, uint32_t j);
/* Writes node j's body (scaffold, inherited history, user text); returns the words sent. Its
 * max_tokens (kept in max_tokens) is the node's output_tokens, or with workload.graph.context_limit
 * at most what the limit leaves (less context_margin) after the words the framework counts: the
 * words sent less the message_overhead_tokens envelopes of appended replies, which the protocol
 * adds and the framework does not see (at least 1). */
uint64_t session_prompt_build(session_prompt_t *self, const config_t *cfg,
                              const session_scaffold_t *scaffold, uint32_t j, body_t *body);
/* The summarise request sent in node j's place when its context would pass the compaction limit:
 * node j's scaffold and inherited turns, then the summarise instruction; returns the words sent.
 * max_tokens is workload.compaction.summary_tokens. */
uint64_t session_prompt_build_summarise(session_prompt_t *self, const config_t *cfg,
                                        const session_scaffold_t *scaffold, uint32_t j,
                                        body_t *body);
/* Node j continues from summary (the summarise request's reply, verbatim) instead of the turns
 * before it: its prompt, and the prompts of the turns that inherit it, hold the scaffold, the
 * summary as a user message, then its own text. */
void session_prompt_compact(session_prompt_t *self, uint32_t j, const char *summary,
                            size_t summary_len);
/* Frees what the prompt owns (it can be reset again after). */
void session_prompt_free(session_prompt_t *self);

#endif
