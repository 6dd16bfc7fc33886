/* Shared by the session_*.c files only: the executor's state and the calls between its parts.
 * session.c is the executor itself; session_schedule.c decides when sessions start (slots,
 * arrivals, limits); session_run.c is one session's life (its DAG, nodes becoming ready, its end);
 * session_history.c what a session has said (fresh texts, replies, the body a node sends);
 * session_request.c a request handed to the backend and its completion. worker/route.c picks
 * endpoints. The API is worker/session.h. */
#ifndef STAMPEDE_SESSION_INTERNAL_H
#define STAMPEDE_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "body.h"
#include "record.h"
#include "session.h"
#include "workload.h"

typedef enum session_node_state {
    SESSION_NODE_PENDING,  /* not ready yet, or never to be sent */
    SESSION_NODE_WAITING,  /* ready, waiting for its wait_after_ready */
    SESSION_NODE_BLOCKED,  /* built, waiting for a free transfer */
    SESSION_NODE_INFLIGHT, /* handed to the backend */
    SESSION_NODE_DONE
} session_node_state_t;

typedef struct session_run session_run_t;
typedef struct session_request session_request_t;

typedef struct session_node {
    session_run_t *run;
    uint32_t index;
    uint32_t parents_left;
    session_node_state_t state;
    uint32_t mark;  /* equals run->epoch when marked by the current ancestor walk */
    uint64_t timer; /* SESSION_NODE_WAITING: the wait_after_ready timer */
    int64_t intended_ns;
    size_t user_off; /* user text in run->text, once sent: the parents' replies when the node
                        appends them, then its fresh text */
    size_t user_len;
    size_t fresh_len;    /* the fresh text: the last fresh_len bytes of the user text */
    uint64_t user_words; /* words of the user text */
    uint32_t conv_prev;  /* the turn before this node's in its conversation (UINT32_MAX: none) */
    uint32_t conv_len;   /* turns in its conversation, its own included (set when sent) */
    size_t reply_off;    /* the server's reply in run->text, once done */
    size_t reply_len;
    uint32_t reply_words;
    session_request_t *blocked; /* SESSION_NODE_BLOCKED: its request in the blocked queue */
} session_node_t;

typedef struct session_slot {
    session_executor_t *owner;
    uint64_t next_session;
    int64_t first_ns;   /* ramp-up instant of its first session, then of a session after a pause */
    int64_t backoff_ns; /* pause before the next session after connect failures (0: none) */
    uint64_t timer;
    bool done;
} session_slot_t;

struct session_run {
    session_executor_t *owner;
    session_run_t *prev, *next; /* the active list; the free list uses next only */
    session_slot_t *slot;       /* concurrent mode; NULL in rate mode */
    workload_session_t shape;
    uint32_t n_nodes;          /* nodes that may be sent: max_requests may cut the session */
    uint64_t first_request;    /* global ordinal of node 0 */
    int64_t arrival_offset_ns; /* rate mode; -1 in concurrent mode */
    session_node_t *nodes;
    uint32_t *child_start; /* children of node j: children[child_start[j] .. child_start[j+1]) */
    uint32_t *children;
    uint32_t *stack;  /* ancestor walk */
    size_t nodes_cap; /* of nodes, child_start and stack */
    size_t children_cap;
    uint32_t epoch;
    char *text; /* fresh texts and replies of this session's nodes */
    size_t text_len, text_cap;
    uint32_t inflight; /* nodes in flight */
    uint32_t waiting;  /* nodes waiting for their time or for a free transfer */
    uint32_t pinned;   /* on_record is running for it: it must not end underneath */
    bool ending;       /* a request failed: send nothing more */
    uint64_t reap_timer;
};

struct session_request {
    session_executor_t *owner;
    session_request_t *next; /* free list or blocked queue */
    session_run_t *run;
    uint32_t node;
    int64_t submit_ns;
    body_t body;
    request_record_t record;
    engine_request_t request;
    char session_id[24];
};

struct session_executor {
    loop_t *loop;
    const config_t *cfg;
    plan_share_t share;
    session_backend_t backend;
    session_record_fn on_record;
    session_finished_fn on_finished;
    void *arg;
    session_generate_fn generate;
    void *generate_arg;

    uint32_t n_endpoints;
    char **urls;
    char *system_text;
    size_t system_len;
    uint64_t system_hash;

    uint64_t prefix_base; /* prefix[i] = first request ordinal of session prefix_base + i */
    uint64_t *prefix;
    size_t prefix_len, prefix_cap;
    uint64_t prefix_total; /* first ordinal of session prefix_base + prefix_len */

    session_slot_t *slots;
    workload_arrivals_t arrivals;
    uint64_t next_arrival;
    uint64_t arrival_timer;
    uint32_t sources_left; /* slots (or the arrival stream) that may still start sessions */
    uint64_t arrivals_started;
    uint64_t cap_waits;        /* arrivals that were due while the cap was full */
    uint64_t cap_wait_counted; /* 1 + the arrival last counted in cap_waits (0: none) */

    int64_t start_ns, end_ns, warmup_end_ns;
    uint64_t end_timer, finished_timer;
    bool started, stopped, issuing, finished, destroying;

    session_run_t *active, *free_runs;
    session_request_t *free_requests, *blocked_head, *blocked_tail;
    uint32_t inflight, active_sessions;
};

/* session.c */

/* Prints what went wrong (a broken invariant or no memory) and aborts. */
void session_die(const char *what) __attribute__((noreturn));
/* n zeroed bytes, or dies when memory is short; never returns NULL. */
void *session_alloc(size_t n);
/* When nothing can start, is waiting or in flight any more, schedules on_finished (once). */
void session_check_finished(session_executor_t *self);

/* session_schedule.c */

/* Arms the slots (concurrent) or the arrival stream (rate) from self->start_ns. */
void session_schedule_start(session_executor_t *self);
/* After a session ended: its slot starts the next one, or due arrivals start (rate mode). */
void session_schedule_next(session_executor_t *self, session_slot_t *slot);
/* No session starts any more: cancels the slot and arrival timers. */
void session_schedule_stop(session_executor_t *self);

/* session_run.c */

/* Starts session `index` (pooled state): roots become ready at intended_ns. slot is NULL in rate
 * mode, arrival_offset_ns -1 in concurrent mode. */
void session_run_start(session_executor_t *self, session_slot_t *slot, uint64_t index,
                       uint64_t first_request, int64_t intended_ns, int64_t arrival_offset_ns);
/* Nothing more of this session is sent: waiting nodes are dropped, what is in flight finishes. */
void session_run_abandon(session_run_t *run);
/* Ends the run when nothing of it is in flight, waiting or being reported. */
void session_run_settle(session_run_t *run);
/* A node finished well: its children lose a parent; returns how many became ready and sendable. */
uint32_t session_run_release_children(session_run_t *run, const session_node_t *node, int64_t now);
/* The node's children left pending with no parent left become ready at now. */
void session_run_ready_children(session_run_t *run, const session_node_t *node, int64_t now);
/* Cancels the run's timers and frees it with everything it owns. */
void session_run_free(session_executor_t *self, session_run_t *run);

/* session_history.c */

/* Writes the node's user text into the run's text: its parents' replies first when it appends
 * them (each followed by a blank line), then its fresh text. */
void session_history_add_fresh(const session_executor_t *self, session_run_t *run,
                               session_node_t *node);
/* Keeps the server's reply (verbatim) for the node's descendants, and its word count. */
void session_history_add_reply(session_run_t *run, session_node_t *node, const char *reply,
                               size_t reply_len);
/* Writes the node's body (system, inherited history, user text); returns the words sent. */
uint64_t session_history_build_body(const session_executor_t *self, session_run_t *run,
                                    session_node_t *node, body_t *body);

/* session_request.c */

/* Builds and hands the node's request to the backend (or queues it, or records its failure). */
void session_request_send(session_node_t *node);
/* Takes a queued request out of the blocked queue and back to the pool. */
void session_request_unblock(session_executor_t *self, session_request_t *req);
/* Requests that found no free transfer go out, in order, as ours finish. */
void session_request_pump_blocked(session_executor_t *self);
/* Frees a list of pooled requests (linked by next). */
void session_request_free_list(session_request_t *req);

#endif
