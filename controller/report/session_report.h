/* The agentic tables of a level (docs/metrics.md section 12): per role, per session, prefix
 * reuse, sticky affinity, decode overlap and the wall clock, as results.json keys and as
 * terminal tables. Read from the merge (merge_role, merge_sessions, merge_decode). */
#ifndef STAMPEDE_SESSION_REPORT_H
#define STAMPEDE_SESSION_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "merge.h"
#include "report_fmt.h"

/* Sets roles, sessions, prefix_cache_hit_rate, prompt_reuse_ratio, affinity, decode_overlap and
 * wall_clock_s in the level object, and prefix_cache_hit_rate and prompt_reuse_ratio in each of
 * its per_endpoint objects. */
void session_report_json(json_t *level, const merge_t *merge, const report_meta_t *meta);
/* The same roles, sessions, prompt_reuse_ratio and decode_overlap keys from figures pooled over
 * several runs (a sweep level's valid repetitions, controller/report/sweep_pool.h): roles[r] is
 * role r's (NULL: never seen), r < n_roles. decode is swept (its intervals reordered). */
void session_report_pooled_json(json_t *level, const merge_stats_t *const *roles, uint32_t n_roles,
                                const sessions_stats_t *sessions, overlap_t *decode,
                                const report_meta_t *meta);
/* Prints the roles table, the sessions table, the reuse lines and the decode overlap. */
void session_report_print(const merge_t *merge, const report_meta_t *meta, FILE *out);

#endif
