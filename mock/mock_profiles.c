#include "mock_profiles.h"

#include <string.h>

/* The agentic diamond of agentic-concurrency-scaling.md (AutoGen: planner, two executors, an
 * aggregator, one after the other), with the per-role prompt and completion sizes of its §7/§8,
 * +-20 % around them; no shared prefix is assumed. */
#define AGENTIC_DIAMOND                                                                            \
    {                                                                                              \
        .steps_min = 4, .steps_max = 4, .input_tokens = {200, 470, 470, 825},                      \
        .output_tokens = {170, 280, 280, 640}, .jitter = 0.2,                                      \
    }

/* The two TP2 deployments of the same reference: one engine configuration, TTFT as medians. */
#define QWEN3_TP2_H100                                                                             \
    .max_num_seqs = 64, .max_num_batched_tokens = 8192, .max_model_len = 4096,                     \
    .kv_cache_tokens = 262144, .alpha = 0.20,                                                      \
    .source = "agentic-concurrency-scaling.md §3.1, §8 (TTFT medians)",                            \
    .workload = AGENTIC_DIAMOND, .ttft_is_median = true

static const mock_profile_t mock_profiles[] = {
    {
        .name = "default",
        .summary = "vLLM's default limits with tp1-fp8's speed",
        .max_num_seqs = 256,
        .max_num_batched_tokens = 8192,
        .max_model_len = 32768,
        .kv_cache_tokens = 1048576,
        .tpot_base_ms = 7.91,
        .alpha = 0.20,
        .prefill_tokens_per_s = 4000,
        .ttft_overhead_ms = 36,
        .source = "tp1-fp8's timing; vLLM's default max_num_seqs",
    },
    {
        .name = "tp1-fp8",
        .summary = "Qwen3-Next-80B FP8, TP1 on H100-96GB",
        .max_num_seqs = 32,
        .max_num_batched_tokens = 8192,
        .max_model_len = 4096,
        .kv_cache_tokens = 131072,
        .tpot_base_ms = 7.91,
        .alpha = 0.20,
        .prefill_tokens_per_s = 4000,
        .ttft_overhead_ms = 36,
        .source = "agentic-concurrency-scaling.md §3.1, §3.3, §8 (AutoGen, means)",
        .workload = AGENTIC_DIAMOND,
        .points =
            {
                {1, 163, 7.91, 0.05, 0.02},
                {4, 0, 11.58, 0, 0.05},
                {8, 184.4, 14.63, 0.10, 0.05},
                {16, 0, 19.51, 0, 0.05},
                {32, 259, 27.76, 0.10, 0.05},
            },
        .n_points = 5,
    },
    {
        .name = "tp2-fp8",
        .summary = "Qwen3-Next-80B FP8, TP2 on 2x H100-96GB",
        QWEN3_TP2_H100,
        .tpot_base_ms = 7.64,
        .prefill_tokens_per_s = 7000,
        .ttft_overhead_ms = 78,
        .points =
            {
                {1, 152, 7.64, 0.05, 0.02},
                {8, 0, 12.36, 0, 0.08},
                {32, 185, 22.14, 0.10, 0.05},
            },
        .n_points = 3,
    },
    {
        .name = "tp2-fp16",
        .summary = "Qwen3-Next-80B BF16, TP2 on 2x H100-96GB",
        QWEN3_TP2_H100,
        .tpot_base_ms = 6.55,
        .prefill_tokens_per_s = 5500,
        .ttft_overhead_ms = 2,
        .points =
            {
                {1, 94, 6.55, 0.05, 0.02},
                {8, 0, 11.96, 0, 0.05},
                /* The measured TTFT doubles by c = 32; the model's mechanisms (waiting for the
                 * step in progress, sharing steps) give +25 % at this TPOT (docs/mock.md). */
                {32, 188, 22.47, 0.45, 0.05},
            },
        .n_points = 3,
    },
    {
        .name = "h200-llama70b",
        .summary = "Llama 3.1 70B FP8 on one H200 behind Dynamo",
        .max_num_seqs = 64,
        .max_num_batched_tokens = 8192,
        .max_model_len = 131072,
        .kv_cache_tokens = 160000,
        .tpot_base_ms = 1.18,
        .alpha = 1.0,
        .prefill_tokens_per_s = 10000,
        .ttft_overhead_ms = 105,
        .source = "sweep-combined-50-120.md (medians)",
        /* Multi-turn chat, 3-5 turns: a 500-token opening, 100 more per turn, 150-token replies,
         * 4.5 s between turns (what 40 s conversations at 44 ms per token leave). */
        .workload =
            {
                .steps_min = 3,
                .steps_max = 5,
                .input_tokens = {500, 100},
                .output_tokens = {150},
                .carry_history = true,
                .think_ms = 4500,
                .jitter = 0.3,
            },
        .ttft_is_median = true,
        .tpot_is_median = true,
        .points =
            {
                {50, 174, 44, 0.10, 0.05},
                {70, 206, 56, 0.15, 0.20},
                {120, 0, 84, 0, 0.05},
            },
        .n_points = 3,
    },
};

const mock_profile_t *mock_profile_find(const char *name) {
    for (size_t i = 0; i < sizeof(mock_profiles) / sizeof(mock_profiles[0]); i++)
        if (!strcmp(mock_profiles[i].name, name))
            return &mock_profiles[i];
    return NULL;
}

const mock_profile_t *mock_profile_at(size_t i) {
    return i < sizeof(mock_profiles) / sizeof(mock_profiles[0]) ? &mock_profiles[i] : NULL;
}

void mock_profile_engine_config(const mock_profile_t *self, mock_engine_config_t *out) {
    *out = (mock_engine_config_t){
        .max_num_seqs = self->max_num_seqs,
        .max_num_batched_tokens = self->max_num_batched_tokens,
        .kv_cache_tokens = self->kv_cache_tokens,
        .prefix_cache_tokens = self->kv_cache_tokens,
        .tpot_base_ms = self->tpot_base_ms,
        .alpha = self->alpha,
        .prefill_tokens_per_s = self->prefill_tokens_per_s,
        .step_fixed_ms = self->step_fixed_ms,
        .spec_tokens = self->spec_tokens,
        .spec_acceptance = self->spec_acceptance,
        .spec_draft_ms = self->spec_draft_ms,
        .spec_verify_weight = self->spec_verify_weight,
    };
}
