/* Workload generation: a session is a DAG of request nodes (a chat is a chain, an independent
 * request a single node). Everything here is a pure function of (config, seed, session index):
 * the same file and seed give the same sessions whatever the worker count or generation order. */
#ifndef STAMPEDE_WORKLOAD_H
#define STAMPEDE_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "workload_session.h"

/* Generates session `index` into *out (previous contents freed: *out must be zeroed or hold an
 * earlier session). Each quantity is drawn with rng_init(seed, RNG_STREAM_WORKLOAD, index, node,
 * RNG_FIELD_x), so it depends on nothing else. 0 ok, -1 on allocation failure. */
int workload_session_generate(const config_t *cfg, uint64_t index, workload_session_t *out);
/* A bound on the requests of one session in flight at once: 1 for requests and chats, the widest
 * fan of a graph (a worker sizes its transfers as sessions x this). */
uint32_t workload_max_parallel(const config_t *cfg);
/* Number of requests of session `index` without generating the rest (cheap). */
uint32_t workload_session_size(const config_t *cfg, uint64_t index);

/* Rate mode: intended start of arrival `index`, in ns after the run start, from one global seeded
 * sequence of gaps (poisson, constant or gamma). Arrival 0 is at t = 0; arrival i + 1 follows
 * arrival i by gap i, drawn with rng_init(seed, RNG_STREAM_ARRIVAL, i, 0, RNG_FIELD_GAP). Gaps have
 * mean 1 / rate; gamma gaps have cv arrival_cv (cv <= 0 gives constant gaps); a rate <= 0 puts
 * every arrival at 0. Same cursor contract (an index below the cursor restarts from 0). */
typedef struct workload_arrivals {
    const config_t *cfg;
    uint64_t next_index;
    double next_time_s; /* arrival time of next_index */
    dist_t gap;         /* seconds between arrivals, prepared by init (owns no memory) */
} workload_arrivals_t;

void workload_arrivals_init(workload_arrivals_t *self, const config_t *cfg);
int64_t workload_arrivals_time_ns(workload_arrivals_t *self, uint64_t index);
/* Kind trace: the arrival of session index i in ns after the run start, the trace's arrival x
 * time_scale, plus (i / n_sessions) x period x time_scale when wrapping. */
int64_t workload_trace_arrival_ns(const config_t *cfg, uint64_t index);

/* Rate mode: the schedule the limits leave in force. When limits.max_sessions or
 * limits.max_requests (the sessions holding that many requests) end the arrivals at or before
 * horizon_ns after the run start, returns true with the sessions allowed in *n_sessions and the
 * last one's arrival in *last_ns; false when the arrivals go on past horizon_ns (or nothing
 * limits them). Linear in the sessions walked (at most those arriving by horizon_ns). */
bool workload_schedule_cut(const config_t *cfg, int64_t horizon_ns, uint64_t *n_sessions,
                           int64_t *last_ns);
/* Rate mode: when the schedule in force ends, in ns after the run start (its last allowed
 * arrival plus one mean gap, 1 / scheduler.rate), or -1 when it goes on past horizon_ns. */
int64_t workload_schedule_end_ns(const config_t *cfg, int64_t horizon_ns);

/* Prompt text. The fresh text of (session, node) is n words drawn from the single-token vocabulary
 * (common/prompt.h) with rng_init(text seed, RNG_STREAM_PROMPT, session, node, RNG_FIELD_TEXT);
 * the system scaffold (workload.system_prompt_tokens words) depends on the text seed only, so it
 * is shared by every session (real prefix reuse across sessions). The text seed is
 * config_text_seed(cfg): a sweep gives each level and repetition its own, while every shape
 * (lengths, graphs, waits, arrivals) stays a function of the seed. Both write at buf (pass the end
 * of the text so far to append) single-space-separated words with no leading or trailing space,
 * NUL-terminated, and return the number of bytes written, or -1 if cap is too small (see
 * prompt_max_bytes()). */
long workload_fresh_text(const config_t *cfg, uint64_t session, uint32_t node, uint32_t n_words,
                         char *buf, size_t cap);
long workload_system_text(const config_t *cfg, char *buf, size_t cap);
/* The room workload_fresh_text needs for (session, node) with n_words, its NUL included:
 * prompt_max_bytes(n_words), plus a dataset turn's own text. */
size_t workload_fresh_max_bytes(const config_t *cfg, uint64_t session, uint32_t node,
                                uint32_t n_words);

#endif
