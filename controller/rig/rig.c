#include "rig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "config_target.h"
#include "loop.h"
#include "measurement.h"
#include "outfile.h"
#include "redact.h"
#include "report.h"
#include "rig_internal.h"
#include "rig_wire.h"
#include "spool_merge.h"
#include "units.h"

#define RIG_ZAP_DOMAIN "stampede-rig"
#define RIG_LIVE_EVERY_NS 1000000000LL

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

/* A run found "running" when serve starts: serve died during it. What its journal holds is merged
 * into its directory (controller/spool_merge.h) and the run marked interrupted. */
static void recover(rig_t *self) {
    size_t n;
    int64_t *ids = archive_running(self->archive, &n);
    for (size_t i = 0; i < n; i++) {
        char dir[4096], journal[4200];
        archive_run_dir(self->archive, ids[i], dir, sizeof dir);
        snprintf(journal, sizeof journal, "%s/journal.spool", dir);
        struct stat st;
        int rc = 2;
        spool_merge_options_t merge = {.allow_invalid = true};
        if (stat(journal, &st) == 0)
            rc = spool_merge_run(dir, NULL, 0, &merge);
        const char *note = rc == 0   ? "serve stopped during the run: merged from its journal"
                           : rc == 2 ? "serve stopped during the run: nothing was journaled"
                                     : "serve stopped during the run: its journal did not merge";
        fprintf(stderr, "%s: run %lld was in progress when serve stopped: %s\n", self->options.name,
                (long long)ids[i], note + strlen("serve stopped during the run: "));
        archive_finished(self->archive, ids[i], "interrupted", rc, note);
    }
    free(ids);
}

/* After every turn of the fleet, for a run in progress: its followers get the live line (and the
 * page its figures, when it is the one shown), and a cancelled run is stopped. */
static void tend(rig_t *self, rig_active_t *a) {
    measurement_t *run = a->run;
    int64_t now = loop_now_ns();
    if (run->phase == PHASE_RUN && now >= a->next_live_ns) {
        a->next_live_ns = now + RIG_LIVE_EVERY_NS;
        live_t live;
        char line[512];
        merge_live(run->merge, now, measurement_inflight(run), &live);
        live.duration_s = (double)run->cfg.limits.duration_ns / 1e9;
        if (self->page_live->id == a->id)
            rig_page_live_add(self->page_live, &live);
        report_live_line(&live, line, sizeof line);
        rig_tell_followers(
            self, a->id,
            json_pack("{s:s, s:I, s:s}", "event", "live", "id", (json_int_t)a->id, "line", line));
    }
    if (a->cancelled_by[0] && !a->cancel_told) {
        a->cancel_told = true;
        char why[256];
        snprintf(why, sizeof why, "run %lld cancelled by %s", (long long)a->id, a->cancelled_by);
        fleet_stop(self->fleet, run, why);
    }
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
        *content_type = "text/html; charset=utf-8";
        return rig_page_render(self->archive, self->page_live, query, query_len, out);
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
    if (!(self->page_live = calloc(1, sizeof *self->page_live)))
        return -1;
    rig_page_live_begin(self->page_live, 0, NULL, NULL);
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
    recover(self);
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
    fprintf(stderr, "%s: workers on %s; archive %s; %zu group%s\n", name,
            fleet_endpoint(self->fleet), options->archive, self->config.n_groups,
            self->config.n_groups == 1 ? "" : "s");
    return self;
}

const char *rig_endpoint(const rig_t *self) {
    return self->endpoint;
}

const char *rig_worker_endpoint(const rig_t *self) {
    return fleet_endpoint(self->fleet);
}

/* The state a run ended in, from the fleet's exit status. */
static const char *end_state(const rig_active_t *a, int rc, bool started) {
    if (a->cancelled_by[0])
        return "cancelled";
    if (fleet_signals())
        return "interrupted";
    if (!started)
        return "failed";
    return rc == 0 || rc == 3 ? "done" : "failed";
}

/* The end table a run prints on stdout goes to DIR/table.txt as well as it would to a
 * controller's terminal: its followers get it, and fetch brings it. The saved stdout, or -1. */
static int capture_stdout(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/" RIG_TABLE_FILE, dir);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = outfile_open(path, 0);
    if (saved < 0 || fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        if (fd >= 0)
            close(fd);
        if (saved >= 0)
            close(saved);
        return -1;
    }
    close(fd);
    return saved;
}

static void release_stdout(int saved) {
    if (saved < 0)
        return;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
}

/* The queued file of a run, kept as DIR/workload.yaml with the secrets its config holds (secret
 * header values, a proxy's URL) replaced by REDACT_MARK: the queued copy is removed when the run
 * ends, and results.json's run.config names this one. 0 kept, -1 not (said in the log). */
static int keep_workload(rig_t *self, const measurement_t *run, const char *queued,
                         const char *kept) {
    size_t len;
    char *text = outfile_read_all(queued, &len);
    size_t cap = 3 * len + 1; /* a secret is at least REDACT_MIN_LEN bytes, the mark 10 */
    char *redacted = text ? malloc(cap) : NULL;
    int fd = redacted ? outfile_open(kept, 0) : -1;
    int rc = -1;
    if (fd >= 0) {
        memcpy(redacted, text, len + 1);
        const config_target_t *t = &run->cfg.target;
        for (size_t i = 0; i < t->n_headers; i++)
            if (config_header_is_secret(t->headers[i].name))
                redact_text(redacted, cap, t->headers[i].value);
        redact_text(redacted, cap, t->proxy_url);
        size_t n = strlen(redacted);
        rc = write(fd, redacted, n) == (ssize_t)n ? 0 : -1;
        rc = close(fd) == 0 ? rc : -1;
    }
    if (rc != 0)
        fleet_say(self->fleet, "cannot keep %s: %s", kept, strerror(errno ? errno : EIO));
    free(redacted);
    free(text);
    return rc;
}

/* The workers a run takes: an equal share of the fleet's among the rig's groups, rounded up, so a
 * run on another group finds workers free (a rig of one group gives each run every worker); no
 * more than are free. */
static uint32_t share_of(rig_t *self) {
    uint32_t workers = fleet_workers_connected(self->fleet), free = fleet_workers_free(self->fleet);
    uint32_t groups = self->config.n_groups ? (uint32_t)self->config.n_groups : 1;
    uint32_t share = (workers + groups - 1) / groups;
    share = share ? share : 1;
    return share < free ? share : free;
}

/* The page shows the oldest run in progress (none: nothing running). */
static void show_on_page(rig_t *self) {
    rig_active_t *a = rig_active(self, rig_running(self));
    if (!a)
        rig_page_live_begin(self->page_live, 0, NULL, NULL);
    else if (self->page_live->id != a->id)
        rig_page_live_begin(self->page_live, a->id, a->user, a->group);
}

/* Starts queued run id on its group with a share of the free workers. */
static void start_one(rig_t *self, rig_active_t *a, int64_t id) {
    memset(a, 0, sizeof *a);
    archive_lookup(self->archive, id, a->group, sizeof a->group, a->user, sizeof a->user, NULL, 0);
    archive_workload_path(self->archive, id, a->workload, sizeof a->workload);
    archive_run_dir(self->archive, id, a->dir, sizeof a->dir);
    const rig_group_t *group = rig_config_group(&self->config, a->group);
    if (!group) {
        archive_finished(self->archive, id, "failed", 1,
                         "its group is no longer in the rig's config");
        rig_tell_followers(self, id, rig_end_event(self, id));
        return;
    }
    uint32_t share = share_of(self);
    run_options_t o = {.name = self->options.name,
                       .targets = (const char *const *)group->urls,
                       .n_targets = group->n_urls,
                       .out_dir = a->dir,
                       .allow_invalid = true,
                       .expect_workers = share,
                       .register_timeout_ns = 60000000000LL};
    measurement_t *run = measurement_new(&o, a->workload, 1, 1);
    if (!run) {
        archive_finished(self->archive, id, "failed", 1,
                         "the workload did not load at its start (serve's log says why)");
        rig_tell_followers(self, id, rig_end_event(self, id));
        return;
    }
    snprintf(a->kept, sizeof a->kept, "%s/" RIG_WORKLOAD_FILE, a->dir);
    if (keep_workload(self, run, a->workload, a->kept) == 0)
        run->config_path = a->kept;
    if (fleet_start(self->fleet, run, share) != 0) { /* not while RIG_MAX_RUNS <= the fleet's */
        measurement_destroy(&run);
        archive_finished(self->archive, id, "failed", 1, "the fleet holds as many runs as it can");
        rig_tell_followers(self, id, rig_end_event(self, id));
        return;
    }
    a->id = id;
    a->run = run;
    a->workers = share;
    archive_started(self->archive, id, share);
    fleet_say(self->fleet, "run %lld of %s on %s (%s) starts on %u worker%s", (long long)id,
              a->user, group->name, a->workload, share, share == 1 ? "" : "s");
    rig_tell_followers(self, id,
                       json_pack("{s:s, s:I, s:s}", "event", "started", "id", (json_int_t)id,
                                 "group", group->name));
    show_on_page(self);
}

/* An over run: its results (the end table into its directory), its row, its followers told. */
static void finish_one(rig_t *self, rig_active_t *a) {
    measurement_t *run = a->run;
    int64_t id = a->id;
    bool started = false;
    int table = capture_stdout(a->dir);
    int rc = fleet_finish(self->fleet, run, &started);
    release_stdout(table);
    const char *state = end_state(a, rc, started);
    char note[1200] = "";
    if (run->abort_reason[0])
        snprintf(note, sizeof note, "%s", run->abort_reason);
    else if (a->cancelled_by[0])
        snprintf(note, sizeof note, "cancelled by %s", a->cancelled_by);
    if (run->start_unix_ns)
        archive_set_start(self->archive, id, run->start_unix_ns);
    measurement_destroy(&run);
    archive_finished(self->archive, id, state, rc, note[0] ? note : NULL);
    fleet_say(self->fleet, "run %lld %s (exit status %d)", (long long)id, state, rc);
    memset(a, 0, sizeof *a);
    show_on_page(self);
    rig_tell_followers(self, id, rig_end_event(self, id));
    int removed = archive_retain(self->archive, self->config.keep_runs, self->config.keep_age_s);
    if (removed > 0)
        fleet_say(self->fleet, "retention removed %d run%s", removed, removed == 1 ? "" : "s");
}

/* Starts every queued run whose group is free while the fleet has workers free for it (once it
 * has --expect-workers). */
static void start_ready(rig_t *self) {
    uint32_t expect = self->options.expect_workers ? self->options.expect_workers : 1;
    if (fleet_workers_connected(self->fleet) < expect)
        return;
    for (size_t i = 0; i < RIG_MAX_RUNS && fleet_workers_free(self->fleet) > 0; i++) {
        if (self->active[i].id)
            continue;
        int64_t id = archive_next(self->archive, NULL);
        if (!id)
            return;
        start_one(self, &self->active[i], id);
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
        for (size_t i = 0; i < RIG_MAX_RUNS; i++) {
            rig_active_t *a = &self->active[i];
            if (a->id && fleet_over(self->fleet, a->run))
                finish_one(self, a);
            else if (a->id)
                tend(self, a);
        }
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
    for (size_t i = 0; i < RIG_MAX_RUNS; i++)
        measurement_destroy(&self->active[i].run);
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
    free(self->page_live);
    free(self->followers);
    free(self);
    *self_p = NULL;
}
