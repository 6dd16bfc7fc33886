/* Built-in engine profiles of the simulated server, each calibrated from a published
 * measurement (docs/mock.md says how every number was derived). */
#ifndef STAMPEDE_MOCK_PROFILES_H
#define STAMPEDE_MOCK_PROFILES_H

#include <stddef.h>
#include <stdint.h>

typedef struct mock_profile {
    const char *name;
    const char *summary;
    uint32_t max_num_seqs;
    uint32_t max_num_batched_tokens;
    uint32_t max_model_len;
    uint64_t kv_cache_tokens;
    double tpot_base_ms;
    double alpha;
    double prefill_tokens_per_s;
    double ttft_overhead_ms;
} mock_profile_t;

/* The profile called name, or NULL. */
const mock_profile_t *mock_profile_find(const char *name);
/* Profile i in the order --help lists them, or NULL past the last. */
const mock_profile_t *mock_profile_at(size_t i);

#endif
