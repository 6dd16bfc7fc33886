/* What a run's worker losses come to (docs/protocol.md "Worker loss and rebalancing"): the
 * sessions lost, how long the load was held short and by how much, as the table's lines, the
 * label's note and results.json's keys. Read only from the run's list of losses
 * (measurement_t.losses), which controller/rebalance.c keeps. */
#ifndef STAMPEDE_LOSSES_H
#define STAMPEDE_LOSSES_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "measurement.h"

/* The label's note ("held 6 for 3.1 s"), empty when the load was held throughout; end_ns is the
 * end of the run. */
void losses_label(const measurement_t *run, int64_t end_ns, char *buf, size_t len);
/* Sets the level's "degraded", "worker_losses", "load_held", "lost_sessions" and "workers" in
 * level. */
void losses_json(const measurement_t *run, int64_t end_ns, json_t *level);
/* The run's workers for its level in results.json: {"expected", "started" (taken in at the
 * start), "joined" (during the run), "lost" (losses during it), "carried_by" (in the run and not
 * lost at its end)}. The caller owns the object. */
json_t *losses_workers_json(const measurement_t *run);
/* The table's lines about losses (nothing when there was none). */
void losses_print(const measurement_t *run, FILE *out);

#endif
