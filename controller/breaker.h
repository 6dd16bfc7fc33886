/* The circuit breaker of limits.max_error_pct: once CONFIG_BREAKER_MIN_REQUESTS requests of the
 * run (a sweep: of the level's repetition) have finished, ok or failed, warm-up included, and
 * more than max_error_pct % of them failed, the run stops as a sweep's watch stops a level:
 * the workers cancel and drain, the results say why (stop_reason, validity), and a sweep goes on
 * with its next level (docs/config.md, limits). limits.endpoint_dead_after trips it the same way
 * when one endpoint answers nothing but failures for that long. */
#ifndef STAMPEDE_BREAKER_H
#define STAMPEDE_BREAKER_H

#include "controller_internal.h"

/* Judges the run's counts after a merged record; trips the breaker at most once per run. */
void breaker_check(controller_t *self);
/* limits.endpoint_dead_after: notes rec's outcome for its endpoint (a success clears it) and
 * trips the breaker when every request to that endpoint has failed for that long, naming the
 * endpoint and its last error. Called for every merged record but cancelled ones. */
void breaker_endpoint(controller_t *self, const request_record_t *rec);

#endif
