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
/* Sends Stop{cancel} with reason to every unfinished worker of the run and drains for 15 s. */
void collect_stop(measurement_t *run, const char *reason);
/* A limit of the run (the circuit breaker) stops it for why, as its policy says: a sweep's stops
 * the level; a plain run's is said, marked partial and collect_stop. */
void collect_limit_stop(measurement_t *run, const char *why);
/* The drain of an interrupt: Stop{cancel: false} (no new request; those in flight go on) to every
 * unfinished worker; once grace_ns has passed, collect_grace_step sends Stop{cancel} to those not
 * done yet, and the run waits 15 s more for them. grace_ns <= 0 is collect_stop. */
void collect_stop_grace(measurement_t *run, const char *reason, int64_t grace_ns);
/* Called on every loop iteration of a run: cancels what is still in flight once the grace period
 * of collect_stop_grace has passed. */
void collect_grace_step(measurement_t *run, int64_t now);

/* Undecodable messages logged one by one before only every 1000th is. */
#define COLLECT_UNDECODABLE_LOGGED 10
/* Whether the failures-th undecodable message is logged (the first few, then every 1000th), so
 * a peer that floods the controller with garbage cannot flood its console. */
bool collect_undecodable_logged(uint64_t failures);
/* w reported a number outside the plan's bounds (bounds.h): refused (the caller does not use
 * it), counted on w, its first reason kept for the run's verdict, and logged within
 * collect_undecodable_logged. what names it ("a record", "a heartbeat"). */
void collect_refuse_number(measurement_t *run, run_worker_t *w, const char *what, const char *why);

#endif
