/* Command-line options of `stampede mock`: where to listen, which model of time to simulate
 * (a calibrated engine profile with overrides, or the load-independent fixed mode tests use),
 * reply lengths, and fault injection. */
#ifndef STAMPEDE_MOCK_OPTIONS_H
#define STAMPEDE_MOCK_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dist.h"
#include "mock_faults.h"
#include "mock_profiles.h"

typedef struct mock_options {
    char bind[64];
    int port; /* 0 = any free port */
    char model[128];
    bool strict_model; /* 404 for requests naming another model, as vLLM does */
    uint64_t seed;
    /* Fixed mode: every request's tokens at arrival + ttft_ms, then every itl_ms. */
    bool fixed;
    double ttft_ms, itl_ms;
    /* Engine mode. */
    char profile[32];
    uint32_t max_num_seqs, max_num_batched_tokens, max_model_len;
    uint64_t kv_cache_tokens, prefix_cache_tokens;
    double tpot_base_ms, alpha, prefill_tokens_per_s, ttft_overhead_ms, step_fixed_ms;
    uint32_t spec_tokens; /* speculative decoding: draft tokens per step (0 = off) */
    double spec_acceptance, spec_draft_ms, spec_verify_weight;
    bool prefix_cache;
    /* Reply lengths. */
    dist_t output_len; /* natural length (EOS) of replies without max_tokens */
    bool early_eos;    /* the natural length also cuts requests with max_tokens */
    dist_t reasoning;  /* reasoning tokens streamed before the content (chat) */
    bool reasoning_set;
    size_t max_body_bytes;
    bool flat_errors; /* error bodies in older vLLM's flat shape, not OpenAI's {"error": {...}} */
    /* each streamed chunk carries "sent_ns", its CLOCK_MONOTONIC write time (default); off, the
     * chunks are byte for byte vLLM's */
    bool sent_ns;
    /* Fault injection; rates are per request, drawn deterministically from (seed, request). */
    double fail_rate;
    int fail_status;
    uint32_t reset_after_tokens; /* 0 = never */
    double reset_rate;
    double stall_ms;
    uint32_t stall_after_tokens;
    double stall_rate;
    double malformed_rate;
    mock_faults_t faults; /* --faults SPEC */
} mock_options_t;

/* Fills the defaults: port 8000, model "mock-llama", the "default" profile's engine. */
void mock_options_init(mock_options_t *self);
/* Frees the distributions. */
void mock_options_clear(mock_options_t *self);
/* The engine configuration these options describe (engine mode; the prefix cache over
 * --prefix-cache-tokens, else the whole pool). */
void mock_options_engine_config(const mock_options_t *self, mock_engine_config_t *out);
/* Sets the engine's figures to the profile's (the explicit flags then override them). */
void mock_options_apply_profile(mock_options_t *self, const mock_profile_t *profile);

#endif
