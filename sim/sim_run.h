/* One measured run in virtual time: what a fleet and one worker do for a run, in one process
 * with no sockets. The worker's session executor (its plan share is the whole run) runs on the
 * virtual loop, its requests go to the virtual server through sim_backend, every record is
 * merged as the controller merges a worker's (controller/run/results.h: merge, sinks, trace,
 * breaker), and the run's stops (a sweep's drain bound, the circuit breaker) reach the executor
 * through the run_link_t a fleet would give it. */
#ifndef STAMPEDE_SIM_RUN_H
#define STAMPEDE_SIM_RUN_H

#include <stdint.h>

#include "loop.h"
#include "measurement.h"
#include "mock_virtual.h"

/* What the run's loop tells whoever drives it (a sweep), as fleet_hooks_t's step does. */
typedef struct sim_run_hooks {
    void (*step)(void *arg, int64_t now); /* after every event of the run; may be NULL */
    void *arg;
} sim_run_hooks_t;

/* Runs run (prepared by measurement_new, PHASE_REGISTER) on loop (virtual) from its now to its
 * results, requests served by server delay_ns away (one way); hooks may be NULL. The exit status
 * of results_finish (1 when it could not start, said). */
int sim_run(loop_t *loop, mock_virtual_t *server, int64_t delay_ns, measurement_t *run,
            const sim_run_hooks_t *hooks);

#endif
