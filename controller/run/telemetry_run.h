/* Server telemetry (controller/telemetry.h) on a run of the fleet: opened with the run's start,
 * marked at the measured window's edges (start + warmup, and the run's end once every worker is
 * done), polled by the controller's loop, and turned into the run's server figures, gap and
 * validity causes at the end. A sweep marks its own levels and snapshots with telemetry_mark. */
#ifndef STAMPEDE_TELEMETRY_RUN_H
#define STAMPEDE_TELEMETRY_RUN_H

#include <jansson.h>

#include "measurement.h"
#include "telemetry.h"
#include "telemetry_stats.h"
#include "validity.h"

/* Once the start instant is set: the run's telemetry (when its config asks for any) with its
 * first mark at start + warmup (now, before any request, when there is no warm-up). */
void telemetry_run_open(measurement_t *run);
/* At the run's end: the closing mark, a wait of at most TELEMETRY_SCRAPE_TIMEOUT_NS for the
 * pages, and the figures between the two marks into *stats (telemetry_stats_clear frees them).
 * 0 done, -1 when the run has no telemetry (or memory ran out). */
int telemetry_run_close(measurement_t *run, telemetry_stats_t *stats);
/* The shared-rig guard's causes added to the run's verdict. */
void telemetry_run_judge(const telemetry_stats_t *stats, validity_t *validity);
/* The "server" block (as in a level) of what happened between marks a and b of the run's
 * telemetry (a snapshot of a sweep); JSON null when they cannot be compared. */
json_t *telemetry_run_between_json(const measurement_t *run, telemetry_mark_t a,
                                   telemetry_mark_t b);
/* Sets "server" and "gap" in level (a results.json level object). */
void telemetry_run_json(const measurement_t *run, const telemetry_stats_t *stats, json_t *level);

#endif
