/* Workload generation: a session is a DAG of request nodes (a chat is a chain, an independent
 * request a single node). Everything here is a pure function of (config, seed, session index):
 * the same file and seed give the same sessions whatever the worker count or generation order. */
#ifndef STAMPEDE_WORKLOAD_H
#define STAMPEDE_WORKLOAD_H

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

/* Generates session `index` into *out (previous contents freed: *out must be zeroed or hold an
 * earlier session). Each quantity is drawn with rng_init(seed, RNG_STREAM_WORKLOAD, index, node,
 * RNG_FIELD_x), so it depends on nothing else. 0 ok, -1 on allocation failure. */
int workload_session_generate(const config_t *cfg, uint64_t index, workload_session_t *out);
void workload_session_free(workload_session_t *self);
/* Sizes *out for n_nodes zeroed nodes (index set, no parents, ANCESTORS history) and n_edges zeroed
 * edges, for a generator to fill (parents pointing into out->edges). 0 ok; -1 (freed) on no memory.
 */
int workload_session_reserve(workload_session_t *out, uint32_t n_nodes, size_t n_edges);
/* A bound on the requests of one session in flight at once: 1 for requests and chats, the widest
 * fan of a graph (a worker sizes its transfers as sessions x this). */
uint32_t workload_max_parallel(const config_t *cfg);
/* Number of requests of session `index` without generating the rest (cheap). */
uint32_t workload_session_size(const config_t *cfg, uint64_t index);

/* One quantity of one node: rng_init(seed, RNG_STREAM_WORKLOAD, session, node, field) drawn once
 * from dist, so no draw depends on another's draw count. */
double workload_draw(const config_t *cfg, const dist_t *dist, uint64_t session, uint32_t node,
                     uint32_t field);
/* Rounds a drawn count to an integer in [1, max]; NaN counts as 1. */
uint32_t workload_count(double x, uint32_t max);
/* Seconds to ns, 0 for anything not > 0, saturating at 2^62. */
int64_t workload_seconds_to_ns(double seconds);

/* Global request ordinals: request k of the run is node j of session i, with
 * k = (sizes of sessions 0..i-1) + j. A cursor answers first_request(i) for increasing i in
 * O(1) amortised (it walks session sizes forward). */
typedef struct workload_cursor {
    const config_t *cfg;
    uint64_t next_session;    /* sessions [0, next_session) are summed */
    uint64_t requests_before; /* total size of sessions [0, next_session) */
} workload_cursor_t;

void workload_cursor_init(workload_cursor_t *self, const config_t *cfg);
/* Ordinal of node 0 of session `index`. Walks forward from the last call (O(1) when every session
 * has the same size); an index below the last one restarts from 0: correct, only slower. */
uint64_t workload_cursor_first_request(workload_cursor_t *self, uint64_t index);

/* Rate mode: intended start of arrival `index`, in ns after the run start, from one global seeded
 * sequence of gaps (poisson, constant or gamma). Arrival 0 is at t = 0; arrival i + 1 follows
 * arrival i by gap i, drawn with rng_init(seed, RNG_STREAM_ARRIVAL, i, 0, RNG_FIELD_GAP). Gaps have
 * mean 1 / rate; gamma gaps have cv arrival_cv (cv <= 0 gives constant gaps); a rate <= 0 puts
 * every arrival at 0. Same cursor contract (an index below the cursor restarts from 0). */
typedef struct workload_arrivals {
    const config_t *cfg;
    uint64_t next_index;
    double next_time_s; /* arrival time of next_index */
    dist_t gap;         /* seconds between arrivals, prepared by init (owns no memory) */
} workload_arrivals_t;

void workload_arrivals_init(workload_arrivals_t *self, const config_t *cfg);
int64_t workload_arrivals_time_ns(workload_arrivals_t *self, uint64_t index);
/* Kind trace: the arrival of session index i in ns after the run start, the trace's arrival x
 * time_scale, plus (i / n_sessions) x period x time_scale when wrapping. */
int64_t workload_trace_arrival_ns(const config_t *cfg, uint64_t index);

/* Rate mode: the schedule the limits leave in force. When limits.max_sessions or
 * limits.max_requests (the sessions holding that many requests) end the arrivals at or before
 * horizon_ns after the run start, returns true with the sessions allowed in *n_sessions and the
 * last one's arrival in *last_ns; false when the arrivals go on past horizon_ns (or nothing
 * limits them). Linear in the sessions walked (at most those arriving by horizon_ns). */
bool workload_schedule_cut(const config_t *cfg, int64_t horizon_ns, uint64_t *n_sessions,
                           int64_t *last_ns);
/* Rate mode: when the schedule in force ends, in ns after the run start (its last allowed
 * arrival plus one mean gap, 1 / scheduler.rate), or -1 when it goes on past horizon_ns. */
int64_t workload_schedule_end_ns(const config_t *cfg, int64_t horizon_ns);

/* Prompt text. The fresh text of (session, node) is n words drawn from the single-token vocabulary
 * (common/prompt.h) with rng_init(text seed, RNG_STREAM_PROMPT, session, node, RNG_FIELD_TEXT);
 * the system scaffold (workload.system_prompt_tokens words) depends on the text seed only, so it
 * is shared by every session (real prefix reuse across sessions). The text seed is
 * config_text_seed(cfg): a sweep gives each level and repetition its own, while every shape
 * (lengths, graphs, waits, arrivals) stays a function of the seed. Both write at buf (pass the end
 * of the text so far to append) single-space-separated words with no leading or trailing space,
 * NUL-terminated, and return the number of bytes written, or -1 if cap is too small (see
 * prompt_max_bytes()). */
long workload_fresh_text(const config_t *cfg, uint64_t session, uint32_t node, uint32_t n_words,
                         char *buf, size_t cap);
long workload_system_text(const config_t *cfg, char *buf, size_t cap);
/* The room workload_fresh_text needs for (session, node) with n_words, its NUL included:
 * prompt_max_bytes(n_words), plus a dataset turn's own text. */
size_t workload_fresh_max_bytes(const config_t *cfg, uint64_t session, uint32_t node,
                                uint32_t n_words);

/* A digest of session `index`: every node's shape (parents, role, lengths, wait, inherit) and
 * fresh prompt text. */
uint64_t workload_session_digest(const config_t *cfg, uint64_t index);
/* An order-independent digest of sessions [0, n): the system text, the sum of the session digests
 * and, in rate mode, the arrival times of [0, n). */
uint64_t workload_digest(const config_t *cfg, uint64_t n_sessions);

#endif
