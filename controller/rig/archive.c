#define _XOPEN_SOURCE 700
#include "archive.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"

struct archive {
    sqlite3 *db;
    char dir[3800];
};

/* The schema (docs/rig.md): one row per run, its levels' headline figures beside it. */
static const char *const SCHEMA =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA foreign_keys=ON;"
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " user TEXT NOT NULL,"
    " target_group TEXT NOT NULL,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL,"
    " submitted_at INTEGER NOT NULL,"
    " started_at INTEGER,"
    " ended_at INTEGER,"
    " workload_name TEXT,"
    " file_digest TEXT,"
    " workload_digest TEXT,"
    " model TEXT,"
    " config TEXT,"
    " run_id TEXT,"
    " workers INTEGER,"
    " exit_status INTEGER,"
    " valid INTEGER,"
    " reasons TEXT,"
    " note TEXT,"
    " cancelled_by TEXT,"
    " start_ns INTEGER,"
    " load_end_ns INTEGER,"
    " shared INTEGER,"
    " shared_reason TEXT,"
    " pinned INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS runs_queue ON runs(state, target_group, priority, id);"
    "CREATE TABLE IF NOT EXISTS levels ("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " level INTEGER NOT NULL,"
    " concurrency REAL,"
    " rate REAL,"
    " requests_ok INTEGER,"
    " requests_failed INTEGER,"
    " error_pct REAL,"
    " requests_per_s REAL,"
    " output_tokens_per_s REAL,"
    " ttft_p50_ms REAL,"
    " ttft_p99_ms REAL,"
    " itl_p50_ms REAL,"
    " tpot_p50_ms REAL,"
    " e2e_p50_ms REAL,"
    " e2e_p99_ms REAL,"
    " PRIMARY KEY (run, level));";

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

archive_t *archive_open(const char *dir, char *err, size_t errlen) {
    archive_t *self = calloc(1, sizeof *self);
    if (!self) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(self->dir, sizeof self->dir, "%s", dir);
    char path[4096];
    const char *const subdirs[] = {"runs", "queue"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
        if (outfile_make_dir(path) != 0) {
            fail(err, errlen, "--archive %s: cannot create %s: %s", dir, path, strerror(errno));
            archive_close(&self);
            return NULL;
        }
    }
    snprintf(path, sizeof path, "%s/rig.db", dir);
    char *why = NULL;
    if (sqlite3_open(path, &self->db) != SQLITE_OK ||
        sqlite3_busy_timeout(self->db, 5000) != SQLITE_OK ||
        sqlite3_exec(self->db, SCHEMA, NULL, NULL, &why) != SQLITE_OK) {
        fail(err, errlen, "--archive %s: cannot open %s: %s", dir, path,
             why ? why : sqlite3_errmsg(self->db));
        sqlite3_free(why);
        archive_close(&self);
        return NULL;
    }
    return self;
}

void archive_close(archive_t **self_p) {
    archive_t *self = *self_p;
    if (!self)
        return;
    sqlite3_close(self->db);
    free(self);
    *self_p = NULL;
}

const char *archive_dir(const archive_t *self) {
    return self->dir;
}

void archive_run_dir(const archive_t *self, int64_t id, char *buf, size_t len) {
    snprintf(buf, len, "%s/runs/%lld", self->dir, (long long)id);
}

void archive_workload_path(const archive_t *self, int64_t id, char *buf, size_t len) {
    snprintf(buf, len, "%s/queue/%lld.yaml", self->dir, (long long)id);
}

/* Prepares sql with its parameters bound from the format: 's' text (NULL: null), 'i' int64, 'd'
 * double. NULL when it cannot be (said on stderr: a broken database is the operator's). */
static sqlite3_stmt *prepare(archive_t *self, const char *sql, const char *types, ...) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(self->db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "serve: archive: %s: %s\n", sql, sqlite3_errmsg(self->db));
        return NULL;
    }
    va_list ap;
    va_start(ap, types);
    for (int i = 0; types[i]; i++) {
        if (types[i] == 's') {
            const char *s = va_arg(ap, const char *);
            if (s)
                sqlite3_bind_text(st, i + 1, s, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(st, i + 1);
        } else if (types[i] == 'i') {
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        } else {
            sqlite3_bind_double(st, i + 1, va_arg(ap, double));
        }
    }
    va_end(ap);
    return st;
}

/* Steps a statement that returns no row and finalizes it: 0 ok, -1 said. */
static int run_statement(archive_t *self, sqlite3_stmt *st) {
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        fprintf(stderr, "serve: archive: %s\n", sqlite3_errmsg(self->db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The single integer a query returns, or fallback when it returns no row. */
static int64_t query_int(archive_t *self, sqlite3_stmt *st, int64_t fallback) {
    (void)self;
    if (!st)
        return fallback;
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : fallback;
    sqlite3_finalize(st);
    return v;
}

static int write_file(const char *path, const char *text) {
    FILE *f = outfile_fopen(path);
    if (!f)
        return -1;
    size_t len = strlen(text);
    int rc = fwrite(text, 1, len, f) == len ? 0 : -1;
    return fclose(f) != 0 ? -1 : rc;
}

int64_t archive_submit(archive_t *self, const archive_submission_t *s, char *err, size_t errlen) {
    sqlite3_exec(self->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    sqlite3_stmt *st = prepare(
        self,
        "INSERT INTO runs (user, target_group, priority, state, submitted_at, workload_name, "
        "file_digest, model, config) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?)",
        "ssiissss", s->user, s->group, (int64_t)s->priority, (int64_t)time(NULL), s->workload_name,
        s->file_digest, s->model, s->config);
    if (run_statement(self, st) != 0) {
        sqlite3_exec(self->db, "ROLLBACK", NULL, NULL, NULL);
        fail(err, errlen, "the rig's archive refused the run: %s", sqlite3_errmsg(self->db));
        return -1;
    }
    int64_t id = sqlite3_last_insert_rowid(self->db);
    char path[4096];
    archive_workload_path(self, id, path, sizeof path);
    if (write_file(path, s->workload) != 0) {
        fail(err, errlen, "the rig cannot write %s: %s", path, strerror(errno));
        sqlite3_exec(self->db, "ROLLBACK", NULL, NULL, NULL);
        unlink(path);
        return -1;
    }
    sqlite3_exec(self->db, "COMMIT", NULL, NULL, NULL);
    return id;
}

int64_t archive_next(archive_t *self, const char *group) {
    return query_int(
        self,
        prepare(self,
                "SELECT id FROM runs WHERE state = 'queued' AND (?1 IS NULL OR target_group = ?1) "
                "AND target_group NOT IN (SELECT target_group FROM runs WHERE state = 'running') "
                "ORDER BY priority DESC, id LIMIT 1",
                "s", group),
        0);
}

int archive_place(archive_t *self, int64_t id) {
    return (int)query_int(
        self,
        prepare(self,
                "SELECT (SELECT count(*) FROM runs o WHERE o.state = 'queued' AND "
                "o.target_group = r.target_group AND (o.priority > r.priority OR (o.priority = "
                "r.priority AND o.id < r.id))) + 1 FROM runs r WHERE r.id = ? AND "
                "r.state = 'queued'",
                "i", id),
        0);
}

static void column_text(sqlite3_stmt *st, int col, char *buf, size_t len) {
    if (buf)
        snprintf(buf, len, "%s",
                 sqlite3_column_text(st, col) ? (const char *)sqlite3_column_text(st, col) : "");
}

int archive_lookup(archive_t *self, int64_t id, char *group, size_t group_len, char *user,
                   size_t user_len, char *state, size_t state_len) {
    sqlite3_stmt *st =
        prepare(self, "SELECT target_group, user, state FROM runs WHERE id = ?", "i", id);
    if (!st)
        return -1;
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        column_text(st, 0, group, group_len);
        column_text(st, 1, user, user_len);
        column_text(st, 2, state, state_len);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int archive_started(archive_t *self, int64_t id, uint32_t workers) {
    return run_statement(self, prepare(self,
                                       "UPDATE runs SET state = 'running', started_at = ?, "
                                       "workers = ? WHERE id = ?",
                                       "iii", (int64_t)time(NULL), (int64_t)workers, id));
}

int archive_set_start(archive_t *self, int64_t id, int64_t start_unix_ns) {
    return run_statement(
        self, prepare(self, "UPDATE runs SET start_ns = ? WHERE id = ?", "ii", start_unix_ns, id));
}

static double number_at(json_t *o, const char *key, const char *sub) {
    json_t *v = json_object_get(o, key);
    if (sub)
        v = json_object_get(v, sub);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Binds d, or null when it is not a number. */
static void bind_number(sqlite3_stmt *st, int i, double d) {
    if (d == d)
        sqlite3_bind_double(st, i, d);
    else
        sqlite3_bind_null(st, i);
}

/* The headline figures of each level of results.json into the levels table: a plain run's one
 * level, or each of a sweep's (pooled over its repetitions, as its results.json says). */
static void store_levels(archive_t *self, int64_t id, json_t *levels) {
    size_t i;
    json_t *l;
    json_array_foreach(levels, i, l) {
        sqlite3_stmt *st = prepare(
            self,
            "INSERT OR REPLACE INTO levels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            "ii", id, (int64_t)i);
        if (!st)
            return;
        /* a plain run's rate is {"requested_per_s", ...}; a sweep level's, its value */
        double rate = json_is_number(json_object_get(l, "rate"))
                          ? number_at(l, "rate", NULL)
                          : number_at(l, "rate", "requested_per_s");
        const double figures[] = {number_at(l, "concurrency", NULL),
                                  rate,
                                  number_at(l, "requests_ok", NULL),
                                  number_at(l, "requests_failed", NULL),
                                  number_at(l, "error_pct", NULL),
                                  number_at(l, "requests_per_s", NULL),
                                  number_at(l, "output_tokens_per_s", NULL),
                                  number_at(l, "ttft_ms", "p50"),
                                  number_at(l, "ttft_ms", "p99"),
                                  number_at(l, "itl_ms", "p50"),
                                  number_at(l, "tpot_ms", "p50"),
                                  number_at(l, "e2e_ms", "p50"),
                                  number_at(l, "e2e_ms", "p99")};
        for (size_t k = 0; k < sizeof figures / sizeof *figures; k++)
            bind_number(st, (int)k + 3, figures[k]);
        run_statement(self, st);
    }
}

/* The shared-rig guard's verdict (docs/metrics.md): the first level whose server block says
 * someone outside the rig loaded the group's endpoints during the run. */
static void store_guard(archive_t *self, int64_t id, json_t *levels) {
    size_t i;
    json_t *l;
    bool checked = false;
    json_array_foreach(levels, i, l) {
        json_t *guard = json_object_get(json_object_get(l, "server"), "guard");
        if (!guard)
            continue;
        checked = true;
        if (json_is_true(json_object_get(guard, "shared"))) {
            run_statement(
                self,
                prepare(self, "UPDATE runs SET shared = 1, shared_reason = ? WHERE id = ?", "si",
                        json_string_value(json_object_get(guard, "shared_reason")), id));
            return;
        }
    }
    if (checked) /* no guard at all (server_metrics: none) leaves it unknown: null */
        run_statement(self, prepare(self, "UPDATE runs SET shared = 0 WHERE id = ?", "i", id));
}

/* What the run's directory says of it: results.json's run id, workload digest, validity and
 * levels; config.yaml (redacted) replaces the config given at submission. */
static void read_results(archive_t *self, int64_t id) {
    char dir[4096], path[4200];
    archive_run_dir(self, id, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *root = json_load_file(path, 0, NULL);
    if (root) {
        json_t *validity = json_object_get(root, "validity");
        json_t *levels = json_object_get(root, "levels");
        char *reasons = json_dumps(json_object_get(validity, "reasons"), JSON_COMPACT);
        json_t *valid = json_object_get(validity, "valid");
        sqlite3_stmt *st = prepare(
            self, "UPDATE runs SET run_id = ?, workload_digest = ?, reasons = ? WHERE id = ?",
            "sssi", json_string_value(json_object_get(json_object_get(root, "run"), "run_id")),
            json_string_value(json_object_get(json_array_get(levels, 0), "workload_digest")),
            reasons, id);
        run_statement(self, st);
        if (json_is_boolean(valid))
            run_statement(self, prepare(self, "UPDATE runs SET valid = ? WHERE id = ?", "ii",
                                        (int64_t)json_is_true(valid), id));
        free(reasons);
        store_levels(self, id, levels);
        store_guard(self, id, levels);
        /* first send -> last end of the run's requests: the group is free from there */
        double wall_s = number_at(json_array_get(levels, 0), "wall_clock_s", NULL);
        if (wall_s == wall_s)
            run_statement(self, prepare(self,
                                        "UPDATE runs SET load_end_ns = start_ns + ? WHERE id = ? "
                                        "AND start_ns > 0",
                                        "ii", (int64_t)(wall_s * 1e9), id));
        json_decref(root);
    }
    snprintf(path, sizeof path, "%s/config.yaml", dir);
    size_t len;
    char *text = outfile_read_all(path, &len);
    if (text)
        run_statement(self,
                      prepare(self, "UPDATE runs SET config = ? WHERE id = ?", "si", text, id));
    free(text);
}

int archive_finished(archive_t *self, int64_t id, const char *state, int exit_status,
                     const char *note) {
    sqlite3_exec(self->db, "BEGIN", NULL, NULL, NULL);
    int rc = run_statement(
        self, prepare(self,
                      "UPDATE runs SET state = ?, ended_at = ?, exit_status = ?, "
                      "note = coalesce(?, note) WHERE id = ?",
                      "siisi", state, (int64_t)time(NULL), (int64_t)exit_status, note, id));
    read_results(self, id);
    sqlite3_exec(self->db, "COMMIT", NULL, NULL, NULL);
    char path[4096];
    archive_workload_path(self, id, path, sizeof path);
    unlink(path);
    return rc;
}

int archive_cancel_queued(archive_t *self, int64_t id, const char *by) {
    sqlite3_stmt *st = prepare(self,
                               "UPDATE runs SET state = 'cancelled', ended_at = ?, cancelled_by = "
                               "? WHERE id = ? AND state = 'queued'",
                               "isi", (int64_t)time(NULL), by, id);
    if (run_statement(self, st) != 0 || sqlite3_changes(self->db) != 1)
        return -1;
    char path[4096];
    archive_workload_path(self, id, path, sizeof path);
    unlink(path);
    return 0;
}

int archive_cancelled_by(archive_t *self, int64_t id, const char *by) {
    return run_statement(
        self, prepare(self, "UPDATE runs SET cancelled_by = ? WHERE id = ?", "si", by, id));
}

int archive_set_priority(archive_t *self, int64_t id, int priority) {
    if (run_statement(
            self, prepare(self, "UPDATE runs SET priority = ? WHERE id = ? AND state = 'queued'",
                          "ii", (int64_t)priority, id)) != 0)
        return -1;
    return sqlite3_changes(self->db) == 1 ? 0 : -1;
}

int archive_pin(archive_t *self, int64_t id, bool pin) {
    if (run_statement(self, prepare(self, "UPDATE runs SET pinned = ? WHERE id = ?", "ii",
                                    (int64_t)pin, id)) != 0)
        return -1;
    return sqlite3_changes(self->db) == 1 ? 0 : -1;
}

int64_t *archive_running(archive_t *self, size_t *n) {
    *n = 0;
    sqlite3_stmt *st = prepare(self, "SELECT id FROM runs WHERE state = 'running' ORDER BY id", "");
    int64_t *ids = NULL;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t *more = realloc(ids, (*n + 1) * sizeof *ids);
        if (!more)
            break;
        ids = more;
        ids[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return ids;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

int archive_retain(archive_t *self, uint32_t keep, int64_t max_age_s) {
    if (!keep && !max_age_s)
        return 0;
    sqlite3_stmt *st = prepare(
        self,
        "SELECT id FROM runs WHERE pinned = 0 AND state NOT IN ('queued', 'running') AND "
        "((? > 0 AND id NOT IN (SELECT id FROM runs WHERE state NOT IN ('queued', 'running') "
        "ORDER BY id DESC LIMIT ?)) OR (? > 0 AND ended_at < ?))",
        "iiii", (int64_t)keep, (int64_t)keep, max_age_s, (int64_t)time(NULL) - max_age_s);
    int removed = 0;
    int64_t ids[256];
    size_t n = 0;
    while (st && n < 256 && sqlite3_step(st) == SQLITE_ROW)
        ids[n++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++) {
        char dir[4096];
        archive_run_dir(self, ids[i], dir, sizeof dir);
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        if (run_statement(self, prepare(self, "DELETE FROM runs WHERE id = ?", "i", ids[i])) == 0)
            removed++;
    }
    return removed;
}

/* The current row of st as an object keyed by column name. */
static json_t *row_json(sqlite3_stmt *st) {
    json_t *o = json_object();
    for (int c = 0; c < sqlite3_column_count(st); c++) {
        json_t *v;
        switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
            v = json_integer(sqlite3_column_int64(st, c));
            break;
        case SQLITE_FLOAT:
            v = json_real(sqlite3_column_double(st, c));
            break;
        case SQLITE_TEXT:
            v = json_string((const char *)sqlite3_column_text(st, c));
            break;
        default:
            v = json_null();
        }
        json_object_set_new(o, sqlite3_column_name(st, c), v ? v : json_null());
    }
    return o;
}

static json_t *rows_json(sqlite3_stmt *st) {
    json_t *a = json_array();
    while (st && sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(a, row_json(st));
    sqlite3_finalize(st);
    return a;
}

json_t *archive_run_json(archive_t *self, int64_t id) {
    sqlite3_stmt *st = prepare(self, "SELECT * FROM runs WHERE id = ?", "i", id);
    json_t *o = st && sqlite3_step(st) == SQLITE_ROW ? row_json(st) : NULL;
    sqlite3_finalize(st);
    if (o)
        json_object_set_new(
            o, "levels",
            rows_json(prepare(self,
                              "SELECT level, concurrency, rate, requests_ok, requests_failed, "
                              "error_pct, requests_per_s, output_tokens_per_s, ttft_p50_ms, "
                              "ttft_p99_ms, itl_p50_ms, tpot_p50_ms, e2e_p50_ms, e2e_p99_ms "
                              "FROM levels WHERE run = ? ORDER BY level",
                              "i", id)));
    return o;
}

/* The columns a list shows: the row without the config, level 0's headline figures and how many
 * levels it has (a sweep's, each in show's "levels"). */
#define LIST_COLUMNS                                                                               \
    "SELECT r.id, r.user, r.target_group, r.priority, r.state, r.submitted_at, r.started_at, "     \
    "r.ended_at, r.workload_name, r.model, r.valid, r.shared, r.pinned, r.workers, r.note, "       \
    "l.requests_ok, l.requests_per_s, l.output_tokens_per_s, l.ttft_p50_ms, l.ttft_p99_ms, "       \
    "l.e2e_p50_ms, (SELECT count(*) FROM levels n WHERE n.run = r.id) AS levels "                  \
    "FROM runs r LEFT JOIN levels l ON l.run = r.id AND l.level = 0 "

json_t *archive_list_json(archive_t *self, const char *user, const char *group, const char *model,
                          const char *state, int limit) {
    return rows_json(prepare(self,
                             LIST_COLUMNS "WHERE (?1 IS NULL OR r.user = ?1) AND (?2 IS NULL OR "
                                          "r.target_group = ?2) AND (?3 IS NULL OR r.model = ?3) "
                                          "AND (?4 IS NULL OR r.state = ?4) ORDER BY r.id DESC "
                                          "LIMIT ?5",
                             "ssssi", user, group, model, state,
                             (int64_t)(limit > 0 ? limit : -1)));
}

json_t *archive_queue_json(archive_t *self) {
    return rows_json(prepare(self,
                             LIST_COLUMNS "WHERE r.state = 'queued' ORDER BY r.target_group, "
                                          "r.priority DESC, r.id",
                             ""));
}
