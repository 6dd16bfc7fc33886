/* The agentic figures of a sweep level, pooled over its repetitions: each role's statistics and
 * the per-session figures merged histogram by histogram (never an average of percentiles), the
 * decode intervals together (the repetitions run one after another, so the pooled overlap is
 * exact), and the client's series over time of one repetition (the last one added: a series
 * cannot be pooled, and concatenated runs would draw a restart as a drop). Read from each
 * repetition's merge (controller/figures/merge.h) when it ends: warm-up excluded, like a single
 * run's keys (docs/metrics.md section 12). */
#ifndef STAMPEDE_SWEEP_POOL_H
#define STAMPEDE_SWEEP_POOL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "client_series.h"
#include "merge.h"
#include "overlap.h"
#include "report.h"
#include "sessions.h"

typedef struct sweep_pool {
    merge_stats_t *roles[MERGE_MAX_ROLES]; /* NULL: role never seen */
    uint32_t n_roles;
    sessions_stats_t sessions;
    overlap_t *decode;
    uint32_t repetitions;  /* added */
    json_t *client_series; /* the last added repetition's (NULL before) */
    uint32_t series_repetition;
} sweep_pool_t;

/* An empty pool for n_endpoints endpoints. 0 ok, -1 on no memory (then freed). */
int sweep_pool_init(sweep_pool_t *self, size_t n_endpoints);
/* Frees everything and zeroes *self (a zeroed pool is fine). */
void sweep_pool_free(sweep_pool_t *self);
/* Adds repetition rep (1-based): merge's roles, sessions and decode intervals, and series (may be
 * NULL) as the level's client series. 0 ok, -1 on no memory (the pool then lacks part of it). */
int sweep_pool_add(sweep_pool_t *self, const merge_t *merge, const client_series_t *series,
                   uint32_t rep);
/* Sets the level's roles, sessions, prompt_reuse_ratio, decode_overlap, client_series and
 * client_series_from_repetition (session_report.h's keys; role names from meta). */
void sweep_pool_json(sweep_pool_t *self, json_t *level, const report_meta_t *meta);

#endif
