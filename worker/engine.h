/* The request engine: ceil(max_streams / 256) curl multi handles ("shards", engine.c says why),
 * all driven by curl_multi_socket_action on one loop_t; a stream slot stays on one shard.
 * It sends requests, stamps CLOCK_MONOTONIC in the write callback before parsing, parses SSE and
 * OpenAI chunks, and fills a request_record_t. No allocation per token: per-stream buffers are
 * allocated once and grow geometrically. */
#ifndef STAMPEDE_ENGINE_H
#define STAMPEDE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "curl_net.h"
#include "histogram.h"
#include "loop.h"
#include "record.h"

typedef struct engine engine_t;

typedef struct engine_options {
    uint32_t max_streams; /* concurrent transfers (sets CURLMOPT_MAX_TOTAL_CONNECTIONS) */
    int64_t timeout_ns;   /* whole request; 0 = none */
    int64_t connect_timeout_ns;
    const char *const *headers; /* extra "Name: value" lines, NULL-terminated; may be NULL */
    const char *api_key;        /* sent as "Authorization: Bearer ..."; never logged; may be NULL */
    uint32_t buffer_size;       /* curl receive buffer per stream (CURLOPT_BUFFERSIZE); 0 = 2 KiB */
    const curl_net_t *net; /* TLS and proxy, kept by pointer (must outlive the engine); NULL: the
                              system store and no proxy, whatever the environment says */
    /* target.reasoning_tags (copied; at most THINK_TAG_MAX bytes each): content between them is
     * reasoning. NULL or "" turns it off. */
    const char *reasoning_open;
    const char *reasoning_close;
    const struct tokenizer *tokenizer; /* target.tokenizer: replies counted in it (borrowed, must
                                          outlive the engine); NULL: none */
    config_api_t api;                  /* target.api: the shape of the streamed events (chunk.h) */
    const char *session_header;        /* target.session_header (copied); NULL: X-Session-ID */
    const char *replica_header;        /* target.replica_header (copied); NULL: none */
} engine_options_t;

typedef struct engine_request {
    const char *url;  /* full URL, e.g. "http://127.0.0.1:8000/v1/chat/completions" */
    const char *body; /* JSON body; must stay valid until the done callback */
    size_t body_len;
    const char *session_header; /* the session's id for the session header, or NULL: none */
    bool reply_unused; /* the done callback ignores reply: the engine keeps none, passes "" */
    request_record_t *record; /* caller-owned; ids and intended_ns set by the caller, the rest
                                 filled by the engine (chunk arrays point into engine storage
                                 that stays valid only during the done callback) */
} engine_request_t;

/* Called once per request, on the loop thread, when the transfer ends in any way. reply is the
 * concatenated delta.content text (JSON-unescaped), valid only during the call. It may call
 * engine_submit and engine_cancel_all (never engine_destroy); it is never called from inside
 * engine_submit. */
typedef void (*engine_done_fn)(void *arg, request_record_t *record, const char *reply,
                               size_t reply_len);

/* A new engine on loop (which must outlive it); NULL on failure. Raises RLIMIT_NOFILE to its hard
 * limit (a warning on stderr when max_streams does not fit under it) and ignores SIGPIPE (unless
 * a handler is installed). options is copied. */
engine_t *engine_new(loop_t *loop, const engine_options_t *options);
/* Cancels every transfer in flight (their callbacks run with ERROR_CANCELLED and cannot submit
 * again) and frees; *self_p becomes NULL. Call it before loop_destroy. */
void engine_destroy(engine_t **self_p);
/* Room for one line of engine_lookup (a host:port and up to 8 addresses). */
#define ENGINE_PIN_LINE_MAX 720
/* Looks url's host up (blocking getaddrinfo; safe on any thread, needs no engine) and writes the
 * CURLOPT_RESOLVE line "host:port:addr[,addr...]" into line. 1 written; 0 nothing to look up (an
 * address literal); -1 with "cannot resolve host NAME (endpoint URL): reason" in err. */
int engine_lookup(const char *url, char *line, size_t cap, char *err, size_t errlen);
/* Pins a line of engine_lookup for every later request to its host and port, so no lookup ever
 * runs once requests flow. 0 ok (also when that host:port is pinned already); -1 with why in err
 * (out of memory, too many hosts). */
int engine_pin(engine_t *self, const char *line, char *err, size_t errlen);
/* Starts a request now (send_ns is stamped here). 0 ok, -1 if no stream slot is free. A request
 * that cannot start (bad URL) is reported through done, from the loop. It never resolves a name
 * itself: a host engine_pin did not pin is left to curl's own resolver. */
int engine_submit(engine_t *self, const engine_request_t *request, engine_done_fn done, void *arg);
/* The headers every request carries (Content-Type, Accept, Authorization, extra headers): owned by
 * the engine, unchanged while it lives (read by the preflight on the resolver's thread). */
const struct curl_slist *engine_headers(const engine_t *self);
/* Transfers in flight to one endpoint index (record->endpoint of the request). */
uint32_t engine_inflight_to(const engine_t *self, uint32_t endpoint);
/* Cancels every transfer in flight (ERROR_CANCELLED). Requests submitted by those callbacks are
 * not cancelled. */
void engine_cancel_all(engine_t *self);

/* Counters since engine_new, for benchmarks and health lines. */
typedef struct engine_stats {
    uint64_t requests_started;
    uint64_t requests_finished; /* done callbacks, whatever the outcome */
    uint64_t requests_failed;   /* finished with an error other than ERROR_CANCELLED */
    uint64_t socket_events;     /* readiness events handed to curl (about one recv each) */
    uint64_t write_callbacks;   /* curl body write callbacks (each stamps the clock once) */
    uint64_t sse_events;        /* SSE events parsed; sse_events / write_callbacks = coalescing */
    uint64_t shaped_events;     /* of them, framed and read by the chunk shape, not the parser */
    uint64_t token_chunks;      /* SSE events that carried a token (several may share a chunk) */
    uint64_t body_bytes;
    uint64_t connections;     /* TCP connections opened; requests_finished - this = reused */
    uint32_t streams;         /* stream slots (easy handles + buffers) allocated */
    uint32_t pinned_hosts;    /* host:port pairs pinned by engine_pin */
    uint64_t resolve_updates; /* pinned-address lists handed to curl: once per stream and pin */
} engine_stats_t;
void engine_stats(const engine_t *self, engine_stats_t *out);

/* Records, for every chunk carrying the stampede mock's "sent_ns", receive stamp - sent_ns into
 * delay (not owned; NULL stops): the delay the client adds, on one host. A test seam: the engine
 * tests and bench_engine measure the client's own delay with it; no run sets it. */
void engine_set_sent_delay(engine_t *self, histogram_t *delay);

#endif
