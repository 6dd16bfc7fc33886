/* The circuit breaker of limits.max_error_pct, a judge like validity: once
 * CONFIG_BREAKER_MIN_REQUESTS requests of the run (a sweep: of the level's repetition) have
 * finished, ok or failed, warm-up included, and more than max_error_pct % of them failed, it trips:
 * run->breaker says why, and the caller stops the run as the run's policy says (the workers cancel
 * and drain, the results say why, and a sweep goes on with its next level; docs/config.md,
 * limits). limits.endpoint_dead_after trips it the same way when one endpoint answers nothing but
 * failures for that long. */
#ifndef STAMPEDE_BREAKER_H
#define STAMPEDE_BREAKER_H

#include <stdbool.h>

#include "measurement.h"

/* Judges the run's counts after a merged record: true when it trips now (at most once per run). */
bool breaker_check(measurement_t *run);
/* limits.endpoint_dead_after: notes rec's outcome for its endpoint (a success clears it); true
 * when it trips now because every request to that endpoint has failed for that long (the reason
 * names the endpoint and its last error). Called for every merged record but cancelled ones. */
bool breaker_endpoint(measurement_t *run, const request_record_t *rec);

#endif
