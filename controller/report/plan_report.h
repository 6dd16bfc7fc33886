/* What `stampede plan` prints: the KV-cache arithmetic of reference/capacity-planning.md section
 * 2 for a model and a parallelism (common/kv_plan.h), and with a workload where a sweep of it
 * should look (docs/plan.md). */
#ifndef STAMPEDE_PLAN_REPORT_H
#define STAMPEDE_PLAN_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kv_plan.h"
#include "workload_context.h"

/* The model (source says where its KV width came from), the parallelism, the KV bytes per token
 * and per sequence, the memory bound as exact and as the document counts, and the 2R-4R guidance;
 * context_from follows the context's figure ("" when it was given). */
void plan_report_print(FILE *out, const kv_plan_input_t *in, const kv_plan_t *p, const char *source,
                       const char *context_from, bool free_binary);
/* The sampled workload (file workload): its context per request and per session in flight, where
 * the KV cache fills, and the levels a sweep should cover; context is --context (0: not given). */
void plan_report_print_workload(FILE *out, const char *workload, uint64_t context,
                                const kv_plan_input_t *in, const kv_plan_t *p,
                                const workload_context_t *w);

#endif
