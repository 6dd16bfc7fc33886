/* Worker loss and rebalancing during a run (docs/protocol.md "Worker loss and rebalancing").
 *
 * Ownership. Every worker's load is a set of residue classes of session indexes (common/plan.h):
 * concurrent, one class (slot, C) per slot; rate, one class of the arrival sequence. The
 * controller hands out a grant, one session index for the run: no worker starts a session at or
 * past it. It sends the first grant in Start and raises it in heartbeats as the workers' frontiers
 * (1 + the highest index each started, in their heartbeats) come near it. A lost worker can
 * therefore have started nothing at or past the grant; its classes go to the survivors from the
 * grant on (rate mode: from the first arrival not yet due, later if the grant is), and the grant is
 * raised for them. No session index is ever run twice, whatever the lost worker does when it wakes
 * up (it is also told to drop the run, and its later batches are not merged).
 *
 * Accounting. The lost worker's sessions started and not ended (its heartbeats' count against its
 * merged records that ended a session) are counted as lost. The run is degraded over
 * [its last word, the takeover]; results.json says so with the load held over time. A loss that
 * cannot be taken over (no survivor still running, a trace replay, the run ending) leaves the run
 * partial and invalid, as before. fleet.abort_on_worker_loss_pct ends the run instead when the
 * share lost passes it. */
#ifndef STAMPEDE_REBALANCE_H
#define STAMPEDE_REBALANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "controller.h"
#include "registry.h"
#include "stampede.pb-c.h"

typedef struct rebalance_class {
    uint64_t residue;
    uint64_t modulus;
} rebalance_class_t;

/* One worker lost during a run. Times are on the controller's clock (loop_now_ns). */
typedef struct rebalance_loss {
    char worker[128];
    uint32_t index;
    int64_t from_ns;     /* the last word from it: its load is missing from here */
    int64_t declared_ns; /* declared lost */
    int64_t to_ns;       /* its share taken over (0: never, the load stayed short to the end) */
    double share;        /* of the run's load, 0..1 */
    uint64_t lost_sessions;
    bool taken_over;
} rebalance_loss_t;

/* At the start: the first grant (returned, for Start) and each worker's classes from its share. */
uint64_t rebalance_start(controller_t *self);
/* A heartbeat of w during the run: its frontier and sessions started; raises the grant (and
 * answers w with it at once) when the highest frontier comes within half the headroom of it. */
void rebalance_heartbeat(controller_t *self, registry_worker_t *w, const Stampede__Heartbeat *hb);
/* Every heartbeat tick during the run: the headroom follows how fast the frontier moves. */
void rebalance_tick(controller_t *self);
/* w was just declared lost during the run: its share goes to the survivors (true), or cannot
 * (false: the caller marks the results partial); the abort threshold may end the run. */
bool rebalance_lost(controller_t *self, registry_worker_t *w, const char *why);
/* w's share of the run's load now (0..1). */
double rebalance_share(const controller_t *self, const registry_worker_t *w);
/* Frees what w holds for rebalancing. */
void rebalance_free_worker(registry_worker_t *w);
/* Sessions counted lost over the run. */
uint64_t rebalance_lost_sessions(const controller_t *self);
/* The label's note ("held 6 for 3.1 s"), empty when the load was held throughout; end_ns is the
 * end of the run. */
void rebalance_label(const controller_t *self, int64_t end_ns, char *buf, size_t len);
/* Sets the level's "degraded", "worker_losses", "load_held" and "lost_sessions" in level. */
void rebalance_json(const controller_t *self, int64_t end_ns, json_t *level);
/* fleet.rebalance_on_join: whether w, a new worker connecting during the run, joins it (then it
 * has the next index and is to be probed); false: it waits for the next run (the default, a trace
 * replay, a sequential run, rate mode with a cap, or a run ending). */
bool rebalance_join_begin(controller_t *self, registry_worker_t *w);
/* fleet.rebalance_on_join: w, lost with its share taken over, spoke again (and was just told to
 * drop its old load): it joins the run again, as a new incarnation under its index, to be probed.
 * False: it waits for the next run. */
bool rebalance_rejoin(controller_t *self, registry_worker_t *w);
/* During the run: probes the joining workers and assigns the measured ones (with no load). */
void rebalance_join_step(controller_t *self, int64_t now);
/* A joining worker is ready: it is started, and given whole slots (concurrent, each donor's at its
 * next session) or a part of every worker's arrival classes (rate), from the grant on. */
void rebalance_join_ready(controller_t *self, registry_worker_t *w, const Stampede__Ready *ready);
/* The table's lines about losses (nothing when there was none). */
void rebalance_print(const controller_t *self, FILE *out);

#endif
