/* What one finished request yields: filled by the worker's stream, shipped in event batches,
 * turned into metrics by the controller. Timestamps are CLOCK_MONOTONIC nanoseconds of the
 * clock that recorded them; the controller converts a worker's to its own with the measured
 * offset before merging. A timestamp of 0 means "did not happen". */
#ifndef STAMPEDE_RECORD_H
#define STAMPEDE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum error_class {
    ERROR_NONE,
    ERROR_CONNECT, /* could not connect / connection refused / DNS */
    ERROR_TIMEOUT, /* request exceeded target.timeout */
    ERROR_HTTP_4XX,
    ERROR_HTTP_5XX,
    ERROR_INCOMPLETE,           /* connection reset or closed mid-response, before [DONE] */
    ERROR_PROTOCOL,             /* malformed SSE or JSON */
    ERROR_CANCELLED,            /* stopped by the run ending (not counted as a failure) */
    ERROR_HTTP_429,             /* HTTP 429: rate limited (not in http_4xx) */
    ERROR_CONTEXT_LENGTH,       /* HTTP 400 saying the prompt exceeds the context length */
    ERROR_SERVER_ERROR_EVENT,   /* an error event (or error object) inside a 200 stream */
    ERROR_NOT_SSE,              /* a 2xx body that is neither SSE nor JSON: a proxy's page */
    ERROR_NO_DONE,              /* the stream ended cleanly with neither [DONE] nor finish_reason */
    ERROR_REFUSED,              /* connection refused, or reset before any response byte */
    ERROR_RESET_BEFORE_HEADERS, /* closed by the server after the request, no response byte */
    ERROR_RESET_MID_STREAM,     /* reset or closed after the response head, stream unfinished */
    ERROR_TRUNCATED_JSON,       /* the connection ended inside an event: its JSON cut short */
    ERROR_MALFORMED_SSE,        /* an event that is not valid JSON, or broken SSE framing */
    ERROR_HTTP_500,             /* HTTP 500 (not in http_5xx) */
    ERROR_HTTP_503,             /* HTTP 503 (not in http_5xx) */
    ERROR_CLIENT_FD_LIMIT,      /* the client could not open a socket (EMFILE/ENFILE): ours */
    ERROR_HTTP_529,             /* HTTP 529: Anthropic's overloaded_error (not in http_5xx) */
    ERROR__COUNT
} error_class_t;

/* "connect", "timeout", "http_4xx", "http_5xx", "incomplete", "protocol", "cancelled", "http_429",
 * "context_length", "server_error_event", "not_sse", "no_done", "refused", "reset_before_headers",
 * "reset_mid_stream", "truncated_json", "malformed_sse", "http_500", "http_503", "client_fd_limit",
 * "none". */
const char *error_class_name(error_class_t cls);

/* Why the server ended the reply: the last finish_reason the stream carried. OTHER is any value
 * not named here (vLLM's "abort", ...); NONE means the reply carried none. */
typedef enum finish_reason {
    FINISH_NONE,
    FINISH_STOP,
    FINISH_LENGTH,
    FINISH_TOOL_CALLS, /* also the legacy "function_call" */
    FINISH_CONTENT_FILTER,
    FINISH_OTHER,
    FINISH__COUNT
} finish_reason_t;

/* "none", "stop", "length", "tool_calls", "content_filter", "other". */
const char *finish_reason_name(finish_reason_t reason);
/* The reason a raw (JSON-escaped) finish_reason string names, Anthropic's stop_reason too
 * (end_turn, stop_sequence, max_tokens, tool_use, refusal); FINISH_OTHER for any other. */
finish_reason_t finish_reason_parse(const char *raw, size_t len);

/* The HTTP phases of one request, with k6's names (definitions in docs/metrics.md section 2). */
typedef enum record_phase {
    RECORD_PHASE_BLOCKED,    /* handed to the transport -> curl started the transfer */
    RECORD_PHASE_DNS,        /* name lookup (0 on a reused connection) */
    RECORD_PHASE_CONNECTING, /* TCP connect (0 on a reused connection) */
    RECORD_PHASE_TLS,        /* TLS handshake (0 on plain http or a reused connection) */
    RECORD_PHASE_SENDING,    /* ready to send -> the last body byte handed to curl */
    RECORD_PHASE_WAITING,    /* request sent -> first byte of the response */
    RECORD_PHASE_RECEIVING,  /* first byte of the response -> end of the transfer */
    RECORD_PHASE__COUNT
} record_phase_t;

/* "blocked", "dns", "connecting", "tls", "sending", "waiting", "receiving". */
const char *record_phase_name(record_phase_t phase);

typedef struct request_record {
    /* What each token updates, first, within one cache line (a worker's streams each write their
     * own record as their tokens come: it is cold at each token). */
    int64_t first_token_ns;   /* first chunk carrying any token (content, reasoning or tool call) */
    int64_t first_content_ns; /* first chunk carrying content */
    uint32_t reasoning_chunks; /* token events that were reasoning_content */
    uint32_t content_chunks;   /* token events that were content (or tool calls) */
    uint64_t content_bytes;    /* bytes of reply text received */

    uint64_t session;    /* global session index */
    uint32_t node;       /* node within the session (turn for chats) */
    uint32_t role;       /* role index (0 = default) */
    uint32_t endpoint;   /* index into target.endpoints */
    uint32_t worker;     /* worker index that sent it (set by the controller) */
    uint64_t request_id; /* global request ordinal */

    int64_t intended_ns; /* when the schedule wanted it sent */
    int64_t send_ns;     /* just before the request was handed to curl */
    int64_t headers_ns;  /* response headers received */
    int64_t end_ns;      /* transfer finished (success or failure) */

    int http_status; /* 0 when no response */
    error_class_t error;
    char error_message[160]; /* short reason, e.g. "HTTP 500: engine overloaded" */

    bool has_usage;                   /* the server sent usage */
    uint32_t prompt_tokens;           /* from usage */
    uint32_t completion_tokens;       /* from usage */
    uint32_t cached_tokens;           /* usage.prompt_tokens_details.cached_tokens */
    uint32_t requested_input_tokens;  /* prompt words we sent (history + fresh): tokens in the
                                         target's tokenizer when it has one (docs/workloads.md) */
    bool has_tokenizer_count;         /* the reply was counted in target.tokenizer */
    uint32_t tokenizer_tokens;        /* its tokens there; without usage, chunk_tokens hold them */
    uint32_t requested_output_tokens; /* max_tokens we asked for */

    /* One entry per token-carrying chunk (the token events delivered by one read), in arrival
     * order: receive time, and the number of tokens the chunk carried (its events' tokens added
     * up; an event carries 1 unless the server's usage says more). Storage belongs to whoever
     * filled the record (a per-stream buffer on the worker, an arena on the controller). */
    uint32_t n_chunks;
    int64_t *chunk_ns;
    uint16_t *chunk_tokens; /* may be NULL: every chunk carried one token */
    finish_reason_t finish_reason;
    bool refusal; /* the reply carried refusal text (delta.refusal): counted as its answer */

    uint64_t workload_hash; /* hash of what was generated for this request (lengths, intended
                               offset, fresh prompt text): summed over a run into a digest that
                               must not depend on the worker count */
    bool has_phases;        /* curl reported the transfer's timings */
    int64_t phase_ns[RECORD_PHASE__COUNT]; /* each >= 0, when has_phases */
    bool connection_reused;                /* curl opened no new connection for it */
    uint8_t tls_version;   /* its connection's TLS: 10-13 for TLS 1.0-1.3; 0 plain or unknown */
    bool tls_resumed;      /* that TLS session was resumed (a ticket), not a full handshake */
    uint64_t body_hash;    /* XXH3-64 of the request body as sent (0: none): the same prompt text,
                              history and options give the same hash, so a replay is checkable */
    uint32_t retries;      /* times it was sent again after a 429 (target.retry_on_429: honour) */
    int64_t retry_wait_ns; /* time spent waiting out Retry-After before those resends */
    uint32_t resends;      /* times libcurl resent it on a fresh connection after a reused one
                              died before any response byte (invisible otherwise) */
    uint64_t replica;      /* XXH3-64 of the target.replica_header value the response carried
                              (the replica that answered), 0 when none */
    char response_id[64];  /* worker only, not on the wire: the Responses API's id of the reply
                              ("" none), for target.previous_response_id */
    int32_t retry_after_s; /* worker only, not on the wire: the last response's Retry-After in
                              seconds, -1 when it had none */

    bool warmup;      /* sent during warm-up: counted apart, excluded from statistics */
    bool session_end; /* the session finished with this request (its last node, or the
                         session was abandoned here): sessions/s counts these */
} request_record_t;

/* Output tokens of the request: usage.completion_tokens when present, else the chunk count
 * (sum of chunk_tokens). *from_usage tells which (may be NULL). */
uint32_t record_output_tokens(const request_record_t *rec, bool *from_usage);
/* Tokens counted from the chunks alone: the sum of chunk_tokens (a 0 counts as 1: a token chunk
 * carries one token at least), or n_chunks when it is NULL. */
uint32_t record_chunk_tokens(const request_record_t *rec);

#endif
