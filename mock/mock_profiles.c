#include "mock_profiles.h"

#include <string.h>

static const mock_profile_t mock_profiles[] = {
    {
        .name = "default",
        .summary = "vLLM's default limits (256 seqs, 32k context) with tp1-fp8's speed",
        .max_num_seqs = 256,
        .max_num_batched_tokens = 8192,
        .max_model_len = 32768,
        .kv_cache_tokens = 1048576,
        .tpot_base_ms = 7.91,
        .alpha = 0.33,
        .prefill_tokens_per_s = 20000,
        .ttft_overhead_ms = 130,
    },
    {
        .name = "tp1-fp8",
        .summary = "Qwen3-Next-80B FP8, TP1 on H100-96GB, max_num_seqs 32",
        .max_num_seqs = 32,
        .max_num_batched_tokens = 8192,
        .max_model_len = 4096,
        .kv_cache_tokens = 131072,
        .tpot_base_ms = 7.91,
        .alpha = 0.33,
        .prefill_tokens_per_s = 20000,
        .ttft_overhead_ms = 130,
    },
    {
        .name = "tp2-fp8",
        .summary = "Qwen3-Next-80B FP8, TP2 on 2x H100-96GB, max_num_seqs 64",
        .max_num_seqs = 64,
        .max_num_batched_tokens = 8192,
        .max_model_len = 4096,
        .kv_cache_tokens = 262144,
        .tpot_base_ms = 7.64,
        .alpha = 0.30,
        .prefill_tokens_per_s = 30000,
        .ttft_overhead_ms = 125,
    },
    {
        .name = "tp2-fp16",
        .summary = "Qwen3-Next-80B BF16, TP2 on 2x H100-96GB, max_num_seqs 64",
        .max_num_seqs = 64,
        .max_num_batched_tokens = 8192,
        .max_model_len = 4096,
        .kv_cache_tokens = 262144,
        .tpot_base_ms = 6.55,
        .alpha = 0.33,
        .prefill_tokens_per_s = 12000,
        .ttft_overhead_ms = 45,
    },
    {
        .name = "h200-llama70b",
        .summary = "Llama 3.1 70B FP8 on one H200 behind Dynamo, max_num_seqs 64",
        .max_num_seqs = 64,
        .max_num_batched_tokens = 8192,
        .max_model_len = 131072,
        .kv_cache_tokens = 160000,
        .tpot_base_ms = 4.0,
        .alpha = 0.6,
        .prefill_tokens_per_s = 8000,
        .ttft_overhead_ms = 60,
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
