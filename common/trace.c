#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "prompt.h"
#include "rng.h"
#include "workload.h"

trace_t *trace_new(void) {
    trace_t *self = calloc(1, sizeof *self);
    if (self)
        self->refs = 1;
    return self;
}

trace_t *trace_ref(trace_t *self) {
    if (self)
        self->refs++;
    return self;
}

void trace_unref(trace_t **self_p) {
    trace_t *self = *self_p;
    *self_p = NULL;
    if (!self || --self->refs > 0)
        return;
    free(self->sessions);
    free(self->nodes);
    free(self->edges);
    free(self->hashes);
    free(self->text);
    free(self);
}

/* Chains of a greedy chain cover of one session: each node continues the chain of its first
 * parent whose chain it is the first to continue, else starts one. Nodes in flight at once have
 * no path between them, so no two are on one chain: the chain count bounds them. */
static uint32_t trace_session_chains(const trace_t *self, const trace_session_t *s,
                                     bool *continued) {
    uint32_t chains = 0;
    memset(continued, 0, s->n_nodes * sizeof *continued);
    for (uint32_t j = 0; j < s->n_nodes; j++) {
        const trace_node_t *node = &self->nodes[s->first_node + j];
        bool extended = false;
        for (uint32_t p = 0; p < node->n_parents && !extended; p++) {
            uint32_t parent = self->edges[node->parents_at + p];
            if (!continued[parent])
                extended = continued[parent] = true;
        }
        chains += !extended;
    }
    return chains;
}

void trace_finish(trace_t *self) {
    self->timed = self->n_sessions > 0;
    self->max_parallel = 1;
    self->max_nodes = 0;
    int64_t last = 0;
    for (size_t i = 0; i < self->n_sessions; i++) {
        const trace_session_t *s = &self->sessions[i];
        if (s->arrival_ns < 0)
            self->timed = false;
        else if (s->arrival_ns > last)
            last = s->arrival_ns;
        if (s->n_nodes > self->max_nodes)
            self->max_nodes = s->n_nodes;
    }
    int64_t gap = self->n_sessions > 1 ? last / (int64_t)(self->n_sessions - 1) : 0;
    /* saturating at 2^62, as every time of the loader (workload_seconds_to_ns) and of the wire
     * form (trace_wire_decode refuses a larger one, so a worker could not take the part) */
    const int64_t max_ns = (int64_t)1 << 62;
    self->period_ns = last > max_ns - gap ? max_ns : last + gap;
    bool *continued = malloc((self->max_nodes ? self->max_nodes : 1) * sizeof *continued);
    for (size_t i = 0; continued && i < self->n_sessions; i++) {
        const trace_session_t *s = &self->sessions[i];
        if (s->first_node == TRACE_ABSENT)
            continue;
        uint32_t chains = trace_session_chains(self, s, continued);
        if (chains > self->max_parallel)
            self->max_parallel = chains;
    }
    if (!continued) /* no memory for the bound: assume the widest possible */
        self->max_parallel = self->max_nodes ? self->max_nodes : 1;
    free(continued);
}

const trace_session_t *trace_session(const trace_t *self, uint64_t index) {
    return &self->sessions[index % self->n_sessions];
}

const trace_node_t *trace_node(const trace_t *self, uint64_t index, uint32_t node) {
    const trace_session_t *s = trace_session(self, index);
    if (s->first_node == TRACE_ABSENT || node >= s->n_nodes)
        return NULL;
    return &self->nodes[s->first_node + node];
}

int trace_session_generate(const config_t *cfg, uint64_t index, workload_session_t *out) {
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

int64_t trace_arrival_ns(const config_t *cfg, uint64_t index) {
    const trace_t *self = cfg->workload.replay;
    if (!self || self->n_sessions == 0)
        return 0;
    const trace_session_t *s = trace_session(self, index);
    double scale = cfg->workload.trace.time_scale;
    double at = (double)(s->arrival_ns > 0 ? s->arrival_ns : 0) +
                (double)(index / self->n_sessions) * (double)self->period_ns;
    return workload_seconds_to_ns(at * scale / 1e9);
}

int trace_set_text(trace_t *self, trace_node_t *node, const char *text, uint32_t len,
                   uint32_t tokens) {
    if (buffer_grow_array(&self->text, &self->text_cap, self->text_len + len + 1, 1) != 0)
        return -1;
    memcpy(self->text + self->text_len, text, len);
    node->text_at = self->text_len;
    node->text_len = len;
    node->text_tokens = tokens;
    self->text_len += len;
    return 0;
}

size_t trace_fresh_max_bytes(const config_t *cfg, uint64_t session, uint32_t node,
                             uint32_t n_words) {
    const trace_t *self = cfg->workload.replay;
    const trace_node_t *t = self && self->n_sessions ? trace_node(self, session, node) : NULL;
    return prompt_max_bytes(n_words) + (t ? (size_t)t->text_len + 1 : 0);
}

/* A node's own text, then the words it asks for past the text's tokens. */
static long trace_own_text(const config_t *cfg, const trace_node_t *t, uint64_t session,
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

long trace_fresh_text(const config_t *cfg, uint64_t session, uint32_t node, uint32_t n_words,
                      char *buf, size_t cap) {
    const trace_t *self = cfg->workload.replay;
    const trace_node_t *t = self && self->n_sessions ? trace_node(self, session, node) : NULL;
    uint32_t block = cfg->workload.trace.block_size ? cfg->workload.trace.block_size : 1;
    if (t && t->text_len)
        return trace_own_text(cfg, t, session, node, n_words, buf, cap);
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
