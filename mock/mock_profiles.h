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

#define MOCK_PROFILE_MAX_POINTS 12

/* One measured operating point: at this many concurrent clients, this TTFT and TPOT (ms; 0 =
 * not measured), how far the calibrated model may be from each (relative; a 0 tolerance: shown,
 * not held to), the reference's TPOT p95 (0 = not reported) and its tolerance, and the model's own
 * figures at that point as calibration left them (the fit table of --help and docs/mock.md;
 * tests/unit/test_mock_profiles.c holds them to the live replay). */
typedef struct mock_profile_point {
    uint32_t concurrency;
    double ttft_ms, tpot_ms;
    double ttft_tolerance, tpot_tolerance;
    double tpot_p95_ms, tpot_p95_tolerance;
    double fit_ttft_ms, fit_tpot_ms, fit_tpot_p95_ms;
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
    /* How the reference measured each point: warm-up and window (s) of each of `repetitions`
     * runs, their percentiles averaged (0s: 20 s, 120 s, one run). */
    double warmup_s, measure_s;
    uint32_t repetitions;
    mock_profile_point_t points[MOCK_PROFILE_MAX_POINTS];
    uint32_t n_points;
} mock_profile_t;

/* The profile called name, or NULL. */
const mock_profile_t *mock_profile_find(const char *name);
/* Profile i in the order --help lists them, or NULL past the last. */
const mock_profile_t *mock_profile_at(size_t i);
/* The engine configuration of a profile (prefix cache over the whole KV pool). */
void mock_profile_engine_config(const mock_profile_t *self, mock_engine_config_t *out);
/* The profile's figures with `concurrency` clients of its reference load, measured as its
 * reference was: each percentile and mean is the average over the repetitions (seeds 1..n) of
 * one mock_sim run's; requests, running and waiting are averaged too. 0 ok, -1 on error. */
int mock_profile_replay(const mock_profile_t *self, uint32_t concurrency, mock_sim_result_t *out);
/* The same for another engine (a calibrated one) with its own TTFT overhead, under the profile's
 * reference load and measured as its reference was. */
int mock_profile_replay_engine(const mock_profile_t *self, const mock_engine_config_t *engine,
                               double overhead_ms, uint32_t concurrency, mock_sim_result_t *out);

#endif
