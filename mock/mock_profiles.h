/* Built-in engine profiles of the simulated server, each calibrated from a published
 * measurement: the engine's numbers, the load the measurement was taken under (as
 * mock_sim replays it) and the figures it should reproduce. docs/mock.md says how every
 * number was derived; tests/unit/test_mock_profiles.c holds each profile to its figures. */
#ifndef STAMPEDE_MOCK_PROFILES_H
#define STAMPEDE_MOCK_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_engine.h"
#include "mock_sim.h"

#define MOCK_PROFILE_MAX_POINTS 8

/* One measured operating point: at this many concurrent clients, this TTFT and TPOT (ms; 0 =
 * not measured), and how far the calibrated model may be from each (relative). */
typedef struct mock_profile_point {
    uint32_t concurrency;
    double ttft_ms, tpot_ms;
    double ttft_tolerance, tpot_tolerance;
} mock_profile_point_t;

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
    double step_fixed_ms;
    uint32_t spec_tokens; /* speculative decoding (mock_engine_config_t), 0 = off */
    double spec_acceptance, spec_draft_ms, spec_verify_weight;
    /* The calibration: where the figures come from, the load they were measured under, whether
     * the reference's TTFT and TPOT are medians (else means), and the points. */
    const char *source;
    mock_sim_workload_t workload;
    bool ttft_is_median, tpot_is_median;
    mock_profile_point_t points[MOCK_PROFILE_MAX_POINTS];
    uint32_t n_points;
} mock_profile_t;

/* The profile called name, or NULL. */
const mock_profile_t *mock_profile_find(const char *name);
/* Profile i in the order --help lists them, or NULL past the last. */
const mock_profile_t *mock_profile_at(size_t i);
/* The engine configuration of a profile (prefix cache over the whole KV pool). */
void mock_profile_engine_config(const mock_profile_t *self, mock_engine_config_t *out);

#endif
