/* A worker's spool: the batches of a run its controller has not acknowledged, written to a local
 * file while the controller is unreachable (and when the worker exits with batches unacknowledged),
 * in the format of proto/spool.h, for `stampede merge`. The file is rewritten whole each time
 * (PATH.tmp, then renamed), so it is always complete: the run, this worker, every unacknowledged
 * batch as it travelled, and a trailer with the worker's own counts. */
#ifndef STAMPEDE_SPOOL_FILE_H
#define STAMPEDE_SPOOL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

typedef struct spool_file_run {
    uint64_t run_id;
    const char *config_yaml; /* redacted */
    int64_t start_ns;        /* the start instant on the controller's clock */
    int64_t start_unix_ns;
    const char *name; /* the worker's */
    uint32_t index, count;
    int64_t offset_ns, rtt_ns;
    uint64_t requests_done; /* requests the worker completed in the run */
    bool done;              /* the run is over at the worker: no batch will follow */
} spool_file_run_t;

/* The spool path of a worker's run: DIR/stampede-RUNID-NAME.spool (NAME with '/' replaced). */
void spool_file_path(const char *dir, const char *name, uint64_t run_id, char *out, size_t len);
/* Writes the spool of run (events' unacknowledged batches) to path; 0, or -1 with the reason in
 * err. */
int spool_file_write(const char *path, const spool_file_run_t *run, const events_t *events,
                     char *err, size_t errlen);

#endif
