#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zmq.h>

#include "version.h"
#include "zmq_monitor.h"

#define AGENT_MONITOR_EVENTS                                                                       \
    (ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |                \
     ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |                  \
     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_CONNECT_RETRIED)
/* While the controller is not up, a retry is logged at most this often (libzmq retries with
 * backoff: ZMQ_RECONNECT_IVL doubling up to ZMQ_RECONNECT_IVL_MAX). */
#define AGENT_RETRY_LOG_NS 10000000000LL

/* One socket on the loop: its ZMQ_FD is edge-triggered, so it is drained after every wakeup and
 * after every send (a send can consume the edge that announced incoming messages). */
typedef struct agent_socket {
    agent_t *agent;
    void *sock;
    int fd;
    int draining;
    void (*handle)(agent_t *self, const uint8_t *data, size_t len, int64_t rx_ns);
} agent_socket_t;

/* A monitor PAIR socket reporting connects and disconnects of one of the two sockets. */
typedef struct agent_monitor {
    agent_t *agent;
    void *sock;
    int fd;
    int is_data;
} agent_monitor_t;

struct agent {
    void *ctx;
    loop_t *loop;
    events_t *events;
    agent_options_t options;
    agent_callbacks_t cb;
    void *arg;
    char *endpoint;
    char *name;
    char routing_id[96];

    agent_socket_t ctl;
    agent_socket_t data;
    agent_monitor_t ctl_mon;
    agent_monitor_t data_mon;
    char *data_endpoint; /* connected data endpoint, NULL before the first Welcome */

    bool welcomed;
    bool handshaken;            /* the control connection completed its handshake */
    uint32_t failed_handshakes; /* in a row, on either socket */
    uint32_t connect_retries;   /* control connection attempts that failed since the last one */
    int64_t retries_since_ns;   /* when the first of them failed */
    int64_t retry_logged_ns;    /* when one was last logged */
    bool gave_up;               /* refused: told once */
    uint64_t run_id;
    int64_t last_rx_ns; /* latest evidence that the controller was alive, on our real clock */
    bool have_offset;   /* offset_ns is known: liveness then comes from heartbeat send times */
    int64_t offset_ns;  /* our reported clock minus the controller's (from Assign) */
    int64_t heartbeat_ns;
    uint64_t timer;
    uint64_t seq;

    bool ready_pending;
    bool ready_ok;
    char *ready_error;
    char *ready_said; /* Ready.server_said, or NULL */
    uint32_t ready_concurrency;
    bool done_pending;
    char *done_error;
    bool done_has_stats;
    Stampede__WorkerStats done_stats;

    uint8_t *buf;
    size_t buf_cap;
};

static int64_t reported_now(const agent_t *self) {
    return loop_now_ns() + self->options.clock_shift_ns;
}

static void drain(agent_socket_t *s);

/* Packs env (version, run and seq filled here) and sends it without blocking: 0 sent, -1 not. */
static int send_envelope(agent_t *self, agent_socket_t *s, Stampede__Envelope *env) {
    env->proto_version = self->options.proto_version;
    env->seq = ++self->seq;
    size_t len = envelope_pack(env, &self->buf, &self->buf_cap);
    if (!len)
        return -1;
    int rc = zmq_send(s->sock, self->buf, len, ZMQ_DONTWAIT);
    drain(s);
    return rc < 0 ? -1 : 0;
}

static void send_hello(agent_t *self) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    Stampede__Hello hello = STAMPEDE__HELLO__INIT;
    hello.proto_version = self->options.proto_version;
    hello.name = self->name;
    hello.host = host;
    hello.pid = (uint32_t)getpid();
    hello.thread = self->options.thread;
    hello.threads = self->options.threads;
    hello.capacity = self->options.capacity;
    hello.version = STAMPEDE_VERSION;
    hello.max_message_size = (uint64_t)self->options.max_control_bytes;
    if (self->options.has_job_index) {
        hello._job_index_case = STAMPEDE__HELLO___JOB_INDEX_JOB_INDEX;
        hello.job_index = self->options.job_index;
    }
    /* A run whose batches this loop still holds: a controller that knows it takes them. */
    Stampede__HeldRun held = STAMPEDE__HELD_RUN__INIT;
    if (self->cb.held && self->cb.held(self->arg, &held))
        hello.held = &held;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    env.run_id = 0; /* a Hello belongs to no run: the Welcome says which run still counts us */
    send_envelope(self, &self->ctl, &env);
}

static void send_ready(agent_t *self) {
    Stampede__Ready ready = STAMPEDE__READY__INIT;
    ready.ok = self->ready_ok;
    ready.error = self->ready_error ? self->ready_error : (char *)"";
    ready.concurrency = self->ready_concurrency;
    ready.server_said = self->ready_said ? self->ready_said : (char *)"";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_READY;
    env.ready = &ready;
    env.run_id = self->run_id;
    if (send_envelope(self, &self->ctl, &env) == 0)
        self->ready_pending = false;
}

static void send_done(agent_t *self) {
    Stampede__Done done = STAMPEDE__DONE__INIT;
    done.last_seq = events_last_seq(self->events);
    done.records = events_records(self->events);
    done.dropped = events_dropped(self->events);
    done.error = self->done_error ? self->done_error : (char *)"";
    if (self->done_has_stats)
        done.stats = &self->done_stats;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_DONE;
    env.done = &done;
    env.run_id = self->run_id;
    send_envelope(self, &self->ctl, &env);
}

static void send_heartbeat(agent_t *self) {
    agent_status_t status = {0};
    if (self->cb.status)
        self->cb.status(self->arg, &status);
    Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
    hb.sent_ns = reported_now(self);
    hb.inflight = status.inflight;
    hb.requests_done = status.requests_done;
    hb.unacked = events_unacked(self->events);
    hb.dropped = events_dropped(self->events);
    hb.state = (uint32_t)status.state;
    hb.session_frontier = status.session_frontier;
    hb.sessions_started = status.sessions_started;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    env.run_id = self->run_id;
    send_envelope(self, &self->ctl, &env);
}

static int send_batch(void *arg, const uint8_t *data, size_t len) {
    agent_t *self = arg;
    return zmq_send(self->data.sock, data, len, ZMQ_DONTWAIT) < 0 ? -1 : 0;
}

void agent_flush(agent_t *self) {
    if (!self->data_endpoint)
        return;
    if (events_flush(self->events, send_batch, self) > 0)
        drain(&self->data);
}

/* "tcp://host:5555" with the port replaced; NULL when the endpoint has no port. */
static char *endpoint_with_port(const char *endpoint, uint32_t port) {
    const char *colon = strrchr(endpoint, ':');
    if (!colon || colon < strstr(endpoint, "://") + 3)
        return NULL;
    size_t head = (size_t)(colon - endpoint);
    char *out = malloc(head + 16);
    if (out)
        snprintf(out, head + 16, "%.*s:%u", (int)head, endpoint, port);
    return out;
}

static void connect_data(agent_t *self, uint32_t port) {
    char *ep = endpoint_with_port(self->endpoint, port);
    if (!ep)
        return;
    if (self->data_endpoint && strcmp(ep, self->data_endpoint) == 0) {
        free(ep);
        return;
    }
    if (self->data_endpoint) {
        zmq_disconnect(self->data.sock, self->data_endpoint);
        free(self->data_endpoint);
        self->data_endpoint = NULL;
    }
    if (zmq_connect(self->data.sock, ep) != 0) {
        fprintf(stderr, "worker %s: cannot connect the data socket to %s: %s\n", self->name, ep,
                zmq_strerror(errno));
        free(ep);
        return;
    }
    self->data_endpoint = ep;
    drain(&self->data);
}

static void handle_welcome(agent_t *self, const Stampede__Envelope *env) {
    const Stampede__Welcome *w = env->welcome;
    if (!w->accepted) {
        if (self->cb.refused)
            self->cb.refused(self->arg,
                             w->refusal && *w->refusal ? w->refusal : "refused by the controller");
        return;
    }
    /* Hellos queued while the controller was away arrive together and are each welcomed: only
     * the first Welcome of a registration counts. */
    bool again = self->welcomed;
    self->welcomed = true;
    if (!again)
        self->have_offset = false; /* a new registration: the offset is measured again */
    if (w->heartbeat_ms)
        self->heartbeat_ns = (int64_t)w->heartbeat_ms * 1000000;
    if (w->heartbeat_ms && w->liveness)
        self->options.liveness_ns = (int64_t)w->liveness * self->heartbeat_ns;
    if (w->data_port)
        connect_data(self, w->data_port);
    if (!again && self->cb.welcome)
        self->cb.welcome(self->arg, env->run_id, w);
    /* Welcomed into the run it holds batches of (a restarted controller taking them over, or the
     * same one after a cut): what went out before the Welcome may have been dropped as a
     * stranger's, so every unacknowledged batch goes again (duplicates are dropped by sequence). */
    if (!again && env->run_id && env->run_id == self->run_id) {
        events_rewind(self->events);
        agent_flush(self);
    }
}

static void handle_probe(agent_t *self, const Stampede__Envelope *env, int64_t rx_ns) {
    Stampede__ClockProbe probe = *env->probe;
    probe.t2 = rx_ns + self->options.clock_shift_ns;
    Stampede__Envelope reply = STAMPEDE__ENVELOPE__INIT;
    reply.body_case = STAMPEDE__ENVELOPE__BODY_PROBE;
    reply.probe = &probe;
    reply.run_id = env->run_id;
    probe.t3 = reported_now(self);
    send_envelope(self, &self->ctl, &reply);
}

/* Liveness evidence. Before the offset is known, any message counts when it is read. Once it is
 * known (a run is assigned), only a heartbeat counts, as of the instant the controller SENT it:
 * after this worker was itself frozen (SIGSTOP, a stalled host), heartbeats queued during the
 * freeze are old news, and reading them late must not make a vanished controller look alive. */
static void note_alive(agent_t *self, const Stampede__Envelope *env, int64_t rx_ns) {
    if (!self->have_offset) {
        self->last_rx_ns = rx_ns;
        return;
    }
    if (env->body_case != STAMPEDE__ENVELOPE__BODY_HEARTBEAT || env->heartbeat->sent_ns <= 0)
        return;
    int64_t sent = env->heartbeat->sent_ns + self->offset_ns - self->options.clock_shift_ns;
    if (sent > rx_ns)
        sent = rx_ns; /* the offset's error (at most half the probe RTT) */
    if (sent > self->last_rx_ns)
        self->last_rx_ns = sent;
}

/* A message of the controller's on socket `which` ("control", "data") unpacked, the liveness it
 * gives noted; NULL after saying why when it does not decode. The caller frees it. */
static Stampede__Envelope *receive(agent_t *self, const char *which, const uint8_t *data,
                                   size_t len, int64_t rx_ns) {
    bool over = false;
    Stampede__Envelope *env =
        envelope_unpack_bounded(data, len, len + ENVELOPE_UNPACK_SLACK, &over);
    if (!env) {
        fprintf(stderr,
                "worker %s: undecodable %s message (%zu bytes) from the controller at %s "
                "ignored: %s\n",
                self->name, which, len, self->endpoint,
                over ? "unpacking it needs more than its length plus 1 MiB"
                     : "it is not a valid protobuf Envelope");
        return NULL;
    }
    note_alive(self, env, rx_ns);
    return env;
}

static void handle_control(agent_t *self, const uint8_t *data, size_t len, int64_t rx_ns) {
    Stampede__Envelope *env = receive(self, "control", data, len, rx_ns);
    if (!env)
        return;
    switch (env->body_case) {
    case STAMPEDE__ENVELOPE__BODY_WELCOME:
        handle_welcome(self, env);
        break;
    case STAMPEDE__ENVELOPE__BODY_PROBE:
        handle_probe(self, env, rx_ns);
        break;
    case STAMPEDE__ENVELOPE__BODY_ASSIGN:
        self->offset_ns = env->assign->offset_ns;
        self->have_offset = true;
        if (env->assign->heartbeat_ms)
            self->heartbeat_ns = (int64_t)env->assign->heartbeat_ms * 1000000;
        if (env->assign->liveness)
            self->options.liveness_ns = (int64_t)env->assign->liveness * self->heartbeat_ns;
        if (self->welcomed && self->cb.assign)
            self->cb.assign(self->arg, env->run_id, env->assign);
        break;
    case STAMPEDE__ENVELOPE__BODY_START:
        if (self->welcomed && env->run_id == self->run_id && self->cb.start) {
            /* The controller's instant on our reported clock, then back to our real clock. */
            int64_t start = env->start->start_ns + env->start->offset_ns;
            if (env->start->session_limit && self->cb.limit)
                self->cb.limit(self->arg, env->run_id, env->start->session_limit);
            self->cb.start(self->arg, env->run_id, start - self->options.clock_shift_ns);
        }
        break;
    case STAMPEDE__ENVELOPE__BODY_STOP:
        if (self->cb.stop)
            self->cb.stop(self->arg, env->run_id, env->stop);
        break;
    case STAMPEDE__ENVELOPE__BODY_HEARTBEAT:
        if (env->heartbeat->session_limit && self->welcomed && env->run_id == self->run_id &&
            self->cb.limit)
            self->cb.limit(self->arg, env->run_id, env->heartbeat->session_limit);
        break;
    case STAMPEDE__ENVELOPE__BODY_REBALANCE:
        if (self->welcomed && env->run_id == self->run_id && self->cb.rebalance)
            self->cb.rebalance(self->arg, env->run_id, env->rebalance);
        break;
    default:
        /* A body this build does not know (a newer controller): liveness only. */
        break;
    }
    envelope_free(env);
}

static void handle_data(agent_t *self, const uint8_t *data, size_t len, int64_t rx_ns) {
    Stampede__Envelope *env = receive(self, "data", data, len, rx_ns);
    if (!env)
        return;
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_ACK && env->run_id == self->run_id)
        events_ack(self->events, env->ack->up_to_seq);
    envelope_free(env);
}

static void drain(agent_socket_t *s) {
    if (s->draining) {
        s->draining = 2; /* the outer drain loop checks again */
        return;
    }
    agent_t *self = s->agent;
    for (;;) {
        s->draining = 1;
        int events = 0;
        size_t size = sizeof events;
        if (zmq_getsockopt(s->sock, ZMQ_EVENTS, &events, &size) != 0 || !(events & ZMQ_POLLIN))
            break;
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, s->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&msg);
            break;
        }
        int64_t rx_ns = loop_now_ns();
        s->handle(self, zmq_msg_data(&msg), zmq_msg_size(&msg), rx_ns);
        zmq_msg_close(&msg);
    }
    s->draining = 0;
}

static void on_socket(loop_t *loop, int fd, int mask, void *arg) {
    drain(arg);
}

/* A controller that refuses our key, or handshakes that keep failing (keys that do not match,
 * CURVE on one side only), will not change by retrying: say why and give up (-1). A control
 * connection that closes after its handshake is logged with the limit that may have closed it. */
static int on_handshake_event(agent_t *self, agent_monitor_t *m, uint16_t event, uint32_t value) {
    char why[512];
    switch (event) {
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        self->failed_handshakes = 0;
        if (!m->is_data)
            self->handshaken = true;
        return 0;
    case ZMQ_EVENT_DISCONNECTED:
        if (!m->is_data && self->handshaken)
            fprintf(stderr,
                    "worker %s: the control connection to %s closed (the controller left, or a "
                    "message over --max-message-size %lld bytes)\n",
                    self->name, self->endpoint, (long long)self->options.max_control_bytes);
        if (!m->is_data)
            self->handshaken = false;
        return 0;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        snprintf(why, sizeof why,
                 "the controller at %s refused this worker's key %s (ZAP status %u): copy the "
                 "worker's NAME.pub into the controller's --authorized-keys directory",
                 self->endpoint, self->options.public_key ? self->options.public_key : "(none)",
                 value);
        break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        /* After a protocol error of its own (a mechanism mismatch) libzmq never reconnects; when
         * the controller closes the handshake (a wrong server key) it does, and a few tries rule
         * out a controller that merely went away during one. */
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL &&
            ++self->failed_handshakes < AGENT_HANDSHAKE_ATTEMPTS)
            return 0;
        snprintf(why, sizeof why, "the handshake with %s failed (%s): %s", self->endpoint,
                 value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH ? "security mechanism mismatch"
                 : event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                     ? "protocol error"
                     : "the controller closed it, several times in a row",
                 self->options.server_key
                     ? "--server-key is not the controller's public key, or the controller runs "
                       "without --key"
                     : "the controller wants CURVE keys: pass --key worker.key --server-key "
                       "controller.pub (docs/security.md)");
        break;
    default:
        return 0;
    }
    if (!self->gave_up && self->cb.refused)
        self->cb.refused(self->arg, why);
    self->gave_up = true;
    return -1;
}

/* The control connection's attempts: a controller not up yet (its Service not resolvable, its
 * port closed) is retried with backoff by libzmq; the first failure, then one every
 * AGENT_RETRY_LOG_NS, and the connection that finally works are logged. */
static void log_connect_retry(agent_t *self, uint16_t event, uint32_t value) {
    int64_t now = loop_now_ns();
    if (event == ZMQ_EVENT_CONNECT_RETRIED) {
        if (!self->connect_retries++)
            self->retries_since_ns = now;
        if (self->connect_retries == 1 || now - self->retry_logged_ns >= AGENT_RETRY_LOG_NS) {
            self->retry_logged_ns = now;
            fprintf(stderr,
                    "worker %s: the controller at %s is not reachable yet (attempt %u, %.0f s); "
                    "retrying in %u ms\n",
                    self->name, self->endpoint, self->connect_retries,
                    (now - self->retries_since_ns) / 1e9, value);
        }
    } else if (event == ZMQ_EVENT_CONNECTED && self->connect_retries) {
        fprintf(stderr, "worker %s: connected to %s after %u failed attempt%s over %.1f s\n",
                self->name, self->endpoint, self->connect_retries,
                self->connect_retries == 1 ? "" : "s", (now - self->retries_since_ns) / 1e9);
        self->connect_retries = 0;
    }
}

static void on_monitor(loop_t *loop, int fd, int mask, void *arg) {
    agent_monitor_t *m = arg;
    agent_t *self = m->agent;
    for (;;) {
        int events = 0;
        size_t size = sizeof events;
        if (zmq_getsockopt(m->sock, ZMQ_EVENTS, &events, &size) != 0 || !(events & ZMQ_POLLIN))
            break;
        uint16_t event;
        uint32_t value;
        if (zmq_monitor_read(m->sock, &event, &value) != 0)
            break;
        if (on_handshake_event(self, m, event, value) != 0)
            return; /* refused: the loop is stopping */
        if (!m->is_data)
            log_connect_retry(self, event, value);
        if (event != ZMQ_EVENT_CONNECTED)
            continue;
        if (m->is_data) {
            /* Whatever was in flight on the old connection may be lost: send it all again;
             * the controller drops what it already has by sequence number. */
            events_rewind(self->events);
            agent_flush(self);
        } else {
            /* A new control connection may reach a new controller: register (again). */
            self->welcomed = false;
            send_hello(self);
        }
    }
}

static void on_timer(loop_t *loop, uint64_t id, void *arg) {
    agent_t *self = arg;
    int64_t now = loop_now_ns();
    if (!self->welcomed) {
        /* Not registered: the status callback still runs, for its give-up rules (--once,
         * --idle-exit) while the controller is gone. */
        agent_status_t status = {0};
        if (self->cb.status)
            self->cb.status(self->arg, &status);
        send_hello(self);
    } else if (now - self->last_rx_ns > self->options.liveness_ns) {
        self->welcomed = false;
        self->have_offset = false;
        fprintf(stderr, "worker %s: no word from the controller for %.1f s\n", self->name,
                (now - self->last_rx_ns) / 1e9);
        if (self->cb.lost)
            self->cb.lost(self->arg);
        send_hello(self);
    } else {
        send_heartbeat(self);
        if (self->ready_pending)
            send_ready(self);
        if (self->done_pending)
            send_done(self);
    }
    agent_flush(self);
    self->timer = loop_timer_at(self->loop, now + self->heartbeat_ns, on_timer, self);
}

static int set_int(void *sock, int option, int value) {
    return zmq_setsockopt(sock, option, &value, sizeof value);
}

static void *make_socket(agent_t *self, int linger, int64_t max_bytes) {
    void *sock = zmq_socket(self->ctx, ZMQ_DEALER);
    if (!sock)
        return NULL;
    zmq_setsockopt(sock, ZMQ_ROUTING_ID, self->routing_id, strlen(self->routing_id));
    /* No ZMQ_IMMEDIATE: with it the pipe dies with its connection, and messages received but
     * not yet read die too (measured: a Stop sent just before the controller exits was lost in
     * 1 run of 20). Without it, what is sent while disconnected waits for the reconnect; stale
     * Hellos, heartbeats and Dones are harmless (the controller matches runs and rounds). */
    set_int(sock, ZMQ_LINGER, linger);
    set_int(sock, ZMQ_HEARTBEAT_IVL, 1000);
    set_int(sock, ZMQ_HEARTBEAT_TIMEOUT, 3000);
    set_int(sock, ZMQ_HEARTBEAT_TTL, 3000);
    set_int(sock, ZMQ_RECONNECT_IVL, 100);
    set_int(sock, ZMQ_RECONNECT_IVL_MAX, 2000);
    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &max_bytes, sizeof max_bytes);
    const agent_options_t *o = &self->options;
    if (o->server_key &&
        (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, o->server_key, strlen(o->server_key)) != 0 ||
         zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, o->public_key, strlen(o->public_key)) != 0 ||
         zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, o->secret_key, strlen(o->secret_key)) != 0)) {
        zmq_close(sock);
        return NULL;
    }
    return sock;
}

static int watch_socket(agent_t *self, agent_socket_t *s, void *sock,
                        void (*handle)(agent_t *, const uint8_t *, size_t, int64_t)) {
    s->agent = self;
    s->sock = sock;
    s->handle = handle;
    size_t size = sizeof s->fd;
    if (zmq_getsockopt(sock, ZMQ_FD, &s->fd, &size) != 0)
        return -1;
    if (loop_watch(self->loop, s->fd, LOOP_READABLE, 1, on_socket, s) != 0)
        return -1;
    drain(s); /* arms the edge (see on_monitor's caller) */
    return 0;
}

static int start_monitor(agent_t *self, agent_monitor_t *m, void *sock, int is_data) {
    char ep[128];
    snprintf(ep, sizeof ep, "inproc://stampede-agent-%p-%d", (void *)self, is_data);
    if (zmq_socket_monitor(sock, ep, AGENT_MONITOR_EVENTS) != 0)
        return -1;
    m->agent = self;
    m->is_data = is_data;
    m->sock = zmq_socket(self->ctx, ZMQ_PAIR);
    if (!m->sock || zmq_connect(m->sock, ep) != 0)
        return -1;
    size_t size = sizeof m->fd;
    if (zmq_getsockopt(m->sock, ZMQ_FD, &m->fd, &size) != 0)
        return -1;
    if (loop_watch(self->loop, m->fd, LOOP_READABLE, 1, on_monitor, m) != 0)
        return -1;
    /* A ZeroMQ pipe signals its fd only once a read found it empty: drain now to arm it. */
    on_monitor(self->loop, m->fd, LOOP_READABLE, m);
    return 0;
}

agent_t *agent_new(void *zmq_ctx, loop_t *loop, events_t *events, const agent_options_t *options,
                   const agent_callbacks_t *callbacks, void *arg) {
    agent_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->ctx = zmq_ctx;
    self->loop = loop;
    self->events = events;
    self->options = *options;
    self->cb = *callbacks;
    self->arg = arg;
    self->endpoint = strdup(options->endpoint);
    self->name = strdup(options->name ? options->name : "worker");
    if (!self->options.proto_version)
        self->options.proto_version = PROTOCOL_VERSION;
    if (!self->options.heartbeat_ns)
        self->options.heartbeat_ns = 1000000000;
    if (!self->options.liveness_ns)
        self->options.liveness_ns = 3 * self->options.heartbeat_ns;
    self->heartbeat_ns = self->options.heartbeat_ns;
    if (!self->options.max_control_bytes)
        self->options.max_control_bytes = AGENT_MAX_CONTROL_BYTES;

    uint8_t rnd[8] = {0};
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        memcpy(rnd, &self, sizeof rnd < sizeof self ? sizeof rnd : sizeof self);
    int n = snprintf(self->routing_id, sizeof self->routing_id, "%.60s-", self->name);
    for (size_t i = 0; i < sizeof rnd && n + 2 < (int)sizeof self->routing_id; i++)
        n += snprintf(self->routing_id + n, sizeof self->routing_id - (size_t)n, "%02x", rnd[i]);

    void *ctl = make_socket(self, 500, self->options.max_control_bytes);
    void *data = make_socket(self, 2000, AGENT_MAX_DATA_BYTES);
    if (!self->endpoint || !self->name || !ctl || !data) {
        fprintf(stderr, "worker: cannot create sockets: %s\n", zmq_strerror(errno));
        if (ctl)
            zmq_close(ctl);
        if (data)
            zmq_close(data);
        free(self->endpoint);
        free(self->name);
        free(self);
        return NULL;
    }
    self->ctl.sock = ctl;
    self->data.sock = data;
    if (watch_socket(self, &self->ctl, ctl, handle_control) != 0 ||
        watch_socket(self, &self->data, data, handle_data) != 0 ||
        start_monitor(self, &self->ctl_mon, ctl, 0) != 0 ||
        start_monitor(self, &self->data_mon, data, 1) != 0) {
        fprintf(stderr, "worker %s: cannot set up sockets: %s\n", self->name, zmq_strerror(errno));
        agent_destroy(&self);
        return NULL;
    }
    if (zmq_connect(ctl, self->endpoint) != 0) {
        fprintf(stderr, "worker %s: cannot connect to %s: %s\n", self->name, self->endpoint,
                zmq_strerror(errno));
        agent_destroy(&self);
        return NULL;
    }
    drain(&self->ctl);
    self->last_rx_ns = loop_now_ns();
    self->timer = loop_timer_at(loop, loop_now_ns() + self->heartbeat_ns, on_timer, self);
    return self;
}

static void close_monitor(agent_t *self, agent_monitor_t *m, void *watched) {
    if (!m->sock)
        return;
    loop_unwatch(self->loop, m->fd);
    if (watched)
        zmq_socket_monitor(watched, NULL, 0);
    zmq_close(m->sock);
    m->sock = NULL;
}

void agent_destroy(agent_t **self_p) {
    agent_t *self = *self_p;
    if (!self)
        return;
    loop_timer_cancel(self->loop, self->timer);
    close_monitor(self, &self->ctl_mon, self->ctl.sock);
    close_monitor(self, &self->data_mon, self->data.sock);
    if (self->ctl.sock) {
        loop_unwatch(self->loop, self->ctl.fd);
        zmq_close(self->ctl.sock);
    }
    if (self->data.sock) {
        loop_unwatch(self->loop, self->data.fd);
        zmq_close(self->data.sock);
    }
    free(self->data_endpoint);
    free(self->endpoint);
    free(self->name);
    free(self->ready_error);
    free(self->ready_said);
    free(self->done_error);
    free(self->buf);
    free(self);
    *self_p = NULL;
}

int agent_send_ready(agent_t *self, bool ok, const char *error, uint32_t concurrency,
                     const char *server_said) {
    free(self->ready_error);
    self->ready_error = error ? strdup(error) : NULL;
    free(self->ready_said);
    self->ready_said = server_said ? strdup(server_said) : NULL;
    self->ready_ok = ok;
    self->ready_concurrency = concurrency;
    self->ready_pending = true;
    send_ready(self);
    return 0;
}

void agent_send_done(agent_t *self, const char *error, const Stampede__WorkerStats *stats) {
    free(self->done_error);
    self->done_error = error ? strdup(error) : NULL;
    self->done_has_stats = stats != NULL;
    if (stats)
        self->done_stats = *stats;
    self->done_pending = true;
    agent_flush(self);
    send_done(self);
}

void agent_clear_done(agent_t *self) {
    self->done_pending = false;
    self->ready_pending = false;
}

void agent_send_goodbye(agent_t *self, const char *reason, const char *spool) {
    Stampede__Goodbye bye = STAMPEDE__GOODBYE__INIT;
    bye.reason = (char *)(reason ? reason : "");
    bye.last_seq = events_last_seq(self->events);
    bye.records = events_records(self->events);
    bye.acked_seq = events_acked_seq(self->events);
    bye.spool = (char *)(spool ? spool : "");
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    env.run_id = self->run_id;
    send_envelope(self, &self->ctl, &env);
}

bool agent_link_up(const agent_t *self) {
    return self->handshaken;
}

bool agent_connected(const agent_t *self) {
    return self->welcomed;
}

void agent_heartbeat_now(agent_t *self) {
    if (self->welcomed)
        send_heartbeat(self);
}

void agent_set_run(agent_t *self, uint64_t run_id) {
    self->run_id = run_id;
}
