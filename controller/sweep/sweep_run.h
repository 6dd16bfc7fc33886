/* A sweep in progress on the fleet: the source it asks for levels, the level and repetition
 * being run (its window of snapshots, fed every record), the level's repetitions pooled, and
 * every finished level, written to OUT/results.json after each level (so an interrupted sweep
 * keeps what it finished) and shown as a table at the end. controller.c drives it: next level,
 * prepare each repetition's measurement, run it, end the level; results.c feeds it. */
#ifndef STAMPEDE_SWEEP_RUN_H
#define STAMPEDE_SWEEP_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "fleet.h"
#include "measurement.h"
#include "merge.h"
#include "sweep.h"
#include "validity.h"

typedef struct sweep_run sweep_run_t;

/* A sweep over the fleet for the file first was loaded from (its config is copied: the output
 * directory, the sweep settings and what results.json says of the run); source NULL: the file's
 * `sweep:` levels. fleet NULL: a sweep in virtual time (sim/), its lines on stderr and its
 * repetitions driven by the caller. NULL after saying why. The caller destroys it. */
sweep_run_t *sweep_run_new(fleet_t *fleet, const measurement_t *first,
                           const sweep_source_t *source);
/* The label every line of the sweep carries ("run 7": "serve: run 7: level 1 done ..."; NULL:
 * none), so sweeps going on at once on one fleet are told apart in its log. */
void sweep_run_set_label(sweep_run_t *self, const char *label);
/* What the fleet's loop tells the sweep: every turn (sweep_run_step), an interrupt
 * (sweep_run_stopped), the live line (sweep_run_live_line) and the level for the gauges. */
fleet_hooks_t sweep_run_hooks(sweep_run_t *self);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void sweep_run_destroy(sweep_run_t **self_p);
/* Asks the source for the next level (passing the previous level's result): 1 a level to run,
 * 0 the sweep is over, -1 the source failed. */
int sweep_run_next_level(sweep_run_t *self);
/* The level being run. */
const level_spec_t *sweep_run_spec(const sweep_run_t *self);
/* Makes run repetition rep (1-based) of the current level: its config set for the level, its
 * directory OUT/levels/NN-<level>/rep-R, and the sweep installed as its policy (a limit stops the
 * level; the verdict ends the repetition) and as a sink (its window). 0 ok, -1 after saying
 * why. */
int sweep_run_prepare(sweep_run_t *self, measurement_t *run, uint32_t rep);
/* The repetition started at run->start_ns: opens its window after the warm-up. */
void sweep_run_start(sweep_run_t *self, const measurement_t *run);
/* Counts one record (m = metrics_compute(rec)) into the repetition's window. */
void sweep_run_record(sweep_run_t *self, const request_record_t *rec, const metrics_t *m);
/* Periodic work during the repetition (from the fleet's loop): the drain's bound, the source's
 * watch. */
void sweep_run_step(sweep_run_t *self, int64_t now);
/* Stops the repetition at now, for why (the source's watch, the circuit breaker): said on the
 * terminal, the results marked partial and stopped_early, the workers told to cancel and drain;
 * the sweep then goes on with its next level. */
void sweep_run_stop_early(sweep_run_t *self, int64_t now, const char *why);
/* The repetition was told to stop at now (Ctrl-C): its window ends there. */
void sweep_run_stopped(sweep_run_t *self, int64_t now);
/* The live line of the repetition at now, from the merge's live figures: level i/n, repetition,
 * phase (warm-up, snapshot k/N, drain) with its elapsed and remaining seconds, in flight, req/s,
 * TTFT p50 of the window so far, errors. */
void sweep_run_live_line(const sweep_run_t *self, int64_t now, const live_t *live, char *buf,
                         size_t len);
/* The repetition ended (results.c, once its verdict is known): kept or excluded by its error
 * share, added to the level. server (may be NULL; not taken) holds the repetition's "server" and
 * "gap" blocks from the server scrape. */
void sweep_run_end_repetition(sweep_run_t *self, const validity_t *validity,
                              const char *stop_reason, bool interrupted, json_t *server);
/* Ends the level (interrupted: by Ctrl-C or a run that could not finish), writes results.json. */
void sweep_run_end_level(sweep_run_t *self, bool interrupted);
/* Writes the final results.json and config.yaml and prints the table. 0 ok, -1 when a file
 * could not be written (said). */
int sweep_run_finish(sweep_run_t *self, bool interrupted);

#endif
