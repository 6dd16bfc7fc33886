/* A node's request: pooled, built (body, record, endpoint), handed to the backend or queued until
 * a transfer is free, and its completion, which feeds the session's history and its children. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "route.h"
#include "session_internal.h"

/* A request from the pool (its body buffer kept from earlier use), or a new one. */
static session_request_t *session_request_get(session_executor_t *self) {
    session_request_t *req = self->free_requests;
    if (req) {
        self->free_requests = req->next;
    } else {
        req = session_alloc(sizeof *req);
        body_init(&req->body);
        req->owner = self;
    }
    req->next = NULL;
    return req;
}

/* Back to the pool. */
static void session_request_put(session_executor_t *self, session_request_t *req) {
    req->run = NULL;
    req->next = self->free_requests;
    self->free_requests = req;
}

/* Hands the record to on_record; the run stays alive meanwhile, whatever the callee does. */
static void session_request_report(session_executor_t *self, session_run_t *run,
                                   const request_record_t *rec) {
    run->pinned++;
    self->on_record(self->arg, rec);
    run->pinned--;
}

/* A request that could not be handed to the backend at all: recorded as failed, session ended. */
static void session_request_fail(session_executor_t *self, session_request_t *req) {
    session_run_t *run = req->run;
    request_record_t *rec = &req->record;
    int64_t now = loop_now_ns();
    rec->send_ns = now;
    rec->end_ns = now;
    rec->error = ERROR_CONNECT;
    snprintf(rec->error_message, sizeof rec->error_message,
             "request %llu: the request engine refused the transfer",
             (unsigned long long)rec->request_id);
    rec->warmup = now < self->warmup_end_ns;
    run->nodes[req->node].state = SESSION_NODE_DONE;
    session_run_abandon(run);
    rec->session_end = run->inflight == 0 && run->waiting == 0;
    session_request_report(self, run, rec);
    session_request_put(self, req);
}

/* Connect failures double the slot's pause before its next session (10 ms up to 100 ms); any
 * answer from the server clears it. */
static void session_request_backoff(session_slot_t *slot, error_class_t error) {
    const int64_t first = 10 * 1000000LL, most = 100 * 1000000LL;
    if (error == ERROR_CONNECT)
        slot->backoff_ns =
            slot->backoff_ns ? (slot->backoff_ns * 2 > most ? most : slot->backoff_ns * 2) : first;
    else if (error != ERROR_CANCELLED)
        slot->backoff_ns = 0;
}

static void session_request_done(void *arg, request_record_t *record, const char *reply,
                                 size_t reply_len);

/* The request is now the backend's: counted in flight on its run and on the executor. */
static void session_request_inflight(session_executor_t *self, session_request_t *req) {
    req->run->nodes[req->node].state = SESSION_NODE_INFLIGHT;
    req->run->inflight++;
    self->inflight++;
}

/* 0 when the backend took the request, -1 when no transfer can start now. */
static int session_request_submit(session_executor_t *self, session_request_t *req) {
    return self->backend.submit(self->backend.ctx, &req->request, session_request_done, req);
}

/* Hash of what the workload generated for this request; never of anything the server did. */
static uint64_t session_request_workload_hash(const session_executor_t *self,
                                              const session_run_t *run,
                                              const session_node_t *node) {
    const workload_node_t *shape = &run->shape.nodes[node->index];
    uint64_t fields[14];
    size_t n = 0;
    uint64_t inherit_bits;
    memcpy(&inherit_bits, &shape->inherit, sizeof inherit_bits);
    fields[n++] = run->shape.index;
    fields[n++] = node->index;
    fields[n++] = shape->role;
    fields[n++] = shape->input_tokens;
    fields[n++] = shape->output_tokens;
    fields[n++] = (uint64_t)shape->wait_after_ready_ns;
    fields[n++] = inherit_bits;
    fields[n++] = (uint64_t)run->arrival_offset_ns;
    fields[n++] = XXH3_64bits(run->text + node->user_off + node->user_len - node->fresh_len,
                              node->fresh_len); /* the fresh text only: never a reply */
    fields[n++] = self->system_hash;
    fields[n++] = shape->n_parents;
    fields[n++] = (uint64_t)shape->history << 32 | shape->history_parent;
    fields[n++] = shape->append_parent_replies;
    fields[n++] = XXH3_64bits(shape->parents, shape->n_parents * sizeof(uint32_t));
    return XXH3_64bits(fields, n * sizeof fields[0]);
}

/* Builds the node's request (body, record, endpoint) into req; its fresh text is already kept. */
static void session_request_build(session_executor_t *self, session_request_t *req,
                                  session_node_t *node, int64_t now) {
    session_run_t *run = node->run;
    const workload_node_t *shape = &run->shape.nodes[node->index];
    req->run = run;
    req->node = node->index;
    req->submit_ns = now;
    uint64_t words = session_history_build_body(self, run, node, &req->body);
    uint64_t g = run->first_request + node->index;
    request_record_t *rec = &req->record;
    memset(rec, 0, sizeof *rec);
    rec->session = run->shape.index;
    rec->node = node->index;
    rec->role = shape->role;
    rec->endpoint = route_endpoint(&self->cfg->target, self->cfg->seed, run->shape.index, g,
                                   self->backend.inflight_to, self->backend.ctx);
    rec->request_id = g;
    rec->intended_ns = node->intended_ns;
    rec->requested_input_tokens = words > UINT32_MAX ? UINT32_MAX : (uint32_t)words;
    rec->requested_output_tokens = shape->output_tokens;
    rec->workload_hash = session_request_workload_hash(self, run, node);
    bool sticky = self->cfg->target.routing == ROUTING_STICKY;
    if (sticky)
        snprintf(req->session_id, sizeof req->session_id, "%llu",
                 (unsigned long long)run->shape.index);
    req->request = (engine_request_t){.url = self->urls[rec->endpoint],
                                      .body = req->body.data,
                                      .body_len = req->body.len,
                                      .session_header = sticky ? req->session_id : NULL,
                                      .record = rec};
}

/* Waits at the end of the blocked queue for one of ours to finish. */
static void session_request_block(session_executor_t *self, session_request_t *req) {
    session_run_t *run = req->run;
    session_node_t *node = &run->nodes[req->node];
    node->state = SESSION_NODE_BLOCKED;
    node->blocked = req;
    run->waiting++;
    if (self->blocked_tail)
        self->blocked_tail->next = req;
    else
        self->blocked_head = req;
    self->blocked_tail = req;
}

void session_request_send(session_node_t *node) {
    session_run_t *run = node->run;
    session_executor_t *self = run->owner;
    int64_t now = loop_now_ns();
    if (!self->issuing || (self->end_ns && now >= self->end_ns))
        return; /* stays pending: never sent */
    session_history_add_fresh(self, run, node);
    session_request_t *req = session_request_get(self);
    session_request_build(self, req, node, now);
    if (session_request_submit(self, req) == 0) {
        session_request_inflight(self, req);
        return;
    }
    if (self->inflight > 0) {
        session_request_block(self, req);
        return;
    }
    session_request_fail(self, req);
}

void session_request_unblock(session_executor_t *self, session_request_t *req) {
    session_request_t **link = &self->blocked_head, *prev = NULL;
    while (*link != req) {
        prev = *link;
        link = &(*link)->next;
    }
    *link = req->next;
    if (self->blocked_tail == req)
        self->blocked_tail = prev;
    session_request_put(self, req);
}

void session_request_pump_blocked(session_executor_t *self) {
    while (self->blocked_head) {
        session_request_t *req = self->blocked_head;
        session_run_t *run = req->run;
        int rc = session_request_submit(self, req);
        if (rc != 0 && self->inflight > 0)
            return;
        self->blocked_head = req->next;
        if (!self->blocked_head)
            self->blocked_tail = NULL;
        run->nodes[req->node].blocked = NULL;
        run->waiting--;
        if (rc == 0) {
            session_request_inflight(self, req);
        } else {
            session_request_fail(self, req);
            session_run_settle(run);
        }
    }
}

/* The backend's done callback: records the request, feeds the history, readies the children. */
static void session_request_done(void *arg, request_record_t *record, const char *reply,
                                 size_t reply_len) {
    session_request_t *req = arg;
    session_executor_t *self = req->owner;
    session_run_t *run = req->run;
    session_node_t *node = &run->nodes[req->node];
    self->inflight--;
    run->inflight--;
    node->state = SESSION_NODE_DONE;
    if (self->destroying) {
        session_request_put(self, req);
        return;
    }
    int64_t now = loop_now_ns();
    record->warmup = (record->send_ns ? record->send_ns : req->submit_ns) < self->warmup_end_ns;

    uint32_t sendable = 0;
    bool ok = record->error == ERROR_NONE;
    if (run->slot)
        session_request_backoff(run->slot, record->error);
    if (ok) {
        session_history_add_reply(run, node, reply, reply_len);
        sendable = session_run_release_children(run, node, now);
    } else {
        session_run_abandon(run);
    }
    record->session_end = run->inflight == 0 && run->waiting == 0 && sendable == 0;
    session_request_report(self, run, record);
    session_request_put(self, req);

    if (ok)
        session_run_ready_children(run, node, now);
    session_run_settle(run);
    session_request_pump_blocked(self);
    session_check_finished(self);
}

void session_request_free_list(session_request_t *req) {
    while (req) {
        session_request_t *next = req->next;
        body_free(&req->body);
        free(req);
        req = next;
    }
}
