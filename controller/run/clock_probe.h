/* Measuring each worker's clock against the controller's before the run, as NTP does: 8 rounds
 * one after another, stamped t1 (controller sends), t2 and t3 (worker receives and replies) and
 * t4 (controller receives). offset = ((t2 - t1) + (t3 - t4)) / 2 is the worker's clock minus the
 * controller's, rtt = (t4 - t1) - (t3 - t2), and the round with the smallest rtt is kept: its
 * offset is wrong by at most rtt / 2. */
#ifndef STAMPEDE_CLOCK_PROBE_H
#define STAMPEDE_CLOCK_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "measurement.h"
#include "run_worker.h"
#include "stampede.pb-c.h"

/* Takes every registered worker into the run (indexes 0, 1, …) and sends each its first probe. */
void clock_probe_begin(measurement_t *run);
/* Measures w alone (a worker joining the run in progress), from its first round. */
void clock_probe_one(measurement_t *run, run_worker_t *w);
/* Counts w's answer p received at t4 (a stale round is ignored) and sends the next round. */
void clock_probe_answer(measurement_t *run, run_worker_t *w, const Stampede__ClockProbe *p,
                        int64_t t4);
/* Resends a round unanswered for 1 s. True when every worker of the run is measured (they are
 * then back in RUN_WORKER_REGISTERED, to be assigned). */
bool clock_probe_step(measurement_t *run, int64_t now);

#endif
