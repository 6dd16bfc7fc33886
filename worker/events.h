/* Event batching on a worker. Each finished request is packed at once (a protobuf Record, chunk
 * receive times as packed varints of microsecond gaps) into the open batch; a batch is sealed by
 * size or by the caller's timer into a complete data-channel Envelope with the next sequence
 * number, and kept in a bounded ring until the controller acknowledges it. Sending never blocks:
 * events_flush hands sealed batches to a send function until it refuses one, and a rewind (after
 * a reconnect) sends everything unacknowledged again. Buffers are reused from batch to batch. */
#ifndef STAMPEDE_EVENTS_H
#define STAMPEDE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

typedef struct events events_t;

typedef struct events_options {
    uint32_t batch_records; /* seal when the open batch holds this many records; default 512 */
    size_t batch_bytes;     /* or this many bytes; default 256 KiB */
    size_t ring_batches;    /* unacknowledged batches kept at most; default 4096 */
    size_t ring_bytes;      /* unacknowledged bytes kept at most; default 256 MiB */
    uint32_t proto_version; /* written in every envelope (agent.h PROTOCOL_VERSION); required */
    int64_t clock_shift_ns; /* added to every timestamp (test hook STAMPEDE_TEST_CLOCK_OFFSET_NS) */
} events_options_t;

/* Sends one packed envelope without blocking: 0 when it went out, -1 when it must wait. */
typedef int (*events_send_fn)(void *arg, const uint8_t *data, size_t len);

/* A new batcher; zero option fields take their default. NULL on allocation failure. */
events_t *events_new(const events_options_t *options);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void events_destroy(events_t **self_p);
/* Starts a run: forgets every batch and record, sequence numbers restart at 1. */
void events_begin_run(events_t *self, uint64_t run_id, uint32_t worker_index);

/* Packs rec into the open batch (the record's chunk arrays are read now, not kept). Seals the
 * batch when it reaches the size limits. Returns 1 when a batch was sealed, 0 when not, -1 when
 * the ring was full and the record was dropped (counted by events_dropped). */
int events_add(events_t *self, const request_record_t *rec);
/* Seals the open batch if it holds any record. 1 sealed, 0 nothing to seal, -1 ring full (the
 * batch stays open and keeps growing until the ring has room). */
int events_seal(events_t *self);
/* Hands sealed, unsent batches to send in order until it refuses one; returns how many went. */
size_t events_flush(events_t *self, events_send_fn send, void *arg);
/* Hands every sealed, unacknowledged batch (a packed envelope) to fn in sequence order, sent or
 * not, without changing anything (for the spool); stops at the first refusal. How many went. */
size_t events_foreach_unacked(const events_t *self, events_send_fn fn, void *arg);
/* Cumulative acknowledgement: batches with seq <= up_to_seq are freed. Stale acks are ignored. */
void events_ack(events_t *self, uint64_t up_to_seq);
/* Every unacknowledged batch is to be sent again (after a reconnect). */
void events_rewind(events_t *self);

/* Sequence number of the last sealed batch (0 before the first). */
uint64_t events_last_seq(const events_t *self);
/* Highest sequence number acknowledged. */
uint64_t events_acked_seq(const events_t *self);
/* Sealed batches not yet acknowledged. */
size_t events_unacked(const events_t *self);
/* Records in the open batch. */
uint32_t events_open_records(const events_t *self);
/* Records sealed into batches this run, and records dropped because the ring was full. */
uint64_t events_records(const events_t *self);
uint64_t events_dropped(const events_t *self);

#endif
