#include "spool_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

void spool_file_path(const char *dir, const char *name, uint64_t run_id, char *out, size_t len) {
    int n = snprintf(out, len, "%s/stampede-%016" PRIx64 "-", dir, run_id);
    for (const char *p = name; n > 0 && (size_t)n + 1 < len && *p; p++)
        out[n++] = *p == '/' ? '_' : *p;
    if (n > 0 && (size_t)n < len) {
        out[n] = '\0';
        snprintf(out + n, len - (size_t)n, ".spool");
    }
}

static int write_batch(void *arg, const uint8_t *data, size_t len) {
    return spool_write_frame(arg, SPOOL_FRAME_BATCH, data, len);
}

int spool_file_write(const char *path, const spool_file_run_t *run, const events_t *events,
                     char *err, size_t errlen) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    spool_writer_t *sw = spool_writer_open(tmp, err, errlen);
    if (!sw)
        return -1;
    char writer[200];
    snprintf(writer, sizeof writer, "worker %s", run->name);
    Stampede__SpoolRun r = STAMPEDE__SPOOL_RUN__INIT;
    r.run_id = run->run_id;
    r.config_yaml = (char *)(run->config_yaml ? run->config_yaml : "");
    r.start_ns = run->start_ns;
    r.start_unix_ns = run->start_unix_ns;
    r.writer = writer;
    r.worker_count = run->count;
    Stampede__SpoolWorker w = STAMPEDE__SPOOL_WORKER__INIT;
    w.index = run->index;
    w.name = (char *)run->name;
    w.offset_ns = run->offset_ns;
    w.rtt_ns = run->rtt_ns;
    Stampede__SpoolEnd e = STAMPEDE__SPOOL_END__INIT;
    e.worker_index = run->index;
    e.requests_done = run->requests_done;
    e.records = events_records(events);
    e.dropped = events_dropped(events);
    e.last_seq = events_last_seq(events);
    e.acked_seq = events_acked_seq(events);
    e.done = run->done;
    size_t unacked = events_unacked(events);
    int rc = spool_write_run(sw, &r) || spool_write_worker(sw, &w) ||
             events_foreach_unacked(events, write_batch, sw) != unacked || spool_write_end(sw, &e);
    int saved = errno;
    if (spool_writer_close(&sw) != 0 && !rc) {
        rc = -1;
        saved = errno;
    }
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(saved));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
