/* How many replicas a workload needs (`stampede simulate --find-replicas MAX`, docs/simulate.md
 * "Replicas and routers"): the file simulated on a replica count per trial, each in
 * OUT/replicas-N. A file of one run with an slo: section: the fewest replicas whose run meets
 * every SLO. A file with a capacity: section: each count runs the capacity search, and the answer
 * is the fewest replicas whose frontier carries capacity.target; without a target, the frontier
 * of every count 1 ... MAX. Both by bisection from MAX down (more replicas never serve the same
 * load worse). The answer goes to stdout, OUT/replicas.json, OUT/replicas.md and the chosen
 * trial's results.json (analysis.replicas) and reports, each marked SIMULATED. */
#ifndef STAMPEDE_SIM_REPLICAS_H
#define STAMPEDE_SIM_REPLICAS_H

#include "simulate.h"

/* Without a target, the most replica counts a capacity file's table runs (one search each). */
#define SIM_REPLICAS_TABLE_MAX 32

/* The fewest of 1 ... max replicas (max >= 1) the file of options needs, as above
 * (options->replicas ignored). 0 when a count was found (or, without a target, the table was
 * written), 1 when none up to max would do or a trial could not run (said). */
int sim_replicas_find(const simulate_options_t *options, uint32_t max);

#endif
