/* The ZeroMQ side of one worker loop: a control DEALER and a data DEALER (same routing id, two
 * controller ports), both on the worker's loop through their ZMQ_FD (edge-triggered, drained
 * while ZMQ_EVENTS says POLLIN). It registers (Hello every second until Welcome), answers clock
 * probes, exchanges heartbeats, notices a silent controller, acknowledges nothing itself and
 * never blocks: every send is ZMQ_DONTWAIT. Run-level messages go up to the worker through
 * callbacks; event batches come from an events_t the worker fills. */
#ifndef STAMPEDE_AGENT_H
#define STAMPEDE_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "envelope.h"
#include "events.h"
#include "loop.h"
#include "stampede.pb-c.h"

typedef struct agent agent_t;

/* Worker states as reported in heartbeats (their numbers are the protocol's, proto/envelope.h). */
typedef enum {
    AGENT_IDLE = ENVELOPE_WORKER_IDLE,
    AGENT_ASSIGNED = ENVELOPE_WORKER_ASSIGNED,
    AGENT_RUNNING = ENVELOPE_WORKER_RUNNING,
    AGENT_FINISHING = ENVELOPE_WORKER_FINISHING
} agent_state_t;

/* What the worker reports in each heartbeat. */
typedef struct agent_status {
    agent_state_t state;
    uint32_t inflight;
    uint64_t requests_done;
    uint64_t session_frontier; /* 1 + the highest session index started (0: none) */
    uint64_t sessions_started;
} agent_status_t;

typedef struct agent_callbacks {
    /* A run was assigned (run_id from the envelope); the worker answers with agent_send_ready. */
    void (*assign)(void *arg, uint64_t run_id, const Stampede__Assign *assign);
    /* Start at start_ns, already converted to this process's CLOCK_MONOTONIC. */
    void (*start)(void *arg, uint64_t run_id, int64_t start_ns);
    /* Stop: cancel the run (stop->cancel) or, after Done, the release to idle. */
    void (*stop)(void *arg, uint64_t run_id, const Stampede__Stop *stop);
    /* Registered (the first Welcome since the last loss or reconnect); run_id is the run the
     * controller still counts this worker in (0 none). */
    void (*welcome)(void *arg, uint64_t run_id, const Stampede__Welcome *welcome);
    /* No traffic from the controller for the liveness period: stop the load now. */
    void (*lost)(void *arg);
    /* The controller refused this worker (reason is the controller's message). */
    void (*refused)(void *arg, const char *reason);
    /* Fills the heartbeat's status. */
    void (*status)(void *arg, agent_status_t *out);
    /* The controller's session-index grant for run_id (from Start or a heartbeat): no session at
     * or past limit may start. NULL: ignored. */
    void (*limit)(void *arg, uint64_t run_id, uint64_t limit);
    /* Take over part of a lost worker's load (docs/protocol.md "Worker loss"). NULL: ignored. */
    void (*rebalance)(void *arg, uint64_t run_id, const Stampede__Rebalance *rebalance);
    /* Fills what the worker holds unacknowledged of its run, for the Hello; false: nothing (the
     * Hello carries no held run). NULL: never anything. */
    bool (*held)(void *arg, Stampede__HeldRun *out);
} agent_callbacks_t;

typedef struct agent_options {
    const char *endpoint; /* controller control endpoint, "tcp://HOST:PORT" */
    const char *name;     /* logical identity shown by the controller */
    uint32_t thread;      /* loop index within the process */
    uint32_t threads;
    uint32_t capacity;      /* concurrent streams this loop can hold */
    uint32_t proto_version; /* PROTOCOL_VERSION, or another one for the refusal test */
    int64_t clock_shift_ns; /* test hook: added to every clock reading this agent reports */
    int64_t heartbeat_ns;   /* default 1 s */
    int64_t liveness_ns;    /* controller silence that means lost; default 3 s */
    const char *server_key; /* the controller's CURVE public key (Z85); NULL: plain TCP */
    const char *public_key; /* this worker's CURVE key pair (Z85), with server_key */
    const char *secret_key;
    int64_t max_control_bytes; /* ZMQ_MAXMSGSIZE in: the Assign with its config (and trace) */
    bool has_job_index;        /* job_index goes in the Hello (worker --index) */
    uint32_t job_index;
} agent_options_t;

/* The largest Assign a worker accepts by default (worker --max-message-size), and the largest
 * message on its data socket (Acks). */
#define AGENT_MAX_CONTROL_BYTES (64LL << 20)
#define AGENT_MAX_DATA_BYTES (1LL << 20)
/* Failed handshakes in a row (CURVE keys that do not match) before the worker gives up. */
#define AGENT_HANDSHAKE_ATTEMPTS 3

/* Creates both sockets in ctx (a libzmq context created after any fork), CURVE clients when
 * options name keys, connects the control socket and puts it on loop. A controller that refuses
 * this worker's key, or AGENT_HANDSHAKE_ATTEMPTS failed handshakes in a row (the wrong server key,
 * CURVE on one side only), end in callbacks.refused with the reason. The data socket connects when
 * the Welcome names its port. The agent sends events' sealed batches and feeds acks back to events.
 * NULL with a message on stderr on failure. */
agent_t *agent_new(void *zmq_ctx, loop_t *loop, events_t *events, const agent_options_t *options,
                   const agent_callbacks_t *callbacks, void *arg);
/* Closes the sockets (linger bounded) and frees. */
void agent_destroy(agent_t **self_p);
/* Answers an Assign, with what the endpoints said about themselves at the preflight (a JSON
 * array, or NULL). 0 sent (or queued to retry), -1 on encoding failure. */
int agent_send_ready(agent_t *self, bool ok, const char *error, uint32_t concurrency,
                     const char *server_said);
/* Reports the end of the run, with how the loop fared (proto WorkerStats, docs/metrics.md;
 * copied; NULL: not measured): repeated every heartbeat until the controller's Stop. */
void agent_send_done(agent_t *self, const char *error, const Stampede__WorkerStats *stats);
/* Stops repeating Done (the run is released). */
void agent_clear_done(agent_t *self);
/* Sends sealed batches that have not gone out yet (never blocks). */
void agent_flush(agent_t *self);
/* Tells the controller this worker leaves (SIGTERM): an orderly leave, with where its batches stand
 * (the run's last and acknowledged batches) and the spool that holds the rest (NULL: none). */
void agent_send_goodbye(agent_t *self, const char *reason, const char *spool);
/* Whether the control connection is up (its handshake done, no disconnect since). */
bool agent_link_up(const agent_t *self);
/* True once a Welcome was received and no loss was detected since. */
bool agent_connected(const agent_t *self);
/* Sends a heartbeat now (with the status, so the controller can raise the grant). */
void agent_heartbeat_now(agent_t *self);
/* Sets the run the agent belongs to (0 when the run is released). */
void agent_set_run(agent_t *self, uint64_t run_id);

#endif
