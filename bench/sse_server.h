/* The benchmarks' own streaming server: OpenAI chat chunks over HTTP/1.1 keep-alive, like
 * `stampede mock` in fixed mode, except that it writes a fixed pattern of k token events per
 * write() ("2,3": two, then three, then two...), as a coalescing server or proxy does (SGLang's
 * stream_interval, a busy frontend). Tokens are due every ITL; a group is written when its last
 * token is due, so the token rate does not depend on k. Every event carries the write's
 * "sent_ns". It runs in a child process; a short write closes the connection (the client then
 * reports an error) rather than buffering, so a server that fell behind cannot go unnoticed.
 * Header-only (static functions) because each bench/bench_*.c is a program of its own. */
#ifndef STAMPEDE_BENCH_SSE_SERVER_H
#define STAMPEDE_BENCH_SSE_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_cpu.h"
#include "loop.h"

#define SSE_SERVER_MAX_PATTERN 8
#define SSE_SERVER_IN 8192
#define SSE_SERVER_EVENT 320 /* one event, its HTTP chunk framing included */

typedef struct sse_server_config {
    double ttft_ms;
    double itl_ms;
    int pattern[SSE_SERVER_MAX_PATTERN]; /* events per write, in turn */
    int pattern_len;
} sse_server_config_t;

typedef struct sse_server_conn {
    struct sse_server *server;
    int fd;
    char in[SSE_SERVER_IN];
    size_t in_len;
    uint32_t tokens;  /* of the response being streamed; 0 when idle */
    uint32_t emitted; /* tokens written so far */
    uint32_t turn;    /* index into the pattern */
    int64_t first_due_ns;
    uint64_t timer; /* the next group's */
} sse_server_conn_t;

typedef struct sse_server {
    loop_t *loop;
    sse_server_config_t cfg;
    int listen_fd;
    sse_server_conn_t **conns; /* indexed by fd */
    int conns_len;
    char *out;
} sse_server_t;

/* Parses "2,3" into pattern (each 1..64); the count, or -1. */
static inline int sse_server_parse_pattern(const char *text, int *pattern) {
    int n = 0;
    for (const char *p = text; *p; p++) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || k < 1 || k > 64 || n == SSE_SERVER_MAX_PATTERN || (*end && *end != ','))
            return -1;
        pattern[n++] = (int)k;
        p = *end ? end : end - 1;
    }
    return n;
}

static inline void sse_server_close(sse_server_t *self, sse_server_conn_t *c) {
    loop_timer_cancel(self->loop, c->timer);
    loop_unwatch(self->loop, c->fd);
    close(c->fd);
    self->conns[c->fd] = NULL;
    free(c);
}

static void sse_server_request(sse_server_t *self, sse_server_conn_t *c);

static inline char *sse_server_event(char *p, const char *delta, const char *finish,
                                     int64_t sent_ns) {
    char event[SSE_SERVER_EVENT];
    int n = snprintf(event, sizeof(event),
                     "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
                     "\"created\":0,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":%s,"
                     "\"logprobs\":null,\"finish_reason\":%s}],\"sent_ns\":%lld}\n\n",
                     delta, finish, (long long)sent_ns);
    memcpy(p, event, (size_t)n);
    return p + n;
}

/* Writes the next group of the pattern (the last one with usage, [DONE] and the body's end),
 * as one HTTP chunk, and arms the timer for the group after it. */
static void sse_server_emit(loop_t *loop, uint64_t id, void *arg) {
    sse_server_conn_t *c = arg;
    sse_server_t *self = c->server;
    c->timer = 0;
    uint32_t k = (uint32_t)self->cfg.pattern[c->turn++ % (uint32_t)self->cfg.pattern_len];
    if (k > c->tokens - c->emitted)
        k = c->tokens - c->emitted;
    int64_t now = loop_now_ns();
    char *body = self->out + 16, *p = body; /* room for the chunk-size line in front */
    for (uint32_t i = 0; i < k; i++, c->emitted++)
        p = sse_server_event(p, c->emitted ? "{\"content\":\" token\"}" : "{\"content\":\"token\"}",
                             c->emitted + 1 == c->tokens ? "\"length\"" : "null", now);
    bool last = c->emitted == c->tokens;
    if (last) {
        p +=
            sprintf(p,
                    "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
                    "\"created\":0,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":"
                    "4,\"completion_tokens\":%u,\"total_tokens\":%u},\"sent_ns\":%lld}\n\n"
                    "data: [DONE]\n\n",
                    c->tokens, c->tokens + 4, (long long)now);
    }
    char size_line[16];
    int n = snprintf(size_line, sizeof(size_line), "%zx\r\n", (size_t)(p - body));
    char *start = body - n;
    memcpy(start, size_line, (size_t)n);
    p += sprintf(p, last ? "\r\n0\r\n\r\n" : "\r\n");
    if (write(c->fd, start, (size_t)(p - start)) != p - start) {
        sse_server_close(self, c);
        return;
    }
    if (last) {
        c->tokens = 0;
        sse_server_request(self, c); /* one that arrived early */
        return;
    }
    uint32_t next =
        c->emitted + (uint32_t)self->cfg.pattern[c->turn % (uint32_t)self->cfg.pattern_len];
    if (next > c->tokens)
        next = c->tokens;
    c->timer = loop_timer_at(loop, c->first_due_ns + (int64_t)((next - 1) * self->cfg.itl_ms * 1e6),
                             sse_server_emit, c);
}

/* A whole request in c->in starts its response: headers now, the first group at TTFT. */
static void sse_server_request(sse_server_t *self, sse_server_conn_t *c) {
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end || c->tokens)
        return;
    size_t head = (size_t)(end - c->in) + 4, body = 0;
    char *cl = memmem(c->in, head, "Content-Length:", 15);
    if (!cl)
        cl = memmem(c->in, head, "content-length:", 15);
    if (cl)
        body = strtoul(cl + 15, NULL, 10);
    if (c->in_len < head + body)
        return;
    char *max = memmem(c->in + head, body, "\"max_tokens\":", 13);
    long tokens = max ? strtol(max + 13, NULL, 10) : 16;
    c->tokens = tokens > 0 ? (uint32_t)tokens : 1;
    c->emitted = 0;
    c->turn = 0;
    memmove(c->in, c->in + head + body, c->in_len - head - body);
    c->in_len -= head + body;
    static const char headers[] = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                  "transfer-encoding: chunked\r\n\r\n";
    if (write(c->fd, headers, sizeof(headers) - 1) != (ssize_t)sizeof(headers) - 1) {
        sse_server_close(self, c);
        return;
    }
    c->first_due_ns = loop_now_ns() + (int64_t)(self->cfg.ttft_ms * 1e6);
    uint32_t first =
        (uint32_t)self->cfg.pattern[0] < c->tokens ? (uint32_t)self->cfg.pattern[0] : c->tokens;
    c->timer =
        loop_timer_at(self->loop, c->first_due_ns + (int64_t)((first - 1) * self->cfg.itl_ms * 1e6),
                      sse_server_emit, c);
}

static void sse_server_on_read(loop_t *loop, int fd, int mask, void *arg) {
    sse_server_conn_t *c = arg;
    ssize_t got = read(fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
    if (got <= 0) {
        sse_server_close(c->server, c); /* the client closed (a streaming reply's timer stops) */
        return;
    }
    c->in_len += (size_t)got;
    sse_server_request(c->server, c);
}

static void sse_server_on_accept(loop_t *loop, int fd, int mask, void *arg) {
    sse_server_t *self = arg;
    int client;
    while ((client = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        sse_server_conn_t *c = calloc(1, sizeof(*c));
        if (client >= self->conns_len || !c) {
            free(c);
            close(client);
            continue;
        }
        c->server = self;
        c->fd = client;
        self->conns[client] = c;
        loop_watch(loop, client, LOOP_READABLE, 0, sse_server_on_read, c);
    }
}

/* Starts the server in a child (pinned to cpu unless cpu < 0) on a free loopback port; the
 * child runs until SIGTERM. 0 with *pid and *port set, or -1. */
static inline int sse_server_spawn(const sse_server_config_t *cfg, int cpu, pid_t *pid, int *port) {
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        listen(listener, 4096) < 0 || getsockname(listener, (struct sockaddr *)&addr, &alen) < 0) {
        if (listener >= 0)
            close(listener);
        return -1;
    }
    *port = ntohs(addr.sin_port);
    *pid = fork();
    if (*pid < 0) {
        close(listener);
        return -1;
    }
    if (*pid > 0) {
        close(listener);
        return 0;
    }
    signal(SIGTERM, SIG_DFL);
    if (cpu >= 0)
        bench_cpu_pin(0, cpu);
    sse_server_t self = {.cfg = *cfg, .listen_fd = listener, .conns_len = 65536};
    self.loop = loop_new();
    self.conns = calloc((size_t)self.conns_len, sizeof(*self.conns));
    self.out = malloc(16 + 64 * SSE_SERVER_EVENT + 512);
    if (!self.loop || !self.conns || !self.out)
        _exit(1);
    loop_watch(self.loop, listener, LOOP_READABLE, 0, sse_server_on_accept, &self);
    loop_run(self.loop);
    _exit(0);
}

#endif
