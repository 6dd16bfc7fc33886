/* Stopping a started run: every unfinished worker told to stop (cancelling what is in flight, or,
 * for an interrupt's grace, only starting nothing new), then a bounded drain before the ones not
 * done are lost. */
#ifndef STAMPEDE_DRAIN_H
#define STAMPEDE_DRAIN_H

#include <stdint.h>

#include "measurement.h"

/* How long the workers have to finish after a Stop{cancel}. */
#define DRAIN_NS 15000000000LL

/* Sends Stop{cancel} with reason to every unfinished worker of the run and drains for 15 s. */
void drain_stop(measurement_t *run, const char *reason);
/* A limit of the run (the circuit breaker) stops it for why, as its policy says: a sweep's stops
 * the level; a plain run's is said, marked partial and drain_stop. */
void drain_limit_stop(measurement_t *run, const char *why);
/* The drain of an interrupt: Stop{cancel: false} (no new request; those in flight go on) to every
 * unfinished worker; once grace_ns has passed, drain_grace_step sends Stop{cancel} to those not
 * done yet, and the run waits 15 s more for them. grace_ns <= 0 is drain_stop. */
void drain_stop_grace(measurement_t *run, const char *reason, int64_t grace_ns);
/* Called on every loop turn of a run: cancels what is still in flight once the grace period of
 * drain_stop_grace has passed. */
void drain_grace_step(measurement_t *run, int64_t now);

#endif
