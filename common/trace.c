#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"

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
