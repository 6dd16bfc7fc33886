/* The last stage of a session's request: its endpoint (worker/route), then the backend (the
 * request engine, or a fake in tests). Requests are pooled with their body buffers; one that finds
 * no free transfer waits, in order, in a queue until one of ours finishes. The sender knows
 * nothing of sessions: whoever sends gets each request back through the callbacks it gave. */
#ifndef STAMPEDE_SESSION_SEND_H
#define STAMPEDE_SESSION_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "body.h"
#include "config.h"
#include "loop.h"
#include "record.h"
#include "session.h"

/* One request: the caller fills body and record (all but the endpoint), then sends it. */
typedef struct session_send {
    struct session_send *next;     /* free list or queue */
    struct session_sender *sender; /* the pool it belongs to */
    void *owner;                   /* the caller's: what the request belongs to */
    uint32_t node;                 /* the caller's: which of the owner's nodes it is */
    int64_t submit_ns;
    bool reply_unused;     /* the caller reads no reply text: the engine keeps none (engine.h) */
    uint64_t retry_timer;  /* waiting to be resent after a 429: its loop timer */
    int64_t retry_from_ns; /* when that 429 ended */
    body_t body;
    request_record_t record;
    engine_request_t request;
    char session_id[24];
} session_send_t;

typedef struct session_sender session_sender_t;

/* The backend finished the request (record and reply valid during the call). The callee gives
 * the request back with session_sender_put. */
typedef void (*session_send_done_fn)(void *arg, session_send_t *req, request_record_t *record,
                                     const char *reply, size_t reply_len);
/* A queued request left the queue: sent (now in flight), or refused with nothing of ours in flight
 * (the callee records its failure and puts it back). */
typedef void (*session_send_dequeued_fn)(void *arg, session_send_t *req, bool sent);

/* What session_sender_send did with a request. */
typedef enum {
    SESSION_SEND_INFLIGHT, /* the backend has it: done follows */
    SESSION_SEND_QUEUED,   /* no free transfer: dequeued follows */
    SESSION_SEND_REFUSED   /* no free transfer and nothing of ours in flight: the caller's */
} session_send_result_t;

/* A sender to cfg's endpoints (cfg and loop must outlive it); NULL when memory is short. With
 * target.retry_on_429 honour, a request answered 429 is not handed back: it waits its Retry-After
 * (capped) on loop and is sent again, up to target.retry_429_max times, counting as in flight the
 * whole time (docs/metrics.md section 3). */
session_sender_t *session_sender_new(loop_t *loop, const config_t *cfg, session_backend_t backend,
                                     session_send_done_fn done, session_send_dequeued_fn dequeued,
                                     void *arg);
/* A request from the pool (its body buffer kept from earlier use). */
session_send_t *session_sender_get(session_sender_t *self);
/* Back to the pool. */
void session_sender_put(session_sender_t *self, session_send_t *req);
/* Picks the endpoint of the request (global ordinal record.request_id of session
 * record.session) and hands it to the backend, or queues it. */
session_send_result_t session_sender_send(session_sender_t *self, session_send_t *req);
/* Takes a queued request out of the queue and back to the pool. */
void session_sender_unqueue(session_sender_t *self, session_send_t *req);
/* Queued requests go out, in order, as far as transfers are free. */
void session_sender_pump(session_sender_t *self);
/* Requests the backend holds. */
uint32_t session_sender_inflight(const session_sender_t *self);
/* Cancels everything in flight, waits for a retry included (done runs for each before this
 * returns). */
void session_sender_cancel_all(session_sender_t *self);
/* Cancels what is in flight without reporting it, and frees everything. */
void session_sender_destroy(session_sender_t **self_p);

#endif
