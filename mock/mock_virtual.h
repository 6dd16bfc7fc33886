/* The simulated server without sockets, for `stampede simulate` (sim/): request bodies are handed
 * in, the engine's steps run on a loop's timers (a virtual loop: common/loop.h), and each reply
 * comes back as a client on the same host would have received it: status, usage, the instant and
 * token count of every streamed event, and the reply's text. The same parsing, reply lengths and
 * words (mock_api, mock_reply) and the same engine (mock_engine) as `stampede mock`, so a body
 * gets the same answer at the same engine times. N replicas, each an engine of the same options,
 * sit behind a router. Engine mode only (fixed timings are not simulated). */
#ifndef STAMPEDE_MOCK_VIRTUAL_H
#define STAMPEDE_MOCK_VIRTUAL_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "mock_api.h"
#include "mock_engine.h"
#include "mock_metrics.h"
#include "mock_options.h"

/* How a request picks its replica. */
typedef enum mock_router {
    MOCK_ROUTER_ROUND_ROBIN,  /* request k to replica k mod N */
    MOCK_ROUTER_LEAST_LOADED, /* the fewest requests routed and unfinished; ties round robin */
    MOCK_ROUTER_PREFIX,       /* the most leading prompt blocks in its prefix cache (Dynamo's KV
                                 router's aim); ties least loaded, then round robin */
} mock_router_t;

/* "round_robin", "least_loaded", "prefix". */
const char *mock_router_name(mock_router_t router);
/* 0 with *out set for one of those names, -1 otherwise. */
int mock_router_parse(const char *name, mock_router_t *out);

/* How long a refused request takes to be answered (a request and its error over loopback). */
#define MOCK_VIRTUAL_REFUSAL_NS 200000

typedef struct mock_virtual mock_virtual_t;
typedef struct mock_virtual_request mock_virtual_request_t;

/* A finished request as its client saw it; valid only during the done call. */
typedef struct mock_virtual_reply {
    int status;        /* 200, or the refusal's (400: context length, or it can never fit) */
    const char *error; /* the refusal's message ("" with 200) */
    uint32_t replica;
    uint32_t prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens;
    mock_finish_t finish;
    int64_t accepted_ns;          /* handed in */
    int64_t enqueued_ns;          /* entered the engine's queue (after --ttft-overhead-ms) */
    int64_t scheduled_ns;         /* left it the first time (0: refused) */
    uint32_t n_events;            /* streamed events: one per engine step that sampled for it */
    const int64_t *event_ns;      /* each one's instant */
    const uint16_t *event_tokens; /* tokens each carried (> 1 under speculative decoding) */
    const char *text;             /* the content words as a client joins them (no reasoning) */
    size_t text_len;
} mock_virtual_reply_t;

typedef void (*mock_virtual_done_fn)(void *arg, const mock_virtual_reply_t *reply);

/* replicas (>= 1) engines built from options (copied) behind router, on loop (which must outlive
 * it). NULL with why in err: fixed mode, an engine that cannot be built, no memory. */
mock_virtual_t *mock_virtual_new(loop_t *loop, const mock_options_t *options, uint32_t replicas,
                                 mock_router_t router, char *err, size_t errlen);
/* Frees everything, requests in flight included (their done never runs); *self_p = NULL. */
void mock_virtual_destroy(mock_virtual_t **self_p);
/* Hands in a request at the loop's now. done(arg, reply) follows from a timer, never from inside
 * this call: a refusal at once, a reply when its last token is due. NULL when out of memory. */
mock_virtual_request_t *mock_virtual_submit(mock_virtual_t *self, mock_api_kind_t kind,
                                            const char *body, size_t len, mock_virtual_done_fn done,
                                            void *arg);
/* The client went away (a timeout, a cancel): the request is aborted and freed, done never runs.
 * The events it had received so far are left in *partial when not NULL (n_events, event_ns and
 * event_tokens valid until the next call into self). */
void mock_virtual_cancel(mock_virtual_t *self, mock_virtual_request_t *req,
                         mock_virtual_reply_t *partial);
/* Replicas, and one replica's engine counters and gauges (prefix hits among them). */
uint32_t mock_virtual_replicas(const mock_virtual_t *self);
void mock_virtual_stats(const mock_virtual_t *self, uint32_t replica, mock_engine_stats_t *out);

#endif
