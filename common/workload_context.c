#include "workload_context.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "workload.h"

/* What the walk keeps per node of the session being measured. */
typedef struct workload_context_turn {
    uint64_t user;      /* its user text: parents' replies when it appends them, then fresh */
    uint64_t turn;      /* what it adds to a prompt that inherits it: user text and reply */
    uint32_t conv_prev; /* CHAIN: the turn before it in its conversation (UINT32_MAX: none) */
    uint32_t conv_len;  /* CHAIN: turns in its conversation, its own included */
    uint32_t depth;     /* nodes on the longest parent chain ending at it */
} workload_context_turn_t;

/* Scratch sized for the largest session seen. */
typedef struct workload_context_walk {
    workload_context_turn_t *turns;
    uint32_t *stack;
    size_t cap;
    uint32_t *mark; /* == epoch: an ancestor of the node the last walk started from */
    size_t mark_cap;
    uint32_t epoch;
} workload_context_walk_t;

/* ANCESTORS history: the words of the latest kept ancestors of node j. */
static uint64_t workload_context_ancestors(workload_context_walk_t *w, const workload_session_t *s,
                                           uint32_t j) {
    uint32_t count = workload_session_mark_ancestors(s, j, w->mark, ++w->epoch, w->stack);
    uint32_t skip = count - workload_node_kept_turns(&s->nodes[j], count);
    uint64_t words = 0;
    for (uint32_t a = 0; a < j; a++) {
        if (w->mark[a] != w->epoch)
            continue;
        if (skip)
            skip--;
        else
            words += w->turns[a].turn;
    }
    return words;
}

/* CHAIN history: the words of the latest kept turns of the history parent's conversation. */
static uint64_t workload_context_chain(workload_context_walk_t *w, const workload_session_t *s,
                                       uint32_t j) {
    const workload_node_t *node = &s->nodes[j];
    workload_context_turn_t *turn = &w->turns[j];
    turn->conv_prev = UINT32_MAX;
    turn->conv_len = 1;
    if (node->n_parents == 0)
        return 0;
    uint32_t hp = node->history_parent, n = 0;
    uint32_t keep = workload_node_kept_turns(node, w->turns[hp].conv_len);
    uint64_t words = 0;
    for (uint32_t a = hp; n < keep && a != UINT32_MAX; a = w->turns[a].conv_prev, n++)
        words += w->turns[a].turn;
    turn->conv_prev = n ? hp : UINT32_MAX;
    turn->conv_len = n + 1;
    return words;
}

/* Adds session s's requests to the sums; returns its depth. */
static uint32_t workload_context_session(workload_context_walk_t *w, const config_t *cfg,
                                         const workload_session_t *s, workload_context_t *sum,
                                         double *session_tokens) {
    uint32_t depth = 1;
    double contexts = 0;
    for (uint32_t j = 0; j < s->n_nodes; j++) {
        const workload_node_t *node = &s->nodes[j];
        workload_context_turn_t *turn = &w->turns[j];
        turn->user = node->input_tokens;
        turn->depth = 1;
        for (uint32_t p = 0; p < node->n_parents; p++) {
            const workload_context_turn_t *parent = &w->turns[node->parents[p]];
            if (node->append_parent_replies)
                turn->user += s->nodes[node->parents[p]].output_tokens;
            if (parent->depth + 1 > turn->depth)
                turn->depth = parent->depth + 1;
        }
        turn->turn = turn->user + node->output_tokens;
        uint64_t history = node->history == WORKLOAD_HISTORY_CHAIN
                               ? workload_context_chain(w, s, j)
                               : workload_context_ancestors(w, s, j);
        uint64_t prompt = config_scaffold_words(cfg, node->role) + history + turn->user;
        uint64_t context = prompt + node->output_tokens;
        if (sum->compaction_cap && context > sum->compaction_cap)
            context = sum->compaction_cap; /* a summary replaces the turns before it */
        sum->mean_prompt += (double)prompt;
        sum->mean_output += node->output_tokens;
        sum->mean_context += (double)context;
        if (context > sum->max_context)
            sum->max_context = context;
        contexts += (double)context;
        if (turn->depth > depth)
            depth = turn->depth;
    }
    *session_tokens = contexts / depth;
    return depth;
}

int workload_context_estimate(const config_t *cfg, uint64_t n, uint64_t max_requests,
                              workload_context_t *out) {
    memset(out, 0, sizeof *out);
    out->compaction_cap = cfg->workload.compaction.limit_tokens;
    if (cfg->limits.max_sessions && cfg->limits.max_sessions < n)
        n = cfg->limits.max_sessions;
    workload_context_walk_t w = {0};
    workload_session_t s = {0};
    int rc = 0;
    for (uint64_t i = 0; i < n && out->requests < max_requests && rc == 0; i++) {
        if (workload_session_generate(cfg, i, &s) != 0 || s.n_nodes == 0 ||
            buffer_grow_pair(&w.turns, sizeof *w.turns, &w.stack, sizeof *w.stack, &w.cap,
                             s.n_nodes) != 0 ||
            buffer_grow_array(&w.mark, &w.mark_cap, s.n_nodes, sizeof *w.mark) != 0) {
            rc = -1;
            break;
        }
        memset(w.turns, 0, s.n_nodes * sizeof *w.turns);
        memset(w.mark, 0, s.n_nodes * sizeof *w.mark);
        w.epoch = 0;
        double tokens;
        uint32_t depth = workload_context_session(&w, cfg, &s, out, &tokens);
        out->sessions++;
        out->requests += s.n_nodes;
        out->mean_parallel += (double)s.n_nodes / depth;
        out->session_tokens += tokens;
    }
    if (rc == 0 && out->requests) {
        out->mean_prompt /= (double)out->requests;
        out->mean_output /= (double)out->requests;
        out->mean_context /= (double)out->requests;
        out->mean_parallel /= (double)out->sessions;
        out->session_tokens /= (double)out->sessions;
    }
    workload_session_free(&s);
    free(w.turns);
    free(w.stack);
    free(w.mark);
    return rc;
}
