#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zmq.h>

#include "config.h"
#include "outfile.h"
#include "rig_internal.h"
#include "rig_wire.h"

#define RIG_FETCH_MAX_FILES 512

int rig_send(rig_t *self, const uint8_t *id, size_t id_len, json_t *msg, const char *const *frames,
             const size_t *frame_lens, size_t n_frames) {
    int rc = zmq_send(self->users, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
                     rig_wire_send(self->users, msg, n_frames > 0) != 0
                 ? -1
                 : 0;
    for (size_t i = 0; rc == 0 && i < n_frames; i++)
        if (zmq_send(self->users, frames[i], frame_lens[i],
                     ZMQ_DONTWAIT | (i + 1 < n_frames ? ZMQ_SNDMORE : 0)) < 0)
            rc = -1;
    json_decref(msg);
    return rc;
}

void rig_follow(rig_t *self, const uint8_t *id, size_t id_len, int64_t run) {
    if (id_len > RIG_PEER_MAX)
        return;
    if (self->n_followers == self->cap_followers) {
        size_t cap = self->cap_followers ? 2 * self->cap_followers : 8;
        rig_follower_t *more = realloc(self->followers, cap * sizeof *more);
        if (!more)
            return;
        self->followers = more;
        self->cap_followers = cap;
    }
    rig_follower_t *f = &self->followers[self->n_followers++];
    memcpy(f->id, id, id_len);
    f->id_len = id_len;
    f->run = run;
}

void rig_tell_followers(rig_t *self, int64_t run, json_t *event) {
    bool end = !strcmp(json_string_value(json_object_get(event, "event")) ?: "", "end");
    for (size_t i = 0; i < self->n_followers;) {
        rig_follower_t *f = &self->followers[i];
        if (f->run != run) {
            i++;
            continue;
        }
        /* A peer that detached (Ctrl-C) is unroutable: it stops following. */
        if (rig_send(self, f->id, f->id_len, json_incref(event), NULL, NULL, 0) != 0 || end)
            self->followers[i] = self->followers[--self->n_followers];
        else
            i++;
    }
    json_decref(event);
}

json_t *rig_end_event(rig_t *self, int64_t run) {
    json_t *row = archive_run_json(self->archive, run);
    char dir[4096], path[4200];
    archive_run_dir(self->archive, run, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" RIG_TABLE_FILE, dir);
    size_t len;
    char *table = outfile_read_all(path, &len);
    json_t *event = json_pack("{s:s, s:I, s:o, s:s}", "event", "end", "id", (json_int_t)run, "run",
                              row ? row : json_null(), "table", table ? table : "");
    free(table);
    return event;
}

rig_active_t *rig_active(rig_t *self, int64_t id) {
    for (size_t i = 0; id && i < RIG_MAX_RUNS; i++)
        if (self->active[i].id == id)
            return &self->active[i];
    return NULL;
}

rig_active_t *rig_active_on(rig_t *self, const char *group) {
    for (size_t i = 0; i < RIG_MAX_RUNS; i++)
        if (self->active[i].id && !strcmp(self->active[i].group, group))
            return &self->active[i];
    return NULL;
}

json_t *rig_running_json(const rig_t *self) {
    json_t *ids = json_array();
    int64_t after = 0;
    for (;;) { /* oldest first: the smallest id above the last one taken */
        int64_t next = 0;
        for (size_t i = 0; i < RIG_MAX_RUNS; i++)
            if (self->active[i].id > after && (!next || self->active[i].id < next))
                next = self->active[i].id;
        if (!next)
            return ids;
        json_array_append_new(ids, json_integer(next));
        after = next;
    }
}

int64_t rig_running(const rig_t *self) {
    int64_t oldest = 0;
    for (size_t i = 0; i < RIG_MAX_RUNS; i++)
        if (self->active[i].id && (!oldest || self->active[i].id < oldest))
            oldest = self->active[i].id;
    return oldest;
}

/* The user's name, as the gate named its key (keys_ring_user). */
static void user_of(zmq_msg_t *msg, char *user, size_t len) {
    const char *id = zmq_msg_gets(msg, "User-Id");
    snprintf(user, len, "%s", id ? id : "");
}

static const char *string_of(json_t *req, const char *key) {
    return json_string_value(json_object_get(req, key));
}

static void group_names(const rig_t *self, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < self->config.n_groups && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
                               self->config.groups[i].name);
}

/* The group a submission names, or the rig's only one. */
static const rig_group_t *group_of(rig_t *self, json_t *req, json_t **error) {
    const char *name = string_of(req, "group");
    char names[1024];
    group_names(self, names, sizeof names);
    if (!name && self->config.n_groups == 1)
        return &self->config.groups[0];
    if (!name) {
        *error = rig_wire_error("the rig has several groups (%s): say which with --group", names);
        return NULL;
    }
    const rig_group_t *g = rig_config_group(&self->config, name);
    if (!g)
        *error = rig_wire_error("the rig has no group '%s' (its groups: %s)", name, names);
    return g;
}

/* The workload as the run will load it (the group's endpoints applied): its model and redacted
 * config, or an error naming file, line and key. */
static json_t *check_workload(const rig_group_t *g, const char *text, const char *name,
                              char **config, char **model) {
    config_t cfg;
    config_error_t err;
    if (config_load_string(&cfg, text, strlen(text), name, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        return rig_wire_error("%s", msg);
    }
    json_t *error = NULL;
    if (config_set_endpoints(&cfg, g->urls, g->n_urls) != 0)
        error = rig_wire_error("%s: the endpoints of group %s do not apply to it", name, g->name);
    else if (!(*config = config_to_yaml(&cfg)))
        error = rig_wire_error("out of memory");
    *model = cfg.target.model ? strdup(cfg.target.model) : NULL;
    config_free(&cfg);
    return error;
}

static json_t *op_submit(rig_t *self, const uint8_t *id, size_t id_len, const char *user,
                         json_t *req) {
    const char *text = string_of(req, "workload");
    const char *name = string_of(req, "name") ? string_of(req, "name") : "workload.yaml";
    json_int_t priority = json_integer_value(json_object_get(req, "priority"));
    if (!text)
        return rig_wire_error("submit: no workload");
    if (priority && !rig_config_is_admin(&self->config, user))
        return rig_wire_error("only an admin of the rig may set a priority (%s is not one)", user);
    json_t *error = NULL;
    const rig_group_t *g = group_of(self, req, &error);
    if (!g)
        return error;
    char *config = NULL, *model = NULL;
    if ((error = check_workload(g, text, name, &config, &model))) {
        free(config);
        free(model);
        return error;
    }
    char digest[17], err[1024];
    snprintf(digest, sizeof digest, "%016" PRIx64, (uint64_t)XXH3_64bits(text, strlen(text)));
    archive_submission_t s = {.user = user,
                              .group = g->name,
                              .priority = (int)priority,
                              .workload_name = name,
                              .workload = text,
                              .file_digest = digest,
                              .model = model,
                              .config = config};
    int64_t run = archive_submit(self->archive, &s, err, sizeof err);
    free(config);
    free(model);
    if (run < 0)
        return rig_wire_error("%s", err);
    fprintf(stderr, "%s: run %lld queued by %s on %s (%s)\n", self->options.name, (long long)run,
            user, g->name, name);
    if (json_is_true(json_object_get(req, "follow")))
        rig_follow(self, id, id_len, run);
    return json_pack("{s:b, s:I, s:i, s:s, s:b}", "ok", 1, "id", (json_int_t)run, "place",
                     archive_place(self->archive, run), "group", g->name, "busy",
                     rig_active_on(self, g->name) != NULL);
}

static int64_t id_of(json_t *req) {
    return (int64_t)json_integer_value(json_object_get(req, "id"));
}

static json_t *op_show(rig_t *self, json_t *req) {
    json_t *run = archive_run_json(self->archive, id_of(req));
    if (!run)
        return rig_wire_error("no run %lld in the rig's archive", (long long)id_of(req));
    return json_pack("{s:b, s:o, s:i}", "ok", 1, "run", run, "place",
                     archive_place(self->archive, id_of(req)));
}

static json_t *op_list(rig_t *self, json_t *req) {
    json_int_t limit = json_integer_value(json_object_get(req, "limit"));
    return json_pack("{s:b, s:o, s:o, s:o}", "ok", 1, "runs",
                     archive_list_json(self->archive, string_of(req, "user"),
                                       string_of(req, "group"), string_of(req, "model"),
                                       string_of(req, "state"), limit ? (int)limit : 50),
                     "queue", archive_queue_json(self->archive), "running", rig_running_json(self));
}

/* Whether user may change run: its owner or an admin; an error reply when not. */
static json_t *refuse_other(rig_t *self, int64_t run, const char *user, const char *what,
                            char *state, size_t state_len) {
    char owner[RIG_USER_MAX];
    if (archive_lookup(self->archive, run, NULL, 0, owner, sizeof owner, state, state_len) != 0)
        return rig_wire_error("no run %lld in the rig's archive", (long long)run);
    if (strcmp(owner, user) && !rig_config_is_admin(&self->config, user))
        return rig_wire_error("run %lld is %s's: only %s or an admin of the rig may %s it",
                              (long long)run, owner, owner, what);
    return NULL;
}

static json_t *op_cancel(rig_t *self, json_t *req, const char *user) {
    int64_t run = id_of(req);
    char state[32];
    json_t *error = refuse_other(self, run, user, "cancel", state, sizeof state);
    if (error)
        return error;
    if (!strcmp(state, "queued") && archive_cancel_queued(self->archive, run, user) == 0) {
        fprintf(stderr, "%s: run %lld cancelled by %s before its start\n", self->options.name,
                (long long)run, user);
        rig_tell_followers(self, run, rig_end_event(self, run));
        return json_pack("{s:b, s:s}", "ok", 1, "state", "cancelled");
    }
    rig_active_t *active = rig_active(self, run);
    if (active) {
        if (!active->cancelled_by[0]) {
            snprintf(active->cancelled_by, sizeof active->cancelled_by, "%s", user);
            archive_cancelled_by(self->archive, run, user);
        }
        return json_pack("{s:b, s:s}", "ok", 1, "state", "stopping");
    }
    return rig_wire_error("run %lld is %s: nothing to cancel", (long long)run, state);
}

static json_t *op_pin(rig_t *self, json_t *req, const char *user) {
    int64_t run = id_of(req);
    json_t *error = refuse_other(self, run, user, "pin", NULL, 0);
    if (error)
        return error;
    bool pin = !json_is_false(json_object_get(req, "pin"));
    archive_pin(self->archive, run, pin);
    return json_pack("{s:b, s:b}", "ok", 1, "pinned", pin);
}

/* An admin moves a queued run: its new priority. */
static json_t *op_priority(rig_t *self, json_t *req, const char *user) {
    int64_t run = id_of(req);
    json_int_t priority = json_integer_value(json_object_get(req, "priority"));
    if (!rig_config_is_admin(&self->config, user))
        return rig_wire_error("only an admin of the rig may change a priority (%s is not one)",
                              user);
    if (priority < -1000 || priority > 1000)
        return rig_wire_error("a priority is a whole number in -1000..1000, not %lld",
                              (long long)priority);
    if (archive_set_priority(self->archive, run, (int)priority) != 0)
        return rig_wire_error("run %lld is not queued: its priority no longer matters",
                              (long long)run);
    fprintf(stderr, "%s: run %lld given priority %lld by %s\n", self->options.name, (long long)run,
            (long long)priority, user);
    return json_pack("{s:b, s:I, s:i}", "ok", 1, "priority", priority, "place",
                     archive_place(self->archive, run));
}

static json_t *op_follow(rig_t *self, const uint8_t *id, size_t id_len, json_t *req) {
    int64_t run = id_of(req);
    char state[32];
    if (archive_lookup(self->archive, run, NULL, 0, NULL, 0, state, sizeof state) != 0)
        return rig_wire_error("no run %lld in the rig's archive", (long long)run);
    if (!strcmp(state, "queued") || !strcmp(state, "running"))
        rig_follow(self, id, id_len, run);
    return json_pack("{s:b, s:s, s:i}", "ok", 1, "state", state, "place",
                     archive_place(self->archive, run));
}

/* The files of a run's directory, for a fetch: names relative to it, and their contents. */
typedef struct fetch_list {
    size_t root_len;
    char *names[RIG_FETCH_MAX_FILES];
    char *data[RIG_FETCH_MAX_FILES];
    size_t lens[RIG_FETCH_MAX_FILES];
    size_t n;
} fetch_list_t;

static fetch_list_t *fetching; /* nftw takes no argument */

static int add_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    if (flag != FTW_F || fetching->n == RIG_FETCH_MAX_FILES)
        return 0;
    size_t len;
    char *data = outfile_read_all(path, &len);
    if (!data)
        return 0;
    fetching->names[fetching->n] = strdup(path + fetching->root_len + 1);
    fetching->data[fetching->n] = data;
    fetching->lens[fetching->n++] = len;
    return 0;
}

static void op_fetch(rig_t *self, const uint8_t *id, size_t id_len, json_t *req) {
    int64_t run = id_of(req);
    char dir[4096], state[32];
    if (archive_lookup(self->archive, run, NULL, 0, NULL, 0, state, sizeof state) != 0) {
        rig_send(self, id, id_len,
                 rig_wire_error("no run %lld in the rig's archive", (long long)run), NULL, NULL, 0);
        return;
    }
    archive_run_dir(self->archive, run, dir, sizeof dir);
    fetch_list_t *list = calloc(1, sizeof *list);
    if (!list)
        return;
    list->root_len = strlen(dir);
    fetching = list;
    nftw(dir, add_file, 16, FTW_PHYS);
    fetching = NULL;
    json_t *files = json_array();
    for (size_t i = 0; i < list->n; i++)
        json_array_append_new(files, json_pack("{s:s, s:I}", "name", list->names[i] ?: "?", "size",
                                               (json_int_t)list->lens[i]));
    rig_send(self, id, id_len,
             json_pack("{s:b, s:I, s:s, s:o}", "ok", 1, "id", (json_int_t)run, "state", state,
                       "files", files),
             (const char *const *)list->data, list->lens, list->n);
    for (size_t i = 0; i < list->n; i++) {
        free(list->names[i]);
        free(list->data[i]);
    }
    free(list);
}

/* Answers one request of user from peer id. */
static void handle(rig_t *self, const uint8_t *id, size_t id_len, const char *user, json_t *req) {
    const char *op = string_of(req, "op") ? string_of(req, "op") : "";
    json_t *reply;
    if (!strcmp(op, "fetch")) {
        op_fetch(self, id, id_len, req);
        return;
    }
    if (!strcmp(op, "submit"))
        reply = op_submit(self, id, id_len, user, req);
    else if (!strcmp(op, "show"))
        reply = op_show(self, req);
    else if (!strcmp(op, "list"))
        reply = op_list(self, req);
    else if (!strcmp(op, "cancel"))
        reply = op_cancel(self, req, user);
    else if (!strcmp(op, "pin"))
        reply = op_pin(self, req, user);
    else if (!strcmp(op, "priority"))
        reply = op_priority(self, req, user);
    else if (!strcmp(op, "follow"))
        reply = op_follow(self, id, id_len, req);
    else
        reply = rig_wire_error(
            "unknown request '%s' (submit, list, show, cancel, pin, priority, follow, "
            "fetch)",
            op);
    json_object_set_new(reply, "user", json_string(user));
    rig_send(self, id, id_len, reply, NULL, NULL, 0);
}

void rig_ops_serve(rig_t *self) {
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        if (zmq_msg_recv(&id, self->users, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&id);
            return;
        }
        zmq_msg_init(&body);
        if (zmq_msg_more(&id) && zmq_msg_recv(&body, self->users, ZMQ_DONTWAIT) >= 0) {
            char user[RIG_USER_MAX], err[512];
            user_of(&body, user, sizeof user);
            json_t *req = rig_wire_parse(zmq_msg_data(&body), zmq_msg_size(&body), err, sizeof err);
            if (!user[0])
                rig_send(self, zmq_msg_data(&id), zmq_msg_size(&id),
                         rig_wire_error("the rig does not know who you are"), NULL, NULL, 0);
            else if (!req)
                rig_send(self, zmq_msg_data(&id), zmq_msg_size(&id),
                         rig_wire_error("a request that is %s", err), NULL, NULL, 0);
            else
                handle(self, zmq_msg_data(&id), zmq_msg_size(&id), user, req);
            json_decref(req);
            while (zmq_msg_more(&body)) { /* extra frames are not ours */
                zmq_msg_close(&body);
                zmq_msg_init(&body);
                if (zmq_msg_recv(&body, self->users, ZMQ_DONTWAIT) < 0)
                    break;
            }
        }
        zmq_msg_close(&body);
        zmq_msg_close(&id);
    }
}
