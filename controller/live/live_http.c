#define _GNU_SOURCE
#include "live_http.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_reason.h"
#include "keys.h"
#include "loop.h"

typedef struct live_http_conn {
    live_http_t *server;
    int fd; /* -1: the slot is free */
    char in[LIVE_HTTP_MAX_HEAD];
    size_t in_len;
    buffer_t out; /* the whole response, once the request is read */
    bool answering;
    uint64_t timer;
} live_http_conn_t;

struct live_http {
    loop_t *loop;
    int listen_fd;
    char address[128];
    live_http_render_fn render;
    void *arg;
    char token[LIVE_HTTP_MAX_TOKEN + 1]; /* "": no token asked */
    bool open_to_all;                    /* beyond loopback, no token (--metrics-insecure) */
    live_http_conn_t conns[LIVE_HTTP_MAX_CONNECTIONS];
};

static void live_http_close(live_http_conn_t *c) {
    if (c->fd < 0)
        return;
    loop_unwatch(c->server->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    loop_timer_cancel(c->server->loop, c->timer);
    c->timer = 0;
    buffer_clear(&c->out);
    c->in_len = 0;
    c->answering = false;
}

static void live_http_on_timeout(loop_t *loop, uint64_t timer_id, void *arg) {
    live_http_conn_t *c = arg;
    c->timer = 0;
    live_http_close(c);
}

/* What a send or recv that returned n leaves to do: LIVE_HTTP_IO_DONE when it moved n bytes,
 * LIVE_HTTP_IO_AGAIN on EINTR, LIVE_HTTP_IO_WAIT until the socket is ready, and
 * LIVE_HTTP_IO_CLOSED after an error or the peer's close (c is closed then). */
typedef enum {
    LIVE_HTTP_IO_DONE,
    LIVE_HTTP_IO_AGAIN,
    LIVE_HTTP_IO_WAIT,
    LIVE_HTTP_IO_CLOSED
} live_http_io_t;

static live_http_io_t live_http_io(live_http_conn_t *c, ssize_t n) {
    if (n < 0 && errno == EINTR)
        return LIVE_HTTP_IO_AGAIN;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return LIVE_HTTP_IO_WAIT;
    if (n <= 0) {
        live_http_close(c);
        return LIVE_HTTP_IO_CLOSED;
    }
    return LIVE_HTTP_IO_DONE;
}

/* Sends what the socket takes; closes the connection once the response is out or on an error. */
static void live_http_flush(live_http_conn_t *c) {
    while (buffer_pending(&c->out)) {
        ssize_t n = send(c->fd, buffer_head(&c->out), buffer_pending(&c->out), MSG_NOSIGNAL);
        live_http_io_t io = live_http_io(c, n);
        if (io == LIVE_HTTP_IO_AGAIN)
            continue;
        if (io != LIVE_HTTP_IO_DONE)
            return;
        buffer_consume(&c->out, (size_t)n);
    }
    live_http_close(c);
}

/* Whether the head in c->in carries "Authorization: Bearer TOKEN" (the header's name in any case),
 * compared in time independent of where a wrong token differs. */
static bool live_http_authorized(const live_http_conn_t *c) {
    const char *token = c->server->token;
    if (!*token)
        return true;
    static const char name[] = "\r\nauthorization:";
    size_t tlen = strlen(token);
    for (const char *p = c->in, *end = c->in + c->in_len; p + sizeof name - 1 < end; p++) {
        if (strncasecmp(p, name, sizeof name - 1) != 0)
            continue;
        const char *v = p + sizeof name - 1, *eol = memmem(v, (size_t)(end - v), "\r\n", 2);
        if (!eol)
            return false;
        while (v < eol && (*v == ' ' || *v == '\t'))
            v++;
        if ((size_t)(eol - v) < 7 || strncasecmp(v, "Bearer ", 7) != 0)
            return false;
        v += 7;
        while (eol > v && (eol[-1] == ' ' || eol[-1] == '\t'))
            eol--;
        if ((size_t)(eol - v) != tlen)
            return false;
        unsigned char diff = 0;
        for (size_t i = 0; i < tlen; i++)
            diff |= (unsigned char)(v[i] ^ token[i]);
        return diff == 0;
    }
    return false;
}

/* The status of the request head in c->in (rendering the body into body when it is a GET). */
static int live_http_handle(live_http_conn_t *c, bool *head_only, buffer_t *body,
                            const char **content_type) {
    const char *line = c->in, *eol = memchr(c->in, '\r', c->in_len);
    const char *sp1 = eol ? memchr(line, ' ', (size_t)(eol - line)) : NULL;
    const char *path = sp1 ? sp1 + 1 : NULL;
    const char *sp2 = path ? memchr(path, ' ', (size_t)(eol - path)) : NULL;
    if (!sp2 || *path != '/' || (size_t)(eol - sp2) < 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
        return 400;
    size_t method_len = (size_t)(sp1 - line);
    *head_only = method_len == 4 && memcmp(line, "HEAD", 4) == 0;
    if (!*head_only && !(method_len == 3 && memcmp(line, "GET", 3) == 0))
        return 405;
    if (!live_http_authorized(c))
        return 401;
    const char *query = memchr(path, '?', (size_t)(sp2 - path));
    size_t path_len = (size_t)((query ? query : sp2) - path);
    return c->server->render(c->server->arg, path, path_len, body, content_type);
}

const char *live_http_query(const char *path, size_t len, size_t *query_len) {
    *query_len = 0;
    if (path[len] != '?')
        return "";
    const char *end = strchr(path + len + 1, ' ');
    *query_len = end ? (size_t)(end - path - len - 1) : 0;
    return path + len + 1;
}

static void live_http_on_conn(loop_t *loop, int fd, int mask, void *arg);

/* Builds the response to the request read so far (status forced when non-zero) and starts
 * sending it. */
static void live_http_answer(live_http_conn_t *c, int status) {
    buffer_t body;
    buffer_init(&body);
    bool head_only = false;
    const char *type = "text/plain; version=0.0.4; charset=utf-8";
    if (!status)
        status = live_http_handle(c, &head_only, &body, &type);
    if (status != 200) {
        buffer_reset(&body);
        buffer_appendf(&body, "%d %s\n", status, http_reason(status));
        type = "text/plain; charset=utf-8";
    }
    int rc = buffer_appendf(&c->out,
                            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                            "Connection: close\r\n\r\n",
                            status, http_reason(status), type, buffer_pending(&body),
                            status == 405   ? "Allow: GET, HEAD\r\n"
                            : status == 401 ? "WWW-Authenticate: Bearer\r\n"
                                            : "");
    if (rc == 0 && !head_only)
        rc = buffer_append(&c->out, buffer_head(&body), buffer_pending(&body));
    buffer_clear(&body);
    if (rc != 0) {
        live_http_close(c);
        return;
    }
    c->answering = true;
    shutdown(c->fd, SHUT_RD);
    live_http_flush(c);
    if (c->fd >= 0 &&
        loop_watch(c->server->loop, c->fd, LOOP_WRITABLE, 0, live_http_on_conn, c) != 0)
        live_http_close(c);
}

/* Reads what arrived; answers once the head is complete (or too long, or the peer closed). */
static void live_http_read(live_http_conn_t *c) {
    for (;;) {
        ssize_t n = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
        live_http_io_t io = live_http_io(c, n);
        if (io == LIVE_HTTP_IO_AGAIN)
            continue;
        if (io != LIVE_HTTP_IO_DONE)
            return;
        c->in_len += (size_t)n;
        if (memmem(c->in, c->in_len, "\r\n\r\n", 4)) {
            live_http_answer(c, 0);
            return;
        }
        if (c->in_len == sizeof c->in) {
            live_http_answer(c, 431);
            return;
        }
    }
}

static void live_http_on_conn(loop_t *loop, int fd, int mask, void *arg) {
    live_http_conn_t *c = arg;
    if (c->answering)
        live_http_flush(c);
    else
        live_http_read(c);
}

static void live_http_on_accept(loop_t *loop, int fd, int mask, void *arg) {
    live_http_t *self = arg;
    for (;;) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
            return; /* EAGAIN, or an error the next turn will see again */
        live_http_conn_t *c = NULL;
        for (size_t i = 0; i < LIVE_HTTP_MAX_CONNECTIONS && !c; i++)
            if (self->conns[i].fd < 0)
                c = &self->conns[i];
        if (!c) {
            close(cfd);
            continue;
        }
        c->fd = cfd;
        c->timer =
            loop_timer_at(loop, loop_now_ns() + LIVE_HTTP_TIMEOUT_NS, live_http_on_timeout, c);
        if (!c->timer || loop_watch(loop, cfd, LOOP_READABLE, 0, live_http_on_conn, c) != 0)
            live_http_close(c);
    }
}

/* Splits "HOST:PORT" or "[V6]:PORT" into host and port. 0 ok, -1 malformed. */
static int live_http_split(const char *listen, char *host, size_t host_cap, char *port,
                           size_t port_cap) {
    const char *colon = strrchr(listen, ':');
    if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
        return -1;
    const char *h = listen;
    size_t hl = (size_t)(colon - listen);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= host_cap || strlen(colon + 1) >= port_cap || strchr(colon + 1, ':'))
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, port_cap, "%s", colon + 1);
    return 0;
}

/* Binds and listens on the first address host:port resolves to; the fd, or -1 with why set. */
static int live_http_listen(const char *address, char *why, size_t len) {
    char host[256], port[16];
    if (live_http_split(address, host, sizeof host, port, sizeof port) != 0) {
        snprintf(why, len, "'%s' is not HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:0)", address);
        return -1;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        snprintf(why, len, "cannot resolve '%s': %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        snprintf(why, len, "cannot listen on %s: %s", address, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* The bound address of fd as HOST:PORT into buf. */
static void live_http_bound(int fd, char *buf, size_t len) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, len, "?");
        return;
    }
    snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* Reads the token: the file's first line, trimmed; 0, or -1 with why set. */
static int live_http_read_token(const char *path, char *token, char *why, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, len, "--metrics-token-file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[LIVE_HTTP_MAX_TOKEN + 2];
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t n = got ? strcspn(line, "\r\n") : 0;
    if (got && n > LIVE_HTTP_MAX_TOKEN) {
        snprintf(why, len, "--metrics-token-file %s: the token is longer than %d characters", path,
                 LIVE_HTTP_MAX_TOKEN);
        return -1;
    }
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
        n--;
    size_t start = got ? strspn(line, " \t") : 0;
    if (start >= n) {
        snprintf(why, len, "--metrics-token-file %s: the first line is empty (want the token)",
                 path);
        return -1;
    }
    memcpy(token, line + start, n - start);
    token[n - start] = '\0';
    return 0;
}

live_http_t *live_http_new(const char *listen, const live_http_access_t *access,
                           live_http_render_fn render, void *arg, char *why, size_t len) {
    live_http_t *self = calloc(1, sizeof *self);
    if (!self) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    self->listen_fd = -1;
    self->render = render;
    self->arg = arg;
    for (size_t i = 0; i < LIVE_HTTP_MAX_CONNECTIONS; i++) {
        self->conns[i].server = self;
        self->conns[i].fd = -1;
        buffer_init(&self->conns[i].out);
    }
    if (!(self->loop = loop_new())) {
        snprintf(why, len, "cannot make an event loop: %s", strerror(errno));
        live_http_destroy(&self);
        return NULL;
    }
    if (access && access->token_file &&
        live_http_read_token(access->token_file, self->token, why, len) != 0) {
        live_http_destroy(&self);
        return NULL;
    }
    char host[256], port[16], endpoint[300];
    if (live_http_split(listen, host, sizeof host, port, sizeof port) != 0) {
        snprintf(why, len, "'%s' is not HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:0)", listen);
        live_http_destroy(&self);
        return NULL;
    }
    snprintf(endpoint, sizeof endpoint, "tcp://%s", listen);
    if (!keys_endpoint_is_local(endpoint) && !*self->token) {
        if (!access || !access->insecure) {
            snprintf(why, len,
                     "%s is reachable from other machines, and the port serves the run's figures "
                     "(and with --linger its results): give --metrics-token-file FILE (scrapers "
                     "send Authorization: Bearer TOKEN) or accept the risk with --metrics-insecure "
                     "(docs/security.md)",
                     listen);
            live_http_destroy(&self);
            return NULL;
        }
        self->open_to_all = true;
    }
    if ((self->listen_fd = live_http_listen(listen, why, len)) < 0) {
        live_http_destroy(&self);
        return NULL;
    }
    if (loop_watch(self->loop, self->listen_fd, LOOP_READABLE, 0, live_http_on_accept, self) != 0) {
        snprintf(why, len, "cannot watch the listener: %s", strerror(errno));
        live_http_destroy(&self);
        return NULL;
    }
    live_http_bound(self->listen_fd, self->address, sizeof self->address);
    return self;
}

void live_http_destroy(live_http_t **self_p) {
    live_http_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < LIVE_HTTP_MAX_CONNECTIONS; i++)
        if (self->loop)
            live_http_close(&self->conns[i]);
    if (self->listen_fd >= 0) {
        if (self->loop)
            loop_unwatch(self->loop, self->listen_fd);
        close(self->listen_fd);
    }
    loop_destroy(&self->loop);
    free(self);
    *self_p = NULL;
}

bool live_http_open_to_all(const live_http_t *self) {
    return self->open_to_all;
}

const char *live_http_address(const live_http_t *self) {
    return self->address;
}

int live_http_fd(const live_http_t *self) {
    return loop_fd(self->loop);
}

void live_http_poll(live_http_t *self) {
    loop_run_once(self->loop);
}

/* The content type of a file by its name's ending. */
static const char *live_http_type(const char *name) {
    static const struct {
        const char *suffix, *type;
    } types[] = {
        {".json", "application/json"},           {".jsonl", "application/x-ndjson"},
        {".md", "text/markdown; charset=utf-8"}, {".html", "text/html; charset=utf-8"},
        {".csv", "text/csv; charset=utf-8"},     {".svg", "image/svg+xml"},
        {".yaml", "application/yaml"},           {".hgrm", "text/plain; charset=utf-8"},
        {".txt", "text/plain; charset=utf-8"},   {".log", "text/plain; charset=utf-8"},
    };
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t k = strlen(types[i].suffix);
        if (n > k && strcmp(name + n - k, types[i].suffix) == 0)
            return types[i].type;
    }
    return "application/octet-stream";
}

/* rel is a safe relative path: components of [A-Za-z0-9_.,+=@-] not starting with '.', no empty
 * one but a trailing '/' (a directory). */
static bool live_http_safe(const char *rel, size_t len) {
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && rel[i] != '/') {
            char ch = rel[i];
            bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || strchr("_.,+=@-", ch);
            if (!ok || (i == start && ch == '.'))
                return false;
            continue;
        }
        if (i == start && !(i == len && i > 0)) /* an empty component, but a trailing '/' */
            return i == 0 && len == 0;
        start = i + 1;
    }
    return true;
}

/* A directory's listing into out: names sorted, directories with a trailing '/'. */
static int live_http_listing(const char *dir, buffer_t *out) {
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        return 404;
    int rc = 200;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (name[0] != '.' && rc == 200) {
            char path[PATH_MAX];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", dir, name);
            bool is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
            if (buffer_appendf(out, "%s%s\n", name, is_dir ? "/" : "") != 0)
                rc = 500;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int live_http_file(const char *root, const char *rel, size_t len, buffer_t *out,
                   const char **content_type) {
    char path[PATH_MAX], real_root[PATH_MAX], real[PATH_MAX];
    if (!live_http_safe(rel, len) || len + strlen(root) + 2 >= sizeof path ||
        !realpath(root, real_root))
        return 404;
    snprintf(path, sizeof path, "%s/%.*s", root, (int)len, rel);
    /* What the path resolves to must still lie beneath root (a symbolic link may point out). */
    size_t rl = strlen(real_root);
    if (!realpath(path, real) ||
        !(strcmp(real, real_root) == 0 || (strncmp(real, real_root, rl) == 0 && real[rl] == '/')))
        return 404;
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return 404;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        *content_type = "text/plain; charset=utf-8";
        return live_http_listing(real, out);
    }
    if (!S_ISREG(st.st_mode) || (len && rel[len - 1] == '/')) {
        close(fd);
        return 404;
    }
    if (st.st_size > LIVE_HTTP_MAX_FILE) {
        close(fd);
        return 413;
    }
    int rc = 200;
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = 500;
        if (n <= 0)
            break;
        if (buffer_append(out, chunk, (size_t)n) != 0) {
            rc = 500;
            break;
        }
    }
    close(fd);
    *content_type = live_http_type(real);
    return rc;
}
