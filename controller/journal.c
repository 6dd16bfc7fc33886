#include "journal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console.h"
#include "controller_internal.h"
#include "loop.h"
#include "spool.h"

static void journal_path(const controller_t *self, char *out, size_t len) {
    snprintf(out, len, "%s/%s", self->run->cfg.output.dir, JOURNAL_NAME);
}

static void journal_failed(controller_t *self, const char *what) {
    measurement_t *run = self->run;
    char why[4600], path[4200];
    journal_path(self, path, sizeof path);
    snprintf(why, sizeof why,
             "the journal %s could not be %s (%s): a controller killed now "
             "would lose acknowledged batches",
             path, what, strerror(errno));
    console_say(self, "%s", why);
    merge_mark_partial(run->merge, why);
    spool_writer_close(&run->journal);
}

void journal_open(controller_t *self) {
    measurement_t *run = self->run;
    char path[4200], err[4400];
    journal_path(self, path, sizeof path);
    run->journal = spool_writer_open(path, err, sizeof err);
    if (!run->journal) {
        console_say(self, "%s; the run goes on without a journal", err);
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
    for (size_t i = 0; rc == 0 && i < self->n_workers; i++) {
        const registry_worker_t *w = &self->workers[i];
        if (!registry_in_run(w))
            continue;
        Stampede__SpoolWorker sw = STAMPEDE__SPOOL_WORKER__INIT;
        sw.index = (uint32_t)w->index;
        sw.name = (char *)w->name;
        sw.offset_ns = w->offset_ns;
        sw.rtt_ns = w->rtt_ns;
        rc = spool_write_worker(run->journal, &sw);
    }
    if (rc != 0 || spool_writer_flush(run->journal) != 0)
        journal_failed(self, "written");
}

void journal_batch(controller_t *self, const uint8_t *data, size_t len) {
    measurement_t *run = self->run;
    if (!run->journal)
        return;
    int64_t t0 = loop_now_ns();
    if (spool_write_frame(run->journal, SPOOL_FRAME_BATCH, data, len) != 0 ||
        spool_writer_flush(run->journal) != 0) {
        journal_failed(self, "written");
        return;
    }
    run->journal_ns += loop_now_ns() - t0;
    run->journal_batches++;
}

void journal_done(controller_t *self, const registry_worker_t *w) {
    measurement_t *run = self->run;
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
        journal_failed(self, "written");
}

void journal_close(controller_t *self) {
    measurement_t *run = self->run;
    if (!run || !run->journal)
        return;
    char path[4200];
    journal_path(self, path, sizeof path);
    uint64_t bytes = spool_writer_bytes(run->journal);
    if (spool_writer_close(&run->journal) != 0) {
        console_say(self, "the journal %s is incomplete: %s", path, strerror(errno));
        return;
    }
    const char *why = NULL;
    if (!merge_partial(run->merge, &why)) {
        unlink(path); /* results.json has it all */
        return;
    }
    console_say(self,
                "journal kept for `stampede merge`: %s (%" PRIu64 " batches, %.1f MiB, %.1f ms "
                "appending and flushing, %.1f us a batch)",
                path, run->journal_batches, bytes / 1048576.0, run->journal_ns / 1e6,
                run->journal_batches ? run->journal_ns / 1e3 / (double)run->journal_batches : 0.0);
}
