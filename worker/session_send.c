#include "session_send.h"

#include <stdio.h>
#include <stdlib.h>

#include "route.h"
#include "session_alloc.h"

struct session_sender {
    loop_t *loop;
    const config_t *cfg;
    session_backend_t backend;
    session_send_done_fn done;
    session_send_dequeued_fn dequeued;
    void *arg;
    uint32_t n_endpoints;
    char **urls;
    session_send_t *free_list, *queue_head, *queue_tail;
    uint32_t inflight;        /* handed to the backend, or waiting to be resent after a 429 */
    session_send_t *retrying; /* those waiting, linked by next */
    bool closing;             /* destroy: done callbacks only give requests back */
};

/* A wait for a free transfer before a due resend is retried this often. */
#define SESSION_SEND_RETRY_POLL_NS 10000000LL

session_sender_t *session_sender_new(loop_t *loop, const config_t *cfg, session_backend_t backend,
                                     session_send_done_fn done, session_send_dequeued_fn dequeued,
                                     void *arg) {
    session_sender_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    self->cfg = cfg;
    self->backend = backend;
    self->done = done;
    self->dequeued = dequeued;
    self->arg = arg;
    self->n_endpoints = (uint32_t)cfg->target.n_endpoints;
    self->urls = calloc(self->n_endpoints ? self->n_endpoints : 1, sizeof *self->urls);
    bool ok = self->urls != NULL;
    for (uint32_t e = 0; ok && e < self->n_endpoints; e++)
        ok = (self->urls[e] = config_request_url(&cfg->target, cfg->target.endpoints[e])) != NULL;
    if (!ok)
        session_sender_destroy(&self);
    return self;
}

session_send_t *session_sender_get(session_sender_t *self) {
    session_send_t *req = self->free_list;
    if (req) {
        self->free_list = req->next;
    } else {
        req = session_alloc(sizeof *req);
        body_init(&req->body);
        req->sender = self;
    }
    req->next = NULL;
    return req;
}

void session_sender_put(session_sender_t *self, session_send_t *req) {
    req->owner = NULL;
    req->next = self->free_list;
    self->free_list = req;
}

static void session_sender_done(void *arg, request_record_t *record, const char *reply,
                                size_t reply_len);

/* Takes req off the list of requests waiting to be resent. */
static void session_sender_unlink_retry(session_sender_t *self, session_send_t *req) {
    session_send_t **link = &self->retrying;
    while (*link && *link != req)
        link = &(*link)->next;
    if (*link)
        *link = req->next;
    req->next = NULL;
    req->retry_timer = 0;
}

/* A 429's wait is over: the same request goes out again (still counted in flight), or, when no
 * transfer is free yet, tries again shortly. */
static void session_sender_retry_fire(loop_t *loop, uint64_t id, void *arg) {
    (void)id;
    session_send_t *req = arg;
    session_sender_t *self = req->sender;
    int64_t now = loop_now_ns();
    if (self->backend.submit(self->backend.ctx, &req->request, session_sender_done, req) != 0) {
        req->retry_timer = loop_timer_at(loop, loop_now_ns() + SESSION_SEND_RETRY_POLL_NS,
                                         session_sender_retry_fire, req);
        if (req->retry_timer)
            return;
        session_sender_unlink_retry(self, req);
        req->record.end_ns = loop_now_ns();
        self->inflight--;
        self->done(self->arg, req, &req->record, "", 0); /* ends as the 429 it was */
        return;
    }
    /* the wait, and any wait for a transfer after it, up to this send */
    req->record.retry_wait_ns += now - req->retry_from_ns;
    req->record.retries++;
    session_sender_unlink_retry(self, req);
}

/* With target.retry_on_429 honour, a 429 (or Anthropic's 529 overloaded_error, which its clients
 * retry the same way) with retries left waits its Retry-After (1 s without one; at most
 * target.retry_after_max) to be sent again. Returns whether it will be. */
static bool session_sender_retry(session_sender_t *self, session_send_t *req,
                                 const request_record_t *record) {
    const config_target_t *t = &self->cfg->target;
    bool overloaded = record->error == ERROR_HTTP_429 || record->error == ERROR_HTTP_529;
    if (!t->retry_on_429 || !overloaded || !self->loop || req->record.retries >= t->retry_429_max)
        return false;
    int64_t wait_ns = 1000000000LL; /* without a Retry-After */
    if (record->retry_after_s >= 0)
        wait_ns = record->retry_after_s > t->retry_after_max_ns / 1000000000LL
                      ? t->retry_after_max_ns
                      : (int64_t)record->retry_after_s * 1000000000LL;
    if (wait_ns > t->retry_after_max_ns)
        wait_ns = t->retry_after_max_ns;
    int64_t now = loop_now_ns();
    req->retry_timer = loop_timer_at(self->loop, now + wait_ns, session_sender_retry_fire, req);
    if (!req->retry_timer)
        return false;
    req->retry_from_ns = record->end_ns ? record->end_ns : now;
    req->next = self->retrying;
    self->retrying = req;
    return true;
}

/* The backend's done callback. */
static void session_sender_done(void *arg, request_record_t *record, const char *reply,
                                size_t reply_len) {
    session_send_t *req = arg;
    session_sender_t *self = req->sender;
    if (!self->closing && session_sender_retry(self, req, record))
        return; /* still in flight: waiting to be resent */
    self->inflight--;
    if (self->closing) {
        session_sender_put(self, req);
        return;
    }
    self->done(self->arg, req, record, reply, reply_len);
}

/* 0 when the backend took the request (now in flight), -1 when no transfer can start now. */
static int session_sender_submit(session_sender_t *self, session_send_t *req) {
    if (self->backend.submit(self->backend.ctx, &req->request, session_sender_done, req) != 0)
        return -1;
    self->inflight++;
    return 0;
}

session_send_result_t session_sender_send(session_sender_t *self, session_send_t *req) {
    const config_target_t *target = &self->cfg->target;
    request_record_t *rec = &req->record;
    rec->endpoint = route_endpoint(target, self->cfg->seed, rec->session, rec->request_id,
                                   self->backend.inflight_to, self->backend.ctx);
    /* sticky routing names the session in X-Session-ID; target.session_header in its header */
    bool named = target->routing == ROUTING_STICKY || target->session_header;
    if (named)
        snprintf(req->session_id, sizeof req->session_id, "%llu", (unsigned long long)rec->session);
    req->request = (engine_request_t){.url = self->urls[rec->endpoint],
                                      .body = req->body.data,
                                      .body_len = req->body.len,
                                      .session_header = named ? req->session_id : NULL,
                                      .reply_unused = req->reply_unused,
                                      .record = rec};
    if (session_sender_submit(self, req) == 0)
        return SESSION_SEND_INFLIGHT;
    if (self->inflight == 0)
        return SESSION_SEND_REFUSED;
    if (self->queue_tail)
        self->queue_tail->next = req;
    else
        self->queue_head = req;
    self->queue_tail = req;
    return SESSION_SEND_QUEUED;
}

void session_sender_unqueue(session_sender_t *self, session_send_t *req) {
    session_send_t **link = &self->queue_head, *prev = NULL;
    while (*link != req) {
        prev = *link;
        link = &(*link)->next;
    }
    *link = req->next;
    if (self->queue_tail == req)
        self->queue_tail = prev;
    session_sender_put(self, req);
}

void session_sender_pump(session_sender_t *self) {
    while (self->queue_head) {
        session_send_t *req = self->queue_head;
        int rc = session_sender_submit(self, req);
        if (rc != 0 && self->inflight > 0)
            return;
        self->queue_head = req->next;
        if (!self->queue_head)
            self->queue_tail = NULL;
        req->next = NULL;
        self->dequeued(self->arg, req, rc == 0);
    }
}

uint32_t session_sender_inflight(const session_sender_t *self) {
    return self->inflight;
}

void session_sender_cancel_all(session_sender_t *self) {
    while (self->retrying) { /* a wait for a resend ends as the run's end: cancelled */
        session_send_t *req = self->retrying;
        loop_timer_cancel(self->loop, req->retry_timer);
        session_sender_unlink_retry(self, req);
        req->record.error = ERROR_CANCELLED;
        snprintf(req->record.error_message, sizeof req->record.error_message,
                 "cancelled while waiting to resend after HTTP %d (retry %u)",
                 req->record.http_status, (unsigned)req->record.retries + 1);
        req->record.retry_wait_ns += loop_now_ns() - req->retry_from_ns;
        self->inflight--;
        if (self->closing)
            session_sender_put(self, req);
        else
            self->done(self->arg, req, &req->record, "", 0);
    }
    if (self->inflight > 0)
        self->backend.cancel_all(self->backend.ctx);
}

/* Frees a list of pooled requests (linked by next). */
static void session_sender_free_list(session_send_t *req) {
    while (req) {
        session_send_t *next = req->next;
        body_free(&req->body);
        free(req);
        req = next;
    }
}

void session_sender_destroy(session_sender_t **self_p) {
    session_sender_t *self = *self_p;
    if (!self)
        return;
    self->closing = true;
    session_sender_cancel_all(self);
    if (self->inflight > 0)
        session_alloc_die("the backend kept requests in flight after cancel_all");
    session_sender_free_list(self->queue_head);
    session_sender_free_list(self->free_list);
    for (uint32_t e = 0; self->urls && e < self->n_endpoints; e++)
        free(self->urls[e]);
    free(self->urls);
    free(self);
    *self_p = NULL;
}
