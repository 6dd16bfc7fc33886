/* The sessions in progress: each one's DAG state (which node is ready, waiting, in flight or
 * done), owned here and nowhere else. A node becomes ready when all its parents finished, waits
 * its wait_after_ready, then is sent: its prompt from worker/session_prompt, its endpoint and
 * transfer from worker/session_send. A failed request ends its session: nothing more of it is
 * sent, what is in flight finishes. Runs are pooled and grow only with the largest session seen. */
#ifndef STAMPEDE_SESSION_GRAPH_H
#define STAMPEDE_SESSION_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "loop.h"
#include "session.h"

typedef struct session_graph session_graph_t;

/* What the graph tells the stage above it. */
typedef struct session_graph_hooks {
    session_record_fn on_record; /* every request handed to the backend, failures included */
    void *record_arg;            /* on_record's */
    /* A session ended; source and backoff_ns as given to session_graph_start, the backoff
     * updated by its requests (connect failures double it, any answer clears it). */
    void (*session_ended)(void *arg, void *source, int64_t backoff_ns);
    /* Something ended or was dropped: the executor may now be finished. */
    void (*settled)(void *arg);
    void *arg; /* session_ended's and settled's */
} session_graph_hooks_t;

/* An idle graph stage for cfg (which, like loop, must outlive it), sending through backend; NULL
 * when memory is short. */
session_graph_t *session_graph_new(loop_t *loop, const config_t *cfg, session_backend_t backend,
                                   const session_graph_hooks_t *hooks);
/* Replaces workload_session_generate as the source of session shapes. */
void session_graph_set_generator(session_graph_t *self, session_generate_fn generate, void *arg);
/* Sending is allowed until end_ns (0: no end); requests sent before warmup_end_ns are warmup. */
void session_graph_begin(session_graph_t *self, int64_t end_ns, int64_t warmup_end_ns);
/* Starts session `index`: its roots become ready at intended_ns. first_request is the global
 * ordinal of its node 0; arrival_offset_ns is -1 in concurrent mode. source (the caller's) and
 * backoff_ns come back with session_ended. */
void session_graph_start(session_graph_t *self, void *source, int64_t backoff_ns, uint64_t index,
                         uint64_t first_request, int64_t intended_ns, int64_t arrival_offset_ns);
/* Nothing more is sent: waiting nodes are dropped, sessions end as their requests finish. */
void session_graph_stop(session_graph_t *self);
/* Sessions started and not yet over (including those waiting between turns). */
uint32_t session_graph_active(const session_graph_t *self);
/* Requests in flight (handed to the backend, done not yet called). */
uint32_t session_graph_inflight(const session_graph_t *self);
/* Cancels what is in flight (recorded as cancelled). */
void session_graph_cancel_all(session_graph_t *self);
/* Cancels what is still in flight (without reporting it) and frees everything. */
void session_graph_destroy(session_graph_t **self_p);

#endif
