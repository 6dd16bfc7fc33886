#include "transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "envelope.h"
#include "loop.h"

struct transport {
    void *ctx;
    void *ctl;
    void *data;
    char endpoint[256];
    uint32_t data_port;
    uint64_t seq; /* one counter over both sockets */
    uint8_t *buf; /* packing buffer, grown to the largest envelope sent */
    size_t buf_cap;
};

static void *bind_router(transport_t *self, const char *endpoint, int rcvhwm, char *bound,
                         size_t bound_len, const char *name) {
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

static int bind_sockets(transport_t *self, const char *bind, uint32_t data_port, const char *name) {
    const char *colon = strrchr(bind, ':');
    if (strncmp(bind, "tcp://", 6) != 0 || !colon || colon < bind + 6) {
        fprintf(stderr, "%s: --bind %s: expected tcp://HOST:PORT (PORT may be *)\n", name, bind);
        return -1;
    }
    self->ctl = bind_router(self, bind, 0, self->endpoint, sizeof self->endpoint, name);
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
    self->data = bind_router(self, data_ep, 100000, bound, sizeof bound, name);
    if (!self->data)
        return -1;
    self->data_port = endpoint_port(bound);
    return 0;
}

transport_t *transport_new(const char *bind, uint32_t data_port, const char *name) {
    transport_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->ctx = zmq_ctx_new();
    if (!self->ctx || bind_sockets(self, bind, data_port, name) != 0)
        transport_destroy(&self);
    return self;
}

void transport_destroy(transport_t **self_p) {
    transport_t *self = *self_p;
    if (!self)
        return;
    if (self->ctl)
        zmq_close(self->ctl);
    if (self->data)
        zmq_close(self->data);
    if (self->ctx)
        zmq_ctx_term(self->ctx); /* delivers what is queued (Stops), bounded by the linger */
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
        fn(arg, zmq_msg_data(&id), zmq_msg_size(&id), zmq_msg_data(&body), zmq_msg_size(&body),
           rx_ns);
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

void transport_wait(transport_t *self, bool with_data, long timeout_ms) {
    zmq_pollitem_t items[2] = {{self->ctl, 0, ZMQ_POLLIN, 0}, {self->data, 0, ZMQ_POLLIN, 0}};
    zmq_poll(items, with_data ? 2 : 1, timeout_ms);
}

void transport_wait_fd(transport_t *self, bool with_data, long timeout_ms, int fd) {
    if (fd < 0) {
        transport_wait(self, with_data, timeout_ms);
        return;
    }
    zmq_pollitem_t items[3] = {
        {NULL, fd, ZMQ_POLLIN, 0}, {self->ctl, 0, ZMQ_POLLIN, 0}, {self->data, 0, ZMQ_POLLIN, 0}};
    zmq_poll(items, with_data ? 3 : 2, timeout_ms);
}
