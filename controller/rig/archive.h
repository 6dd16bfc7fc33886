/* The rig's archive (docs/rig.md, "The archive"): ARCHIVE/rig.db, an SQLite database of one row
 * per run (who, when, the group, the workload's digests, the redacted config, validity, state and
 * the headline figures per level in a table of their own), ARCHIVE/runs/ID/ (each run's results
 * directory) and ARCHIVE/queue/ID.yaml (a queued run's workload as submitted, removed when it
 * ends: it may hold secrets the redacted config does not). The queue is the rows in state
 * "queued": a restart of `stampede serve` finds it there. */
#ifndef STAMPEDE_ARCHIVE_H
#define STAMPEDE_ARCHIVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct archive archive_t;

/* What a submitted run brings. */
typedef struct archive_submission {
    const char *user;
    const char *group;
    int priority;
    const char *workload_name; /* the file's name as the user gave it */
    const char *workload;      /* its text, written to ARCHIVE/queue/ID.yaml */
    const char *file_digest;   /* xxh3 of the text, hex */
    const char *model;         /* target.model, or NULL */
    const char *config;        /* the config resolved and redacted (YAML) */
} archive_submission_t;

/* Opens (creating) dir/rig.db and dir's runs/ and queue/. NULL with the reason in err. */
archive_t *archive_open(const char *dir, char *err, size_t errlen);
/* Closes and frees; sets *self_p to NULL (NULL is fine). */
void archive_close(archive_t **self_p);
/* The archive's directory. */
const char *archive_dir(const archive_t *self);
/* Queues a run: its row in state "queued" and its workload file. The new id (> 0), or -1 with
 * the reason in err. */
int64_t archive_submit(archive_t *self, const archive_submission_t *s, char *err, size_t errlen);
/* The next run to start on group (NULL: any) whose group runs nothing (the lease): highest
 * priority first, then oldest. 0 when none is queued or its group is busy. */
int64_t archive_next(archive_t *self, const char *group);
/* Its place in its group's queue (1: next), 0 when it is not queued. */
int archive_place(archive_t *self, int64_t id);
/* The group, owner and state of run id into the buffers (any may be NULL). 0, or -1 when there
 * is no such run. */
int archive_lookup(archive_t *self, int64_t id, char *group, size_t group_len, char *user,
                   size_t user_len, char *state, size_t state_len);
/* The paths of run id's directory and of its queued workload. */
void archive_run_dir(const archive_t *self, int64_t id, char *buf, size_t len);
void archive_workload_path(const archive_t *self, int64_t id, char *buf, size_t len);
/* The run started now on workers workers: state "running". 0 ok, -1 not. */
int archive_started(archive_t *self, int64_t id, uint32_t workers);
/* The run's start instant (unix ns; its first requests go then), once it started. */
int archive_set_start(archive_t *self, int64_t id, int64_t start_unix_ns);
/* The run ended in state ("done", "failed", "cancelled", "interrupted") with exit_status; what
 * its directory holds (results.json: run id, workload digest, validity, the figures of each
 * level, the shared-rig guard's verdict; config.yaml) is read into its row, and its queued workload
 * removed. note (may be NULL) says why it ended that way. 0 ok, -1 not. */
int archive_finished(archive_t *self, int64_t id, const char *state, int exit_status,
                     const char *note);
/* A queued run is cancelled by user (never started): its row says so, its workload removed.
 * 0 ok, -1 not queued. */
int archive_cancel_queued(archive_t *self, int64_t id, const char *by);
/* Records who cancelled a running run (its end comes later, from archive_finished). */
int archive_cancelled_by(archive_t *self, int64_t id, const char *by);
/* Moves a queued run in its group's queue: its priority becomes priority. 0 ok, -1 not queued. */
int archive_set_priority(archive_t *self, int64_t id, int priority);
/* Pins (or unpins) a run: retention never removes a pinned run. 0 ok, -1 no such run. */
int archive_pin(archive_t *self, int64_t id, bool pin);
/* Every run in state "running" (serve died during it): their ids, malloc'd, *n of them. */
int64_t *archive_running(archive_t *self, size_t *n);
/* Removes finished, unpinned runs beyond the newest keep (0: no limit) and older than max_age_s
 * (0: no limit): rows and directories. How many were removed. */
int archive_retain(archive_t *self, uint32_t keep, int64_t max_age_s);
/* One run as a JSON object (its row, and "levels": its figures), or NULL when there is none. */
json_t *archive_run_json(archive_t *self, int64_t id);
/* Runs newest first, filtered by user, group, model and state (NULL: any), at most limit. */
json_t *archive_list_json(archive_t *self, const char *user, const char *group, const char *model,
                          const char *state, int limit);
/* The queued runs in start order (by group, then priority and age). */
json_t *archive_queue_json(archive_t *self);

#endif
