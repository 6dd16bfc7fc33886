/* One session's life: its pooled state sized for the generated DAG, nodes becoming ready when
 * their parents finish (then waiting their wait_after_ready), and its end, which lets its slot or
 * the arrival stream start the next one. */
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "session_internal.h"

static void session_run_end(session_run_t *run);

void session_run_abandon(session_run_t *run) {
    session_executor_t *self = run->owner;
    run->ending = true;
    for (uint32_t j = 0; j < run->n_nodes && run->waiting; j++) {
        session_node_t *node = &run->nodes[j];
        if (node->state == SESSION_NODE_WAITING) {
            loop_timer_cancel(self->loop, node->timer);
            node->timer = 0;
        } else if (node->state == SESSION_NODE_BLOCKED) {
            session_request_unblock(self, node->blocked);
            node->blocked = NULL;
        } else {
            continue;
        }
        node->state = SESSION_NODE_PENDING;
        run->waiting--;
    }
}

void session_run_settle(session_run_t *run) {
    if (run->inflight == 0 && run->waiting == 0 && run->pinned == 0)
        session_run_end(run);
}

/* A session over at its start ends here, from the loop. */
static void session_reap_fire(loop_t *loop, uint64_t id, void *arg) {
    session_run_t *run = arg;
    run->reap_timer = 0;
    session_run_settle(run);
    session_check_finished(run->owner);
}

static void session_node_ready(session_node_t *node, int64_t ready_ns);

/* The node's wait_after_ready is over: it is sent now. */
static void session_node_fire(loop_t *loop, uint64_t id, void *arg) {
    session_node_t *node = arg;
    session_run_t *run = node->run;
    node->timer = 0;
    node->state = SESSION_NODE_PENDING;
    run->waiting--;
    session_request_send(node);
    session_run_settle(run);
    session_check_finished(run->owner);
}

/* Whether node j, ready at ready_ns, will be sent. A node after the first whose time falls past
 * the end is dropped at once, so its session ends (and its slot moves on) now; a root waits, so a
 * slot never spins through sessions that could not start before the end. */
static bool session_node_sendable(const session_run_t *run, uint32_t j, int64_t ready_ns) {
    const session_executor_t *self = run->owner;
    const workload_node_t *shape = &run->shape.nodes[j];
    if (!self->issuing || run->ending)
        return false;
    return !self->end_ns || shape->n_parents == 0 ||
           ready_ns + shape->wait_after_ready_ns < self->end_ns;
}

/* All the node's parents are done (at ready_ns): it is sent now, later, or never. */
static void session_node_ready(session_node_t *node, int64_t ready_ns) {
    session_run_t *run = node->run;
    session_executor_t *self = run->owner;
    if (!session_node_sendable(run, node->index, ready_ns))
        return; /* stays pending: never sent */
    node->intended_ns = ready_ns + run->shape.nodes[node->index].wait_after_ready_ns;
    if (node->intended_ns <= loop_now_ns()) {
        session_request_send(node);
        return;
    }
    node->state = SESSION_NODE_WAITING;
    run->waiting++;
    node->timer = loop_timer_at(self->loop, node->intended_ns, session_node_fire, node);
}

uint32_t session_run_release_children(session_run_t *run, const session_node_t *node, int64_t now) {
    uint32_t sendable = 0;
    for (uint32_t c = run->child_start[node->index]; c < run->child_start[node->index + 1]; c++) {
        uint32_t j = run->children[c];
        if (--run->nodes[j].parents_left == 0 && session_node_sendable(run, j, now))
            sendable++;
    }
    return sendable;
}

void session_run_ready_children(session_run_t *run, const session_node_t *node, int64_t now) {
    for (uint32_t c = run->child_start[node->index]; c < run->child_start[node->index + 1]; c++) {
        session_node_t *child = &run->nodes[run->children[c]];
        if (child->parents_left == 0 && child->state == SESSION_NODE_PENDING)
            session_node_ready(child, now);
    }
}

/* Fills children[] from the parent lists: child_start[j + 1] holds node j's child count. */
static void session_run_link_children(session_run_t *run, uint32_t edges) {
    const workload_session_t *shape = &run->shape;
    uint32_t n = run->n_nodes;
    for (uint32_t j = 0; j < n; j++)
        run->child_start[j + 1] += run->child_start[j];
    if (buffer_grow_array(&run->children, &run->children_cap, edges, sizeof(uint32_t)) < 0)
        session_die("out of memory");
    for (uint32_t j = 0; j < n; j++) /* mark serves as the fill cursor, then is reset */
        run->nodes[j].mark = run->child_start[j];
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t p = 0; p < shape->nodes[j].n_parents; p++)
            run->children[run->nodes[shape->nodes[j].parents[p]].mark++] = j;
    for (uint32_t j = 0; j < n; j++)
        run->nodes[j].mark = 0;
}

/* Sizes the run's per-node arrays for the generated shape and links children to parents. */
static void session_run_prepare(session_run_t *run) {
    const workload_session_t *shape = &run->shape;
    uint32_t n = run->n_nodes;
    size_t need = (size_t)n + 1, nodes_cap = run->nodes_cap; /* the pair then agrees on the cap */
    if (buffer_grow_array(&run->nodes, &nodes_cap, need, sizeof *run->nodes) < 0 ||
        buffer_grow_pair(&run->child_start, sizeof(uint32_t), &run->stack, sizeof(uint32_t),
                         &run->nodes_cap, need) < 0)
        session_die("out of memory");
    uint32_t edges = 0;
    memset(run->child_start, 0, (n + 1) * sizeof(uint32_t));
    for (uint32_t j = 0; j < n; j++) {
        const workload_node_t *w = &shape->nodes[j];
        if (w->history == WORKLOAD_HISTORY_CHAIN && w->n_parents && w->history_parent >= j)
            session_die("a workload node's history parent does not precede it");
        for (uint32_t p = 0; p < w->n_parents; p++) {
            if (w->parents[p] >= j)
                session_die("a workload node's parent does not precede it");
            run->child_start[w->parents[p] + 1]++;
            edges++;
        }
        run->nodes[j] = (session_node_t){
            .run = run, .index = j, .parents_left = w->n_parents, .state = SESSION_NODE_PENDING};
    }
    session_run_link_children(run, edges);
    run->epoch = 0;
}

/* A run from the pool, or a new one. */
static session_run_t *session_run_get(session_executor_t *self) {
    session_run_t *run = self->free_runs;
    if (run) {
        self->free_runs = run->next;
    } else {
        run = session_alloc(sizeof *run);
        run->owner = self;
    }
    return run;
}

void session_run_start(session_executor_t *self, session_slot_t *slot, uint64_t index,
                       uint64_t first_request, int64_t intended_ns, int64_t arrival_offset_ns) {
    session_run_t *run = session_run_get(self);
    run->slot = slot;
    run->arrival_offset_ns = arrival_offset_ns;
    if (self->generate(self->generate_arg, self->cfg, index, &run->shape) != 0)
        session_die("out of memory generating a session");
    if (run->shape.n_nodes != workload_session_size(self->cfg, index))
        session_die("a generated session's size differs from workload_session_size");
    run->first_request = first_request;
    run->n_nodes = run->shape.n_nodes;
    uint64_t max_requests = self->cfg->limits.max_requests;
    if (max_requests && run->first_request + run->n_nodes > max_requests)
        run->n_nodes = (uint32_t)(max_requests - run->first_request);
    session_run_prepare(run);
    run->text_len = 0;
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
            session_node_ready(&run->nodes[j], intended_ns);
    /* A session over at once (its first request refused) ends from the loop, not recursively. */
    if (run->inflight == 0 && run->waiting == 0)
        run->reap_timer = loop_timer_at(self->loop, loop_now_ns(), session_reap_fire, run);
}

/* Back to the pool; its slot or the arrival stream may start the next session. */
static void session_run_end(session_run_t *run) {
    session_executor_t *self = run->owner;
    loop_timer_cancel(self->loop, run->reap_timer);
    run->reap_timer = 0;
    if (run->prev)
        run->prev->next = run->next;
    else
        self->active = run->next;
    if (run->next)
        run->next->prev = run->prev;
    self->active_sessions--;
    session_slot_t *slot = run->slot;
    run->next = self->free_runs;
    self->free_runs = run;
    session_schedule_next(self, slot);
    session_check_finished(self);
}

void session_run_free(session_executor_t *self, session_run_t *run) {
    for (uint32_t j = 0; j < run->n_nodes; j++)
        if (run->nodes[j].state == SESSION_NODE_WAITING)
            loop_timer_cancel(self->loop, run->nodes[j].timer);
    loop_timer_cancel(self->loop, run->reap_timer);
    workload_session_free(&run->shape);
    free(run->nodes);
    free(run->child_start);
    free(run->children);
    free(run->stack);
    free(run->text);
    free(run);
}
