/* The capacity search as a pure state machine (docs/slo.md): which level to run next, given the
 * pass/fail of every level run so far. Exponential probing from the start level (doubling while
 * it passes, halving while it fails) brackets the boundary; bisection narrows the bracket to the
 * precision; then the frontier (the highest passing level below the first failing one) and the
 * first failing level are each run again repeat_near_boundary times, and a level counts as passing
 * when most of its runs passed (a tie fails), so noise near the boundary moves the bracket instead
 * of being believed once. No clock, no I/O: the caller runs the levels (capacity_run.c). */
#ifndef STAMPEDE_CAPACITY_H
#define STAMPEDE_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Runs a search makes at most, whatever the precision (a bound on a noisy search). */
#define CAPACITY_MAX_TRIALS CONFIG_CAPACITY_MAX_TRIALS

typedef struct capacity_params {
    double start;                  /* first level; > 0 */
    double max;                    /* highest level run; >= start */
    double precision;              /* the bracket width at which bisection stops... */
    bool precision_relative;       /* ...in percent of the frontier, else in the level's unit */
    bool integer;                  /* levels are whole numbers (concurrency): bracket >= 1 */
    uint32_t repeat_near_boundary; /* extra runs of the frontier and of the first failing level */
    double expansion;              /* probing multiplies (or divides) by this; 0: 2 */
    uint32_t max_trials;           /* runs at most; 0: CAPACITY_MAX_TRIALS */
} capacity_params_t;

/* How the search ended. */
typedef enum {
    CAPACITY_SEARCHING,
    CAPACITY_FOUND,       /* a frontier and a first failing level within the precision */
    CAPACITY_MAX_PASSES,  /* max itself passed: the limit is above the search's range */
    CAPACITY_NONE_PASSES, /* nothing passed down to the smallest level tried */
    CAPACITY_TRIALS_SPENT /* CAPACITY_MAX_TRIALS runs without converging */
} capacity_state_t;

/* One level tried, with its runs. */
typedef struct capacity_level {
    double level;
    uint32_t passes;
    uint32_t fails;
    char binding[256]; /* the binding SLO of its last run (or why it was stopped early) */
} capacity_level_t;

typedef struct capacity_summary {
    capacity_state_t state;
    const capacity_level_t *frontier;   /* highest passing level below first_fail; NULL: none */
    const capacity_level_t *first_fail; /* lowest failing level; NULL: none */
    uint32_t trials;                    /* runs made */
} capacity_summary_t;

typedef struct capacity capacity_t;

/* A search with params (copied); NULL on no memory. The caller destroys it. */
capacity_t *capacity_new(const capacity_params_t *params);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void capacity_destroy(capacity_t **self_p);
/* The next level to run into *level: true, or false when the search is over. */
bool capacity_next(capacity_t *self, double *level);
/* The outcome of one run of level (as capacity_next gave it): passed every SLO, or not, binding
 * naming the SLO with the least margin (may be NULL). */
void capacity_report(capacity_t *self, double level, bool pass, const char *binding);
/* Where the search stands; the pointers live as long as self and until the next report. */
void capacity_summary(const capacity_t *self, capacity_summary_t *out);
/* Levels tried, in increasing order of level (i < capacity_levels). */
size_t capacity_levels(const capacity_t *self);
const capacity_level_t *capacity_level(const capacity_t *self, size_t i);
/* "found", "max_passes", "none_passes", "trials_spent" ("searching" before the end). */
const char *capacity_state_name(capacity_state_t state);

#endif
