/* The controller's door, served on a thread of its own: a ZAP handler (libzmq's ZAP protocol, RFC
 * 27, a REP socket on inproc://zeromq.zap.01) that admits a CURVE client only when its public key
 * is in the --authorized-keys ring (without a ring, every plain TCP client) and logs each refusal
 * with the peer's address; and a monitor of each ROUTER that logs failed handshakes and, when
 * asked, closed connections with the peer's address and port (libzmq drops a message over
 * ZMQ_MAXMSGSIZE by closing the connection, with no other sign). libzmq 4.3.4's monitor gives only
 * the descriptor, so the address is read with getpeername: the gate reads every pending monitor
 * event before each ZAP reply, while the asking connection's handshake waits on it, so a peer that
 * got far enough to send a message is always named. A thread, not the controller's loop: a
 * handshake must be answered even while the loop is busy writing results, and a stalled ZAP reply
 * would stall every handshake. */
#ifndef STAMPEDE_GATE_H
#define STAMPEDE_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "keys.h"

typedef struct gate gate_t;

/* A gate in ctx, its ZAP handler bound now: call this before binding any socket, since a CURVE
 * server with no ZAP handler admits every key. With a ring (kept, not owned; authorized_dir names
 * it in messages) it admits CURVE keys in the ring; without, plain TCP clients; an admitted key's
 * User-Id is its owner (keys_ring_user). name prefixes messages; role names whose keys the ring
 * holds in a refusal ("refused a worker at ..."). NULL with the reason in err. */
gate_t *gate_new(void *ctx, const keys_ring_t *ring, const char *authorized_dir, const char *name,
                 const char *role, char *err, size_t errlen);
/* Monitors sock (bound to a TCP port, with a ZMQ_ZAP_DOMAIN set before the bind so that its
 * handshakes go through the gate; before gate_start), labelled "control" or "data" in messages;
 * limit_bytes is its ZMQ_MAXMSGSIZE, named when a connection closes; log_closes also logs
 * connections that close after a completed handshake. 0 ok, -1 with the reason in err. */
int gate_watch(gate_t *self, void *sock, const char *label, long long limit_bytes, bool log_closes,
               char *err, size_t errlen);
/* Starts the thread that serves the ZAP socket and the monitors. 0 ok, -1 with the reason. */
int gate_start(gate_t *self, char *err, size_t errlen);
/* Stops the monitors (call it while the watched sockets are still open), stops the thread, closes
 * its sockets, frees and sets *self_p to NULL (NULL is fine). */
void gate_destroy(gate_t **self_p);

#endif
