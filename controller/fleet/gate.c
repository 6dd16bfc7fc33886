#include "gate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <zmq.h>

#include "buffer.h"
#include "error_text.h"
#include "zmq_monitor.h"

#define GATE_ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define GATE_MAX_WATCHED 4
#define GATE_ZAP_FRAMES 8
#define GATE_MONITOR_EVENTS                                                                        \
    (ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |          \
     ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |                       \
     ZMQ_EVENT_HANDSHAKE_SUCCEEDED)

/* What a close names when the accepted descriptor was already closed (or reused) by the time the
 * gate read the accept: only a peer that failed its handshake before the ZAP step can be one. */
#define GATE_PEER_UNREAD "a peer that left before its address could be read"
#define GATE_ADDRESS_LEN 64 /* "[IPv6]:port" or GATE_PEER_UNREAD, with the NUL */

/* A connection accepted on a watched socket: its descriptor and the peer's "address:port", read
 * when the accept was reported (the descriptor is closed by the time its disconnect is). */
typedef struct gate_peer {
    int fd;
    char address[GATE_ADDRESS_LEN];
} gate_peer_t;

/* One watched ROUTER: its monitor's PAIR end and what the monitor said so far. */
typedef struct gate_watch {
    void *watched;
    void *monitor;
    char label[16];
    unsigned port; /* the watched socket's bound TCP port: an accepted descriptor's local port */
    long long limit_bytes;
    bool log_closes;
    char failure[160]; /* the last handshake failure, told with the disconnect that follows it */
    gate_peer_t *peers;
    size_t n_peers, peers_cap;
} gate_watch_t;

struct gate {
    void *ctx;
    const keys_ring_t *ring;
    char *authorized_dir;
    char *name;
    char role[32]; /* whom the keys are of, in a refusal: "worker", "user" */
    void *zap;     /* REP on the ZAP endpoint */
    void *stop_tx; /* main thread's end of the stop pipe */
    void *stop_rx; /* the thread's end */
    gate_watch_t watches[GATE_MAX_WATCHED];
    size_t n_watches;
    pthread_t thread;
    bool started;
};

gate_t *gate_new(void *ctx, const keys_ring_t *ring, const char *authorized_dir, const char *name,
                 const char *role, char *err, size_t errlen) {
    gate_t *self = calloc(1, sizeof *self);
    if (!self) {
        error_text_fail(err, errlen, "out of memory");
        return NULL;
    }
    self->ctx = ctx;
    self->ring = ring;
    self->name = strdup(name);
    snprintf(self->role, sizeof self->role, "%s", role ? role : "peer");
    self->authorized_dir = strdup(authorized_dir ? authorized_dir : "");
    char pipe_ep[64];
    snprintf(pipe_ep, sizeof pipe_ep, "inproc://stampede-gate-%p", (void *)self);
    self->stop_rx = zmq_socket(ctx, ZMQ_PAIR);
    self->stop_tx = zmq_socket(ctx, ZMQ_PAIR);
    if (!self->name || !self->authorized_dir || !self->stop_rx || !self->stop_tx ||
        zmq_bind(self->stop_rx, pipe_ep) != 0 || zmq_connect(self->stop_tx, pipe_ep) != 0 ||
        zmq_setsockopt(self->stop_tx, ZMQ_LINGER, &(int){0}, sizeof(int)) != 0) {
        error_text_fail(err, errlen, "cannot set up the gate: %s", zmq_strerror(errno));
        gate_destroy(&self);
        return NULL;
    }
    self->zap = zmq_socket(ctx, ZMQ_REP);
    if (!self->zap || zmq_setsockopt(self->zap, ZMQ_LINGER, &(int){0}, sizeof(int)) != 0 ||
        zmq_bind(self->zap, GATE_ZAP_ENDPOINT) != 0) {
        error_text_fail(err, errlen, "cannot bind the ZAP handler on %s: %s", GATE_ZAP_ENDPOINT,
                        zmq_strerror(errno));
        gate_destroy(&self);
        return NULL;
    }
    return self;
}

int gate_watch(gate_t *self, void *sock, const char *label, long long limit_bytes, bool log_closes,
               char *err, size_t errlen) {
    if (self->n_watches == GATE_MAX_WATCHED || self->started)
        return error_text_fail(err, errlen, "gate: cannot watch another socket");
    gate_watch_t *w = &self->watches[self->n_watches];
    char domain[256] = "", bound[256] = "";
    size_t domain_len = sizeof domain, bound_len = sizeof bound;
    if (zmq_getsockopt(sock, ZMQ_ZAP_DOMAIN, domain, &domain_len) != 0 || !domain[0])
        return error_text_fail(err, errlen,
                               "gate: the %s socket has no ZAP domain (set it before binding): "
                               "the gate could not hold its handshakes to read each peer's address",
                               label);
    const char *colon = zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, bound, &bound_len) == 0
                            ? strrchr(bound, ':')
                            : NULL;
    if (strncmp(bound, "tcp://", 6) != 0 || !colon)
        return error_text_fail(err, errlen, "gate: the %s socket is not bound to a TCP port (%s)",
                               label, bound[0] ? bound : "not bound");
    char ep[96];
    snprintf(ep, sizeof ep, "inproc://stampede-gate-%p-%zu", (void *)self, self->n_watches);
    if (zmq_socket_monitor(sock, ep, GATE_MONITOR_EVENTS) != 0)
        return error_text_fail(err, errlen, "cannot monitor the %s socket: %s", label,
                               zmq_strerror(errno));
    w->watched = sock;
    w->monitor = zmq_socket(self->ctx, ZMQ_PAIR);
    if (!w->monitor || zmq_setsockopt(w->monitor, ZMQ_LINGER, &(int){0}, sizeof(int)) != 0 ||
        zmq_connect(w->monitor, ep) != 0) {
        zmq_socket_monitor(sock, NULL, 0);
        if (w->monitor)
            zmq_close(w->monitor);
        memset(w, 0, sizeof *w);
        return error_text_fail(err, errlen, "cannot monitor the %s socket: %s", label,
                               zmq_strerror(errno));
    }
    snprintf(w->label, sizeof w->label, "%s", label);
    w->port = (unsigned)strtoul(colon + 1, NULL, 10);
    w->limit_bytes = limit_bytes;
    w->log_closes = log_closes;
    self->n_watches++;
    return 0;
}

/* The frames of one request: up to GATE_ZAP_FRAMES kept in frames (open, the caller closes them),
 * more discarded. Returns how many frames the request had (at most GATE_ZAP_FRAMES + 1). */
static int receive_request(void *sock, zmq_msg_t *frames, int *kept) {
    int n = 0, more = 1;
    *kept = 0;
    while (more) {
        zmq_msg_t extra, *m = *kept < GATE_ZAP_FRAMES ? &frames[*kept] : &extra;
        zmq_msg_init(m);
        if (zmq_msg_recv(m, sock, 0) < 0) {
            zmq_msg_close(m);
            break;
        }
        more = zmq_msg_more(m);
        if (m == &extra)
            zmq_msg_close(m);
        else
            (*kept)++;
        if (n <= GATE_ZAP_FRAMES)
            n++;
    }
    return n;
}

static bool frame_is(zmq_msg_t *m, const char *text) {
    size_t n = strlen(text);
    return zmq_msg_size(m) == n && memcmp(zmq_msg_data(m), text, n) == 0;
}

static void send_reply(void *sock, zmq_msg_t *request_id, const char *status, const char *text,
                       const char *user_id) {
    zmq_send(sock, "1.0", 3, ZMQ_SNDMORE);
    if (request_id)
        zmq_send(sock, zmq_msg_data(request_id), zmq_msg_size(request_id), ZMQ_SNDMORE);
    else
        zmq_send(sock, "", 0, ZMQ_SNDMORE);
    zmq_send(sock, status, strlen(status), ZMQ_SNDMORE);
    zmq_send(sock, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(sock, user_id, strlen(user_id), ZMQ_SNDMORE);
    zmq_send(sock, "", 0, 0);
}

/* The peer of fd as "address:port" into out; GATE_PEER_UNREAD when fd is no longer a connection
 * accepted on port (closed, or already reused for another file or socket). */
static void peer_address(int fd, unsigned port, char *out, size_t len) {
    struct sockaddr_storage local, peer;
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    char host[INET6_ADDRSTRLEN];
    const void *ip = NULL;
    unsigned local_port = 0, peer_port = 0;
    snprintf(out, len, "%s", GATE_PEER_UNREAD);
    if (getsockname(fd, (struct sockaddr *)&local, &local_len) != 0 ||
        getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0 ||
        local.ss_family != peer.ss_family)
        return;
    if (peer.ss_family == AF_INET) {
        local_port = ntohs(((struct sockaddr_in *)&local)->sin_port);
        peer_port = ntohs(((struct sockaddr_in *)&peer)->sin_port);
        ip = &((struct sockaddr_in *)&peer)->sin_addr;
    } else if (peer.ss_family == AF_INET6) {
        local_port = ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
        peer_port = ntohs(((struct sockaddr_in6 *)&peer)->sin6_port);
        ip = &((struct sockaddr_in6 *)&peer)->sin6_addr;
    }
    if (ip && local_port == port && inet_ntop(peer.ss_family, ip, host, sizeof host))
        snprintf(out, len, "%s:%u", host, peer_port);
}

static void peer_remember(gate_watch_t *w, int fd) {
    gate_peer_t *peer = NULL;
    for (size_t i = 0; i < w->n_peers && !peer; i++)
        if (w->peers[i].fd == fd) /* a reused descriptor: the old connection is gone */
            peer = &w->peers[i];
    if (!peer) {
        if (buffer_grow_array(&w->peers, &w->peers_cap, w->n_peers + 1, sizeof *w->peers) != 0)
            return;
        peer = &w->peers[w->n_peers++];
        peer->fd = fd;
    }
    peer_address(fd, w->port, peer->address, sizeof peer->address);
}

/* The peer's "address:port" of fd into out, forgetting it. */
static void peer_forget(gate_watch_t *w, int fd, char *out, size_t len) {
    snprintf(out, len, "%s", GATE_PEER_UNREAD);
    for (size_t i = 0; i < w->n_peers; i++)
        if (w->peers[i].fd == fd) {
            snprintf(out, len, "%s", w->peers[i].address);
            w->peers[i] = w->peers[--w->n_peers];
            return;
        }
}

static void note_failure(gate_watch_t *w, uint16_t event, uint32_t value) {
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        snprintf(w->failure, sizeof w->failure, "its key was refused (ZAP status %u)", value);
    else if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
        snprintf(w->failure, sizeof w->failure,
                 "the CURVE handshake failed: the worker's --server-key is not this "
                 "controller's public key");
    else if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        snprintf(w->failure, sizeof w->failure,
                 "security mismatch: one side uses CURVE keys, the other plain TCP");
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        snprintf(w->failure, sizeof w->failure, "handshake protocol error 0x%x", value);
    else
        snprintf(w->failure, sizeof w->failure, "the handshake did not complete");
}

static void on_disconnect(gate_t *self, gate_watch_t *w, int fd) {
    char peer[GATE_ADDRESS_LEN];
    peer_forget(w, fd, peer, sizeof peer);
    if (w->failure[0])
        fprintf(stderr, "%s: %s connection from %s closed: %s\n", self->name, w->label, peer,
                w->failure);
    else if (w->log_closes)
        fprintf(stderr,
                "%s: %s connection from %s closed (the peer left, or libzmq dropped it for a "
                "message over the %lld-byte limit or a malformed frame)\n",
                self->name, w->label, peer, w->limit_bytes);
    w->failure[0] = '\0';
}

/* One monitor event, [uint16 event, uint32 value][endpoint], if one is waiting: 0, else -1. */
static int serve_monitor(gate_t *self, gate_watch_t *w) {
    uint16_t event;
    uint32_t value;
    if (zmq_monitor_read(w->monitor, &event, &value) != 0)
        return -1;
    switch (event) {
    case ZMQ_EVENT_ACCEPTED:
        peer_remember(w, (int)value);
        break;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        w->failure[0] = '\0';
        break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        note_failure(w, event, value);
        break;
    case ZMQ_EVENT_DISCONNECTED:
        on_disconnect(self, w, (int)value);
        break;
    default:
        break;
    }
    return 0;
}

/* Every event the monitors hold. Before a ZAP reply this reads the accept of the connection that
 * asked: libzmq's one I/O thread queued that accept before it began the handshake, and the
 * handshake waits for the reply, so the descriptor is still open and still that connection's. */
static void serve_monitors(gate_t *self) {
    for (size_t i = 0; i < self->n_watches; i++)
        while (serve_monitor(self, &self->watches[i]) == 0) {
        }
}

/* One ZAP request (RFC 27: version, request id, domain, address, identity, mechanism,
 * credentials): with a ring, 200 for a CURVE key in it; without one, 200 for a NULL (plain TCP)
 * client; 400 for anything else, logged with the address. */
static void serve_zap(gate_t *self) {
    zmq_msg_t f[GATE_ZAP_FRAMES];
    int kept, n = receive_request(self->zap, f, &kept);
    serve_monitors(self);
    char address[INET6_ADDRSTRLEN + 8] = "an unknown address";
    if (kept >= 4 && zmq_msg_size(&f[3]) > 0 && zmq_msg_size(&f[3]) < sizeof address)
        snprintf(address, sizeof address, "%.*s", (int)zmq_msg_size(&f[3]),
                 (const char *)zmq_msg_data(&f[3]));
    const char *found = NULL;
    char key[KEYS_Z85_LEN + 1] = "";
    if (self->ring && n == 7 && frame_is(&f[0], "1.0") && frame_is(&f[5], "CURVE") &&
        zmq_msg_size(&f[6]) == KEYS_BINARY_LEN) {
        zmq_z85_encode(key, zmq_msg_data(&f[6]), KEYS_BINARY_LEN);
        found = keys_ring_user(self->ring, zmq_msg_data(&f[6]));
    } else if (!self->ring && n == 6 && frame_is(&f[0], "1.0") && frame_is(&f[5], "NULL")) {
        found = "";
    }
    if (found) {
        send_reply(self->zap, &f[1], "200", "OK", found);
    } else {
        if (key[0])
            fprintf(stderr,
                    "%s: refused a %s at %s: its public key %s is not in --authorized-keys "
                    "%s\n",
                    self->name, self->role, address, key, self->authorized_dir);
        else if (self->ring)
            fprintf(stderr, "%s: refused a connection from %s: not a CURVE client\n", self->name,
                    address);
        else
            fprintf(stderr, "%s: refused a connection from %s: not a plain TCP client\n",
                    self->name, address);
        send_reply(self->zap, kept >= 2 ? &f[1] : NULL, "400", "key not authorized", "");
    }
    for (int i = 0; i < kept; i++)
        zmq_msg_close(&f[i]);
}

static void *gate_thread(void *arg) {
    gate_t *self = arg;
    zmq_pollitem_t items[2 + GATE_MAX_WATCHED];
    size_t n = 0;
    items[n++] = (zmq_pollitem_t){self->stop_rx, 0, ZMQ_POLLIN, 0};
    items[n++] = (zmq_pollitem_t){self->zap, 0, ZMQ_POLLIN, 0};
    for (size_t i = 0; i < self->n_watches; i++)
        items[n++] = (zmq_pollitem_t){self->watches[i].monitor, 0, ZMQ_POLLIN, 0};
    for (;;) {
        if (zmq_poll(items, (int)n, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (items[0].revents & ZMQ_POLLIN)
            break;
        if (items[1].revents & ZMQ_POLLIN)
            serve_zap(self);
        serve_monitors(self);
    }
    return NULL;
}

int gate_start(gate_t *self, char *err, size_t errlen) {
    int rc = pthread_create(&self->thread, NULL, gate_thread, self);
    if (rc != 0)
        return error_text_fail(err, errlen, "cannot start the gate thread: %s", strerror(rc));
    self->started = true;
    return 0;
}

void gate_destroy(gate_t **self_p) {
    gate_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->n_watches; i++)
        zmq_socket_monitor(self->watches[i].watched, NULL, 0);
    if (self->started) {
        zmq_send(self->stop_tx, "", 0, 0);
        pthread_join(self->thread, NULL);
    }
    for (size_t i = 0; i < self->n_watches; i++) {
        zmq_close(self->watches[i].monitor);
        free(self->watches[i].peers);
    }
    if (self->zap)
        zmq_close(self->zap);
    if (self->stop_tx)
        zmq_close(self->stop_tx);
    if (self->stop_rx)
        zmq_close(self->stop_rx);
    free(self->name);
    free(self->authorized_dir);
    free(self);
    *self_p = NULL;
}
