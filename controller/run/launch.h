/* From measured clocks to a started run: each worker of the run is sent the resolved config with
 * its index and its concurrency share (common/plan, which the worker computes too), answers Ready
 * or why it cannot run, and then all are started at one instant on the controller's clock, far
 * enough ahead (750 ms + 2 × the largest probe RTT) for every Start to arrive in time. */
#ifndef STAMPEDE_LAUNCH_H
#define STAMPEDE_LAUNCH_H

#include "measurement.h"
#include "run_worker.h"
#include "stampede.pb-c.h"

/* Sends every worker of the run its Assign. */
void launch_assign(measurement_t *run);
/* Counts w's Ready; a refusal, or a share that differs from the controller's, aborts the run. */
void launch_ready(measurement_t *run, run_worker_t *w, const Stampede__Ready *ready);
/* Picks the start instant and opens the run's telemetry, trace and journal: the run is started.
 * The grant (controller/rebalance.h) comes next, then launch_send_starts. */
void launch_begin(measurement_t *run);
/* Sends every worker of the run its Start. */
void launch_send_starts(measurement_t *run);
/* Sends w its Start (the run's start instant on w's clock, the session ceiling) and marks it
 * running: at launch_send_starts, and for a worker joining the run in progress. */
void launch_send_start(measurement_t *run, run_worker_t *w);

/* fleet.rebalance_on_join: sends w, measured and joining the run in progress, its Assign with no
 * load of its own (controller/rebalance.c gives it a share once it is started). */
void launch_assign_join(measurement_t *run, run_worker_t *w);

#endif
