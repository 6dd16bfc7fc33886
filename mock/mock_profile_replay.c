/* A profile's engine, and its replay against the measurements it was calibrated from: above both
 * the profiles' table (mock_profiles.c) and the options that apply one (mock_options.c), which
 * needs the table for its default. */
#include "mock_options.h"
#include "mock_profiles.h"
#include "mock_sim.h"
#include <string.h>

void mock_profile_engine_config(const mock_profile_t *self, mock_engine_config_t *out) {
    mock_options_t options = {.prefix_cache = true}; /* no distribution: nothing to clear */
    mock_options_apply_profile(&options, self);
    mock_options_engine_config(&options, out);
}

int mock_profile_replay(const mock_profile_t *self, uint32_t concurrency, mock_sim_result_t *out) {
    mock_engine_config_t config;
    mock_profile_engine_config(self, &config);
    return mock_profile_replay_engine(self, &config, self->ttft_overhead_ms, concurrency, out);
}

int mock_profile_replay_engine(const mock_profile_t *self, const mock_engine_config_t *engine,
                               double overhead_ms, uint32_t concurrency, mock_sim_result_t *out) {
    uint32_t runs = self->repetitions ? self->repetitions : 1;
    double warmup = self->warmup_s > 0 ? self->warmup_s : 20;
    double measure = self->measure_s > 0 ? self->measure_s : 120;
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < runs; i++) {
        mock_sim_result_t r;
        if (mock_sim_run(engine, overhead_ms, &self->workload, concurrency, warmup, measure, i + 1,
                         &r) < 0)
            return -1;
        out->requests += r.requests;
        out->ttft_p50_ms += r.ttft_p50_ms / runs;
        out->ttft_mean_ms += r.ttft_mean_ms / runs;
        out->ttft_p95_ms += r.ttft_p95_ms / runs;
        out->tpot_p50_ms += r.tpot_p50_ms / runs;
        out->tpot_mean_ms += r.tpot_mean_ms / runs;
        out->tpot_p95_ms += r.tpot_p95_ms / runs;
        out->generation_tokens_per_s += r.generation_tokens_per_s / runs;
        out->tokens_per_chunk += r.tokens_per_chunk / runs;
        out->mean_running += r.mean_running / runs;
        out->mean_waiting += r.mean_waiting / runs;
        out->prefix_hit_rate += r.prefix_hit_rate / runs;
        out->preemptions += r.preemptions;
        out->timeouts += r.timeouts;
        out->error_pct += r.error_pct / runs;
    }
    out->requests /= runs;
    out->preemptions /= runs;
    out->timeouts /= runs;
    return 0;
}
