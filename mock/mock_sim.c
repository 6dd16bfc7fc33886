#include "mock_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mock_prefix_cache.h"
#include "mock_timer_heap.h"
#include "rng.h"

/* Draw fields of the simulation's own randomness (RNG_STREAM_MOCK, node 1). */
enum { MOCK_SIM_DRAW_STEPS = 1, MOCK_SIM_DRAW_TOKENS = 2 };

typedef struct mock_sim_client {
    mock_timer_t timer; /* first member: the heap hands it back */
    mock_seq_t seq;
    uint64_t *ids; /* history + this request's prompt + its output */
    uint64_t *hashes;
    uint32_t history; /* tokens carried into the next prompt */
    uint64_t session, draws;
    uint32_t step, steps;
    int64_t sent_ns;
} mock_sim_client_t;

typedef struct mock_sim {
    const mock_sim_workload_t *w;
    mock_engine_t *engine;
    mock_timer_heap_t heap;
    mock_timer_t step_timer;
    mock_sim_client_t *clients;
    uint32_t n_clients, max_tokens;
    uint64_t seed, next_session, next_fresh_id;
    int64_t overhead_ns, measure_from_ns, step_start_ns;
    double *ttft, *tpot;
    uint64_t n_done, cap_done, window_tokens;
    double running_sum, waiting_sum, sampled_ns; /* weighted by step duration */
} mock_sim_t;

static uint32_t mock_sim_draw(mock_sim_t *sim, mock_sim_client_t *c, uint32_t field,
                              uint32_t mean) {
    rng_t rng;
    rng_init(&rng, sim->seed, RNG_STREAM_MOCK, c->session, 1, field + 16 * (uint32_t)c->draws++);
    double spread = sim->w->jitter * (2 * rng_next_double(&rng) - 1);
    double v = mean * (1 + spread);
    return v < 1 ? 1 : (uint32_t)llround(v);
}

/* Entry step of a per-step table; a 0 (or a step past the table) repeats the entry before. */
static uint32_t mock_sim_table(const uint32_t *table, uint32_t step) {
    uint32_t i = step < MOCK_SIM_MAX_STEPS ? step : MOCK_SIM_MAX_STEPS - 1;
    while (i > 0 && table[i] == 0)
        i--;
    return table[i];
}

static void mock_sim_new_session(mock_sim_t *sim, mock_sim_client_t *c) {
    const mock_sim_workload_t *w = sim->w;
    c->session = sim->next_session++;
    c->draws = 0;
    c->step = 0;
    rng_t rng;
    rng_init(&rng, sim->seed, RNG_STREAM_MOCK, c->session, 1, MOCK_SIM_DRAW_STEPS);
    c->steps = w->steps_min + (uint32_t)rng_next_below(&rng, w->steps_max - w->steps_min + 1);
    c->history = 0;
    for (uint32_t i = 0; i < w->system_tokens && i < sim->max_tokens; i++)
        c->ids[c->history++] = 0x5157u + i; /* the same ids in every session: shared prefix */
}

/* Builds the next request of c's session and sends it (it reaches the engine after the
 * overhead). A session whose history outgrows the token limit starts over; false when even a
 * new session's first request does not fit (the client then stops). */
static bool mock_sim_send(mock_sim_t *sim, mock_sim_client_t *c, int64_t now) {
    const mock_sim_workload_t *w = sim->w;
    if (c->step >= c->steps)
        mock_sim_new_session(sim, c);
    uint32_t input =
        mock_sim_draw(sim, c, MOCK_SIM_DRAW_TOKENS, mock_sim_table(w->input_tokens, c->step));
    uint32_t output =
        mock_sim_draw(sim, c, MOCK_SIM_DRAW_TOKENS, mock_sim_table(w->output_tokens, c->step));
    uint32_t prompt = (w->carry_history ? c->history : w->system_tokens) + input;
    if (prompt + output > sim->max_tokens) {
        if (c->step == 0)
            return false;
        mock_sim_new_session(sim, c);
        return mock_sim_send(sim, c, now);
    }
    uint32_t start = w->carry_history ? c->history : w->system_tokens;
    for (uint32_t i = start; i < prompt + output; i++)
        c->ids[i] = sim->next_fresh_id++; /* fresh input, then the reply */
    memset(&c->seq, 0, sizeof(c->seq));
    c->seq.prompt_tokens = prompt;
    c->seq.output_tokens = output;
    c->seq.block_hashes = c->hashes;
    c->seq.n_block_hashes = mock_prefix_cache_hash_blocks(c->ids, prompt + output, c->hashes);
    c->seq.user = c;
    c->history = prompt + output;
    c->step++;
    c->sent_ns = now;
    mock_timer_heap_schedule(&sim->heap, &c->timer, now + sim->overhead_ns);
    return true;
}

static void mock_sim_record(mock_sim_t *sim, double ttft_ms, double tpot_ms) {
    if (sim->n_done == sim->cap_done) {
        uint64_t cap = sim->cap_done ? sim->cap_done * 2 : 1024;
        double *a = realloc(sim->ttft, cap * sizeof(double));
        if (a)
            sim->ttft = a;
        double *b = realloc(sim->tpot, cap * sizeof(double));
        if (b)
            sim->tpot = b;
        if (!a || !b)
            return;
        sim->cap_done = cap;
    }
    sim->ttft[sim->n_done] = ttft_ms;
    sim->tpot[sim->n_done++] = tpot_ms;
}

static void mock_sim_on_token(mock_seq_t *seq, int64_t now, void *arg) {
    mock_sim_t *sim = arg;
    mock_sim_client_t *c = seq->user;
    if (now >= sim->measure_from_ns)
        sim->window_tokens++;
    if (seq->generated < seq->output_tokens)
        return;
    if (c->sent_ns >= sim->measure_from_ns) {
        double tpot = seq->output_tokens > 1 ? (double)(seq->last_token_ns - seq->first_token_ns) /
                                                   1e6 / (seq->output_tokens - 1)
                                             : NAN;
        mock_sim_record(sim, (double)(seq->first_token_ns - c->sent_ns) / 1e6, tpot);
    }
    int64_t next = now + (int64_t)llround(sim->w->think_ms * 1e6);
    c->timer.kind = 1; /* a send, not an admission */
    mock_timer_heap_schedule(&sim->heap, &c->timer, next);
}

static void mock_sim_kick(mock_sim_t *sim, int64_t now) {
    if (mock_engine_in_step(sim->engine) || !mock_engine_has_work(sim->engine))
        return;
    int64_t start = sim->step_start_ns > now ? sim->step_start_ns : now;
    int64_t d = mock_engine_step_begin(sim->engine, start);
    if (d < 0)
        return;
    mock_engine_stats_t st;
    mock_engine_get_stats(sim->engine, &st);
    if (start >= sim->measure_from_ns) {
        sim->running_sum += (double)st.running * (double)d;
        sim->waiting_sum += (double)st.waiting * (double)d;
        sim->sampled_ns += (double)d;
    }
    sim->step_start_ns = start + d;
    mock_timer_heap_schedule(&sim->heap, &sim->step_timer, start + d);
}

static int mock_sim_compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v (NaNs last) and fills the p50, mean and p95 of its finite values. */
static void mock_sim_summary(double *v, uint64_t n, double *p50, double *mean, double *p95) {
    uint64_t m = 0;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!isnan(v[i])) {
            v[m++] = v[i];
            sum += v[i];
        }
    qsort(v, m, sizeof(double), mock_sim_compare);
    *p50 = m ? v[(m - 1) / 2] : NAN;
    *p95 = m ? v[(uint64_t)((m - 1) * 0.95)] : NAN;
    *mean = m ? sum / m : NAN;
}

static void mock_sim_free(mock_sim_t *sim) {
    mock_engine_destroy(&sim->engine); /* first: it aborts sequences that live in the clients */
    mock_timer_heap_clear(&sim->heap);
    for (uint32_t i = 0; sim->clients && i < sim->n_clients; i++) {
        free(sim->clients[i].ids);
        free(sim->clients[i].hashes);
    }
    free(sim->clients);
    free(sim->ttft);
    free(sim->tpot);
}

int mock_sim_run(const mock_engine_config_t *config, double overhead_ms,
                 const mock_sim_workload_t *workload, uint32_t concurrency, double warmup_s,
                 double measure_s, uint64_t seed, mock_sim_result_t *out) {
    memset(out, 0, sizeof(*out));
    if (concurrency == 0 || workload->steps_min == 0 || workload->steps_max < workload->steps_min)
        return -1;
    mock_sim_t sim = {.w = workload,
                      .seed = seed,
                      .n_clients = concurrency,
                      .overhead_ns = (int64_t)llround(overhead_ms * 1e6)};
    /* Sessions start over past 32k tokens of history (it also bounds the memory per client). */
    uint64_t max_tokens = config->kv_cache_tokens < 32768 ? config->kv_cache_tokens : 32768;
    sim.max_tokens = (uint32_t)max_tokens;
    sim.next_fresh_id = 1ull << 40;
    sim.measure_from_ns = (int64_t)llround(warmup_s * 1e9);
    int64_t end_ns = sim.measure_from_ns + (int64_t)llround(measure_s * 1e9);
    mock_timer_heap_init(&sim.heap);
    sim.engine = mock_engine_new(config);
    sim.clients = calloc(concurrency, sizeof(*sim.clients));
    if (!sim.engine || !sim.clients) {
        mock_sim_free(&sim);
        return -1;
    }
    for (uint32_t i = 0; i < concurrency; i++) {
        mock_sim_client_t *c = &sim.clients[i];
        c->ids = malloc(max_tokens * sizeof(*c->ids));
        c->hashes = malloc((max_tokens / MOCK_PREFIX_CACHE_BLOCK_TOKENS + 1) * sizeof(*c->hashes));
        if (!c->ids || !c->hashes) {
            mock_sim_free(&sim);
            return -1;
        }
        mock_sim_new_session(&sim, c);
        c->timer.kind = 1;
        /* Clients start spread over the first second so they do not move in lock step. */
        mock_timer_heap_schedule(&sim.heap, &c->timer, (int64_t)i * 1000000000 / concurrency);
    }
    mock_engine_stats_t before = {0};
    bool measuring = false;
    mock_timer_t *t;
    while ((t = mock_timer_heap_pop(&sim.heap)) && t->due_ns < end_ns) {
        int64_t now = t->due_ns;
        if (!measuring && now >= sim.measure_from_ns) {
            measuring = true;
            mock_engine_get_stats(sim.engine, &before);
        }
        if (t == &sim.step_timer) {
            mock_engine_step_end(sim.engine, now, mock_sim_on_token, &sim);
        } else {
            mock_sim_client_t *c = (mock_sim_client_t *)t;
            if (t->kind == 1) {
                if (mock_sim_send(&sim, c, now))
                    c->timer.kind = 2;
            } else {
                mock_engine_add(sim.engine, &c->seq, now); /* it always fits: max_tokens <= pool */
            }
        }
        mock_sim_kick(&sim, now);
    }
    mock_engine_stats_t after;
    mock_engine_get_stats(sim.engine, &after);
    out->requests = sim.n_done;
    mock_sim_summary(sim.ttft, sim.n_done, &out->ttft_p50_ms, &out->ttft_mean_ms,
                     &out->ttft_p95_ms);
    mock_sim_summary(sim.tpot, sim.n_done, &out->tpot_p50_ms, &out->tpot_mean_ms,
                     &out->tpot_p95_ms);
    out->generation_tokens_per_s = (double)sim.window_tokens / measure_s;
    out->mean_running = sim.sampled_ns > 0 ? sim.running_sum / sim.sampled_ns : 0;
    out->mean_waiting = sim.sampled_ns > 0 ? sim.waiting_sum / sim.sampled_ns : 0;
    uint64_t queries = after.prefix_queries - before.prefix_queries;
    out->prefix_hit_rate = queries ? (double)(after.prefix_hits - before.prefix_hits) / queries : 0;
    out->preemptions = after.preemptions - before.preemptions;
    mock_sim_free(&sim);
    return 0;
}
