#include "session_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "session_alloc.h"
#include "session_prompt.h"
#include "session_scaffold.h"
#include "session_send.h"
#include "workload.h"

typedef enum session_graph_state {
    SESSION_GRAPH_PENDING,  /* not ready yet, or never to be sent */
    SESSION_GRAPH_WAITING,  /* ready, waiting for its wait_after_ready */
    SESSION_GRAPH_QUEUED,   /* built, waiting for a free transfer */
    SESSION_GRAPH_INFLIGHT, /* handed to the backend */
    SESSION_GRAPH_DONE
} session_graph_state_t;

typedef struct session_graph_run session_graph_run_t;

typedef struct session_graph_node {
    session_graph_run_t *run;
    uint32_t index;
    uint32_t parents_left;
    session_graph_state_t state;
    uint64_t timer; /* WAITING: the wait_after_ready timer */
    int64_t intended_ns;
    session_send_t *queued; /* QUEUED: its request in the sender's queue */
    bool summarising;       /* its request out is the summarise request sent in its place */
} session_graph_node_t;

struct session_graph_run {
    session_graph_t *owner;
    session_graph_run_t *prev, *next; /* the active list; the free list uses next only */
    void *source;                     /* the scheduler's (its slot); NULL in rate mode */
    int64_t backoff_ns;               /* the source's pause before its next session */
    workload_session_t shape;
    uint32_t n_nodes;          /* nodes that may be sent: max_requests may cut the session */
    uint64_t first_request;    /* global ordinal of node 0 */
    int64_t arrival_offset_ns; /* rate mode; -1 in concurrent mode */
    session_graph_node_t *nodes;
    uint32_t *child_start; /* children of node j: children[child_start[j] .. child_start[j+1]) */
    uint32_t *children;
    size_t nodes_cap, child_start_cap, children_cap;
    session_prompt_t prompt;
    uint32_t inflight; /* nodes in flight */
    uint32_t waiting;  /* nodes waiting for their time or for a free transfer */
    uint32_t pinned;   /* on_record is running for it: it must not end underneath */
    bool ending;       /* a request failed: send nothing more */
    uint64_t reap_timer;
};

struct session_graph {
    loop_t *loop;
    const config_t *cfg;
    session_graph_hooks_t hooks;
    session_generate_fn generate;
    void *generate_arg;
    session_scaffold_t *scaffold;
    session_sender_t *sender;
    int64_t end_ns, warmup_end_ns;
    bool issuing;
    session_graph_run_t *active, *free_runs;
    uint32_t active_sessions;
};

static void session_graph_run_end(session_graph_run_t *run);
static void session_graph_node_send(session_graph_node_t *node);

/* Nothing more of this session is sent: waiting nodes are dropped, what is in flight finishes. */
static void session_graph_abandon(session_graph_run_t *run) {
    session_graph_t *self = run->owner;
    run->ending = true;
    for (uint32_t j = 0; j < run->n_nodes && run->waiting; j++) {
        session_graph_node_t *node = &run->nodes[j];
        if (node->state == SESSION_GRAPH_WAITING) {
            loop_timer_cancel(self->loop, node->timer);
            node->timer = 0;
        } else if (node->state == SESSION_GRAPH_QUEUED) {
            session_sender_unqueue(self->sender, node->queued);
            node->queued = NULL;
        } else {
            continue;
        }
        node->state = SESSION_GRAPH_PENDING;
        run->waiting--;
    }
}

/* Ends the run when nothing of it is in flight, waiting or being reported. */
static void session_graph_settle(session_graph_run_t *run) {
    if (run->inflight == 0 && run->waiting == 0 && run->pinned == 0)
        session_graph_run_end(run);
}

static void session_graph_settled(session_graph_t *self) {
    self->hooks.settled(self->hooks.arg);
}

/* A session over at its start ends here, from the loop. */
static void session_graph_reap_fire(loop_t *loop, uint64_t id, void *arg) {
    session_graph_run_t *run = arg;
    run->reap_timer = 0;
    session_graph_settle(run);
    session_graph_settled(run->owner);
}

/* The node's wait_after_ready is over: it is sent now. */
static void session_graph_node_fire(loop_t *loop, uint64_t id, void *arg) {
    session_graph_node_t *node = arg;
    session_graph_run_t *run = node->run;
    node->timer = 0;
    node->state = SESSION_GRAPH_PENDING;
    run->waiting--;
    session_graph_node_send(node);
    session_graph_settle(run);
    session_graph_settled(run->owner);
}

/* Whether node j, ready at ready_ns, will be sent. A node after the first whose time falls past
 * the end is dropped at once, so its session ends (and its slot moves on) now; a root waits, so a
 * slot never spins through sessions that could not start before the end. */
static bool session_graph_sendable(const session_graph_run_t *run, uint32_t j, int64_t ready_ns) {
    const session_graph_t *self = run->owner;
    const workload_node_t *shape = &run->shape.nodes[j];
    if (!self->issuing || run->ending)
        return false;
    return !self->end_ns || shape->n_parents == 0 ||
           ready_ns + shape->wait_after_ready_ns < self->end_ns;
}

/* All the node's parents are done (at ready_ns): it is sent now, later, or never. */
static void session_graph_node_ready(session_graph_node_t *node, int64_t ready_ns) {
    session_graph_run_t *run = node->run;
    session_graph_t *self = run->owner;
    if (!session_graph_sendable(run, node->index, ready_ns))
        return; /* stays pending: never sent */
    node->intended_ns = ready_ns + run->shape.nodes[node->index].wait_after_ready_ns;
    if (node->intended_ns <= loop_now_ns()) {
        session_graph_node_send(node);
        return;
    }
    node->state = SESSION_GRAPH_WAITING;
    run->waiting++;
    node->timer = loop_timer_at(self->loop, node->intended_ns, session_graph_node_fire, node);
}

/* A node finished well: its children lose a parent; returns how many became ready and sendable. */
static uint32_t session_graph_release_children(session_graph_run_t *run, uint32_t j, int64_t now) {
    uint32_t sendable = 0;
    for (uint32_t c = run->child_start[j]; c < run->child_start[j + 1]; c++) {
        uint32_t child = run->children[c];
        if (--run->nodes[child].parents_left == 0 && session_graph_sendable(run, child, now))
            sendable++;
    }
    return sendable;
}

/* The node's children left pending with no parent left become ready at now. */
static void session_graph_ready_children(session_graph_run_t *run, uint32_t j, int64_t now) {
    for (uint32_t c = run->child_start[j]; c < run->child_start[j + 1]; c++) {
        session_graph_node_t *child = &run->nodes[run->children[c]];
        if (child->parents_left == 0 && child->state == SESSION_GRAPH_PENDING)
            session_graph_node_ready(child, now);
    }
}

/* Hands the record to on_record; the run stays alive meanwhile, whatever the callee does. */
static void session_graph_report(session_graph_run_t *run, const request_record_t *rec) {
    session_graph_t *self = run->owner;
    run->pinned++;
    self->hooks.on_record(self->hooks.record_arg, rec);
    run->pinned--;
}

/* A request that could not be handed to the backend at all: recorded as failed, session ended. */
static void session_graph_fail(session_graph_run_t *run, session_send_t *req) {
    session_graph_t *self = run->owner;
    request_record_t *rec = &req->record;
    int64_t now = loop_now_ns();
    rec->send_ns = now;
    rec->end_ns = now;
    rec->error = ERROR_CONNECT;
    snprintf(rec->error_message, sizeof rec->error_message,
             "request %llu: the request engine refused the transfer",
             (unsigned long long)rec->request_id);
    rec->warmup = now < self->warmup_end_ns;
    run->nodes[req->node].state = SESSION_GRAPH_DONE;
    session_graph_abandon(run);
    rec->session_end = run->inflight == 0 && run->waiting == 0;
    session_graph_report(run, rec);
    session_sender_put(self->sender, req);
}

/* Hash of what the workload generated for this request; never of anything the server did. */
static uint64_t session_graph_workload_hash(const session_graph_run_t *run, uint32_t j) {
    const workload_node_t *shape = &run->shape.nodes[j];
    uint64_t fields[14];
    size_t n = 0;
    uint64_t inherit_bits;
    memcpy(&inherit_bits, &shape->inherit, sizeof inherit_bits);
    fields[n++] = run->shape.index;
    fields[n++] = j;
    fields[n++] = shape->role;
    fields[n++] = shape->input_tokens;
    fields[n++] = shape->output_tokens;
    fields[n++] = (uint64_t)shape->wait_after_ready_ns;
    fields[n++] = inherit_bits;
    fields[n++] = (uint64_t)run->arrival_offset_ns;
    fields[n++] = session_prompt_fresh_hash(&run->prompt, j);
    fields[n++] = session_scaffold_of(run->owner->scaffold, shape->role)->hash;
    fields[n++] = shape->n_parents;
    fields[n++] = (uint64_t)shape->history << 32 | shape->history_parent;
    fields[n++] = shape->append_parent_replies;
    fields[n++] = XXH3_64bits(shape->parents, shape->n_parents * sizeof(uint32_t));
    return XXH3_64bits(fields, n * sizeof fields[0]);
}

/* Whether node j's context (prompt + max_tokens) would pass the compaction limit with turns to
 * compact; a node compacts at most once. */
static bool session_graph_compacts(const session_graph_run_t *run, uint32_t j, uint64_t words) {
    const config_compaction_t *c = &run->owner->cfg->workload.compaction;
    return c->limit_tokens && !run->prompt.turns[j].compacted && run->prompt.inherited > 0 &&
           words + run->shape.nodes[j].output_tokens > c->limit_tokens;
}

/* Builds the node's request (its fresh text is already kept): its body and its record, or the
 * summarise request that goes first when its context would pass the compaction limit. */
static session_send_t *session_graph_build(session_graph_run_t *run, uint32_t j, int64_t now) {
    session_graph_t *self = run->owner;
    const workload_node_t *shape = &run->shape.nodes[j];
    session_graph_node_t *node = &run->nodes[j];
    session_send_t *req = session_sender_get(self->sender);
    req->owner = run;
    req->node = j;
    req->submit_ns = now;
    uint64_t words = session_prompt_build(&run->prompt, self->cfg, self->scaffold, j, &req->body);
    node->summarising = session_graph_compacts(run, j, words);
    if (node->summarising)
        words =
            session_prompt_build_summarise(&run->prompt, self->cfg, self->scaffold, j, &req->body);
    /* the reply is read by the node's descendants (their history) and as a summary, else never */
    req->reply_unused = !node->summarising && run->child_start[j] == run->child_start[j + 1];
    request_record_t *rec = &req->record;
    memset(rec, 0, sizeof *rec);
    rec->session = run->shape.index;
    rec->node = j;
    rec->role = node->summarising ? self->cfg->workload.compaction.role : shape->role;
    rec->request_id = run->first_request + j;
    rec->intended_ns = node->intended_ns;
    rec->requested_input_tokens = words > UINT32_MAX ? UINT32_MAX : (uint32_t)words;
    rec->requested_output_tokens = run->prompt.max_tokens; /* the node's, or the summary's */
    /* a summarise request depends on the server's replies: no part of the workload digest */
    rec->workload_hash = node->summarising ? 0 : session_graph_workload_hash(run, j);
    return req;
}

/* Hands the node's request on (or queues it, or records its failure). */
static void session_graph_submit(session_graph_run_t *run, session_graph_node_t *node,
                                 int64_t now) {
    session_graph_t *self = run->owner;
    session_send_t *req = session_graph_build(run, node->index, now);
    switch (session_sender_send(self->sender, req)) {
    case SESSION_SEND_INFLIGHT:
        node->state = SESSION_GRAPH_INFLIGHT;
        run->inflight++;
        break;
    case SESSION_SEND_QUEUED:
        node->state = SESSION_GRAPH_QUEUED;
        node->queued = req;
        run->waiting++;
        break;
    case SESSION_SEND_REFUSED:
        session_graph_fail(run, req);
        break;
    }
}

/* Keeps the node's fresh text and sends it, unless the run is over. */
static void session_graph_node_send(session_graph_node_t *node) {
    session_graph_run_t *run = node->run;
    session_graph_t *self = run->owner;
    int64_t now = loop_now_ns();
    if (!self->issuing || (self->end_ns && now >= self->end_ns))
        return; /* stays pending: never sent */
    session_prompt_add_fresh(&run->prompt, self->cfg, node->index);
    session_graph_submit(run, node, now);
}

/* A queued request left the sender's queue: in flight now, or refused. */
static void session_graph_dequeued(void *arg, session_send_t *req, bool sent) {
    session_graph_run_t *run = req->owner;
    session_graph_node_t *node = &run->nodes[req->node];
    node->queued = NULL;
    run->waiting--;
    if (sent) {
        node->state = SESSION_GRAPH_INFLIGHT;
        run->inflight++;
    } else {
        session_graph_fail(run, req);
        session_graph_settle(run);
    }
}

/* Connect failures (refusals, and no descriptor left for a socket) double the source's pause
 * before its next session (10 ms up to 1 s: 5,000 streams against a dead endpoint try at most
 * 5,000 connects a second, not one per loop turn); any answer from the server clears it. */
static int64_t session_graph_backoff(int64_t backoff_ns, error_class_t error) {
    const int64_t first = 10 * 1000000LL, most = 1000 * 1000000LL;
    if (error == ERROR_CONNECT || error == ERROR_REFUSED || error == ERROR_CLIENT_FD_LIMIT)
        return backoff_ns ? (backoff_ns * 2 > most ? most : backoff_ns * 2) : first;
    return error == ERROR_CANCELLED ? backoff_ns : 0;
}

/* The summarise request answered: the node continues from the summary, sent now. */
static void session_graph_summarised(session_graph_run_t *run, session_send_t *req,
                                     request_record_t *record, const char *reply, size_t reply_len,
                                     int64_t now) {
    session_graph_t *self = run->owner;
    session_graph_node_t *node = &run->nodes[req->node];
    bool resend = false;
    node->summarising = false;
    if (record->error == ERROR_NONE) {
        session_prompt_compact(&run->prompt, node->index, reply, reply_len);
        resend = self->issuing && !run->ending && (!self->end_ns || now < self->end_ns);
    } else {
        session_graph_abandon(run);
    }
    record->session_end = run->inflight == 0 && run->waiting == 0 && !resend;
    session_graph_report(run, record);
    session_sender_put(self->sender, req);
    if (resend && self->issuing && !run->ending) {
        node->state = SESSION_GRAPH_PENDING;
        node->intended_ns = now; /* wanted as soon as the summary is in */
        session_graph_submit(run, node, now);
    }
    session_graph_settle(run);
    session_sender_pump(self->sender);
    session_graph_settled(self);
}

/* The sender's done callback: records the request, feeds the history, readies the children. */
static void session_graph_done(void *arg, session_send_t *req, request_record_t *record,
                               const char *reply, size_t reply_len) {
    session_graph_t *self = arg;
    session_graph_run_t *run = req->owner;
    uint32_t j = req->node;
    run->inflight--;
    run->nodes[j].state = SESSION_GRAPH_DONE;
    int64_t now = loop_now_ns();
    record->warmup = (record->send_ns ? record->send_ns : req->submit_ns) < self->warmup_end_ns;
    run->backoff_ns = session_graph_backoff(run->backoff_ns, record->error);
    if (run->nodes[j].summarising) {
        session_graph_summarised(run, req, record, reply, reply_len, now);
        return;
    }

    uint32_t sendable = 0;
    bool ok = record->error == ERROR_NONE;
    if (ok) {
        session_prompt_add_reply(&run->prompt, j, reply, reply_len);
        if (record->response_id[0])
            session_prompt_set_response_id(&run->prompt, j, record->response_id);
        /* counted in target.tokenizer: the reply's tokens, when the count is of its text alone */
        if (record->has_tokenizer_count && record->reasoning_chunks == 0)
            session_prompt_set_reply_tokens(&run->prompt, j, record->tokenizer_tokens);
        sendable = session_graph_release_children(run, j, now);
    } else {
        session_graph_abandon(run);
    }
    record->session_end = run->inflight == 0 && run->waiting == 0 && sendable == 0;
    session_graph_report(run, record);
    session_sender_put(self->sender, req);

    if (ok)
        session_graph_ready_children(run, j, now);
    session_graph_settle(run);
    session_sender_pump(self->sender);
    session_graph_settled(self);
}

/* Sizes the run's per-node arrays for the generated shape and links children to parents: counts
 * per parent, summed to the end of each parent's range, then filled backwards so each range lists
 * its children in node order. */
static void session_graph_prepare(session_graph_run_t *run) {
    const workload_session_t *shape = &run->shape;
    uint32_t n = run->n_nodes;
    session_alloc_grow(&run->nodes, &run->nodes_cap, (size_t)n + 1, sizeof *run->nodes);
    session_alloc_grow(&run->child_start, &run->child_start_cap, (size_t)n + 1, sizeof(uint32_t));
    memset(run->child_start, 0, ((size_t)n + 1) * sizeof(uint32_t));
    uint32_t edges = 0;
    for (uint32_t j = 0; j < n; j++) {
        const workload_node_t *w = &shape->nodes[j];
        if (w->history == WORKLOAD_HISTORY_CHAIN && w->n_parents && w->history_parent >= j)
            session_alloc_die("a workload node's history parent does not precede it");
        for (uint32_t p = 0; p < w->n_parents; p++) {
            if (w->parents[p] >= j)
                session_alloc_die("a workload node's parent does not precede it");
            run->child_start[w->parents[p]]++;
            edges++;
        }
        run->nodes[j] = (session_graph_node_t){
            .run = run, .index = j, .parents_left = w->n_parents, .state = SESSION_GRAPH_PENDING};
    }
    uint32_t end = 0;
    for (uint32_t j = 0; j < n; j++)
        run->child_start[j] = end += run->child_start[j];
    run->child_start[n] = edges;
    session_alloc_grow(&run->children, &run->children_cap, edges ? edges : 1, sizeof(uint32_t));
    for (uint32_t j = n; j-- > 0;)
        for (uint32_t p = shape->nodes[j].n_parents; p-- > 0;)
            run->children[--run->child_start[shape->nodes[j].parents[p]]] = j;
    session_prompt_reset(&run->prompt, shape, n);
}

/* A run from the pool, or a new one. */
static session_graph_run_t *session_graph_run_get(session_graph_t *self) {
    session_graph_run_t *run = self->free_runs;
    if (run) {
        self->free_runs = run->next;
    } else {
        run = session_alloc(sizeof *run);
        run->owner = self;
    }
    return run;
}

void session_graph_start(session_graph_t *self, void *source, int64_t backoff_ns, uint64_t index,
                         uint64_t first_request, int64_t intended_ns, int64_t arrival_offset_ns) {
    session_graph_run_t *run = session_graph_run_get(self);
    run->source = source;
    run->backoff_ns = backoff_ns;
    run->arrival_offset_ns = arrival_offset_ns;
    if (self->generate(self->generate_arg, self->cfg, index, &run->shape) != 0)
        session_alloc_die("out of memory generating a session");
    if (run->shape.n_nodes != workload_session_size(self->cfg, index))
        session_alloc_die("a generated session's size differs from workload_session_size");
    run->first_request = first_request;
    run->n_nodes = run->shape.n_nodes;
    uint64_t max_requests = self->cfg->limits.max_requests;
    if (max_requests && run->first_request + run->n_nodes > max_requests)
        run->n_nodes = (uint32_t)(max_requests - run->first_request);
    session_graph_prepare(run);
    run->inflight = 0;
    run->waiting = 0;
    run->pinned = 0;
    run->ending = false;
    run->reap_timer = 0;
    run->prev = NULL;
    run->next = self->active;
    if (self->active)
        self->active->prev = run;
    self->active = run;
    self->active_sessions++;

    for (uint32_t j = 0; j < run->n_nodes; j++)
        if (run->shape.nodes[j].n_parents == 0)
            session_graph_node_ready(&run->nodes[j], intended_ns);
    /* A session over at once (its first request refused) ends from the loop, not recursively. */
    if (run->inflight == 0 && run->waiting == 0)
        run->reap_timer = loop_timer_at(self->loop, loop_now_ns(), session_graph_reap_fire, run);
}

/* Back to the pool; its source may start the next session. */
static void session_graph_run_end(session_graph_run_t *run) {
    session_graph_t *self = run->owner;
    loop_timer_cancel(self->loop, run->reap_timer);
    run->reap_timer = 0;
    if (run->prev)
        run->prev->next = run->next;
    else
        self->active = run->next;
    if (run->next)
        run->next->prev = run->prev;
    self->active_sessions--;
    run->next = self->free_runs;
    self->free_runs = run;
    self->hooks.session_ended(self->hooks.arg, run->source, run->backoff_ns);
    session_graph_settled(self);
}

/* Cancels the run's timers and frees it with everything it owns. */
static void session_graph_run_free(session_graph_t *self, session_graph_run_t *run) {
    for (uint32_t j = 0; j < run->n_nodes; j++)
        if (run->nodes[j].state == SESSION_GRAPH_WAITING)
            loop_timer_cancel(self->loop, run->nodes[j].timer);
    loop_timer_cancel(self->loop, run->reap_timer);
    workload_session_free(&run->shape);
    session_prompt_free(&run->prompt);
    free(run->nodes);
    free(run->child_start);
    free(run->children);
    free(run);
}

static int session_graph_generate_workload(void *arg, const config_t *cfg, uint64_t index,
                                           workload_session_t *out) {
    return workload_session_generate(cfg, index, out);
}

session_graph_t *session_graph_new(loop_t *loop, const config_t *cfg, session_backend_t backend,
                                   const session_graph_hooks_t *hooks) {
    session_graph_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    self->cfg = cfg;
    self->hooks = *hooks;
    self->generate = session_graph_generate_workload;
    self->scaffold = session_scaffold_new(cfg);
    self->sender =
        session_sender_new(loop, cfg, backend, session_graph_done, session_graph_dequeued, self);
    if (!self->scaffold || !self->sender)
        session_graph_destroy(&self);
    return self;
}

void session_graph_set_generator(session_graph_t *self, session_generate_fn generate, void *arg) {
    self->generate = generate;
    self->generate_arg = arg;
}

void session_graph_begin(session_graph_t *self, int64_t end_ns, int64_t warmup_end_ns) {
    self->issuing = true;
    self->end_ns = end_ns;
    self->warmup_end_ns = warmup_end_ns;
}

void session_graph_stop(session_graph_t *self) {
    self->issuing = false;
    session_graph_run_t *run = self->active;
    while (run) {
        session_graph_run_t *next = run->next;
        session_graph_abandon(run);
        session_graph_settle(run);
        run = next;
    }
}

uint32_t session_graph_active(const session_graph_t *self) {
    return self->active_sessions;
}

uint32_t session_graph_inflight(const session_graph_t *self) {
    return session_sender_inflight(self->sender);
}

void session_graph_cancel_all(session_graph_t *self) {
    session_sender_cancel_all(self->sender);
}

void session_graph_destroy(session_graph_t **self_p) {
    session_graph_t *self = *self_p;
    if (!self)
        return;
    session_sender_destroy(&self->sender); /* cancels what is in flight, unreported */
    session_graph_run_t *lists[] = {self->active, self->free_runs};
    for (size_t l = 0; l < 2; l++)
        while (lists[l]) {
            session_graph_run_t *next = lists[l]->next;
            session_graph_run_free(self, lists[l]);
            lists[l] = next;
        }
    session_scaffold_destroy(&self->scaffold);
    free(self);
    *self_p = NULL;
}
