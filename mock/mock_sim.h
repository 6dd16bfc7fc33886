/* Closed-loop load on the simulated engine in virtual time: N clients each run sessions of
 * requests back to back (chat turns that carry their history, or a fixed chain of agent steps)
 * through the same engine code the server uses, and the TTFT, TPOT and throughput they would
 * see come out in milliseconds of simulated time. This is how the built-in profiles are checked
 * against the measurements they were calibrated from (tests/unit/test_mock_profiles.c,
 * bench/bench_mock.c), with no sockets and no waiting. */
#ifndef STAMPEDE_MOCK_SIM_H
#define STAMPEDE_MOCK_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "mock_engine.h"

#define MOCK_SIM_MAX_STEPS 8

/* What every session does. Step i of a session sends input_tokens[i] fresh tokens and asks for
 * output_tokens[i]; sessions have between steps_min and steps_max steps. A 0 entry, or a step
 * past the table, repeats the entry before it. */
typedef struct mock_sim_workload {
    uint32_t steps_min, steps_max;
    uint32_t input_tokens[MOCK_SIM_MAX_STEPS];
    uint32_t output_tokens[MOCK_SIM_MAX_STEPS];
    uint32_t system_tokens; /* a prefix every request of every session starts with */
    bool carry_history;     /* chat: a step's prompt is the previous prompt, its reply, new input */
    double think_ms;        /* pause between a reply and the next request of the session */
    double jitter;     /* +- fraction drawn around each token count, so runs do not lock step */
    double timeout_ms; /* a request not complete this long after it was sent is abandoned (the
                        * client's timeout: an error, its session ends); 0 = never */
} mock_sim_workload_t;

typedef struct mock_sim_result {
    uint64_t requests; /* completed in the measured window */
    double ttft_p50_ms, ttft_mean_ms, ttft_p95_ms;
    double tpot_p50_ms, tpot_mean_ms, tpot_p95_ms; /* per request: (last - first) / (n - 1) */
    double generation_tokens_per_s;
    double tokens_per_chunk; /* tokens sampled per sequence and step (> 1: speculative decoding) */
    double mean_running, mean_waiting; /* time-weighted over the engine's busy time */
    double prefix_hit_rate;            /* hits / queries over the window */
    uint64_t preemptions;
    uint64_t timeouts; /* requests sent in the window and abandoned at the client's timeout */
    double error_pct;  /* timeouts / (completed + timeouts) of the window's requests */
} mock_sim_result_t;

/* Runs `concurrency` clients against an engine built from config for warmup_s + measure_s of
 * simulated time; overhead_ms is added before each request reaches the scheduler (the mock's
 * --ttft-overhead-ms). Deterministic in seed, which also keys the engine's draws (config->seed is
 * not used). 0 ok, -1 on a bad configuration or no memory. */
int mock_sim_run(const mock_engine_config_t *config, double overhead_ms,
                 const mock_sim_workload_t *workload, uint32_t concurrency, double warmup_s,
                 double measure_s, uint64_t seed, mock_sim_result_t *out);

#endif
