/* Gathering a started run: each worker's event batches are merged strictly in sequence (go back
 * N: a duplicate or a batch past a gap is only answered with the cumulative Ack), its Done is
 * matched against what was merged, and it is released once everything up to its last batch is
 * in. On an interrupt every unfinished worker is told to stop and is drained. */
#ifndef STAMPEDE_COLLECT_H
#define STAMPEDE_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest.h"
#include "measurement.h"
#include "run_worker.h"
#include "stampede.pb-c.h"

/* What collect_batch did with a batch. */
typedef enum collect_batch_outcome {
    COLLECT_MERGED,       /* the next in sequence: every record handed on, acked_seq advanced */
    COLLECT_OUT_OF_ORDER, /* a duplicate or a batch past a gap: nothing handed on */
    COLLECT_REFUSED,      /* the next, but it does not decode: nothing handed on, and acked_seq
                             advanced past it (the same bytes would be refused again) */
    COLLECT_NO_MEMORY,    /* the next, but memory ran out: nothing handed on, nothing acked, so
                             the worker sends it again */
} collect_batch_outcome_t;

/* The go-back-N step for one batch of w: hands every record of the batch that follows
 * w->acked_seq to fn (with w's clock offset and index), or none of them; updates w->acked_seq
 * and w->ingested. On COLLECT_REFUSED, ingest_error(ingest) says why. */
collect_batch_outcome_t collect_batch(run_worker_t *w, ingest_t *ingest,
                                      const Stampede__EventBatch *batch, ingest_record_fn fn,
                                      void *arg);
/* A message of w's from the data socket (data, len: as received; env: unpacked): merges the
 * next batch of the run, acks and releases w when it is complete. */
void collect_data(measurement_t *run, run_worker_t *w, const Stampede__Envelope *env,
                  const uint8_t *data, size_t len);
/* w's Done: kept, and w released when every batch it announced is merged (again when w repeats
 * its Done after our release was lost). */
void collect_done(measurement_t *run, run_worker_t *w, const Stampede__Done *done);

#endif
