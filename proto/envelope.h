/* What both ends of the wire share beyond the generated messages: the protocol version, the
 * worker states a Heartbeat carries, one way to pack an envelope, and unpacking into an arena so
 * a batch of many records costs a few allocations instead of one per message. Linked by the
 * worker and the controller alike (the controller links neither worker/ nor mock/). */
#ifndef STAMPEDE_ENVELOPE_H
#define STAMPEDE_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stampede.pb-c.h"

/* The protocol this build speaks; a controller refuses a worker that speaks another. */
#define PROTOCOL_VERSION 1

/* Worker states as a Heartbeat reports them (Heartbeat.state). */
typedef enum {
    ENVELOPE_WORKER_IDLE = 0,
    ENVELOPE_WORKER_ASSIGNED = 1,
    ENVELOPE_WORKER_RUNNING = 2,
    ENVELOPE_WORKER_FINISHING = 3
} envelope_worker_state_t;

/* Makes env (initialised here) a Stop of run_id, its body in *stop, which must outlive the send. */
void envelope_stop(Stampede__Envelope *env, Stampede__Stop *stop, uint64_t run_id,
                   const char *reason, bool cancel, bool abandon);

/* Packs env into *buf, growing it (*cap) as needed; the packed length, or 0 when out of memory. */
size_t envelope_pack(const Stampede__Envelope *env, uint8_t **buf, size_t *cap);

/* A bump allocator for unpacking: blocks are kept between messages and reused, so unpacking a
 * message no larger than the biggest before it allocates nothing. */
typedef struct envelope_arena envelope_arena_t;

/* A new arena; NULL on allocation failure. */
envelope_arena_t *envelope_arena_new(void);
/* Frees the arena and its blocks and sets *self_p to NULL (NULL is fine). */
void envelope_arena_destroy(envelope_arena_t **self_p);
/* Unpacks data into the arena, forgetting whatever the previous call unpacked (valid until the
 * next call or the destroy). NULL when the bytes do not decode or memory ran out. */
Stampede__Envelope *envelope_unpack(envelope_arena_t *self, const uint8_t *data, size_t len);
/* How many times the arena asked malloc for a block since it was made. A test seam: tests prove
 * the arena reuses its blocks from message to message. */
uint64_t envelope_arena_blocks_allocated(const envelope_arena_t *self);
/* How many allocations protobuf-c asked of the arena since it was made (a test seam, as above). */
uint64_t envelope_arena_allocations(const envelope_arena_t *self);

/* The default cap on an arena's blocks. protobuf-c allocates a whole message struct for each
 * submessage on the wire, so a 2-byte empty Record costs ~250 bytes: without a cap a hostile
 * message would cost ~100 times its size. An honest batch (512 records, 256 KiB) needs a few MiB.
 */
#define ENVELOPE_ARENA_LIMIT ((size_t)64 << 20)
/* Caps the bytes of the arena's blocks (never below what it already holds): an unpack that would
 * need more fails (NULL) and envelope_arena_error says so. A test seam: the product keeps
 * ENVELOPE_ARENA_LIMIT; tests lower it to reach the refusal with small messages. */
void envelope_arena_set_limit(envelope_arena_t *self, size_t max_bytes);
/* Why the last unpack returned NULL: the bytes do not decode, or they need more than the limit. */
const char *envelope_arena_error(const envelope_arena_t *self);

/* Unpacks data with malloc, refusing (NULL, and *over set when over is given) a message whose
 * unpacked structs, arrays and copies would need more than max_bytes: what a worker unpacks
 * from its controller, so that a hostile one cannot make a small message cost ~125 times its size
 * in submessage structs (an honest message needs its length plus a few hundred bytes). Free the
 * result with envelope_free. NULL also when the bytes do not decode (*over false). */
Stampede__Envelope *envelope_unpack_bounded(const uint8_t *data, size_t len, size_t max_bytes,
                                            bool *over);
/* Frees an envelope of envelope_unpack_bounded (NULL is fine). */
void envelope_free(Stampede__Envelope *env);
/* What envelope_unpack_bounded may spend beyond the message's own length: the structs of an
 * honest envelope (an Assign, a Welcome...) and their strings' terminators. */
#define ENVELOPE_UNPACK_SLACK ((size_t)1 << 20)

#endif
