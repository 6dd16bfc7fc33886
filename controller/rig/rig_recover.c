/* The runs serve died during (docs/rig.md "Faults"). At the start each one found "running" is
 * rebuilt from its journal (controller/spool_merge.h) and marked interrupted. Its workers, being
 * long-lived, come back to the new serve still holding the batches it never acknowledged, and say
 * so in their Hello: the fleet takes them over (controller/fleet.h, fleet_handover_hooks_t), each
 * worker's into a spool of its own in the run's directory (handover-N-NAME.spool, every batch
 * on disk before its Ack), and when a worker's hand-over ends the run is rebuilt again from the
 * journal and those spools (a batch in both counts once), its row rewritten with the count of
 * records the workers gave back. A sweep's level in flight is its repetition's run: that one is
 * rebuilt so (its journal and hand-overs in its own directory), then the level into the sweep's
 * results.json beside the levels it finished, marked interrupted
 * (controller/sweep/sweep_recover.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buffer.h"
#include "journal.h"
#include "rig_internal.h"
#include "spool.h"
#include "spool_merge.h"
#include "sweep_recover.h"

/* A run serve died during whose workers may hand batches over. */
struct rig_held {
    int64_t id;
    uint64_t run_id;
    uint32_t workers; /* its worker count (a held batch's index must be below it) */
    char dir[4096];   /* the run's directory (a sweep's: the sweep's) */
    bool sweep;       /* a sweep: its level in flight is level */
    sweep_recover_level_t level;
    Stampede__SpoolRun *run; /* its journal's run frame (a sweep's: its repetition in flight's) */
    char **spools;           /* the hand-overs kept in its directory */
    size_t n_spools, cap_spools;
    char names[1024]; /* the workers that handed over, "w1, w2" */
};

/* A worker's hand-over in progress, into its spool. */
struct rig_handover {
    char worker[128];
    rig_held_t *held;
    spool_writer_t *writer;
    char path[4800];
};

/* The run frame of dir's journal (its first), or NULL. */
static Stampede__SpoolRun *journal_run(const char *dir) {
    char path[4200], err[4400];
    snprintf(path, sizeof path, "%s/%s", dir, JOURNAL_NAME);
    spool_reader_t *r = spool_reader_open(path, err, sizeof err);
    spool_frame_t f;
    bool truncated;
    Stampede__SpoolRun *run = NULL;
    if (r && spool_reader_next(r, &f, &truncated, err, sizeof err) == 1 &&
        f.type == SPOOL_FRAME_RUN)
        run = stampede__spool_run__unpack(NULL, f.len, f.data);
    spool_reader_close(&r);
    return run;
}

/* What the note of a sweep serve died during says of its level in flight, into buf. */
static void level_note(char *buf, size_t len, const sweep_recover_level_t *level, bool rebuilt) {
    snprintf(buf, len, "a sweep; the levels it finished are kept, level %zu (in flight) %s",
             level->index + 1,
             rebuilt ? "rebuilt from its journal: partial" : "could not be rebuilt");
}

/* Keeps run id (in dir; a sweep's level in flight, level) for the hand-overs of its workers. */
static void hold(rig_t *self, int64_t id, const char *dir, const sweep_recover_level_t *level) {
    Stampede__SpoolRun *run = journal_run(level ? level->rep : dir);
    if (!run)
        return;
    rig_held_t *h = calloc(1, sizeof *h);
    if (!h || buffer_grow_array(&self->held, &self->cap_held, self->n_held + 1,
                                sizeof *self->held) != 0) {
        free(h);
        stampede__spool_run__free_unpacked(run, NULL);
        return;
    }
    h->id = id;
    h->run_id = run->run_id;
    h->workers = run->worker_count;
    h->run = run;
    snprintf(h->dir, sizeof h->dir, "%s", dir);
    if ((h->sweep = level != NULL))
        h->level = *level;
    self->held[self->n_held++] = h;
}

void rig_recover(rig_t *self) {
    size_t n;
    int64_t *ids = archive_running(self->archive, &n);
    for (size_t i = 0; i < n; i++) {
        char dir[4096], journal[4200];
        archive_run_dir(self->archive, ids[i], dir, sizeof dir);
        snprintf(journal, sizeof journal, "%s/%s", dir, JOURNAL_NAME);
        struct stat st;
        int rc = 2;
        spool_merge_options_t merge = {.allow_invalid = true};
        bool sweep = sweep_recover_is_sweep(dir);
        sweep_recover_level_t level;
        bool in_flight = sweep && sweep_recover_find(dir, &level);
        if (in_flight)
            rc = sweep_recover_write(self->options.name, dir, &level, NULL, 0, NULL, NULL) == 0 ? 0
                                                                                                : 1;
        else if (!sweep && stat(journal, &st) == 0)
            rc = spool_merge_run(dir, NULL, 0, &merge);
        char note[400], what[300];
        if (in_flight) {
            level_note(what, sizeof what, &level, rc == 0);
            snprintf(note, sizeof note, "serve stopped during the run: %s", what);
        } else
            snprintf(note, sizeof note, "%s",
                     sweep     ? "serve stopped during the run: a sweep; the levels it finished "
                                 "are kept"
                     : rc == 0 ? "serve stopped during the run: merged from its journal"
                     : rc == 2 ? "serve stopped during the run: nothing was journaled"
                               : "serve stopped during the run: its journal did not merge");
        if (in_flight)
            hold(self, ids[i], dir, &level);
        else if (!sweep && rc != 1 && stat(journal, &st) == 0)
            hold(self, ids[i], dir, NULL);
        rc = sweep ? 130 : rc;
        fprintf(stderr, "%s: run %lld was in progress when serve stopped: %s%s\n",
                self->options.name, (long long)ids[i],
                note + strlen("serve stopped during the run: "),
                self->n_held && self->held[self->n_held - 1]->id == ids[i]
                    ? "; its workers' unacknowledged batches are taken when they come back"
                    : "");
        archive_finished(self->archive, ids[i], "interrupted", rc, note);
    }
    free(ids);
}

static rig_held_t *held_run(rig_t *self, uint64_t run_id) {
    for (size_t i = 0; i < self->n_held; i++)
        if (self->held[i]->run_id == run_id)
            return self->held[i];
    return NULL;
}

static rig_handover_t *handover_of(rig_t *self, const char *worker) {
    for (size_t i = 0; i < self->n_handovers; i++)
        if (!strcmp(self->handovers[i]->worker, worker))
            return self->handovers[i];
    return NULL;
}

/* Opens worker's hand-over spool of h: the run (its writer the rig), then the worker. */
static rig_handover_t *handover_open(rig_t *self, rig_held_t *h, const char *worker,
                                     const Stampede__HeldRun *held) {
    rig_handover_t *ho = calloc(1, sizeof *ho);
    if (!ho || buffer_grow_array(&self->handovers, &self->cap_handovers, self->n_handovers + 1,
                                 sizeof *self->handovers) != 0) {
        free(ho);
        return NULL;
    }
    snprintf(ho->worker, sizeof ho->worker, "%s", worker);
    ho->held = h;
    char name[128];
    snprintf(name, sizeof name, "%s", worker);
    for (char *c = name; *c; c++)
        if (*c == '/')
            *c = '_';
    snprintf(ho->path, sizeof ho->path, "%s/handover-%zu-%s.spool",
             h->sweep ? h->level.rep : h->dir, h->n_spools + 1, name); /* beside its journal */
    char err[4600], writer[200];
    snprintf(writer, sizeof writer, "serve (handed over by worker %s)", worker);
    Stampede__SpoolRun run = *h->run;
    run.writer = writer;
    Stampede__SpoolWorker sw = STAMPEDE__SPOOL_WORKER__INIT;
    sw.index = held->worker_index;
    sw.name = ho->worker;
    if (!(ho->writer = spool_writer_open(ho->path, err, sizeof err)) ||
        spool_write_run(ho->writer, &run) != 0 || spool_write_worker(ho->writer, &sw) != 0 ||
        spool_writer_flush(ho->writer) != 0) {
        fprintf(stderr, "%s: run %lld: cannot keep the batches of worker %s: %s\n",
                self->options.name, (long long)h->id, worker, ho->writer ? strerror(errno) : err);
        spool_writer_close(&ho->writer);
        free(ho);
        return NULL;
    }
    self->handovers[self->n_handovers++] = ho;
    return ho;
}

static bool on_offer(void *arg, const char *worker, const Stampede__HeldRun *held) {
    rig_t *self = arg;
    rig_held_t *h = held_run(self, held->run_id);
    if (!h || held->worker_index >= h->workers || handover_of(self, worker))
        return false;
    return handover_open(self, h, worker, held) != NULL;
}

static int on_batch(void *arg, const char *worker, const Stampede__HeldRun *held,
                    const uint8_t *data, size_t len) {
    rig_handover_t *ho = handover_of(arg, worker);
    /* On disk before the fleet acknowledges it: the worker drops it then. */
    return ho && spool_write_frame(ho->writer, SPOOL_FRAME_BATCH, data, len) == 0 &&
                   spool_writer_flush(ho->writer) == 0
               ? 0
               : -1;
}

/* Rebuilds h from its journal and every hand-over kept, and rewrites its row. */
static void rebuild(rig_t *self, rig_held_t *h) {
    uint64_t from_spools = 0;
    spool_merge_options_t merge = {.allow_invalid = true, .from_spools = &from_spools};
    int rc = h->sweep ? sweep_recover_write(self->options.name, h->dir, &h->level, h->spools,
                                            (int)h->n_spools, h->names, &from_spools) == 0
                            ? 0
                            : 1
                      : spool_merge_run(h->dir, h->spools, (int)h->n_spools, &merge);
    char what[300], note[1400];
    if (h->sweep)
        level_note(what, sizeof what, &h->level, true);
    else
        snprintf(what, sizeof what, "merged from its journal");
    if (rc == 1) /* said by the merge: the run keeps its last rebuild */
        snprintf(note, sizeof note,
                 "serve stopped during the run: %s; its workers' hand-overs (%s) did not merge",
                 what, h->names);
    else
        snprintf(note, sizeof note,
                 "serve stopped during the run: %s; %" PRIu64
                 " records recovered from its workers (%s)",
                 what, from_spools, h->names);
    fprintf(stderr, "%s: run %lld: %s\n", self->options.name, (long long)h->id,
            note + strlen("serve stopped during the run: "));
    archive_finished(self->archive, h->id, "interrupted", h->sweep ? 130 : rc, note);
}

static void on_end(void *arg, const char *worker, const Stampede__HeldRun *held, const char *why) {
    rig_t *self = arg;
    rig_handover_t *ho = handover_of(self, worker);
    if (!ho)
        return;
    rig_held_t *h = ho->held;
    Stampede__SpoolEnd end = STAMPEDE__SPOOL_END__INIT;
    end.worker_index = held->worker_index;
    end.requests_done = held->requests_done;
    end.records = held->records;
    end.last_seq = held->last_seq;
    end.acked_seq = held->acked_seq;
    end.done = why == NULL;
    bool kept = spool_write_end(ho->writer, &end) == 0;
    kept = spool_writer_close(&ho->writer) == 0 && kept;
    if (kept &&
        buffer_grow_array(&h->spools, &h->cap_spools, h->n_spools + 1, sizeof *h->spools) == 0 &&
        (h->spools[h->n_spools] = strdup(ho->path))) {
        h->n_spools++;
        size_t used = strlen(h->names);
        snprintf(h->names + used, sizeof h->names - used, "%s%s", used ? ", " : "", worker);
        rebuild(self, h);
    } else {
        fprintf(stderr, "%s: run %lld: the batches of worker %s were not kept (%s)\n",
                self->options.name, (long long)h->id, worker, ho->path);
    }
    for (size_t i = 0; i < self->n_handovers; i++)
        if (self->handovers[i] == ho)
            self->handovers[i] = self->handovers[--self->n_handovers];
    free(ho);
}

void rig_recover_attach(rig_t *self) {
    fleet_handover_hooks_t hooks = {
        .offer = on_offer, .batch = on_batch, .end = on_end, .arg = self};
    fleet_set_handover(self->fleet, &hooks);
}

void rig_recover_free(rig_t *self) {
    for (size_t i = 0; i < self->n_handovers; i++) {
        spool_writer_close(&self->handovers[i]->writer);
        free(self->handovers[i]);
    }
    free(self->handovers);
    for (size_t i = 0; i < self->n_held; i++) {
        rig_held_t *h = self->held[i];
        for (size_t j = 0; j < h->n_spools; j++)
            free(h->spools[j]);
        free(h->spools);
        stampede__spool_run__free_unpacked(h->run, NULL);
        free(h);
    }
    free(self->held);
}
