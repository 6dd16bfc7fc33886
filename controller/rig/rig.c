#include "rig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "rig_internal.h"
#include "rig_wire.h"
#include "units.h"

#define RIG_ZAP_DOMAIN "stampede-rig"

/* The workers' endpoint when --worker-bind is not given: the users' host, their port + 1. */
static int default_worker_bind(rig_t *self) {
    const char *bind = self->options.bind;
    const char *colon = strrchr(bind, ':');
    if (strncmp(bind, "tcp://", 6) != 0 || !colon || colon < bind + 6) {
        fprintf(stderr, "%s: --bind %s: expected tcp://HOST:PORT (PORT may be *)\n",
                self->options.name, bind);
        return -1;
    }
    if (self->options.worker_bind)
        snprintf(self->worker_bind, sizeof self->worker_bind, "%s", self->options.worker_bind);
    else if (!strcmp(colon + 1, "*") || !strcmp(colon + 1, "0"))
        snprintf(self->worker_bind, sizeof self->worker_bind, "%.*s:*", (int)(colon - bind), bind);
    else
        snprintf(self->worker_bind, sizeof self->worker_bind, "%.*s:%lu", (int)(colon - bind), bind,
                 strtoul(colon + 1, NULL, 10) + 1);
    return 0;
}

/* The users' ROUTER: CURVE with the rig's key, a ZAP handler of its own (controller/gate.h) that
 * admits the --authorized-keys ring and names each user by its key file (keys_ring_user). */
static int bind_users(rig_t *self) {
    const char *name = self->options.name;
    char err[1024], secret[KEYS_Z85_LEN + 1], public_key[KEYS_Z85_LEN + 1];
    if (keys_read_secret(self->options.key_file, secret, public_key, err, sizeof err) != 0 ||
        !(self->ring = keys_ring_load(self->options.authorized_keys, err, sizeof err))) {
        fprintf(stderr, "%s: %s\n", name, err);
        return -1;
    }
    self->ctx = zmq_ctx_new();
    if (!self->ctx ||
        !(self->gate = gate_new(self->ctx, self->ring, self->options.authorized_keys, name, "user",
                                err, sizeof err)) ||
        gate_start(self->gate, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, self->ctx ? err : "cannot create a ZeroMQ context");
        return -1;
    }
    int one = 1, linger = 1000;
    int64_t max_bytes = RIG_WIRE_MAX_REQUEST_BYTES;
    self->users = zmq_socket(self->ctx, ZMQ_ROUTER);
    if (!self->users || zmq_setsockopt(self->users, ZMQ_ROUTER_MANDATORY, &one, sizeof one) ||
        zmq_setsockopt(self->users, ZMQ_LINGER, &linger, sizeof linger) ||
        zmq_setsockopt(self->users, ZMQ_MAXMSGSIZE, &max_bytes, sizeof max_bytes) ||
        zmq_setsockopt(self->users, ZMQ_CURVE_SERVER, &one, sizeof one) ||
        zmq_setsockopt(self->users, ZMQ_CURVE_SECRETKEY, secret, KEYS_Z85_LEN) ||
        zmq_setsockopt(self->users, ZMQ_ZAP_DOMAIN, RIG_ZAP_DOMAIN, strlen(RIG_ZAP_DOMAIN)) ||
        zmq_bind(self->users, self->options.bind) != 0) {
        fprintf(stderr, "%s: cannot bind %s for users: %s\n", name, self->options.bind,
                zmq_strerror(errno));
        return -1;
    }
    memset(secret, 0, sizeof secret);
    size_t len = sizeof self->endpoint, fd_len = sizeof self->users_fd;
    zmq_getsockopt(self->users, ZMQ_LAST_ENDPOINT, self->endpoint, &len);
    zmq_getsockopt(self->users, ZMQ_FD, &self->users_fd, &fd_len);
    fprintf(stderr, "%s: users on %s (public key %s); %zu user key%s in %s\n", name, self->endpoint,
            public_key, keys_ring_count(self->ring), keys_ring_count(self->ring) == 1 ? "" : "s",
            self->options.authorized_keys);
    return 0;
}

/* The log's live line: one per $STAMPEDE_PROGRESS_INTERVAL, as a controller's, else per 10 s. */
static int64_t progress_ns(void) {
    const char *every = getenv("STAMPEDE_PROGRESS_INTERVAL");
    int64_t ns = 0;
    return every && units_parse_duration(every, &ns) == 0 && ns > 0 ? ns : 10000000000LL;
}

/* The page's requests: "/" (the page, filtered by its query), "/runs/ID/..." (a run's files). */
static int render_page(void *arg, const char *path, size_t len, buffer_t *out,
                       const char **content_type) {
    rig_t *self = arg;
    if (len == 1 && path[0] == '/') {
        size_t query_len;
        const char *query = live_http_query(path, len, &query_len);
        const rig_page_live_t *live[RIG_MAX_RUNS];
        size_t n = 0;
        json_t *running = rig_running_json(self), *id;
        size_t i;
        json_array_foreach(running, i, id) {
            live[n++] = &rig_active(self, json_integer_value(id))->page;
        }
        json_decref(running);
        *content_type = "text/html; charset=utf-8";
        return rig_page_render(self->archive, live, n, query, query_len, out);
    }
    if (len > 6 && !memcmp(path, "/runs/", 6)) {
        char root[4200];
        snprintf(root, sizeof root, "%s/runs", archive_dir(self->archive));
        return live_http_file(root, path + 6, len - 6, out, content_type);
    }
    *content_type = "text/plain; charset=utf-8";
    buffer_appendf(out, "not found: the rig's page is / and its runs' files /runs/ID/\n");
    return 404;
}

static int open_page(rig_t *self) {
    char why[1024];
    if (!self->options.page)
        return 0;
    if (!(self->page = live_http_new(self->options.page, &self->options.page_access, render_page,
                                     self, why, sizeof why))) {
        fprintf(stderr, "%s: --page %s: %s\n", self->options.name, self->options.page, why);
        return -1;
    }
    fprintf(stderr, "%s: the page on http://%s/%s\n", self->options.name,
            live_http_address(self->page),
            live_http_open_to_all(self->page) ? " (open to anyone: --page-insecure)" : "");
    return 0;
}

rig_t *rig_new(const rig_options_t *options) {
    rig_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->options = *options;
    const char *name = options->name ? options->name : "serve";
    self->options.name = name;
    char err[1024];
    if (!options->key_file || !options->authorized_keys || !options->archive ||
        !options->config_path) {
        fprintf(stderr,
                "%s: --key FILE, --authorized-keys DIR, --archive DIR and --config FILE are all "
                "needed: users are CURVE keys (docs/rig.md)\n",
                name);
        free(self);
        return NULL;
    }
    if (rig_config_load(&self->config, options->config_path, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        free(self);
        return NULL;
    }
    if (default_worker_bind(self) != 0 ||
        !(self->archive = archive_open(options->archive, err, sizeof err))) {
        if (!self->archive && self->worker_bind[0])
            fprintf(stderr, "%s: %s\n", name, err);
        rig_destroy(&self);
        return NULL;
    }
    rig_recover(self);
    if (open_page(self) != 0 || bind_users(self) != 0) {
        rig_destroy(&self);
        return NULL;
    }
    self->worker_security = (transport_security_t){
        .key_file = options->key_file,
        .authorized_keys = options->worker_keys ? options->worker_keys : options->authorized_keys};
    fleet_options_t fleet = {
        .name = name,
        .bind = self->worker_bind,
        .security = &self->worker_security,
        .expect_workers = options->expect_workers ? options->expect_workers : 1,
        .register_timeout_ns =
            options->register_timeout_ns ? options->register_timeout_ns : 60000000000LL,
        .grace_ns = 5000000000LL,
        .progress_ns = progress_ns()};
    if (!(self->fleet = fleet_new(&fleet))) {
        rig_destroy(&self);
        return NULL;
    }
    rig_recover_attach(self);
    fprintf(stderr, "%s: workers on %s; archive %s; %zu group%s\n", name,
            fleet_endpoint(self->fleet), options->archive, self->config.n_groups,
            self->config.n_groups == 1 ? "" : "s");
    return self;
}

/* Starts queued runs, highest priority then oldest, each on a group that runs nothing, while
 * the fleet has the workers each needs (once it has had --expect-workers: a worker lost later is
 * not waited for again, as in a controller's sweep, docs/protocol.md). A run whose group asks
 * for more workers than are free waits for them, and the runs queued after it wait too: it is
 * not starved by smaller ones. */
static void start_ready(rig_t *self) {
    uint32_t expect = self->options.expect_workers ? self->options.expect_workers : 1;
    self->quorum = self->quorum || fleet_workers_connected(self->fleet) >= expect;
    if (!self->quorum)
        return;
    for (size_t i = 0; i < RIG_MAX_RUNS && fleet_workers_free(self->fleet) > 0; i++) {
        if (self->active[i].id)
            continue;
        int64_t id = archive_next(self->archive, NULL);
        if (!id)
            return;
        char group[RIG_USER_MAX] = "";
        archive_lookup(self->archive, id, group, sizeof group, NULL, 0, NULL, 0);
        const rig_group_t *g = rig_config_group(&self->config, group);
        if (g && !rig_run_can_start(self, g))
            return;
        rig_run_start(self, &self->active[i], id);
    }
}

int rig_serve(rig_t *self) {
    fleet_catch_signals();
    for (;;) {
        rig_ops_serve(self);
        if (self->page)
            live_http_poll(self->page);
        bool stopping = fleet_signals() != 0; /* the runs drain; nothing new starts */
        if (!stopping)
            start_ready(self);
        if (stopping && !rig_running(self))
            break;
        int fds[2] = {self->users_fd, self->page ? live_http_fd(self->page) : -1};
        fleet_step(self->fleet, 100, fds, 2);
        for (size_t i = 0; i < RIG_MAX_RUNS; i++)
            if (self->active[i].id)
                rig_run_turn(self, &self->active[i]);
    }
    fleet_release_signals();
    fprintf(stderr, "%s: interrupted; the queue stays in %s\n", self->options.name,
            self->options.archive);
    return 0;
}

void rig_destroy(rig_t **self_p) {
    rig_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < RIG_MAX_RUNS; i++) {
        measurement_destroy(&self->active[i].run);
        sweep_run_destroy(&self->active[i].sweep);
    }
    fleet_destroy(&self->fleet);
    gate_destroy(&self->gate);
    if (self->users)
        zmq_close(self->users);
    if (self->ctx)
        zmq_ctx_term(self->ctx);
    keys_ring_destroy(&self->ring);
    archive_close(&self->archive);
    rig_config_free(&self->config);
    live_http_destroy(&self->page);
    free(self->followers);
    rig_recover_free(self);
    free(self);
    *self_p = NULL;
}
