/* The simulated server on common/loop: the listening socket, every connection, a signalfd and
 * a stop eventfd are watched fds; every pending emission is a loop timer. Connections are
 * non-blocking with their own output buffers, so a slow reader only ever delays itself. */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "mock_internal.h"
#include "prompt.h"
#include "rlimit.h"
#include "rng.h"

#define MOCK_MAX_HEADER_BYTES 65536
#define MOCK_READ_AHEAD_BYTES (1u << 20) /* input buffered while a response is in progress */

static void mock_server_pause_accept(mock_server_t *self, bool pause);

static void mock_server_on_conn_timer(loop_t *loop, uint64_t id, void *arg) {
    mock_conn_t *c = arg;
    c->timer.id = 0;
    if (!c->dead)
        mock_stream_on_timer(c->server, c, loop_time_ns(loop));
}

static void mock_server_on_own_timer(loop_t *loop, uint64_t id, void *arg) {
    mock_server_t *self = arg;
    if (id == self->step_timer.id) {
        self->step_timer.id = 0;
        mock_stream_on_step(self);
    } else if (id == self->accept_timer.id) {
        self->accept_timer.id = 0;
        mock_server_pause_accept(self, false);
    }
}

static void mock_server_on_conn_event(loop_t *loop, int fd, int mask, void *arg);

static void mock_server_metrics_page(mock_server_t *self, mock_conn_t *c, bool head_only,
                                     bool keep_alive) {
    mock_metrics_gauges_t g = {.connections_open = self->n_conns};
    if (self->engine) {
        mock_engine_stats_t st;
        mock_engine_get_stats(self->engine, &st);
        g.running = st.running;
        g.waiting = st.waiting;
        g.kv_usage = st.kv_usage;
        g.prefix_queries = st.prefix_queries;
        g.prefix_hits = st.prefix_hits;
        g.preemptions = st.preemptions;
        g.steps = st.steps;
    } else {
        g.running = self->active_requests;
        g.prefix_queries = self->fixed_prefix_queries;
        g.prefix_hits = self->fixed_prefix_hits;
    }
    buffer_t *page = &self->page;
    buffer_reset(page);
    if (mock_metrics_render(&self->metrics, &g, page) < 0) {
        mock_io_close(self, c, false);
        return;
    }
    mock_io_respond(self, c, 200, "text/plain; version=0.0.4; charset=utf-8",
                    head_only ? NULL : page->data, page->len, keep_alive, NULL);
}

static bool mock_path_is(const mock_http_request_t *http, const char *path) {
    return http->path_len == strlen(path) && !memcmp(http->path, path, http->path_len);
}

static void mock_server_not_allowed(mock_server_t *self, mock_conn_t *c, const char *allow,
                                    bool keep_alive) {
    static const char body[] = "{\"detail\":\"Method Not Allowed\"}";
    char extra[64];
    snprintf(extra, sizeof(extra), "allow: %s", allow);
    mock_io_respond(self, c, 405, "application/json", body, sizeof(body) - 1, keep_alive, extra);
}

static void mock_server_route(mock_server_t *self, mock_conn_t *c,
                              const mock_http_request_t *http) {
    bool keep_alive = http->keep_alive, get = http->method == MOCK_HTTP_GET;
    bool head_only = http->method == MOCK_HTTP_HEAD;
    static const struct {
        const char *path;
        mock_api_kind_t kind;
    } apis[] = {{"/v1/chat/completions", MOCK_API_CHAT},
                {"/v1/completions", MOCK_API_COMPLETIONS},
                {"/v1/messages", MOCK_API_MESSAGES},
                {"/v1/responses", MOCK_API_RESPONSES}};
    for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++) {
        if (!mock_path_is(http, apis[i].path))
            continue;
        if (http->method == MOCK_HTTP_POST)
            mock_stream_start(self, c, http, apis[i].kind);
        else
            mock_server_not_allowed(self, c, "POST", keep_alive);
        return;
    }
    bool known = mock_path_is(http, "/v1/models") || mock_path_is(http, "/health") ||
                 mock_path_is(http, "/metrics");
    if (known && !get && !head_only) {
        mock_server_not_allowed(self, c, "GET", keep_alive);
    } else if (mock_path_is(http, "/health")) {
        mock_io_respond(self, c, 200, "application/json", NULL, 0, keep_alive, NULL);
    } else if (mock_path_is(http, "/metrics")) {
        mock_server_metrics_page(self, c, head_only, keep_alive);
    } else if (mock_path_is(http, "/v1/models")) {
        buffer_t *page = &self->page;
        buffer_reset(page);
        if (mock_api_models_body(page, self->options.model, self->options.max_model_len,
                                 (long long)time(NULL)) < 0) {
            mock_io_close(self, c, false);
            return;
        }
        mock_io_respond(self, c, 200, "application/json", head_only ? NULL : page->data, page->len,
                        keep_alive, NULL);
    } else {
        static const char body[] = "{\"detail\":\"Not Found\"}";
        mock_io_respond(self, c, 404, "application/json", body, sizeof(body) - 1, keep_alive, NULL);
    }
}

static const char *mock_http_error_message(int status) {
    switch (status) {
    case 411:
        return "a POST needs a Content-Length header";
    case 413:
        return "request body larger than --max-body-bytes";
    case 431:
        return "request head larger than 65536 bytes";
    case 501:
        return "only the chunked Transfer-Encoding is supported; send chunked or Content-Length";
    case 505:
        return "only HTTP/1.0 and HTTP/1.1 are served";
    default:
        return "malformed HTTP request";
    }
}

/* Parses and answers the requests buffered on c, one at a time (pipelining is served in
 * order: the next request waits until the response before it is complete). */
static void mock_conn_process(mock_server_t *self, mock_conn_t *c) {
    while (!c->dead && !c->req && !c->closing && buffer_pending(&c->in) > 0) {
        mock_http_request_t http;
        int r = mock_http_parse(buffer_head(&c->in), buffer_pending(&c->in), MOCK_MAX_HEADER_BYTES,
                                self->options.max_body_bytes, &http);
        if (r == MOCK_HTTP_INCOMPLETE) {
            if (http.header_bytes && http.expect_continue && !c->continue_sent) {
                static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                c->continue_sent = true;
                if (buffer_append(&c->out, cont, sizeof(cont) - 1) == 0)
                    mock_io_flush(self, c);
            }
            return;
        }
        if (r != MOCK_HTTP_COMPLETE) {
            buffer_reset(&c->in); /* the stream is unparseable from here: answer, close */
            mock_io_respond_error(self, c, r, mock_http_error_message(r), false);
            return;
        }
        c->continue_sent = false;
        if (http.chunked_body) /* the framing goes; the pipelined bytes after it stay */
            http.content_length = mock_http_dechunk(buffer_head(&c->in) + http.header_bytes,
                                                    http.total_bytes - http.header_bytes);
        mock_server_route(self, c, &http);
        if (!c->dead)
            buffer_consume(&c->in, http.total_bytes);
    }
}

static void mock_conn_on_readable(mock_server_t *self, mock_conn_t *c) {
    size_t budget = MOCK_READ_AHEAD_BYTES;
    for (;;) {
        if (c->req && buffer_pending(&c->in) >= MOCK_READ_AHEAD_BYTES) {
            mock_io_watch(self, c, c->events & ~LOOP_READABLE); /* until this response ends */
            break;
        }
        if (buffer_reserve(&c->in, 16384) < 0) {
            mock_io_close(self, c, false);
            return;
        }
        size_t room = c->in.cap - c->in.len;
        ssize_t n = recv(c->fd, c->in.data + c->in.len, room, 0);
        if (n > 0) {
            c->in.len += (size_t)n;
            /* A short read drained the socket (level-triggered epoll reports what comes later),
             * which saves the recv that would only say EAGAIN; a long one may not have. */
            if ((size_t)n < room || (size_t)n >= budget)
                break;
            budget -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        mock_io_close(self, c, false); /* EOF or error: the client is gone */
        return;
    }
    mock_conn_process(self, c);
}

static void mock_server_on_listen(loop_t *loop, int fd, int mask, void *arg);

static void mock_server_pause_accept(mock_server_t *self, bool pause) {
    loop_watch(self->loop, self->listen_fd, pause ? 0 : LOOP_READABLE, 0, mock_server_on_listen,
               self);
    if (pause) {
        self->accept_timer.kind = MOCK_TIMER_ACCEPT;
        mock_io_schedule(self, &self->accept_timer, loop_now_ns() + 100000000);
    }
}

/* --faults refused: resets the fd at once, before reading anything. Returns whether it did. */
static bool mock_server_refuse(mock_server_t *self, int fd) {
    uint64_t number = ++self->accept_counter;
    const mock_faults_t *faults = &self->options.faults;
    if (!faults->n_rules)
        return false;
    rng_t rng;
    rng_init(&rng, self->options.seed, RNG_STREAM_MOCK, number, 0, MOCK_DRAW_REFUSED);
    if (!mock_faults_pick(faults, number, rng_next_double(&rng), 1))
        return false;
    struct linger linger = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger));
    close(fd);
    self->metrics.faults[MOCK_FAULT_REFUSED]++;
    return true;
}

static void mock_server_on_listen(loop_t *loop, int fd, int mask, void *arg) {
    mock_server_t *self = arg;
    for (;;) {
        int fd = accept4(self->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                fprintf(stderr, "stampede mock: accept: %s (%u connections open); pausing 100 ms\n",
                        strerror(errno), self->n_conns);
                mock_server_pause_accept(self, true);
            }
            return;
        }
        if (mock_server_refuse(self, fd))
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        mock_conn_t *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            return;
        }
        c->fd = fd;
        c->server = self;
        buffer_init(&c->in);
        buffer_init(&c->out);
        c->events = LOOP_READABLE;
        if (loop_watch(self->loop, fd, c->events, 0, mock_server_on_conn_event, c) < 0) {
            close(fd);
            free(c);
            continue;
        }
        c->next = self->conns;
        if (self->conns)
            self->conns->prev = c;
        self->conns = c;
        self->n_conns++;
        self->metrics.connections_accepted++;
    }
}

static void mock_server_on_conn_event(loop_t *loop, int fd, int mask, void *arg) {
    mock_conn_t *c = arg;
    if (c->dead)
        return;
    if (mask & LOOP_WRITABLE)
        mock_io_flush(c->server, c);
    if (!c->dead && (mask & LOOP_READABLE))
        mock_conn_on_readable(c->server, c);
}

static void mock_server_process_ready(mock_server_t *self) {
    while (self->ready) {
        mock_conn_t *c = self->ready;
        self->ready = c->next_ready;
        c->ready = false;
        if (!c->dead)
            mock_conn_process(self, c);
    }
}

static void mock_conn_free(mock_conn_t *c) {
    mock_request_free(c->req);
    buffer_clear(&c->in);
    buffer_clear(&c->out);
    free(c);
}

static void mock_server_reap(mock_server_t *self) {
    while (self->dead) {
        mock_conn_t *c = self->dead;
        self->dead = c->next_dead;
        mock_conn_free(c);
    }
}

/* Once per loop turn: requests left waiting in input buffers, then the dead connections. */
static void mock_server_before_sleep(loop_t *loop, void *arg) {
    mock_server_t *self = arg;
    mock_server_process_ready(self);
    mock_server_reap(self);
}

/* SIGTERM, SIGINT or mock_server_stop: the loop ends after this turn. */
static void mock_server_on_stop(loop_t *loop, int fd, int mask, void *arg) {
    char buf[256];
    while (read(fd, buf, sizeof(buf)) > 0)
        continue;
    loop_stop(loop);
}

int mock_server_run(mock_server_t *self) {
    prctl(PR_SET_TIMERSLACK, 1UL); /* timerfd wake-ups on time, not up to 50 us late */
    if (loop_run(self->loop) < 0) {
        perror("stampede mock: epoll_wait");
        return -1;
    }
    return 0;
}

void mock_server_stop(mock_server_t *self) {
    uint64_t one = 1;
    if (write(self->stop_fd, &one, sizeof(one)) < 0)
        return; /* the counter is already non-zero: a stop is pending */
}

uint16_t mock_server_port(const mock_server_t *self) {
    return self->port;
}

static int mock_server_listen(mock_server_t *self, char *err, size_t errlen) {
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)self->options.port)};
    if (inet_pton(AF_INET, self->options.bind, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "--bind: '%s' is not an IPv4 address", self->options.bind);
        return -1;
    }
    self->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (self->listen_fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(self->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(self->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        snprintf(err, errlen, "cannot bind %s:%d: %s", self->options.bind, self->options.port,
                 strerror(errno));
        return -1;
    }
    if (listen(self->listen_fd, 4096) < 0) {
        snprintf(err, errlen, "listen: %s", strerror(errno));
        return -1;
    }
    socklen_t len = sizeof(addr);
    getsockname(self->listen_fd, (struct sockaddr *)&addr, &len);
    self->port = ntohs(addr.sin_port);
    return 0;
}

static int mock_server_open_fds(mock_server_t *self, char *err, size_t errlen) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    self->loop = loop_new();
    self->on_conn_event = mock_server_on_conn_event;
    self->on_conn_timer = mock_server_on_conn_timer;
    self->on_own_timer = mock_server_on_own_timer;
    self->abort_request = mock_stream_abort;
    self->signal_fd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
    self->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!self->loop || self->signal_fd < 0 || self->stop_fd < 0) {
        snprintf(err, errlen, "cannot create the event loop: %s", strerror(errno));
        return -1;
    }
    if (mock_server_listen(self, err, errlen) < 0)
        return -1;
    loop_before_sleep(self->loop, mock_server_before_sleep, self);
    if (loop_watch(self->loop, self->listen_fd, LOOP_READABLE, 0, mock_server_on_listen, self) <
            0 ||
        loop_watch(self->loop, self->signal_fd, LOOP_READABLE, 0, mock_server_on_stop, self) < 0 ||
        loop_watch(self->loop, self->stop_fd, LOOP_READABLE, 0, mock_server_on_stop, self) < 0) {
        snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int mock_server_build(mock_server_t *self, char *err, size_t errlen) {
    const mock_options_t *o = &self->options;
    self->vocab = mock_vocab_new();
    if (!self->vocab || mock_metrics_init(&self->metrics, o->model, o->max_model_len) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    self->max_word_len = 6 * prompt_max_word_length() + 1;
    if (escape_json_append(&self->model_json, o->model, strlen(o->model)) < 0) {
        snprintf(err, errlen, "--model: '%s' is not valid UTF-8", o->model);
        return -1;
    }
    if (self->model_json.len > MOCK_CHUNK_MAX_MODEL_JSON) {
        snprintf(err, errlen, "--model: the name is %zu bytes once escaped for JSON; at most %d",
                 self->model_json.len, MOCK_CHUNK_MAX_MODEL_JSON);
        return -1;
    }
    uint64_t cache_tokens = o->prefix_cache_tokens ? o->prefix_cache_tokens : o->kv_cache_tokens;
    if (o->fixed) {
        if (o->prefix_cache)
            self->fixed_cache = mock_prefix_cache_new((uint32_t)(cache_tokens / 16));
        if (o->prefix_cache && !self->fixed_cache) {
            snprintf(err, errlen, "out of memory for the prefix cache");
            return -1;
        }
        return 0;
    }
    mock_engine_config_t config;
    mock_options_engine_config(o, &config);
    self->engine = mock_engine_new(&config);
    if (!self->engine) {
        snprintf(err, errlen,
                 "cannot build the engine: --kv-cache-tokens %llu is under one block "
                 "or memory is short",
                 (unsigned long long)o->kv_cache_tokens);
        return -1;
    }
    return 0;
}

mock_server_t *mock_server_new(const mock_options_t *options, char *err, size_t errlen) {
    mock_server_t *self = calloc(1, sizeof(*self));
    if (!self) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    self->listen_fd = self->signal_fd = self->stop_fd = -1;
    self->options = *options;
    dist_init(&self->options.output_len);
    dist_init(&self->options.reasoning);
    buffer_init(&self->scratch);
    buffer_init(&self->page);
    buffer_init(&self->model_json);
    if (dist_copy(&self->options.output_len, &options->output_len) < 0 ||
        dist_copy(&self->options.reasoning, &options->reasoning) < 0) {
        snprintf(err, errlen, "out of memory");
        mock_server_destroy(&self);
        return NULL;
    }
    rlimit_raise_nofile();
    if (mock_server_build(self, err, errlen) < 0 || mock_server_open_fds(self, err, errlen) < 0) {
        mock_server_destroy(&self);
        return NULL;
    }
    return self;
}

void mock_server_destroy(mock_server_t **self_p) {
    mock_server_t *self = *self_p;
    if (!self)
        return;
    while (self->conns)
        mock_io_close(self, self->conns, false);
    mock_server_reap(self);
    int fds[] = {self->listen_fd, self->signal_fd, self->stop_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    loop_destroy(&self->loop);
    mock_engine_destroy(&self->engine);
    mock_prefix_cache_destroy(&self->fixed_cache);
    mock_vocab_destroy(&self->vocab);
    if (self->metrics.model)
        mock_metrics_clear(&self->metrics);
    buffer_clear(&self->scratch);
    buffer_clear(&self->page);
    buffer_clear(&self->model_json);
    mock_options_clear(&self->options);
    free(self);
    *self_p = NULL;
}
