/* The controller's journal of a run: OUT/journal.spool (the format of proto/spool.h) holds the
 * run (its redacted config, the start instant), its workers (clock offsets), every batch the
 * controller merged, appended and handed to the kernel BEFORE the batch is acknowledged (so what
 * a worker dropped from its ring on an ack survives a SIGKILL of the controller), and each
 * worker's Done. With the workers' spools, `stampede merge` rebuilds the run from it. A run that
 * ends complete removes its journal (results.json has it all); a partial one keeps it. */
#ifndef STAMPEDE_JOURNAL_H
#define STAMPEDE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "measurement.h"
#include "run_worker.h"
#include "stampede.pb-c.h"

#define JOURNAL_NAME "journal.spool"

/* Creates the journal of the run that starts now (start_ns set, workers indexed). A failure is
 * said and the run goes on without one. */
void journal_open(measurement_t *run);
/* Appends a merged batch envelope (as received) and flushes it: call before the ack. A failure
 * is said once, the results marked partial, and journaling stops. */
void journal_batch(measurement_t *run, const uint8_t *data, size_t len);
/* Appends w's Done (its last batch and record count). */
void journal_done(measurement_t *run, const run_worker_t *w);
/* Closes the journal at the end of the run: removed when the results are complete, kept when they
 * are partial (its path and what it cost said). */
void journal_close(measurement_t *run);

#endif
