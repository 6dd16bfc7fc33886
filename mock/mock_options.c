#include "mock_options.h"

#include <stdio.h>
#include <string.h>

#include "mock_profiles.h"

void mock_options_apply_profile(mock_options_t *self, const mock_profile_t *p) {
    self->max_num_seqs = p->max_num_seqs;
    self->max_num_batched_tokens = p->max_num_batched_tokens;
    self->max_model_len = p->max_model_len;
    self->kv_cache_tokens = p->kv_cache_tokens;
    self->prefix_cache_tokens = 0;
    self->tpot_base_ms = p->tpot_base_ms;
    self->alpha = p->alpha;
    self->prefill_tokens_per_s = p->prefill_tokens_per_s;
    self->ttft_overhead_ms = p->ttft_overhead_ms;
    self->step_fixed_ms = p->step_fixed_ms;
    self->spec_tokens = p->spec_tokens;
    self->spec_acceptance = p->spec_acceptance;
    self->spec_draft_ms = p->spec_draft_ms;
    self->spec_verify_weight = p->spec_verify_weight;
}

void mock_options_init(mock_options_t *self) {
    memset(self, 0, sizeof(*self));
    snprintf(self->bind, sizeof(self->bind), "127.0.0.1");
    self->port = 8000;
    snprintf(self->model, sizeof(self->model), "mock-llama");
    snprintf(self->profile, sizeof(self->profile), "default");
    mock_options_apply_profile(self, mock_profile_find("default"));
    self->prefix_cache = true;
    self->sent_ns = true;
    dist_init(&self->output_len);
    dist_fixed(&self->output_len, 256);
    dist_init(&self->reasoning);
    self->max_body_bytes = 64u << 20;
    self->fail_status = 500;
    self->reset_rate = 1;
    self->stall_after_tokens = 1;
    self->stall_rate = 1;
}

void mock_options_clear(mock_options_t *self) {
    dist_clear(&self->output_len);
    dist_clear(&self->reasoning);
}

void mock_options_engine_config(const mock_options_t *self, mock_engine_config_t *out) {
    uint64_t cache_tokens =
        self->prefix_cache_tokens ? self->prefix_cache_tokens : self->kv_cache_tokens;
    *out = (mock_engine_config_t){
        .max_num_seqs = self->max_num_seqs,
        .max_num_batched_tokens = self->max_num_batched_tokens,
        .kv_cache_tokens = self->kv_cache_tokens,
        .prefix_cache_tokens = self->prefix_cache ? cache_tokens : 0,
        .tpot_base_ms = self->tpot_base_ms,
        .alpha = self->alpha,
        .prefill_tokens_per_s = self->prefill_tokens_per_s,
        .step_fixed_ms = self->step_fixed_ms,
        .spec_tokens = self->spec_tokens,
        .spec_acceptance = self->spec_acceptance,
        .spec_draft_ms = self->spec_draft_ms,
        .spec_verify_weight = self->spec_verify_weight,
        .seed = self->seed,
    };
}
