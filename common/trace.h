/* A replay trace (workload.kind: trace): sessions of request nodes read from a JSONL file, in the
 * session-trace format or Mooncake's (common/trace_load.c), or the part of one a worker was sent
 * (common/trace_wire.c). Sessions are ordered and indexed 0..n_sessions-1; node indices within a
 * session are topological (parents first). The workload functions (common/workload.h) read it:
 * session index i is trace session i mod n_sessions (i >= n_sessions only with wrap). */
#ifndef STAMPEDE_TRACE_H
#define STAMPEDE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* No history parent. */
#define TRACE_NONE UINT32_MAX
/* A session absent from a worker's part (another worker runs it). */
#define TRACE_ABSENT UINT32_MAX

typedef struct trace_node {
    uint32_t parents_at;     /* first parent in trace.edges */
    uint32_t n_parents;      /* node indices of the same session, all below this node's */
    uint32_t history_parent; /* an ancestor whose conversation it continues, or TRACE_NONE */
    uint32_t role;           /* index into workload.roles */
    uint32_t input_tokens;   /* fresh tokens (the trace's new-input length) */
    uint32_t output_tokens;  /* max_tokens */
    int64_t wait_ns;         /* wait_after_ready */
    double history;          /* fraction of the history parent's conversation kept (1 = full) */
    bool append_parent_replies;
    uint32_t hashes_at; /* first hash id in trace.hashes */
    uint32_t n_hashes;  /* prompt blocks named by hash id: block b of the fresh text is the text of
                           hash id hashes[b] */
    uint64_t text_at;   /* its own fresh text (a dataset's turn) in trace.text, when text_len */
    uint32_t text_len;  /* bytes of it; 0: the fresh text is drawn words */
    uint32_t text_tokens; /* its length as counted at load; input_tokens - text_tokens words are
                             drawn after it (an A2A envelope) */
} trace_node_t;

typedef struct trace_session {
    uint32_t n_nodes;    /* known for every session, present or not */
    uint32_t first_node; /* its nodes in trace.nodes, or TRACE_ABSENT */
    int64_t arrival_ns;  /* from the first session's arrival (timed traces; 0 otherwise) */
} trace_session_t;

typedef struct trace {
    trace_session_t *sessions;
    size_t n_sessions;
    trace_node_t *nodes;
    size_t n_nodes;
    uint32_t *edges;
    size_t n_edges;
    uint64_t *hashes;
    size_t n_hashes;
    char *text; /* the nodes' own fresh texts, end to end (not NUL-separated) */
    size_t text_len, text_cap;
    bool timed;            /* every session has an arrival time */
    int64_t period_ns;     /* wrap: copy k of the trace arrives k x period later (last arrival +
                              the mean gap between arrivals) */
    uint32_t max_parallel; /* an upper bound on the nodes of one session in flight at once */
    uint32_t max_nodes;    /* the largest session */
    uint32_t refs;
} trace_t;

/* An empty trace with one reference; NULL on no memory. */
trace_t *trace_new(void);
/* Another reference to self (config_copy shares the trace). */
trace_t *trace_ref(trace_t *self);
/* Drops a reference, freeing the trace with the last, and sets *self_p to NULL. */
void trace_unref(trace_t **self_p);
/* Sets timed, period_ns, max_parallel and max_nodes from the sessions and nodes (after a load). */
void trace_finish(trace_t *self);

/* The trace session that session index i replays (i mod n_sessions). */
const trace_session_t *trace_session(const trace_t *self, uint64_t index);
/* Node j of the session replayed by session index i; NULL when absent from this part. */
const trace_node_t *trace_node(const trace_t *self, uint64_t index, uint32_t node);

/* Appends len bytes to self's text and points node at them, counted as tokens. 0, or -1 on no
 * memory. */
int trace_set_text(trace_t *self, trace_node_t *node, const char *text, uint32_t len,
                   uint32_t tokens);

#endif
