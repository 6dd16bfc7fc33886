#include "spool_merge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect.h"
#include "envelope.h"
#include "journal.h"
#include "measurement.h"
#include "results.h"
#include "spool.h"

#define NAME "merge"

/* One input file and what its frames said. */
typedef struct merge_input {
    const char *path;
    bool journal; /* written by the controller */
    char *config_yaml;
} merge_input_t;

/* What the inputs say of one worker. */
typedef struct merge_worker {
    bool named;
    bool ended;     /* some SpoolEnd says its run was over */
    bool has_count; /* some spool gives its own completed-request count */
    uint64_t last_seq;
    uint64_t requests_done;
    uint64_t from_journal, from_spools, duplicates;
} merge_worker_t;

/* A batch that came before the one it follows: kept until that one is merged. */
typedef struct pending {
    uint8_t *data;
    size_t len;
    uint32_t worker;
    uint64_t seq;
    bool journal; /* read from the journal */
} pending_t;

typedef struct merge_state {
    run_options_t options;     /* what the rebuilt run is given (--allow-invalid, --http-phases) */
    run_worker_t *run_workers; /* the run's workers by index, complete: no fleet, nothing to send */
    run_worker_t **worker_list; /* pointers to them, as a run holds its workers */
    envelope_arena_t *arena;
    measurement_t *run;
    merge_input_t *inputs;
    size_t n_inputs;
    uint64_t run_id;
    int64_t start_ns, start_unix_ns;
    uint32_t count;
    merge_worker_t *workers;
    pending_t *pending;
    size_t n_pending, cap_pending;
    uint64_t records_from_spools;
    int rc;
} merge_state_t;

/* Opens input's spool, or says why not (err, of size bytes, holds the reason) and returns NULL. */
static spool_reader_t *open_input(const merge_input_t *in, char *err, size_t size) {
    spool_reader_t *r = spool_reader_open(in->path, err, size);
    if (!r)
        fprintf(stderr, NAME ": %s\n", err);
    return r;
}

/* Reads every frame of input (pass 1): the run, the workers, the ends; batches are skipped. */
static int scan_input(merge_state_t *st, merge_input_t *in) {
    char err[4400];
    spool_reader_t *r = open_input(in, err, sizeof err);
    if (!r)
        return -1;
    spool_frame_t f;
    bool truncated, first = true;
    int got, rc = 0;
    while ((got = spool_reader_next(r, &f, &truncated, err, sizeof err)) == 1) {
        if (first != (f.type == SPOOL_FRAME_RUN)) {
            fprintf(stderr, NAME ": %s: offset %" PRIu64 ": corrupt: %s\n", in->path, f.offset,
                    first ? "the first frame is not the run" : "a second run frame");
            rc = -1;
            break;
        }
        if (f.type == SPOOL_FRAME_RUN) {
            first = false;
            Stampede__SpoolRun *run = stampede__spool_run__unpack(NULL, f.len, f.data);
            if (!run) {
                fprintf(stderr, NAME ": %s: offset %" PRIu64 ": corrupt: the run does not decode\n",
                        in->path, f.offset);
                rc = -1;
                break;
            }
            in->journal = strcmp(run->writer, "controller") == 0;
            if (st->run_id && run->run_id != st->run_id) {
                fprintf(stderr,
                        NAME ": %s is of run %016" PRIx64 ", %s of run %016" PRIx64
                             ": spools of different runs cannot be merged\n",
                        in->path, run->run_id, st->inputs[0].path, st->run_id);
                rc = -1;
            } else {
                st->run_id = run->run_id;
                in->config_yaml = strdup(run->config_yaml);
                if (in->journal || !st->start_ns) {
                    st->start_ns = run->start_ns;
                    st->start_unix_ns = run->start_unix_ns;
                }
                if (run->worker_count > st->count)
                    st->count = run->worker_count;
            }
            stampede__spool_run__free_unpacked(run, NULL);
            if (rc)
                break;
            continue;
        }
        if (f.type == SPOOL_FRAME_BATCH)
            continue;
        if (f.type == SPOOL_FRAME_WORKER) {
            Stampede__SpoolWorker *w = stampede__spool_worker__unpack(NULL, f.len, f.data);
            if (!w || w->index >= st->count) {
                fprintf(stderr, NAME ": %s: offset %" PRIu64 ": corrupt: %s\n", in->path, f.offset,
                        w ? "a worker index past the run's workers"
                          : "a worker that does not decode");
                if (w)
                    stampede__spool_worker__free_unpacked(w, NULL);
                rc = -1;
                break;
            }
            run_worker_t *rw = &st->run_workers[w->index];
            if (!st->workers[w->index].named || in->journal) {
                snprintf(rw->name, sizeof rw->name, "%s", w->name);
                rw->offset_ns = w->offset_ns;
                rw->rtt_ns = w->rtt_ns;
                st->workers[w->index].named = true;
            }
            stampede__spool_worker__free_unpacked(w, NULL);
            continue;
        }
        Stampede__SpoolEnd *e = stampede__spool_end__unpack(NULL, f.len, f.data);
        if (!e || e->worker_index >= st->count) {
            fprintf(stderr, NAME ": %s: offset %" PRIu64 ": corrupt: %s\n", in->path, f.offset,
                    e ? "a worker index past the run's workers" : "an end that does not decode");
            if (e)
                stampede__spool_end__free_unpacked(e, NULL);
            rc = -1;
            break;
        }
        merge_worker_t *mw = &st->workers[e->worker_index];
        mw->ended = mw->ended || e->done;
        if (e->last_seq > mw->last_seq)
            mw->last_seq = e->last_seq;
        if (!in->journal && (!mw->has_count || e->requests_done > mw->requests_done)) {
            mw->has_count = true;
            mw->requests_done = e->requests_done;
        }
        stampede__spool_end__free_unpacked(e, NULL);
    }
    if (rc == 0 && got < 0) {
        if (truncated && in->journal) {
            /* The controller was killed in the middle of a write: that batch was never
             * acknowledged, so its worker still had it. */
            fprintf(stderr, NAME ": %s (read up to it; the controller died writing it)\n", err);
        } else {
            fprintf(stderr, NAME ": %s\n", err);
            rc = -1;
        }
    } else if (rc == 0 && first) {
        fprintf(stderr, NAME ": %s: offset 8: truncated: the file holds no run\n", in->path);
        rc = -1;
    }
    spool_reader_close(&r);
    return rc;
}

/* The go-back-N step of the controller for one batch; keeps one that came too early. */
static int merge_batch(merge_state_t *st, const merge_input_t *in, const uint8_t *data, size_t len,
                       uint64_t offset) {
    measurement_t *run = st->run;
    Stampede__Envelope *env = envelope_unpack(st->arena, data, len);
    if (!env || env->body_case != STAMPEDE__ENVELOPE__BODY_BATCH || env->run_id != st->run_id ||
        env->batch->worker_index >= st->count) {
        fprintf(stderr, NAME ": %s: offset %" PRIu64 ": corrupt: %s\n", in->path, offset,
                !env                                               ? "a batch that does not decode"
                : env->body_case != STAMPEDE__ENVELOPE__BODY_BATCH ? "a frame that is no batch"
                : env->run_id != st->run_id                        ? "a batch of another run"
                                            : "a batch of a worker past the run's workers");
        return -1;
    }
    uint32_t index = env->batch->worker_index;
    run_worker_t *w = &st->run_workers[index];
    merge_worker_t *mw = &st->workers[index];
    uint64_t seq = env->batch->seq;
    switch (collect_batch(w, run->ingest, env->batch, results_record, run)) {
    case COLLECT_MERGED:
        if (in->journal) {
            mw->from_journal++;
        } else {
            mw->from_spools++;
            st->records_from_spools += env->batch->n_records;
        }
        return 1;
    case COLLECT_REFUSED: {
        char why[600];
        snprintf(why, sizeof why, "worker %s: batch %" PRIu64 " refused: %s", w->name, seq,
                 ingest_error(run->ingest));
        merge_mark_partial(run->merge, why);
        measurement_say(st->run, "%s", why);
        return 1;
    }
    case COLLECT_NO_MEMORY:
        fprintf(stderr, NAME ": out of memory merging %s\n", in->path);
        return -1;
    case COLLECT_OUT_OF_ORDER:
        break;
    }
    if (seq <= w->acked_seq) {
        mw->duplicates++;
        return 0;
    }
    if (buffer_grow_array(&st->pending, &st->cap_pending, st->n_pending + 1, sizeof *st->pending) <
            0 ||
        !(st->pending[st->n_pending].data = malloc(len))) {
        fprintf(stderr, NAME ": out of memory merging %s\n", in->path);
        return -1;
    }
    memcpy(st->pending[st->n_pending].data, data, len);
    st->pending[st->n_pending].len = len;
    st->pending[st->n_pending].worker = index;
    st->pending[st->n_pending].seq = seq;
    st->pending[st->n_pending].journal = in->journal;
    st->n_pending++;
    return 0;
}

/* Retries the batches kept for later until none can go; drops those another file supplied. */
static int merge_pending(merge_state_t *st) {
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t i = 0; i < st->n_pending; i++) {
            pending_t *p = &st->pending[i];
            uint64_t acked = st->run_workers[p->worker].acked_seq;
            if (p->seq <= acked) { /* another file had it: a resend */
                st->workers[p->worker].duplicates++;
                free(p->data);
                *p = st->pending[--st->n_pending];
                i--;
                continue;
            }
            if (p->seq != acked + 1)
                continue;
            merge_input_t from = {.path = "(a batch kept for later)", .journal = p->journal};
            int rc = merge_batch(st, &from, p->data, p->len, 0);
            if (rc < 0)
                return -1;
            free(p->data);
            *p = st->pending[--st->n_pending];
            progress = true;
            i--;
        }
    }
    return 0;
}

/* Pass 2: every batch of input, in order. */
static int merge_input(merge_state_t *st, const merge_input_t *in) {
    char err[4400];
    spool_reader_t *r = open_input(in, err, sizeof err);
    if (!r)
        return -1;
    spool_frame_t f;
    bool truncated;
    int got, rc = 0;
    while (rc == 0 && (got = spool_reader_next(r, &f, &truncated, err, sizeof err)) == 1)
        if (f.type == SPOOL_FRAME_BATCH && merge_batch(st, in, f.data, f.len, f.offset) < 0)
            rc = -1;
    spool_reader_close(&r);
    return rc < 0 ? -1 : merge_pending(st);
}

/* What each worker's part came to, said and checked: every batch up to the last any file knows
 * of, and as many records as the worker's own count of completed requests. */
static void merge_account(merge_state_t *st) {
    measurement_t *run = st->run;
    for (uint32_t i = 0; i < st->count; i++) {
        run_worker_t *w = &st->run_workers[i];
        merge_worker_t *mw = &st->workers[i];
        char own[128] = "no spool gives its own count";
        if (mw->has_count)
            snprintf(own, sizeof own, "its own count: %" PRIu64 " requests completed",
                     mw->requests_done);
        measurement_say(st->run,
                        "worker %s: %" PRIu64 " records in batches 1-%" PRIu64 " (%" PRIu64
                        " from the journal, %" PRIu64 " from spools, %" PRIu64
                        " duplicates counted once); %s",
                        w->name, w->ingested, w->acked_seq, mw->from_journal, mw->from_spools,
                        mw->duplicates, own);
        char why[600] = "";
        if (w->acked_seq < mw->last_seq)
            snprintf(why, sizeof why,
                     "worker %s: batches %" PRIu64 "-%" PRIu64 " are in no spool given and not "
                     "in the journal",
                     w->name, w->acked_seq + 1, mw->last_seq);
        else if (!mw->ended)
            snprintf(why, sizeof why,
                     "worker %s: no spool of it, and the journal ends at its batch %" PRIu64
                     ": what it sent later is missing (pass its spool)",
                     w->name, w->acked_seq);
        else if (mw->has_count && w->ingested < mw->requests_done)
            snprintf(why, sizeof why,
                     "worker %s: %" PRIu64 " records merged of the %" PRIu64
                     " requests it completed",
                     w->name, w->ingested, mw->requests_done);
        if (why[0]) {
            merge_mark_partial(run->merge, why);
            measurement_say(st->run, "%s", why);
        }
    }
    for (size_t i = 0; i < st->n_pending; i++)
        measurement_say(st->run,
                        "worker %s: batch %" PRIu64 " left out: the batches before it are "
                        "missing",
                        st->run_workers[st->pending[i].worker].name, st->pending[i].seq);
}

/* The inputs: DIR's journal first when present, then each spool once. */
static int list_inputs(merge_state_t *st, char **paths, int n, const char *dir, char *journal,
                       size_t len) {
    st->inputs = calloc((size_t)n + 1, sizeof *st->inputs);
    if (!st->inputs)
        return -1;
    snprintf(journal, len, "%s/%s", dir, JOURNAL_NAME);
    struct stat js;
    bool have_journal = stat(journal, &js) == 0;
    if (have_journal)
        st->inputs[st->n_inputs++] = (merge_input_t){.path = journal};
    for (int i = 0; i < n; i++) {
        struct stat s;
        if (stat(paths[i], &s) != 0) {
            fprintf(stderr, NAME ": %s: %s\n", paths[i], strerror(errno));
            return -1;
        }
        const char *seen = NULL;
        for (size_t j = 0; j < st->n_inputs && !seen; j++) {
            struct stat o;
            if (stat(st->inputs[j].path, &o) == 0 && o.st_dev == s.st_dev && o.st_ino == s.st_ino)
                seen = st->inputs[j].path;
        }
        if (!seen)
            st->inputs[st->n_inputs++] = (merge_input_t){.path = paths[i]};
        else if (strcmp(seen, paths[i]) == 0) /* read once: its batches are no resends to count */
            fprintf(stderr, NAME ": %s is given more than once: read once\n", paths[i]);
        else
            fprintf(stderr, NAME ": %s is the same file as %s: read once\n", paths[i], seen);
    }
    return 0;
}

static int merge_run(merge_state_t *st, const char *dir) {
    /* The config: the controller's (the journal's) when present, else a worker's. */
    const merge_input_t *source = NULL;
    for (size_t i = 0; i < st->n_inputs; i++)
        if (!source || (st->inputs[i].journal && !source->journal))
            source = &st->inputs[i];
    measurement_t *run =
        measurement_restore(NAME, source->path, source->config_yaml, dir, st->run_id);
    if (!run)
        return 1;
    run->in_run = run->started_with = st->count;
    st->options.expect_workers = st->count; /* what results.json's workers says expected */
    st->options.out_dir = run->options.out_dir;
    run->options = st->options;
    run->workers = st->worker_list;
    run->n_workers = st->count;
    run->window_starts = calloc(st->count + 1, sizeof *run->window_starts);
    run->start_ns = st->start_ns;
    run->start_unix_ns = st->start_unix_ns;
    run->stop_reason = "the controller was lost (rebuilt by stampede merge)";
    st->run = run;
    if (!run->window_starts) {
        fprintf(stderr, NAME ": out of memory\n");
        measurement_destroy(&st->run);
        return 1;
    }
    results_open_trace(run);
    char why[300];
    snprintf(why, sizeof why,
             "rebuilt by stampede merge from %zu file%s: the controller did not "
             "finish the run",
             st->n_inputs, st->n_inputs == 1 ? "" : "s");
    merge_mark_partial(run->merge, why);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < st->n_inputs; i++)
        if (merge_input(st, &st->inputs[i]) != 0)
            rc = 1;
    if (rc == 0) {
        merge_account(st);
        rc = results_finish(run, false);
    }
    measurement_destroy(&st->run);
    return rc;
}

int spool_merge_run(const char *dir, char **spools, int n_spools,
                    const spool_merge_options_t *options) {
    merge_state_t st = {.options = {.name = NAME,
                                    .allow_invalid = options->allow_invalid,
                                    .http_phases = options->http_phases}};
    char journal[4200];
    int rc = 1;
    if (list_inputs(&st, spools, n_spools, dir, journal, sizeof journal) != 0)
        goto out;
    if (st.n_inputs == 0) {
        fprintf(stderr,
                NAME ": nothing to merge: no SPOOL given and no %s (the controller writes it "
                     "during a run)\n",
                journal);
        rc = 2;
        goto out;
    }
    /* Pass 1 reads every file whole, so a bad one is refused before anything is written. The
     * first run frame sizes the workers. */
    for (size_t i = 0; i < st.n_inputs; i++) {
        merge_input_t *in = &st.inputs[i];
        char err[4400];
        spool_reader_t *r = spool_reader_open(in->path, err, sizeof err);
        spool_frame_t f;
        bool truncated;
        int got = r ? spool_reader_next(r, &f, &truncated, err, sizeof err) : -1;
        if (got == 1 && f.type == SPOOL_FRAME_RUN) {
            Stampede__SpoolRun *run = stampede__spool_run__unpack(NULL, f.len, f.data);
            if (run && run->worker_count > st.count)
                st.count = run->worker_count;
            if (run)
                stampede__spool_run__free_unpacked(run, NULL);
        }
        spool_reader_close(&r);
    }
    if (st.count == 0 || st.count > 65536) {
        fprintf(stderr, NAME ": %s: offset 8: corrupt or truncated: no run with workers\n",
                st.inputs[0].path);
        goto out;
    }
    st.run_workers = calloc(st.count, sizeof *st.run_workers);
    st.worker_list = calloc(st.count, sizeof *st.worker_list);
    st.workers = calloc(st.count, sizeof *st.workers);
    st.arena = envelope_arena_new();
    if (!st.run_workers || !st.worker_list || !st.workers || !st.arena) {
        fprintf(stderr, NAME ": out of memory\n");
        goto out;
    }
    for (uint32_t i = 0; i < st.count; i++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%u", i);
        run_worker_init(&st.run_workers[i], name, 0);
        st.run_workers[i].index = (int)i;
        st.run_workers[i].state = RUN_WORKER_COMPLETE;
        st.worker_list[i] = &st.run_workers[i];
    }
    for (size_t i = 0; i < st.n_inputs; i++)
        if (scan_input(&st, &st.inputs[i]) != 0)
            goto out;
    rc = merge_run(&st, dir);
    if (options->from_spools)
        *options->from_spools = st.records_from_spools;
out:
    for (size_t i = 0; i < st.n_pending; i++)
        free(st.pending[i].data);
    free(st.pending);
    for (size_t i = 0; st.inputs && i < st.n_inputs; i++)
        free(st.inputs[i].config_yaml);
    free(st.inputs);
    free(st.workers);
    free(st.worker_list);
    free(st.run_workers);
    envelope_arena_destroy(&st.arena);
    return rc;
}
