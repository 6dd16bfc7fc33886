#include "mock_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "mock_prefix_cache.h"
#include "rng.h"
#include "timer_heap.h"

/* Draw fields of the simulation's own randomness (RNG_STREAM_MOCK, node 1). */
enum { MOCK_SIM_DRAW_STEPS = 1, MOCK_SIM_DRAW_TOKENS = 2 };

/* What a client's next event is. */
typedef enum mock_sim_next { MOCK_SIM_SEND = 1, MOCK_SIM_ADMIT } mock_sim_next_t;

typedef struct mock_sim_client {
    mock_sim_next_t next;
    mock_seq_t seq;
    uint64_t *ids; /* history + this request's prompt + its output */
    uint64_t *hashes;
    uint32_t history; /* tokens carried into the next prompt */
    uint64_t session, draws;
    uint32_t step, steps;
    int64_t sent_ns;
    uint64_t timeout_id; /* the armed timeout of the request in flight (0: none) */
} mock_sim_client_t;

typedef struct mock_sim {
    const mock_sim_workload_t *w;
    mock_engine_t *engine;
    timer_heap_t heap; /* events in virtual time: a client's (arg: it) or the step's (NULL) */
    mock_sim_client_t *clients;
    uint32_t n_clients, max_tokens;
    uint64_t seed, next_session, next_fresh_id;
    int64_t overhead_ns, measure_from_ns, step_start_ns;
    histogram_t *ttft, *tpot; /* ns, the same definition as the reports' */
    uint64_t n_done, n_timeouts, window_tokens, window_chunks;
    double running_sum, waiting_sum, sampled_ns; /* weighted by step duration */
    bool out_of_memory;
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

/* Tags a client's timeout in the event heap (never called). */
static void mock_sim_timeout_tag(void) {}

/* Queues c's next event (NULL: the step in progress ends) at virtual time when_ns; false when
 * out of memory (the simulation then ends short: a client's event is never dropped silently,
 * mock_sim_run reports it). */
static bool mock_sim_schedule(mock_sim_t *sim, mock_sim_client_t *c, int64_t when_ns) {
    if (timer_heap_add(&sim->heap, when_ns, NULL, c))
        return true;
    sim->out_of_memory = true;
    return false;
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
    c->seq.key = c->session << 8 | c->step;
    c->seq.user = c;
    c->history = prompt + output;
    c->step++;
    c->sent_ns = now;
    c->next = MOCK_SIM_ADMIT;
    if (sim->w->timeout_ms > 0) {
        c->timeout_id = timer_heap_add(&sim->heap, now + (int64_t)llround(sim->w->timeout_ms * 1e6),
                                       mock_sim_timeout_tag, c);
        if (!c->timeout_id)
            sim->out_of_memory = true;
    }
    return mock_sim_schedule(sim, c, now + sim->overhead_ns);
}

static void mock_sim_on_token(mock_seq_t *seq, int64_t now, void *arg) {
    mock_sim_t *sim = arg;
    mock_sim_client_t *c = seq->user;
    if (now >= sim->measure_from_ns) {
        sim->window_tokens += seq->step_sampled;
        sim->window_chunks++;
    }
    if (seq->generated < seq->output_tokens)
        return;
    if (c->timeout_id) {
        timer_heap_cancel(&sim->heap, c->timeout_id);
        c->timeout_id = 0;
    }
    if (c->sent_ns >= sim->measure_from_ns) {
        sim->n_done++;
        histogram_record(sim->ttft, (uint64_t)(seq->first_token_ns - c->sent_ns));
        if (seq->output_tokens > 1)
            histogram_record(sim->tpot,
                             (uint64_t)llround((double)(seq->last_token_ns - seq->first_token_ns) /
                                               (seq->output_tokens - 1)));
    }
    c->next = MOCK_SIM_SEND;
    mock_sim_schedule(sim, c, now + (int64_t)llround(sim->w->think_ms * 1e6));
}

/* The client gives up on its request: out of the engine, counted, and its session ends (the
 * next request starts a new one after the think time). */
static void mock_sim_time_out(mock_sim_t *sim, mock_sim_client_t *c, int64_t now) {
    c->timeout_id = 0;
    mock_engine_abort(sim->engine, &c->seq);
    if (c->sent_ns >= sim->measure_from_ns)
        sim->n_timeouts++;
    c->step = c->steps;
    c->next = MOCK_SIM_SEND;
    mock_sim_schedule(sim, c, now + (int64_t)llround(sim->w->think_ms * 1e6));
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
    mock_sim_schedule(sim, NULL, start + d);
}

/* The p50, mean and p95 of h in ms, as the reports compute them (NaN when empty). */
static void mock_sim_summary(const histogram_t *h, double *p50, double *mean, double *p95) {
    bool empty = histogram_count(h) == 0;
    *p50 = empty ? NAN : (double)histogram_percentile(h, 50) / 1e6;
    *p95 = empty ? NAN : (double)histogram_percentile(h, 95) / 1e6;
    *mean = empty ? NAN : histogram_mean(h) / 1e6;
}

static void mock_sim_free(mock_sim_t *sim) {
    mock_engine_destroy(&sim->engine); /* first: it aborts sequences that live in the clients */
    timer_heap_clear(&sim->heap);
    for (uint32_t i = 0; sim->clients && i < sim->n_clients; i++) {
        free(sim->clients[i].ids);
        free(sim->clients[i].hashes);
    }
    free(sim->clients);
    histogram_destroy(&sim->ttft);
    histogram_destroy(&sim->tpot);
}

int mock_sim_run(const mock_engine_config_t *config, double overhead_ms,
                 const mock_sim_workload_t *workload, uint32_t concurrency, double warmup_s,
                 double measure_s, uint64_t seed, mock_sim_result_t *out) {
    memset(out, 0, sizeof(*out));
    if (concurrency == 0 || workload->steps_min == 0 || workload->steps_max < workload->steps_min ||
        (workload->timeout_ms > 0 && workload->timeout_ms <= overhead_ms))
        return -1; /* a timeout inside the overhead would fire before the request is queued */
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
    timer_heap_init(&sim.heap);
    sim.ttft = histogram_new();
    sim.tpot = histogram_new();
    mock_engine_config_t seeded = *config; /* the engine's draws follow the run's seed too */
    seeded.seed = seed;
    sim.engine = mock_engine_new(&seeded);
    sim.clients = calloc(concurrency, sizeof(*sim.clients));
    if (!sim.ttft || !sim.tpot || !sim.engine || !sim.clients) {
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
        c->next = MOCK_SIM_SEND;
        /* Clients start spread over the first second so they do not move in lock step. */
        if (!mock_sim_schedule(&sim, c, (int64_t)i * 1000000000 / concurrency)) {
            mock_sim_free(&sim);
            return -1;
        }
    }
    mock_engine_stats_t before = {0};
    bool measuring = false;
    timer_heap_entry_t t;
    while (timer_heap_pop(&sim.heap, &t) && t.when_ns < end_ns) {
        int64_t now = t.when_ns;
        if (!measuring && now >= sim.measure_from_ns) {
            measuring = true;
            mock_engine_get_stats(sim.engine, &before);
        }
        mock_sim_client_t *c = t.arg;
        if (t.fn == mock_sim_timeout_tag)
            mock_sim_time_out(&sim, c, now);
        else if (!c)
            mock_engine_step_end(sim.engine, now, mock_sim_on_token, &sim);
        else if (c->next == MOCK_SIM_SEND)
            mock_sim_send(&sim, c, now);
        else
            mock_engine_add(sim.engine, &c->seq, now); /* it always fits: max_tokens <= pool */
        mock_sim_kick(&sim, now);
    }
    mock_engine_stats_t after;
    mock_engine_get_stats(sim.engine, &after);
    out->requests = sim.n_done;
    out->timeouts = sim.n_timeouts;
    out->error_pct =
        sim.n_done + sim.n_timeouts ? 100.0 * sim.n_timeouts / (sim.n_done + sim.n_timeouts) : 0;
    mock_sim_summary(sim.ttft, &out->ttft_p50_ms, &out->ttft_mean_ms, &out->ttft_p95_ms);
    mock_sim_summary(sim.tpot, &out->tpot_p50_ms, &out->tpot_mean_ms, &out->tpot_p95_ms);
    out->generation_tokens_per_s = (double)sim.window_tokens / measure_s;
    out->tokens_per_chunk = sim.window_chunks ? (double)sim.window_tokens / sim.window_chunks : 0;
    out->mean_running = sim.sampled_ns > 0 ? sim.running_sum / sim.sampled_ns : 0;
    out->mean_waiting = sim.sampled_ns > 0 ? sim.waiting_sum / sim.sampled_ns : 0;
    uint64_t queries = after.prefix_queries - before.prefix_queries;
    out->prefix_hit_rate = queries ? (double)(after.prefix_hits - before.prefix_hits) / queries : 0;
    out->preemptions = after.preemptions - before.preemptions;
    bool complete = !sim.out_of_memory;
    mock_sim_free(&sim);
    return complete ? 0 : -1;
}
