#include "rig_client.h"

#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "keys.h"
#include "loop.h"
#include "outfile.h"
#include "rig_wire.h"
#include "zmq_monitor.h"

struct rig_client {
    rig_client_options_t options;
    void *ctx;
    void *sock;
    void *monitor;
    bool down;        /* the connection to the rig dropped; ZeroMQ is reconnecting */
    bool reconnected; /* a handshake succeeded again since it dropped, not yet asked about */
};

static int set_keys(rig_client_t *self) {
    char secret[KEYS_Z85_LEN + 1], public_key[KEYS_Z85_LEN + 1], server[KEYS_Z85_LEN + 1],
        err[1024];
    if (!self->options.key_file || !self->options.server_key_file) {
        fprintf(stderr,
                "%s: --key FILE and --server-key FILE are needed: the rig knows users by "
                "their CURVE key (docs/rig.md)\n",
                self->options.name);
        return -1;
    }
    if (keys_read_secret(self->options.key_file, secret, public_key, err, sizeof err) != 0 ||
        keys_read_public(self->options.server_key_file, server, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", self->options.name, err);
        return -1;
    }
    int rc = zmq_setsockopt(self->sock, ZMQ_CURVE_SERVERKEY, server, KEYS_Z85_LEN) ||
             zmq_setsockopt(self->sock, ZMQ_CURVE_PUBLICKEY, public_key, KEYS_Z85_LEN) ||
             zmq_setsockopt(self->sock, ZMQ_CURVE_SECRETKEY, secret, KEYS_Z85_LEN);
    memset(secret, 0, sizeof secret);
    return rc ? -1 : 0;
}

rig_client_t *rig_client_new(const rig_client_options_t *options) {
    rig_client_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->options = *options;
    if (!self->options.timeout_ns)
        self->options.timeout_ns = 10000000000LL;
    if (!options->to) {
        fprintf(stderr, "%s: --to tcp://HOST:PORT is needed: the rig's address\n", options->name);
        free(self);
        return NULL;
    }
    /* A rig that went away is tried again every 0.1 s, backing off to every 5 s; ZMTP heartbeats
     * notice one whose host vanished without closing the connection. */
    int linger = 0, reconnect_ms = RIG_CLIENT_RECONNECT_MS,
        reconnect_max_ms = RIG_CLIENT_RECONNECT_MAX_MS;
    int heartbeat_ms = 2000, heartbeat_timeout_ms = 6000;
    char monitor_ep[64];
    snprintf(monitor_ep, sizeof monitor_ep, "inproc://rig-client-%p", (void *)self);
    self->ctx = zmq_ctx_new();
    self->sock = self->ctx ? zmq_socket(self->ctx, ZMQ_DEALER) : NULL;
    if (!self->sock || zmq_setsockopt(self->sock, ZMQ_LINGER, &linger, sizeof linger) ||
        zmq_setsockopt(self->sock, ZMQ_RECONNECT_IVL, &reconnect_ms, sizeof reconnect_ms) ||
        zmq_setsockopt(self->sock, ZMQ_RECONNECT_IVL_MAX, &reconnect_max_ms,
                       sizeof reconnect_max_ms) ||
        zmq_setsockopt(self->sock, ZMQ_HEARTBEAT_IVL, &heartbeat_ms, sizeof heartbeat_ms) ||
        zmq_setsockopt(self->sock, ZMQ_HEARTBEAT_TIMEOUT, &heartbeat_timeout_ms,
                       sizeof heartbeat_timeout_ms) ||
        set_keys(self) != 0 ||
        zmq_socket_monitor(self->sock, monitor_ep,
                           ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_DISCONNECTED |
                               ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0 ||
        !(self->monitor = zmq_socket(self->ctx, ZMQ_PAIR)) ||
        zmq_connect(self->monitor, monitor_ep) != 0 || zmq_connect(self->sock, options->to) != 0) {
        if (self->sock)
            fprintf(stderr, "%s: cannot connect to %s: %s\n", options->name, options->to,
                    zmq_strerror(errno));
        rig_client_destroy(&self);
    }
    return self;
}

/* An event the monitor reported: a lost connection or one made again (said, and remembered for
 * rig_client_reconnected), or a handshake failure (said; 1). */
static int refused(rig_client_t *self) {
    uint16_t event;
    uint32_t value;
    if (zmq_monitor_read(self->monitor, &event, &value) != 0)
        return 0;
    if (event == ZMQ_EVENT_DISCONNECTED && !self->down) {
        self->down = true;
        fprintf(stderr,
                "%s: lost the rig at %s; trying again every %.1f s, backing off to every %.0f s "
                "(Ctrl-C to stop)\n",
                self->options.name, self->options.to, RIG_CLIENT_RECONNECT_MS / 1e3,
                RIG_CLIENT_RECONNECT_MAX_MS / 1e3);
        return 0;
    }
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        if (self->down)
            fprintf(stderr, "%s: the rig at %s is back\n", self->options.name, self->options.to);
        self->reconnected = self->down;
        self->down = false;
        return 0;
    }
    if (event == ZMQ_EVENT_DISCONNECTED)
        return 0;
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        fprintf(stderr,
                "%s: the rig at %s refused your key (%s): it is not in the rig's "
                "--authorized-keys\n",
                self->options.name, self->options.to, self->options.key_file);
    else if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
        fprintf(stderr, "%s: the handshake with %s failed: --server-key %s is not the rig's key\n",
                self->options.name, self->options.to, self->options.server_key_file);
    else
        fprintf(stderr, "%s: the handshake with %s failed (%s)\n", self->options.name,
                self->options.to,
                event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ? "a protocol error" : "no detail");
    return 1;
}

json_t *rig_client_next(rig_client_t *self, long timeout_ms, int *failed) {
    *failed = 0;
    int64_t end = loop_now_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        zmq_pollitem_t items[2] = {{self->sock, 0, ZMQ_POLLIN, 0},
                                   {self->monitor, 0, ZMQ_POLLIN, 0}};
        long left = (long)((end - loop_now_ns()) / 1000000);
        if (left < 0)
            return NULL;
        if (zmq_poll(items, 2, left) < 0) {
            if (errno == EINTR) { /* a signal: the caller decides */
                *failed = 0;
                return NULL;
            }
            continue;
        }
        if ((items[1].revents & ZMQ_POLLIN) && refused(self)) {
            *failed = 1;
            return NULL;
        }
        if (!(items[0].revents & ZMQ_POLLIN))
            continue;
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, self->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&msg);
            continue;
        }
        char err[256];
        json_t *reply = rig_wire_parse(zmq_msg_data(&msg), zmq_msg_size(&msg), err, sizeof err);
        bool more = zmq_msg_more(&msg);
        zmq_msg_close(&msg);
        if (!reply) {
            fprintf(stderr, "%s: the rig sent %s\n", self->options.name, err);
            *failed = 1;
            return NULL;
        }
        if (more) /* frames of a fetch are read by rig_client_fetch; elsewhere they are dropped */
            json_object_set_new(reply, "_more", json_true());
        return reply;
    }
}

bool rig_client_reconnected(rig_client_t *self) {
    bool back = self->reconnected;
    self->reconnected = false;
    return back;
}

json_t *rig_client_call(rig_client_t *self, json_t *req) {
    int rc = rig_wire_send(self->sock, req, false);
    json_decref(req);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot send to %s: %s\n", self->options.name, self->options.to,
                zmq_strerror(errno));
        return NULL;
    }
    int failed;
    json_t *reply = rig_client_next(self, (long)(self->options.timeout_ns / 1000000), &failed);
    if (!reply && !failed)
        fprintf(stderr,
                "%s: no answer from %s within %.0f s: is `stampede serve` running there, and is "
                "--server-key its public key?\n",
                self->options.name, self->options.to, self->options.timeout_ns / 1e9);
    return reply;
}

/* Writes one received frame to dir/name, refusing a name that climbs out of dir. */
static int write_frame(rig_client_t *self, const char *dir, const char *name, zmq_msg_t *frame) {
    if (!name || name[0] == '/' || strstr(name, "..")) {
        fprintf(stderr, "%s: the rig sent a file named '%s': refused\n", self->options.name,
                name ? name : "");
        return -1;
    }
    char path[4096], parent[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(parent, sizeof parent, "%s", path);
    FILE *f = NULL;
    if (outfile_make_dir(dirname(parent)) != 0 || !(f = outfile_fopen(path)) ||
        fwrite(zmq_msg_data(frame), 1, zmq_msg_size(frame), f) != zmq_msg_size(frame)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", self->options.name, path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

int rig_client_fetch(rig_client_t *self, int64_t id, const char *dir) {
    json_t *reply =
        rig_client_call(self, json_pack("{s:s, s:I}", "op", "fetch", "id", (json_int_t)id));
    if (!reply)
        return -1;
    if (!json_is_true(json_object_get(reply, "ok"))) {
        fprintf(stderr, "%s: %s\n", self->options.name,
                json_string_value(json_object_get(reply, "error")));
        json_decref(reply);
        return -1;
    }
    int rc = outfile_make_dir(dir);
    if (rc != 0)
        fprintf(stderr, "%s: cannot create %s: %s\n", self->options.name, dir, strerror(errno));
    json_t *files = json_object_get(reply, "files");
    bool more = json_is_true(json_object_get(reply, "_more"));
    for (size_t i = 0; more; i++) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        if (zmq_msg_recv(&frame, self->sock, 0) < 0) {
            zmq_msg_close(&frame);
            break;
        }
        more = zmq_msg_more(&frame);
        const char *name = json_string_value(json_object_get(json_array_get(files, i), "name"));
        if (rc == 0 && write_frame(self, dir, name, &frame) != 0)
            rc = -1;
        zmq_msg_close(&frame);
    }
    if (rc == 0)
        fprintf(stderr, "%s: run %lld (%s): %zu file%s into %s\n", self->options.name,
                (long long)id, json_string_value(json_object_get(reply, "state")),
                json_array_size(files), json_array_size(files) == 1 ? "" : "s", dir);
    json_decref(reply);
    return rc;
}

void rig_client_destroy(rig_client_t **self_p) {
    rig_client_t *self = *self_p;
    if (!self)
        return;
    if (self->sock) {
        zmq_socket_monitor(self->sock, NULL, 0);
        zmq_close(self->sock);
    }
    if (self->monitor)
        zmq_close(self->monitor);
    if (self->ctx)
        zmq_ctx_term(self->ctx);
    free(self);
    *self_p = NULL;
}
