/* How many tokens a workload's requests hold in the KV cache, from a sample of its generated
 * sessions (the plan's --workload, docs/plan.md). A request's context is its prompt (scaffold,
 * inherited turns, its own user text) plus its output, every reply counted at its max_tokens, as
 * the worker builds prompts (worker/session_prompt.h) but in word counts only (a word is a
 * token). */
#ifndef STAMPEDE_WORKLOAD_CONTEXT_H
#define STAMPEDE_WORKLOAD_CONTEXT_H

#include <stdint.h>

#include "config.h"

typedef struct workload_context {
    uint64_t sessions;         /* sampled: 0 .. sessions - 1 */
    uint64_t requests;         /* their requests */
    double mean_prompt;        /* tokens, mean over requests */
    double mean_output;        /* max_tokens, mean over requests */
    double mean_context;       /* prompt + output, mean over requests */
    uint64_t max_context;      /* the longest request's prompt + output */
    double mean_parallel;      /* requests of a session in flight at once: its requests / its depth
                                  (longest parent chain), mean over sessions */
    double session_tokens;     /* KV of one session in flight: its contexts summed / its depth, mean
                                  over sessions (a chat: its mean context) */
    uint32_t compaction_cap;   /* workload.compaction.limit_tokens: no context counted above it */
    uint32_t file_concurrency; /* scheduler.concurrency of a concurrent file (0 otherwise); the
                                  caller's to fill */
} workload_context_t;

/* Estimates *out from sessions 0 .. n - 1 of cfg: fewer when limits.max_sessions is lower, or
 * once max_requests are sampled (a session's history walk costs O(turns^2)). 0 ok; -1 on
 * allocation failure. */
int workload_context_estimate(const config_t *cfg, uint64_t n, uint64_t max_requests,
                              workload_context_t *out);

#endif
