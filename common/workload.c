#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_shapes.h"
#include "prompt.h"
#include "trace.h"

uint32_t workload_max_parallel(const config_t *cfg) {
    if (config_replays(cfg))
        return cfg->workload.replay ? cfg->workload.replay->max_parallel : 1;
    return cfg->workload.kind == WORKLOAD_GRAPH ? graph_max_parallel(cfg) : 1;
}

uint32_t workload_session_size(const config_t *cfg, uint64_t index) {
    if (config_replays(cfg))
        return cfg->workload.replay && cfg->workload.replay->n_sessions
                   ? trace_session(cfg->workload.replay, index)->n_nodes
                   : 1;
    if (cfg->workload.kind == WORKLOAD_GRAPH)
        return graph_session_size(cfg, index);
    if (cfg->workload.kind != WORKLOAD_CHAT)
        return 1;
    return workload_count(workload_draw(cfg, &cfg->workload.turns, index, 0, RNG_FIELD_TURNS),
                          WORKLOAD_MAX_NODES);
}

/* workload_session_generate for kind trace: 0 ok, -1 on no memory or a session absent here. */
static int workload_trace_session(const config_t *cfg, uint64_t index, workload_session_t *out) {
    const trace_t *self = cfg->workload.replay;
    if (!self || self->n_sessions == 0)
        return -1;
    const trace_session_t *s = trace_session(self, index);
    if (s->first_node == TRACE_ABSENT)
        return -1;
    const trace_node_t *nodes = &self->nodes[s->first_node];
    size_t n_edges = 0;
    for (uint32_t j = 0; j < s->n_nodes; j++)
        n_edges += nodes[j].n_parents;
    if (workload_session_reserve(out, s->n_nodes, n_edges) != 0)
        return -1;
    size_t edge = 0;
    for (uint32_t j = 0; j < s->n_nodes; j++) {
        const trace_node_t *t = &nodes[j];
        workload_node_t *node = &out->nodes[j];
        node->parents = &out->edges[edge];
        node->n_parents = t->n_parents;
        if (t->n_parents) /* a part without edges has no edge array */
            memcpy(node->parents, &self->edges[t->parents_at],
                   t->n_parents * sizeof *node->parents);
        edge += t->n_parents;
        node->role = t->role;
        node->input_tokens = t->input_tokens;
        node->output_tokens = t->output_tokens;
        node->wait_after_ready_ns = t->wait_ns;
        node->history = WORKLOAD_HISTORY_CHAIN;
        node->history_parent = t->history_parent == TRACE_NONE ? 0 : t->history_parent;
        node->inherit = t->history_parent == TRACE_NONE ? 0.0 : t->history;
        node->append_parent_replies = t->append_parent_replies;
    }
    out->index = index;
    return 0;
}

int workload_session_generate(const config_t *cfg, uint64_t index, workload_session_t *out) {
    if (config_replays(cfg))
        return workload_trace_session(cfg, index, out);
    if (cfg->workload.kind == WORKLOAD_GRAPH)
        return graph_session_generate(cfg, index, out);
    const config_workload_t *w = &cfg->workload;
    bool chat = w->kind == WORKLOAD_CHAT;
    uint32_t n = workload_session_size(cfg, index);
    if (workload_session_reserve(out, n, n - 1) != 0)
        return -1;
    workload_node_t *nodes = out->nodes;
    for (uint32_t j = 0; j < n; j++) {
        workload_node_t *node = &nodes[j];
        if (j > 0) {
            node->n_parents = 1;
            node->parents = &out->edges[j - 1];
            node->parents[0] = j - 1;
            node->wait_after_ready_ns = workload_seconds_to_ns(
                workload_draw(cfg, &w->think_time, index, j, RNG_FIELD_THINK_TIME));
        }
        node->input_tokens =
            workload_count(workload_draw(cfg, &w->input_tokens, index, j, RNG_FIELD_INPUT_TOKENS),
                           WORKLOAD_MAX_TOKENS);
        node->output_tokens =
            workload_count(workload_draw(cfg, &w->output_tokens, index, j, RNG_FIELD_OUTPUT_TOKENS),
                           WORKLOAD_MAX_TOKENS);
        node->inherit = chat ? 1.0 : 0.0;
    }
    out->index = index;
    return 0;
}

int64_t workload_trace_arrival_ns(const config_t *cfg, uint64_t index) {
    const trace_t *self = cfg->workload.replay;
    if (!self || self->n_sessions == 0)
        return 0;
    const trace_session_t *s = trace_session(self, index);
    double scale = cfg->workload.trace.time_scale;
    double at = (double)(s->arrival_ns > 0 ? s->arrival_ns : 0) +
                (double)(index / self->n_sessions) * (double)self->period_ns;
    return workload_seconds_to_ns(at * scale / 1e9);
}

void workload_arrivals_init(workload_arrivals_t *self, const config_t *cfg) {
    const config_scheduler_t *s = &cfg->scheduler;
    self->cfg = cfg;
    self->next_index = 0;
    self->next_time_s = 0.0;
    double mean = s->rate > 0.0 && isfinite(s->rate) ? 1.0 / s->rate : 0.0;
    dist_fixed(&self->gap, mean);
    if (mean > 0.0 && s->arrival == ARRIVAL_POISSON) {
        self->gap.kind = DIST_EXPONENTIAL;
        self->gap.given = 0;
        dist_set(&self->gap, DIST_P_MEAN, mean, NULL, 0);
    } else if (mean > 0.0 && s->arrival == ARRIVAL_GAMMA && s->arrival_cv > 0.0) {
        self->gap.kind = DIST_GAMMA;
        self->gap.given = 0;
        dist_set(&self->gap, DIST_P_MEAN, mean, NULL, 0);
        dist_set(&self->gap, DIST_P_CV, s->arrival_cv, NULL, 0);
    }
    if (dist_prepare(&self->gap, NULL, 0) != 0)
        dist_fixed(&self->gap, mean); /* only a non-finite cv gets here: fall back to constant */
}

int64_t workload_arrivals_time_ns(workload_arrivals_t *self, uint64_t index) {
    if (self->cfg->workload.kind == WORKLOAD_TRACE)
        return workload_trace_arrival_ns(self->cfg, index);
    if (index < self->next_index) {
        self->next_index = 0;
        self->next_time_s = 0.0;
    }
    while (self->next_index < index) {
        rng_t rng;
        rng_init(&rng, self->cfg->seed, RNG_STREAM_ARRIVAL, self->next_index, 0, RNG_FIELD_GAP);
        self->next_time_s += dist_sample(&self->gap, &rng);
        self->next_index++;
    }
    return workload_seconds_to_ns(self->next_time_s);
}

bool workload_schedule_cut(const config_t *cfg, int64_t horizon_ns, uint64_t *n_sessions,
                           int64_t *last_ns) {
    const config_limits_t *l = &cfg->limits;
    if (!l->max_sessions && !l->max_requests)
        return false;
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, cfg);
    uint64_t i = 0, requests = 0;
    int64_t last = 0;
    for (;;) {
        if ((l->max_sessions && i >= l->max_sessions) ||
            (l->max_requests && requests >= l->max_requests))
            break;
        int64_t at = workload_arrivals_time_ns(&arrivals, i);
        if (at > horizon_ns)
            return false;
        last = at;
        if (l->max_requests)
            requests += workload_session_size(cfg, i);
        i++;
    }
    *n_sessions = i;
    *last_ns = last;
    return i > 0;
}

int64_t workload_schedule_end_ns(const config_t *cfg, int64_t horizon_ns) {
    uint64_t n;
    int64_t last;
    if (!workload_schedule_cut(cfg, horizon_ns, &n, &last))
        return -1;
    double gap = cfg->scheduler.rate > 0 ? 1.0 / cfg->scheduler.rate : 0;
    return last + workload_seconds_to_ns(gap);
}

/* A replayed node's own text (a dataset's turn), then the words it asks for past the text's
 * tokens, drawn from (seed, session, node). */
static long workload_trace_own_text(const config_t *cfg, const trace_node_t *t, uint64_t session,
                                    uint32_t node, uint32_t n_words, char *buf, size_t cap) {
    const trace_t *self = cfg->workload.replay;
    if ((size_t)t->text_len + 1 > cap)
        return -1;
    memcpy(buf, self->text + t->text_at, t->text_len);
    buf[t->text_len] = '\0';
    if (n_words <= t->text_tokens)
        return (long)t->text_len;
    size_t used = t->text_len;
    if (used + 1 >= cap)
        return -1;
    buf[used++] = ' ';
    rng_t rng;
    rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, session, node, RNG_FIELD_TEXT);
    long n = prompt_append_words(&rng, n_words - t->text_tokens, buf + used, cap - used);
    return n < 0 ? -1 : (long)used + n;
}

/* The fresh text of (session, node) of a replay: a node with text of its own (a dataset's turn)
 * sends it (workload_trace_own_text); otherwise the text of each hash id's block (block_size words
 * drawn from (seed, hash id) alone, so requests sharing a hash id share the block's text; the last
 * block may be cut short), then words drawn from (seed, session, node). */
static long workload_trace_fresh_text(const config_t *cfg, uint64_t session, uint32_t node,
                                      uint32_t n_words, char *buf, size_t cap) {
    const trace_t *self = cfg->workload.replay;
    const trace_node_t *t = self && self->n_sessions ? trace_node(self, session, node) : NULL;
    uint32_t block = cfg->workload.trace.block_size ? cfg->workload.trace.block_size : 1;
    if (t && t->text_len)
        return workload_trace_own_text(cfg, t, session, node, n_words, buf, cap);
    size_t used = 0;
    rng_t rng;
    buf[0] = '\0';
    for (uint32_t b = 0; t && b < t->n_hashes && n_words > 0; b++) {
        uint32_t words = n_words < block ? n_words : block;
        if (used > 0) {
            if (used + 1 >= cap)
                return -1;
            buf[used++] = ' ';
        }
        rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, self->hashes[t->hashes_at + b], 0,
                 RNG_FIELD_BLOCK);
        long n = prompt_append_words(&rng, words, buf + used, cap - used);
        if (n < 0)
            return -1;
        used += (size_t)n;
        n_words -= words;
    }
    if (n_words == 0)
        return (long)used;
    if (used > 0) {
        if (used + 1 >= cap)
            return -1;
        buf[used++] = ' ';
    }
    rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, session, node, RNG_FIELD_TEXT);
    long n = prompt_append_words(&rng, n_words, buf + used, cap - used);
    return n < 0 ? -1 : (long)used + n;
}

long workload_fresh_text(const config_t *cfg, uint64_t session, uint32_t node, uint32_t n_words,
                         char *buf, size_t cap) {
    if (config_replays(cfg))
        return workload_trace_fresh_text(cfg, session, node, n_words, buf, cap);
    rng_t rng;
    rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, session, node, RNG_FIELD_TEXT);
    return prompt_append_words(&rng, n_words, buf, cap);
}

size_t workload_fresh_max_bytes(const config_t *cfg, uint64_t session, uint32_t node,
                                uint32_t n_words) {
    const trace_t *self = config_replays(cfg) ? cfg->workload.replay : NULL;
    const trace_node_t *t = self && self->n_sessions ? trace_node(self, session, node) : NULL;
    return prompt_max_bytes(n_words) + (t ? (size_t)t->text_len + 1 : 0);
}

long workload_system_text(const config_t *cfg, char *buf, size_t cap) {
    rng_t rng;
    rng_init(&rng, config_text_seed(cfg), RNG_STREAM_PROMPT, 0, 0, RNG_FIELD_SYSTEM);
    return prompt_append_words(&rng, cfg->workload.system_prompt_tokens, buf, cap);
}
