#include "journal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"
#include "spool.h"

static void journal_path(const measurement_t *run, char *out, size_t len) {
    snprintf(out, len, "%s/%s", run->cfg.output.dir, JOURNAL_NAME);
}

static void journal_failed(measurement_t *run, const char *what) {
    char why[4600], path[4200];
    journal_path(run, path, sizeof path);
    snprintf(why, sizeof why,
             "the journal %s could not be %s (%s): a controller killed now "
             "would lose acknowledged batches",
             path, what, strerror(errno));
    measurement_say(run, "%s", why);
    merge_mark_partial(run->merge, why);
    spool_writer_close(&run->journal);
}

void journal_open(measurement_t *run) {
    char path[4200], err[4400];
    journal_path(run, path, sizeof path);
    run->journal = spool_writer_open(path, err, sizeof err);
    if (!run->journal) {
        measurement_say(run, "%s; the run goes on without a journal", err);
        return;
    }
    char *yaml = config_to_yaml(&run->cfg);
    Stampede__SpoolRun r = STAMPEDE__SPOOL_RUN__INIT;
    r.run_id = run->id;
    r.config_yaml = yaml ? yaml : (char *)"";
    r.start_ns = run->start_ns;
    r.start_unix_ns = run->start_unix_ns;
    r.writer = "controller";
    r.worker_count = run->in_run;
    int rc = yaml ? spool_write_run(run->journal, &r) : -1;
    free(yaml);
    for (size_t i = 0; rc == 0 && i < run->n_workers; i++) {
        const run_worker_t *w = run->workers[i];
        if (!run_worker_in_run(w))
            continue;
        Stampede__SpoolWorker sw = STAMPEDE__SPOOL_WORKER__INIT;
        sw.index = (uint32_t)w->index;
        sw.name = (char *)w->name;
        sw.offset_ns = w->offset_ns;
        sw.rtt_ns = w->rtt_ns;
        rc = spool_write_worker(run->journal, &sw);
    }
    if (rc != 0 || spool_writer_flush(run->journal) != 0)
        journal_failed(run, "written");
}

void journal_batch(measurement_t *run, const uint8_t *data, size_t len) {
    if (!run->journal)
        return;
    int64_t t0 = loop_now_ns();
    if (spool_write_frame(run->journal, SPOOL_FRAME_BATCH, data, len) != 0 ||
        spool_writer_flush(run->journal) != 0) {
        journal_failed(run, "written");
        return;
    }
    run->journal_ns += loop_now_ns() - t0;
    run->journal_batches++;
}

void journal_done(measurement_t *run, const run_worker_t *w) {
    if (!run->journal)
        return;
    Stampede__SpoolEnd e = STAMPEDE__SPOOL_END__INIT;
    e.worker_index = (uint32_t)w->index;
    e.records = w->done_records;
    e.dropped = w->done_dropped;
    e.last_seq = w->done_last_seq;
    e.acked_seq = w->acked_seq;
    e.done = true;
    if (spool_write_end(run->journal, &e) != 0 || spool_writer_flush(run->journal) != 0)
        journal_failed(run, "written");
}

void journal_close(measurement_t *run) {
    if (!run || !run->journal)
        return;
    char path[4200];
    journal_path(run, path, sizeof path);
    uint64_t bytes = spool_writer_bytes(run->journal);
    if (spool_writer_close(&run->journal) != 0) {
        measurement_say(run, "the journal %s is incomplete: %s", path, strerror(errno));
        return;
    }
    const char *why = NULL;
    if (!merge_partial(run->merge, &why)) {
        unlink(path); /* results.json has it all */
        return;
    }
    measurement_say(run,
                    "journal kept for `stampede merge`: %s (%" PRIu64 " batches, %.1f MiB, %.1f ms "
                    "appending and flushing, %.1f us a batch)",
                    path, run->journal_batches, bytes / 1048576.0, run->journal_ns / 1e6,
                    run->journal_batches ? run->journal_ns / 1e3 / (double)run->journal_batches
                                         : 0.0);
}
