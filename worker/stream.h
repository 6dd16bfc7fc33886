/* One stream slot of the engine: a reusable curl easy handle with the state of the request it
 * carries (SSE parser, chunk timestamps, reply text, error body), and the code that turns what
 * the server sends into a request_record_t. Allocated once per slot and reused request after
 * request; the buffers grow geometrically and are kept, so the per-token path allocates
 * nothing. The engine owns the multi handle; a stream only knows its easy handle. */
#ifndef STAMPEDE_STREAM_H
#define STAMPEDE_STREAM_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "curl_net.h"
#include "histogram.h"
#include "record.h"
#include "think.h"

/* Counters shared by every stream of one engine (single-threaded: plain increments). */
typedef struct stream_counters {
    uint64_t write_callbacks; /* body write callbacks from curl */
    uint64_t sse_events;      /* SSE events dispatched */
    uint64_t shaped_events;   /* of them, read through the chunk shape without the SSE parser */
    uint64_t token_chunks;    /* events that carried a token (content, reasoning or tool call) */
    uint64_t body_bytes;      /* response body bytes */
    uint64_t connections;     /* new TCP connections curl opened (the rest were reused) */
    uint64_t resolve_updates; /* times a stream handed curl a changed CURLOPT_RESOLVE list */
    histogram_t *sent_delay;  /* receive stamp - chunk "sent_ns", when set (not owned) */
    /* Set by the engine just before each curl_multi_socket_action (a ready socket or curl's
     * timer), 0 otherwise: every body byte curl delivers in that call (several reads, several
     * HTTP chunks) shares this receive stamp, so the token events it carries form one chunk. */
    int64_t read_ns;
} stream_counters_t;

/* What every request of an engine shares; owned by the engine, outlives its streams. */
typedef struct stream_settings {
    struct curl_slist *headers;  /* Content-Type, Accept, "Expect:" (never wait for a 100),
                                    Authorization, extra headers */
    struct curl_slist *resolve;  /* "host:port:addresses" pinned by the engine; may be NULL */
    uint64_t resolve_version;    /* bumped whenever resolve grows */
    long buffer_size;            /* CURLOPT_BUFFERSIZE */
    const curl_net_t *net;       /* TLS and proxy (net/curl_net.h); NULL: system store, none */
    think_tags_t reasoning_tags; /* reasoning inside content (target.reasoning_tags); may be off */
    stream_counters_t *counters;
    const struct tokenizer *tokenizer; /* target.tokenizer: replies counted in it; may be NULL */
    struct tokenizer_scratch *tokenizer_scratch; /* its working memory, shared by the streams of
                                                    the engine's one loop thread */
    config_api_t api;                /* which API's events the streams parse (chunk.h) */
    struct chunk_shape *chunk_shape; /* the last chat chunk's shape (chunk_parse_shaped), shared
                                        by the streams of the engine's one loop thread */
    const char *session_header;      /* the name of the header carrying a session's id */
    const char *replica_header;      /* the response header naming the replica, or NULL */
} stream_settings_t;

typedef struct stream stream_t;

/* A new stream with its easy handle configured from settings (kept by pointer); NULL on
 * failure. user is returned by stream_user (the engine's slot). */
stream_t *stream_new(const stream_settings_t *settings, void *user);
/* Frees the easy handle and the buffers; *self_p becomes NULL. The handle must not be in a
 * multi handle any more. */
void stream_destroy(stream_t **self_p);

/* The delay a Retry-After value asks for, in seconds: delay-seconds, or an HTTP-date less now
 * (0 when it is past); -1 when the value is neither. A request's record carries its final
 * response's as retry_after_s. */
long stream_parse_retry_after(const char *value, time_t now);

/* The easy handle, to add to or remove from a multi handle. */
CURL *stream_easy(const stream_t *self);
/* The pointer given to stream_new. */
void *stream_user(const stream_t *self);
/* The easy handle's stream (its CURLOPT_PRIVATE). */
stream_t *stream_of_easy(CURL *easy);

/* Prepares the next request: resets per-request state, fills the record's engine-owned fields
 * with zeros and send_ns, points curl at url/body (not copied: body must outlive the transfer)
 * and sends session_id in the settings' session header when it is not NULL. 0 ok, -1 on failure
 * (the record then says why, class ERROR_CONNECT). */
int stream_begin(stream_t *self, const char *url, const char *body, size_t body_len,
                 const char *session_id, request_record_t *record, int64_t send_ns);

/* Ends the request after curl finished it with result: classifies the outcome, sets end_ns,
 * http_status, error and error_message, and points the record's chunk arrays at this stream's
 * storage (valid until the next stream_begin). */
void stream_complete(stream_t *self, CURLcode result, int64_t end_ns);

/* Ends the request without curl (cancelled, or never started): sets end_ns and the error. */
void stream_abandon(stream_t *self, error_class_t error, const char *message, int64_t end_ns);

/* After stream_begin: the caller will not read this request's reply text, so the stream keeps
 * none of it (but the few bytes the reasoning tags' detection looks back over). */
void stream_drop_reply(stream_t *self);

/* The reply text (the answer's text deltas, JSON-unescaped, concatenated), empty after
 * stream_drop_reply; owned by the stream, valid until the next stream_begin. */
const char *stream_reply(const stream_t *self, size_t *len);

/* The record of the request in flight (NULL between requests). */
request_record_t *stream_record(const stream_t *self);

#endif
