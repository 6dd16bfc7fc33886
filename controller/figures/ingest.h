/* Turning the records of workers' event batches back into request_record_t on the controller's
 * clock: the inverse of worker/events, plus the conversion by the clock offset measured for the
 * worker (worker clock minus controller clock). Chunk arrays are decoded into storage the ingest
 * owns and reuses, so decoding allocates only while a record is longer than any before it.
 * Every value comes from the network: one whose timestamp arithmetic would overflow refuses the
 * record, and a batch is merged whole or not at all. */
#ifndef STAMPEDE_INGEST_H
#define STAMPEDE_INGEST_H

#include <stdint.h>

#include "record.h"
#include "stampede.pb-c.h"

typedef struct ingest ingest_t;

/* Why a record or a batch was not decoded (the negative results below). */
typedef enum ingest_failure {
    INGEST_NO_MEMORY = -1, /* worth another try: the same bytes may decode later */
    INGEST_REFUSED = -2,   /* the bytes themselves are wrong; ingest_error says how */
} ingest_failure_t;

/* Records a batch may hold: a worker seals its batches at 512 (worker/events.c), so a batch past
 * this is refused whole, before any record is decoded. */
#define INGEST_MAX_RECORDS 65536

/* Called for each decoded record; the record and its chunk arrays are valid during the call. */
typedef void (*ingest_record_fn)(void *arg, request_record_t *record);

/* A new decoder; NULL on allocation failure. */
ingest_t *ingest_new(void);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void ingest_destroy(ingest_t **self_p);
/* Decodes msg into *out with every timestamp moved to the controller's clock (minus offset_ns);
 * out->worker is set to worker. out's chunk arrays point into self's storage, valid until the
 * next call. 0 ok, INGEST_NO_MEMORY, or INGEST_REFUSED (a timestamp out of range, chunk token
 * counts that do not match the chunks). */
int ingest_record(ingest_t *self, const Stampede__Record *msg, int64_t offset_ns, uint32_t worker,
                  request_record_t *out);
/* Decodes every record of a batch, then hands each to fn: either every record reaches fn or
 * none does, so a batch refused and sent again is never merged twice. Returns the number of
 * records, or INGEST_NO_MEMORY / INGEST_REFUSED (fn was not called; also for a batch of more than
 * INGEST_MAX_RECORDS records). */
long ingest_batch(ingest_t *self, const Stampede__EventBatch *batch, int64_t offset_ns,
                  uint32_t worker, ingest_record_fn fn, void *arg);
/* What the last INGEST_REFUSED refused and why, e.g. "record 3 (request 17): chunk 2 time out of
 * range"; owned by self, valid until the next call. */
const char *ingest_error(const ingest_t *self);

#endif
