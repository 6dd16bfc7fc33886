/* `stampede merge SPOOL... --into DIR`: rebuilds the results of a run whose controller died from
 * DIR's journal (controller/journal.h: every batch the controller acknowledged) and the workers'
 * spools (worker/spool_file.h: what it did not), through the controller's own merge, results and
 * reports. A batch found twice (a resend, or in both a spool and the journal) counts once: batches
 * are keyed by run id, worker and sequence number. */
#ifndef STAMPEDE_SPOOL_MERGE_H
#define STAMPEDE_SPOOL_MERGE_H

/* 0 with the results written (3 invalid without --allow-invalid, as a run), 1 when they could
 * not be (a missing, corrupt or truncated spool, spools of different runs: named, with the
 * offset), 2 on a usage error. */
int spool_merge_main(int argc, char **argv);

#endif
