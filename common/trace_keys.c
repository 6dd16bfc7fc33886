#include "trace_keys.h"

#include <stdlib.h>

#include "buffer.h"
#include "trace.h"
#include "workload.h"

/* Recently written sessions, by index modulo this: a session's requests end close together. */
#define TRACE_KEYS_CACHE 64

struct trace_keys {
    const config_t *cfg;
    workload_session_t cache[TRACE_KEYS_CACHE];
    bool cached[TRACE_KEYS_CACHE];
    workload_arrivals_t cursor; /* timed runs: arrivals[] extended forward on demand */
    int64_t *arrivals;
    size_t n_arrivals, cap_arrivals;
};

trace_keys_t *trace_keys_new(const config_t *cfg) {
    trace_keys_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    workload_arrivals_init(&self->cursor, cfg);
    return self;
}

void trace_keys_destroy(trace_keys_t **self_p) {
    trace_keys_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < TRACE_KEYS_CACHE; i++)
        workload_session_free(&self->cache[i]);
    free(self->arrivals);
    free(self);
    *self_p = NULL;
}

static const workload_session_t *trace_keys_session(trace_keys_t *self, uint64_t index) {
    size_t slot = index % TRACE_KEYS_CACHE;
    workload_session_t *s = &self->cache[slot];
    if (self->cached[slot] && s->index == index)
        return s;
    self->cached[slot] = workload_session_generate(self->cfg, index, s) == 0;
    return self->cached[slot] ? s : NULL;
}

/* The arrival of session index in ns, or -1 when unknown (no memory). */
static int64_t trace_keys_arrival(trace_keys_t *self, uint64_t index) {
    if (index >= (uint64_t)1 << 32)
        return -1;
    if (buffer_grow_array(&self->arrivals, &self->cap_arrivals, (size_t)index + 1,
                          sizeof *self->arrivals) != 0)
        return -1;
    while (self->n_arrivals <= index) {
        self->arrivals[self->n_arrivals] =
            workload_arrivals_time_ns(&self->cursor, self->n_arrivals);
        self->n_arrivals++;
    }
    return self->arrivals[index];
}

bool trace_keys_skip(const trace_keys_t *self, uint32_t role) {
    return config_compaction_role(self->cfg, role);
}

void trace_keys_write(trace_keys_t *self, FILE *out, uint64_t session, uint32_t node) {
    const config_t *cfg = self->cfg;
    const workload_session_t *s = trace_keys_session(self, session);
    if (!s || node >= s->n_nodes)
        return;
    const workload_node_t *n = &s->nodes[node];
    fputs(",\"parents\":[", out);
    for (uint32_t p = 0; p < n->n_parents; p++)
        fprintf(out, p ? ",%u" : "%u", (unsigned)n->parents[p]);
    /* ANCESTORS history (chat turns) continues the one parent, which is what a chain says */
    bool inherits = n->inherit > 0.0 || n->history == WORKLOAD_HISTORY_CHAIN;
    uint32_t history_parent = n->history == WORKLOAD_HISTORY_CHAIN ? n->history_parent
                              : n->n_parents                       ? n->parents[n->n_parents - 1]
                                                                   : 0;
    if (n->n_parents > 0 && inherits)
        fprintf(out, "],\"history_parent\":%u,\"history\":%.17g", (unsigned)history_parent,
                n->inherit);
    else
        fputs("],\"history_parent\":null", out);
    fprintf(out, ",\"append_parent_replies\":%s", n->append_parent_replies ? "true" : "false");
    const char *role = config_role_name(cfg, n->role);
    if (role)
        fprintf(out, ",\"role_name\":\"%s\"", role); /* role names are [A-Za-z0-9_.-] */
    fprintf(out, ",\"new_input_length\":%u,\"output_length\":%u,\"wait_after_ready\":%.9f",
            (unsigned)n->input_tokens, (unsigned)n->output_tokens,
            (double)n->wait_after_ready_ns / 1e9);
    int64_t arrival =
        cfg->scheduler.kind == SCHEDULER_RATE ? trace_keys_arrival(self, session) : -1;
    if (arrival >= 0)
        fprintf(out, ",\"arrival\":%.9f", (double)arrival / 1e9);
    const trace_node_t *t = cfg->workload.kind == WORKLOAD_TRACE && cfg->workload.replay
                                ? trace_node(cfg->workload.replay, session, node)
                                : NULL;
    if (t && t->n_hashes) {
        fputs(",\"hash_ids\":[", out);
        for (uint32_t h = 0; h < t->n_hashes; h++)
            fprintf(out, h ? ",%llu" : "%llu",
                    (unsigned long long)cfg->workload.replay->hashes[t->hashes_at + h]);
        fputc(']', out);
    }
}
