/* The controller's two ROUTER sockets, both bound: control (registration, clock probes, Assign,
 * Start, Stop, heartbeats, Done) and data (event batches and their Acks), so a backlog of batches
 * never delays a heartbeat or a Stop. A worker routes both with one id. Options as
 * docs/protocol.md lists them: ROUTER_MANDATORY (an unknown or full peer is an error, never a
 * silent drop), ROUTER_HANDOVER, ZMTP heartbeats, a bounded linger; data also RCVHWM 100 000.
 * Both have a ZMQ_MAXMSGSIZE (libzmq closes the connection of a peer that sends more) and, with
 * keys, CURVE with a ZAP handler that admits only the authorized workers (controller/gate.h,
 * docs/security.md). */
#ifndef STAMPEDE_TRANSPORT_H
#define STAMPEDE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stampede.pb-c.h"

typedef struct transport transport_t;

typedef enum { TRANSPORT_CONTROL, TRANSPORT_DATA } transport_socket_t;

/* The largest message a worker may send on each socket (ZMQ_MAXMSGSIZE): control carries Hello,
 * Ready, Heartbeat and Done (a few KiB); data an EventBatch, sealed at 256 KiB plus its last
 * record (worker/events.h), whose chunk times are a few bytes per token. */
#define TRANSPORT_MAX_CONTROL_BYTES (1LL << 20)
#define TRANSPORT_MAX_DATA_BYTES (16LL << 20)

/* Who may connect (docs/security.md). With key_file and authorized_keys (both or neither) both
 * sockets are CURVE servers; without, plain TCP, refused on an address other machines can reach
 * unless insecure. */
typedef struct transport_security {
    const char *key_file;        /* --key: the controller's secret key (stampede keygen) */
    const char *authorized_keys; /* --authorized-keys DIR: every worker's NAME.pub */
    bool insecure;               /* --insecure: plain TCP on a non-loopback address */
    bool log_closes;             /* log every worker connection that closes, with its address */
} transport_security_t;

/* Called with one received message: the sender's routing id, the payload (both valid during the
 * call) and rx_ns, the CLOCK_MONOTONIC instant it was taken off the socket. */
typedef void (*transport_message_fn)(void *arg, const uint8_t *id, size_t id_len,
                                     const uint8_t *data, size_t len, int64_t rx_ns);

/* Binds control on bind ("tcp://HOST:PORT", PORT may be * or 0 for a free one) and data on
 * data_port, else PORT+1, else a free port when PORT is free, secured as security says (NULL:
 * plain TCP under the same loopback rule). NULL after printing "NAME: why" on stderr. The caller
 * destroys it. */
transport_t *transport_new(const char *bind, uint32_t data_port,
                           const transport_security_t *security, const char *name);
/* Closes both sockets and terminates the context, which delivers what is queued (Stops) within
 * the 1 s linger; frees and sets *self_p to NULL (NULL is fine). */
void transport_destroy(transport_t **self_p);
/* The bound control endpoint with the real port, e.g. "tcp://127.0.0.1:40123". */
const char *transport_endpoint(const transport_t *self);
/* The bound data port (announced to workers in the Welcome). */
uint32_t transport_data_port(const transport_t *self);
/* Stamps env's protocol version and the next sequence number, packs it and sends it to the
 * worker with routing id id, never blocking. 0 sent, -1 not (unknown or full peer, no memory). */
int transport_send(transport_t *self, transport_socket_t socket, const uint8_t *id, size_t id_len,
                   Stampede__Envelope *env);
/* Takes one [routing id][payload] message off socket without blocking and hands it to fn (extra
 * frames are discarded). 1 when a message was taken, 0 when none was waiting. */
int transport_receive(transport_t *self, transport_socket_t socket, transport_message_fn fn,
                      void *arg);
/* The IP address of the peer whose message is being handed to a transport_message_fn (libzmq's
 * Peer-Address: no port), "" when unknown (ipc://) or outside such a call. Valid during the call.
 */
const char *transport_peer_address(const transport_t *self);
/* Waits up to timeout_ms for a message on control (and on data when with_data), also woken when one
 * of up to TRANSPORT_MAX_FDS extra descriptors is readable (those < 0 are skipped): the
 * controller's other work (the server-metrics scraper, the live metrics) shares the wait. */
#define TRANSPORT_MAX_FDS 4
void transport_wait_fds(transport_t *self, bool with_data, long timeout_ms, const int *fds,
                        size_t n_fds);

#endif
