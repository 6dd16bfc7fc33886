/* What the files of the simulated server share: the server, its connections and the requests
 * in flight. Internal to mock/; the public entry points are in mock.h. */
#ifndef STAMPEDE_MOCK_INTERNAL_H
#define STAMPEDE_MOCK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer.h"
#include "loop.h"
#include "mock.h"
#include "mock_api.h"
#include "mock_chunk.h"
#include "mock_engine.h"
#include "mock_http.h"
#include "mock_metrics.h"
#include "mock_options.h"
#include "mock_prefix_cache.h"
#include "mock_vocab.h"

/* What a connection's or the server's timer is for. */
enum {
    MOCK_TIMER_STREAM = 1, /* fixed mode: the next token(s) of the connection's request */
    MOCK_TIMER_ADMIT,      /* engine mode: the request reaches the scheduler (after overhead) */
    MOCK_TIMER_RESUME,     /* a stalled stream resumes */
    MOCK_TIMER_STEP,       /* the engine step in progress ends */
    MOCK_TIMER_ACCEPT,     /* accepting resumes after running out of file descriptors */
    MOCK_TIMER_HEADERS,    /* --faults slow-headers: the delayed request starts */
};

/* Fields of the mock's own random draws (RNG_STREAM_MOCK) shared across files. */
enum {
    MOCK_DRAW_FAULTS = 7,  /* --faults: a request's draw */
    MOCK_DRAW_REFUSED = 8, /* --faults: an accepted connection's draw */
};

typedef struct mock_request mock_request_t;

/* One pending deadline on the server's loop, embedded in what it belongs to. */
typedef struct mock_timer {
    uint64_t id;   /* the loop timer's id; 0 = not scheduled */
    uint32_t kind; /* MOCK_TIMER_*: what firing means */
} mock_timer_t;

/* One client connection: its buffers, and at most one response in progress (pipelined requests
 * wait in the input buffer until it is done). */
typedef struct mock_conn {
    int fd;
    buffer_t in, out;
    mock_server_t *server;
    int events;              /* LOOP_READABLE | LOOP_WRITABLE watched */
    bool closing;            /* close once out is flushed */
    bool dead;               /* fd closed; freed when the loop iteration ends */
    bool ready;              /* on the ready list: buffered input to process */
    bool continue_sent;      /* "100 Continue" sent for the request being received */
    int64_t paused_until_ns; /* a stall holds the output until then */
    mock_request_t *req;
    mock_timer_t timer;
    struct mock_conn *prev, *next; /* all connections */
    struct mock_conn *next_ready, *next_dead;
} mock_conn_t;

/* One completion request in flight. */
struct mock_request {
    mock_seq_t seq; /* the engine's view; seq.user points back here */
    mock_conn_t *conn;
    uint64_t number; /* 1-based arrival order */
    mock_api_kind_t kind;
    bool stream, include_usage, continuous_usage;
    bool chunked;    /* HTTP/1.1 chunked framing (not for HTTP/1.0 clients) */
    bool keep_alive; /* the connection stays open after this response */
    uint32_t prompt_tokens, output_tokens, reasoning_tokens, cached_tokens;
    mock_finish_t finish;
    uint32_t emitted, accounted;
    uint64_t reply_key;     /* reply word i = mock_vocab_reply_word(vocab, reply_key, i) */
    uint64_t *ids;          /* prompt then output token ids, owned */
    uint64_t *block_hashes; /* chained hashes of the full blocks of ids, owned */
    uint32_t n_blocks;
    mock_chunk_head_t head;
    char id[48];
    long long created;
    int64_t recv_ns;      /* the request was complete */
    int64_t scheduled_ns; /* left the waiting queue (fixed mode: recv_ns) */
    int64_t step_due_ns;  /* engine mode: when the current token was sampled */
    int64_t first_token_ns, prev_token_ns;
    uint32_t reset_at;     /* reset the connection after this many tokens; 0 = never */
    uint32_t malformed_at; /* 1-based number of the token sent as broken JSON; 0 = none */
    bool stall;            /* pause the output once stall_after tokens are out */
    uint32_t stall_after;
    double stall_ms;         /* how long the stall lasts */
    mock_fault_kind_t fault; /* --faults: what this request gets (MOCK_FAULT_NONE: nothing) */
    int64_t head_delay_ns;   /* slow-headers: everything starts this much later */
    uint32_t truncated_at;   /* 1-based token whose event is cut short, then the close */
    uint32_t event_error_at; /* 1-based token replaced by an `event: error`, then the end */
    uint32_t no_done_at;     /* 1-based token before which the stream just ends, no [DONE] */
};

struct mock_server {
    mock_options_t options;
    loop_t *loop; /* owned: the fds below and every timer are on it */
    int listen_fd, signal_fd, stop_fd;
    uint16_t port;
    mock_engine_t *engine; /* NULL in fixed mode */
    mock_timer_t step_timer;
    int64_t step_start_ns;
    bool engine_delivering;           /* inside mock_engine_step_end's callbacks */
    mock_prefix_cache_t *fixed_cache; /* fixed mode: prefix hits for usage, no timing effect */
    uint64_t fixed_prefix_queries, fixed_prefix_hits;
    uint32_t active_requests;
    mock_metrics_t metrics;
    mock_vocab_t *vocab;
    size_t max_word_len;
    mock_conn_t *conns;
    uint32_t n_conns;
    mock_conn_t *ready, *dead;
    buffer_t scratch;    /* one response's chunk payloads before framing */
    buffer_t page;       /* /metrics and other whole bodies */
    buffer_t model_json; /* the served model name escaped for JSON, once */
    uint64_t request_counter;
    uint64_t accept_counter; /* connections accepted, refused ones too */
    mock_timer_t accept_timer;
    /* What mock_io.c calls back, installed by mock_server_new: the loop's handlers of a
     * connection's events and timers and of the server's own timers, and the abort of a
     * connection's request when it closes (mock_stream_abort). */
    loop_fd_fn on_conn_event;
    loop_timer_fn on_conn_timer, on_own_timer;
    void (*abort_request)(mock_server_t *self, mock_request_t *req);
};

/* mock_io.c. (Re)schedules a timer on the server's heap. */
void mock_io_schedule(mock_server_t *self, mock_timer_t *timer, int64_t due_ns);
/* Queues a whole response (head and body) on c and flushes. */
void mock_io_respond(mock_server_t *self, mock_conn_t *c, int status, const char *content_type,
                     const char *body, size_t len, bool keep_alive, const char *extra_header);
/* Queues vLLM's error object with status and message on c. */
void mock_io_respond_error(mock_server_t *self, mock_conn_t *c, int status, const char *message,
                           bool keep_alive);
/* Writes what c->out holds; on a fatal error closes c (marks it dead). */
void mock_io_flush(mock_server_t *self, mock_conn_t *c);
/* Closes c now (reset: with a TCP RST), aborting its request; freed later. */
void mock_io_close(mock_server_t *self, mock_conn_t *c, bool reset);
/* The response on c is complete: close or go on with the next pipelined request. */
void mock_io_response_done(mock_server_t *self, mock_conn_t *c, bool keep_alive);
/* Watches c for mask (LOOP_READABLE, LOOP_WRITABLE) with the server's handler. */
void mock_io_watch(mock_server_t *self, mock_conn_t *c, int mask);

/* Handles a complete POST to a completions endpoint on c. */
void mock_stream_start(mock_server_t *self, mock_conn_t *c, const mock_http_request_t *http,
                       mock_api_kind_t kind);
/* A connection timer fired (MOCK_TIMER_STREAM, _ADMIT or _RESUME). */
void mock_stream_on_timer(mock_server_t *self, mock_conn_t *c, int64_t now_ns);
/* The engine step timer fired: deliver the step's tokens and start the next step. */
void mock_stream_on_step(mock_server_t *self);
/* The client of req went away: take it out of the engine and the timers. */
void mock_stream_abort(mock_server_t *self, mock_request_t *req);
/* Frees a request (it must be out of the engine and the timers). */
void mock_request_free(mock_request_t *req);

#endif
