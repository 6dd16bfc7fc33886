/* `stampede merge SPOOL... --into DIR`: rebuilds the results of a run whose controller died from
 * DIR's journal (controller/journal.h: every batch the controller acknowledged) and the workers'
 * spools (worker/spool_file.h: what it did not), through the controller's own merge, results and
 * reports. A batch found twice (a resend, or in both a spool and the journal) counts once: batches
 * are keyed by run id, worker and sequence number. */
#ifndef STAMPEDE_SPOOL_MERGE_H
#define STAMPEDE_SPOOL_MERGE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct spool_merge_options {
    bool allow_invalid;    /* exit 0 for a run judged invalid (else 3, as a run) */
    bool http_phases;      /* the table also shows the HTTP phases */
    uint64_t *from_spools; /* when set: gets the records merged from spools, not the journal */
} spool_merge_options_t;

/* Rebuilds the run into dir from its journal (when there) and the n_spools spools: 0 with the
 * results written (3 invalid without allow_invalid, as a run), 1 when they could not be (a
 * missing, corrupt or truncated spool, spools of different runs: named, with the offset), 2 when
 * there is nothing to merge. */
int spool_merge_run(const char *dir, char **spools, int n_spools,
                    const spool_merge_options_t *options);

#endif
