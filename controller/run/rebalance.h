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

#include "measurement.h"
#include "run_worker.h"
#include "stampede.pb-c.h"

typedef struct rebalance_class {
    uint64_t residue;
    uint64_t modulus;
} rebalance_class_t;

/* One worker lost during a run. Times are on the controller's clock (loop_now_ns). */

/* At the start: the first grant (returned, for Start) and each worker's classes from its share. */
uint64_t rebalance_start(measurement_t *run);
/* A heartbeat of w during the run: its frontier and sessions started; raises the grant (and
 * answers w with it at once) when the highest frontier comes within half the headroom of it. */
void rebalance_heartbeat(measurement_t *run, run_worker_t *w, const Stampede__Heartbeat *hb);
/* Every heartbeat tick during the run: the headroom follows how fast the frontier moves. */
void rebalance_tick(measurement_t *run);
/* w was declared lost (last heard at last_word_ns): said, and during the run its share goes to
 * the survivors, or cannot (the results are then partial); the abort threshold may end the run.
 * abandon also tells it to drop the run when its share was not taken over. */
void rebalance_worker_lost(measurement_t *run, run_worker_t *w, const char *why, bool abandon,
                           int64_t last_word_ns);
/* A lost worker of the run spoke again: it is running, and its Done and batches still count;
 * one whose share was taken over is told (again, at most once a heartbeat) to drop the run. */
void rebalance_worker_back(measurement_t *run, run_worker_t *w);
/* fleet.rebalance_on_join: whether w, a new worker connecting during the run, joins it (then it
 * has the next index and is to be probed); false: it waits for the next run (the default, a trace
 * replay, a sequential run, rate mode with a cap, or a run ending). */
bool rebalance_join_begin(measurement_t *run, run_worker_t *w);
/* During the run: probes the joining workers and assigns the measured ones (with no load). */
void rebalance_join_step(measurement_t *run, int64_t now);
/* A joining worker is ready: it is started, and given whole slots (concurrent, each donor's at its
 * next session) or a part of every worker's arrival classes (rate), from the grant on. */
void rebalance_join_ready(measurement_t *run, run_worker_t *w, const Stampede__Ready *ready);

#endif
