#include "transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "envelope.h"
#include "gate.h"
#include "keys.h"
#include "loop.h"

#define TRANSPORT_ZAP_DOMAIN "stampede"

struct transport {
    void *ctx;
    void *ctl;
    void *data;
    char endpoint[256];
    uint32_t data_port;
    uint64_t seq; /* one counter over both sockets */
    uint8_t *buf; /* packing buffer, grown to the largest envelope sent */
    size_t buf_cap;
    bool curve;
    char secret_key[KEYS_Z85_LEN + 1];
    keys_ring_t *ring;
    gate_t *gate;
    zmq_msg_t *received; /* the payload being handed to a transport_message_fn, else NULL */
};

static void *bind_router(transport_t *self, const char *endpoint, int rcvhwm, int64_t max_bytes,
                         char *bound, size_t bound_len, const char *name) {
    void *sock = zmq_socket(self->ctx, ZMQ_ROUTER);
    if (!sock)
        return NULL;
    int one = 1, linger = 1000, ivl = 1000, timeout = 3000;
    zmq_setsockopt(sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
    zmq_setsockopt(sock, ZMQ_ROUTER_HANDOVER, &one, sizeof one);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_TTL, &timeout, sizeof timeout);
    if (rcvhwm)
        zmq_setsockopt(sock, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max_bytes, sizeof max_bytes);
    /* In plain TCP too: the gate holds each handshake until it has read the peer's address */
    zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, TRANSPORT_ZAP_DOMAIN, strlen(TRANSPORT_ZAP_DOMAIN));
    if (self->curve &&
        (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
         zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, self->secret_key, KEYS_Z85_LEN) != 0)) {
        fprintf(stderr, "%s: cannot make %s a CURVE server: %s\n", name, endpoint,
                zmq_strerror(errno));
        zmq_close(sock);
        return NULL;
    }
    if (zmq_bind(sock, endpoint) != 0) {
        fprintf(stderr, "%s: cannot bind %s: %s\n", name, endpoint, zmq_strerror(errno));
        zmq_close(sock);
        return NULL;
    }
    size_t len = bound_len;
    zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, bound, &len);
    return sock;
}

static uint32_t endpoint_port(const char *endpoint) {
    const char *colon = strrchr(endpoint, ':');
    return colon ? (uint32_t)strtoul(colon + 1, NULL, 10) : 0;
}

static int check_bind(const char *bind, const char *name) {
    const char *colon = strrchr(bind, ':');
    if (strncmp(bind, "tcp://", 6) != 0 || !colon || colon < bind + 6) {
        fprintf(stderr, "%s: --bind %s: expected tcp://HOST:PORT (PORT may be *)\n", name, bind);
        return -1;
    }
    return 0;
}

static int bind_sockets(transport_t *self, const char *bind, uint32_t data_port, const char *name) {
    const char *colon = strrchr(bind, ':');
    self->ctl = bind_router(self, bind, 0, TRANSPORT_MAX_CONTROL_BYTES, self->endpoint,
                            sizeof self->endpoint, name);
    if (!self->ctl)
        return -1;
    bool any_port = !strcmp(colon + 1, "*") || !strcmp(colon + 1, "0");
    char data_ep[300], bound[256];
    if (data_port)
        snprintf(data_ep, sizeof data_ep, "%.*s:%u", (int)(colon - bind), bind, data_port);
    else if (any_port)
        snprintf(data_ep, sizeof data_ep, "%.*s:*", (int)(colon - bind), bind);
    else
        snprintf(data_ep, sizeof data_ep, "%.*s:%u", (int)(colon - bind), bind,
                 endpoint_port(self->endpoint) + 1);
    self->data =
        bind_router(self, data_ep, 100000, TRANSPORT_MAX_DATA_BYTES, bound, sizeof bound, name);
    if (!self->data)
        return -1;
    self->data_port = endpoint_port(bound);
    return 0;
}

/* Loads the keys, or checks that plain TCP is allowed on bind; then starts the gate, whose ZAP
 * handler must be bound before the first CURVE socket. */
static int secure(transport_t *self, const char *bind, const transport_security_t *sec,
                  const char *name) {
    char err[1024];
    if (!sec->key_file != !sec->authorized_keys) {
        fprintf(stderr,
                "%s: --key FILE and --authorized-keys DIR go together: the controller's own key "
                "pair and the public keys of the workers it admits (docs/security.md)\n",
                name);
        return -1;
    }
    self->curve = sec->key_file != NULL;
    if (self->curve) {
        char public_key[KEYS_Z85_LEN + 1];
        if (keys_read_secret(sec->key_file, self->secret_key, public_key, err, sizeof err) != 0 ||
            !(self->ring = keys_ring_load(sec->authorized_keys, err, sizeof err))) {
            fprintf(stderr, "%s: %s\n", name, err);
            return -1;
        }
        fprintf(stderr, "%s: CURVE on, public key %s; admitting the %zu worker key%s in %s\n", name,
                public_key, keys_ring_count(self->ring),
                keys_ring_count(self->ring) == 1 ? "" : "s", sec->authorized_keys);
    } else if (!keys_endpoint_is_local(bind) && !sec->insecure) {
        fprintf(stderr,
                "%s: --bind %s is reachable from other machines, and in plain TCP anyone who can "
                "reach it could join the run and receive its workload. Secure it:\n"
                "  stampede keygen controller && stampede keygen worker && mkdir -p workers.d && "
                "cp worker.pub workers.d/\n"
                "  stampede controller ... --bind %s --key controller.key --authorized-keys "
                "workers.d\n"
                "  stampede worker --connect tcp://HOST:PORT --key worker.key --server-key "
                "controller.pub\n"
                "or accept the risk with --insecure (docs/security.md)\n",
                name, bind, bind);
        return -1;
    } else if (sec->insecure && !keys_endpoint_is_local(bind)) {
        fprintf(stderr,
                "%s: warning: --insecure: plain TCP on %s; any host that reaches it can join "
                "the run\n",
                name, bind);
    }
    self->gate =
        gate_new(self->ctx, self->ring, sec->authorized_keys, name, "worker", err, sizeof err);
    if (!self->gate) {
        fprintf(stderr, "%s: %s\n", name, err);
        return -1;
    }
    return 0;
}

static int watch(transport_t *self, const transport_security_t *sec, const char *name) {
    char err[512];
    if (gate_watch(self->gate, self->ctl, "control", TRANSPORT_MAX_CONTROL_BYTES, sec->log_closes,
                   err, sizeof err) != 0 ||
        gate_watch(self->gate, self->data, "data", TRANSPORT_MAX_DATA_BYTES, sec->log_closes, err,
                   sizeof err) != 0 ||
        gate_start(self->gate, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return -1;
    }
    return 0;
}

transport_t *transport_new(const char *bind, uint32_t data_port,
                           const transport_security_t *security, const char *name) {
    static const transport_security_t plain = {0};
    const transport_security_t *sec = security ? security : &plain;
    transport_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->ctx = zmq_ctx_new();
    if (!self->ctx || check_bind(bind, name) != 0 || secure(self, bind, sec, name) != 0 ||
        bind_sockets(self, bind, data_port, name) != 0 || watch(self, sec, name) != 0)
        transport_destroy(&self);
    return self;
}

void transport_destroy(transport_t **self_p) {
    transport_t *self = *self_p;
    if (!self)
        return;
    gate_destroy(&self->gate); /* stops the monitors while the sockets are open */
    if (self->ctl)
        zmq_close(self->ctl);
    if (self->data)
        zmq_close(self->data);
    if (self->ctx)
        zmq_ctx_term(self->ctx); /* delivers what is queued (Stops), bounded by the linger */
    keys_ring_destroy(&self->ring);
    memset(self->secret_key, 0, sizeof self->secret_key);
    free(self->buf);
    free(self);
    *self_p = NULL;
}

const char *transport_endpoint(const transport_t *self) {
    return self->endpoint;
}

uint32_t transport_data_port(const transport_t *self) {
    return self->data_port;
}

int transport_send(transport_t *self, transport_socket_t socket, const uint8_t *id, size_t id_len,
                   Stampede__Envelope *env) {
    void *sock = socket == TRANSPORT_CONTROL ? self->ctl : self->data;
    env->proto_version = PROTOCOL_VERSION;
    env->seq = ++self->seq;
    size_t len = envelope_pack(env, &self->buf, &self->buf_cap);
    if (!len)
        return -1;
    /* ROUTER_MANDATORY: an unknown or full peer fails here instead of dropping silently. */
    if (zmq_send(sock, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return -1;
    return zmq_send(sock, self->buf, len, ZMQ_DONTWAIT) < 0 ? -1 : 0;
}

int transport_receive(transport_t *self, transport_socket_t socket, transport_message_fn fn,
                      void *arg) {
    void *sock = socket == TRANSPORT_CONTROL ? self->ctl : self->data;
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    if (zmq_msg_recv(&id, sock, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&id);
        return 0;
    }
    int64_t rx_ns = loop_now_ns();
    zmq_msg_init(&body);
    if (zmq_msg_more(&id) && zmq_msg_recv(&body, sock, ZMQ_DONTWAIT) >= 0) {
        self->received = &body;
        fn(arg, zmq_msg_data(&id), zmq_msg_size(&id), zmq_msg_data(&body), zmq_msg_size(&body),
           rx_ns);
        self->received = NULL;
        while (zmq_msg_more(&body)) { /* extra frames are not ours: discard */
            zmq_msg_close(&body);
            zmq_msg_init(&body);
            if (zmq_msg_recv(&body, sock, ZMQ_DONTWAIT) < 0)
                break;
        }
    }
    zmq_msg_close(&body);
    zmq_msg_close(&id);
    return 1;
}

const char *transport_peer_address(const transport_t *self) {
    /* looked up only when asked: libzmq keeps it in the connection's metadata */
    const char *addr = self->received ? zmq_msg_gets(self->received, "Peer-Address") : NULL;
    return addr ? addr : "";
}

void transport_wait_fds(transport_t *self, bool with_data, long timeout_ms, const int *fds,
                        size_t n_fds) {
    zmq_pollitem_t items[2 + TRANSPORT_MAX_FDS] = {{self->ctl, 0, ZMQ_POLLIN, 0},
                                                   {self->data, 0, ZMQ_POLLIN, 0}};
    int n = with_data ? 2 : 1; /* without data, the first fd takes the data socket's place */
    for (size_t i = 0; i < n_fds && i < TRANSPORT_MAX_FDS; i++)
        if (fds[i] >= 0)
            items[n++] = (zmq_pollitem_t){NULL, fds[i], ZMQ_POLLIN, 0};
    zmq_poll(items, n, timeout_ms);
}
