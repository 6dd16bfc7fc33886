/* The workers a fleet knows, from their first Hello until they go silent outside a run: who each
 * one is (its routing id, host, pid, Indexed Job index, threads, when it was last heard) and, for
 * each, its part in the run in progress (run_worker_t, controller/run_worker.h). Lookup by routing
 * id is a hash; the table itself knows no socket, so what to say to a worker is the fleet's
 * (controller/fleet.h). Entries are allocated one by one and keep their address until removed. */
#ifndef STAMPEDE_REGISTRY_H
#define STAMPEDE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run_worker.h"
#include "stampede.pb-c.h"

/* The largest control message a worker takes when its Hello does not say (an older worker):
 * worker --max-message-size's default. */
#define REGISTRY_WORKER_MESSAGE_BYTES (64ULL << 20)

/* A worker handing over the batches it held of a run of the fleet's driver's earlier life
 * (controller/fleet_handover.c). */
typedef struct registry_handover {
    Stampede__HeldRun held; /* its Hello's (run_id 0: no hand-over); acked_seq: taken up to */
    bool done;              /* its Done came: held.last_seq and held.records are the run's */
    int64_t deadline_ns;    /* ended, complete or not, by then */
} registry_handover_t;

typedef struct registry_worker {
    uint8_t id[256]; /* routing id, the same on both sockets */
    size_t id_len;
    char host[128];
    uint32_t pid;
    int64_t last_rx_ns;
    int64_t job_index; /* its Hello's job_index (an Indexed Job's JOB_COMPLETION_INDEX); -1 none */
    uint32_t threads;  /* loops in its process (its Hello's threads, at least 1) */
    uint64_t undecodable; /* its messages that did not unpack */
    run_worker_t run;     /* its part in the run (name, state, index, share, sequence, ...) */
    int slot;             /* the fleet's run it belongs to (fleet_internal.h), -1: none */
    registry_handover_t handover; /* in no run, handing over a held run's batches */
} registry_worker_t;

typedef struct registry registry_t;

/* An empty table, or NULL when out of memory. */
registry_t *registry_new(void);
/* Frees every entry (and what its run part holds) and the table; sets *self_p to NULL. */
void registry_destroy(registry_t **self_p);
/* A new entry for routing id (at most sizeof id bytes), named name, heard at now; NULL when the id
 * is too long or memory ran out. Its run part is out of any run (index -1, registered). */
registry_worker_t *registry_add(registry_t *self, const void *id, size_t id_len, const char *name,
                                int64_t now);
/* Removes w (its run part freed). The other entries keep their addresses. */
void registry_remove(registry_t *self, registry_worker_t *w);
/* The worker with this routing id, or NULL (a hash lookup). */
registry_worker_t *registry_find(const registry_t *self, const void *id, size_t id_len);
/* How many workers there are, and the i-th (in the order they said Hello). */
size_t registry_size(const registry_t *self);
registry_worker_t *registry_at(const registry_t *self, size_t i);
/* How many workers are in state. */
uint32_t registry_count(const registry_t *self, run_worker_state_t state);
/* The worker whose run part is w (w must be an entry's). */
registry_worker_t *registry_of(run_worker_t *w);
/* Requests in flight on the run's unfinished workers, as their last heartbeats said; a silent
 * worker's is left out, being stale. */
uint32_t registry_inflight(const registry_t *self, int64_t now, int64_t heartbeat_ns);
/* Requests in flight (as registry_inflight) and how many workers are silent at now, over the n
 * workers whose run parts are runs (one run's, of several). */
uint32_t registry_inflight_of(run_worker_t *const *runs, size_t n, int64_t now,
                              int64_t heartbeat_ns);
uint32_t registry_silent_of(run_worker_t *const *runs, size_t n, int64_t now, int64_t heartbeat_ns);
/* Excuses every worker's silence over gap_ns during which the controller itself did not run. */
void registry_excuse_stall(registry_t *self, int64_t gap_ns);
/* The earliest instant any worker not finished can be silent for silence_ns (INT64_MAX: none):
 * nothing needs checking before it, since hearing from a worker only moves it later. */
int64_t registry_next_silence(const registry_t *self, int64_t silence_ns);
/* "worker NAME" for a registered worker w, else the routing id in hex (its first 16 bytes). */
void registry_peer_name(const registry_worker_t *w, const uint8_t *id, size_t id_len, char *buf,
                        size_t len);
/* Why registration is short, for the timeout's message, into buf: "only N of M workers
 * registered ...", naming the Indexed Job indexes missing (from the registered workers' job_index
 * and thread count) and the workers that did register. */
void registry_describe_missing(const registry_t *self, uint32_t expect, int64_t timeout_ns,
                               char *buf, size_t len);

#endif
