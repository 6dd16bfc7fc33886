/* The agentic tables of a level (docs/metrics.md section 12): per role, per session, prefix
 * reuse, sticky affinity, decode overlap and the wall clock, as results.json keys and as
 * terminal tables. Read from the merge (merge_role, merge_sessions, merge_decode). */
#ifndef STAMPEDE_SESSION_REPORT_H
#define STAMPEDE_SESSION_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "merge.h"
#include "report.h"

/* Sets roles, sessions, prefix_cache_hit_rate, prompt_reuse_ratio, affinity, decode_overlap and
 * wall_clock_s in the level object, and prefix_cache_hit_rate and prompt_reuse_ratio in each of
 * its per_endpoint objects. */
void session_report_json(json_t *level, const merge_t *merge, const report_meta_t *meta);
/* Prints the roles table, the sessions table, the reuse lines and the decode overlap. */
void session_report_print(const merge_t *merge, const report_meta_t *meta, FILE *out);

#endif
