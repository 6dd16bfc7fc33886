/* A session as generators build it: a DAG of request nodes, sized by workload_session_reserve and
 * filled by whichever generator owns the kind (chat and requests in workload.c, graphs in
 * graph_shapes.c, replays in workload.c from the trace), and the per-node draws they share. Below
 * workload.c and graph_shapes.c, so neither reaches the other through it. */
#ifndef STAMPEDE_WORKLOAD_SESSION_H
#define STAMPEDE_WORKLOAD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Drawn counts are rounded and clamped: turns to [1, WORKLOAD_MAX_NODES], token counts to
 * [1, WORKLOAD_MAX_TOKENS] (common/config_workload.h), so a heavy-tailed distribution cannot ask
 * for an absurd allocation. */
#define WORKLOAD_MAX_NODES 100000u

/* Which conversation a node continues. ANCESTORS (the zero value): every ancestor's turn in node
 * order (a chat turn's ancestors are the earlier turns). CHAIN: the history parent's whole
 * conversation, i.e. its own inherited history, its prompt and its reply, recursively. */
typedef enum { WORKLOAD_HISTORY_ANCESTORS = 0, WORKLOAD_HISTORY_CHAIN } workload_history_t;

typedef struct workload_node {
    uint32_t index;         /* position in the session */
    uint32_t n_parents;     /* any number: bounded only by memory */
    uint32_t *parents;      /* n_parents indices below index; points into the session's edges (or a
                               hand-built generator's own array) */
    uint32_t role;          /* role index, 0 = default */
    uint32_t input_tokens;  /* fresh prompt words this node adds */
    uint32_t output_tokens; /* max_tokens */
    int64_t wait_after_ready_ns; /* delay after the last parent finishes (think time) */
    double inherit; /* fraction of the history kept: 1 = full, 0 = none (a sub-agent: the scaffold
                       and its own task only), else the latest round(inherit x turns) turns */
    workload_history_t history;
    uint32_t history_parent;    /* CHAIN: an ancestor whose conversation this node continues */
    bool append_parent_replies; /* the parents' replies come first in this node's user text */
} workload_node_t;

typedef struct workload_session {
    uint64_t index; /* global session index */
    uint32_t n_nodes;
    workload_node_t *nodes; /* owned */
    uint32_t *edges;        /* owned: the parent lists of the nodes, end to end */
    size_t n_edges;
} workload_session_t;

/* Frees what the session owns and zeroes it. */
void workload_session_free(workload_session_t *self);
/* Sizes *out for n_nodes zeroed nodes (index set, no parents, ANCESTORS history) and n_edges zeroed
 * edges, for a generator to fill (parents pointing into out->edges). 0 ok; -1 (freed) on no memory.
 */
int workload_session_reserve(workload_session_t *out, uint32_t n_nodes, size_t n_edges);
/* One quantity of one node: rng_init(seed, RNG_STREAM_WORKLOAD, session, node, field) drawn once
 * from dist, so no draw depends on another's draw count. */
double workload_draw(const config_t *cfg, const dist_t *dist, uint64_t session, uint32_t node,
                     uint32_t field);
/* Marks every ancestor a of node j (mark[a] = epoch; mark holds one entry per node) and returns
 * how many there are; stack is scratch of s->n_nodes entries. The worker's prompts and the plan's
 * context estimate walk a node's history so. */
uint32_t workload_session_mark_ancestors(const workload_session_t *s, uint32_t j, uint32_t *mark,
                                         uint32_t epoch, uint32_t *stack);
/* How many of n earlier turns node keeps in its history: round(inherit x n), all when inherit >= 1,
 * none when it is not > 0. The worker's prompts and the plan's context estimate both count so. */
uint32_t workload_node_kept_turns(const workload_node_t *node, uint32_t n);
/* Rounds a drawn count to an integer in [1, max]; NaN counts as 1. */
uint32_t workload_count(double x, uint32_t max);
/* Seconds to ns, 0 for anything not > 0, saturating at 2^62. */
int64_t workload_seconds_to_ns(double seconds);

#endif
