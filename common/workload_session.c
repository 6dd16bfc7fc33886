#include "workload_session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

double workload_draw(const config_t *cfg, const dist_t *dist, uint64_t session, uint32_t node,
                     uint32_t field) {
    rng_t rng;
    rng_init(&rng, cfg->seed, RNG_STREAM_WORKLOAD, session, node, field);
    return dist_sample(dist, &rng);
}

uint32_t workload_count(double x, uint32_t max) {
    if (!(x >= 1.0))
        return 1;
    if (x >= (double)max)
        return max;
    return (uint32_t)llround(x);
}

int64_t workload_seconds_to_ns(double seconds) {
    if (!(seconds > 0.0))
        return 0;
    double ns = seconds * 1e9;
    return ns >= 0x1p62 ? (int64_t)0x4000000000000000LL : (int64_t)llround(ns);
}

int workload_session_reserve(workload_session_t *out, uint32_t n_nodes, size_t n_edges) {
    /* Exactly the sizes asked and no capacity kept: other generators (tests) hand over their own
     * arrays. */
    workload_node_t *nodes = realloc(out->nodes, (n_nodes ? n_nodes : 1) * sizeof *nodes);
    if (nodes == NULL) {
        workload_session_free(out);
        return -1;
    }
    out->nodes = nodes;
    uint32_t *edges = realloc(out->edges, (n_edges ? n_edges : 1) * sizeof *edges);
    if (edges == NULL) {
        workload_session_free(out);
        return -1;
    }
    out->edges = edges;
    memset(nodes, 0, n_nodes * sizeof *nodes);
    memset(edges, 0, n_edges * sizeof *edges);
    for (uint32_t j = 0; j < n_nodes; j++)
        nodes[j].index = j;
    out->n_nodes = n_nodes;
    out->n_edges = n_edges;
    return 0;
}

void workload_session_free(workload_session_t *self) {
    free(self->nodes);
    free(self->edges);
    memset(self, 0, sizeof *self);
}

uint32_t workload_node_kept_turns(const workload_node_t *node, uint32_t n) {
    if (node->inherit >= 1)
        return n;
    if (!(node->inherit > 0))
        return 0;
    return (uint32_t)llround(node->inherit * n);
}

uint32_t workload_session_mark_ancestors(const workload_session_t *s, uint32_t j, uint32_t *mark,
                                         uint32_t epoch, uint32_t *stack) {
    uint32_t top = 0, count = 0;
    stack[top++] = j;
    while (top) {
        const workload_node_t *node = &s->nodes[stack[--top]];
        for (uint32_t p = 0; p < node->n_parents; p++) {
            uint32_t parent = node->parents[p];
            if (mark[parent] == epoch)
                continue;
            mark[parent] = epoch;
            stack[top++] = parent;
            count++;
        }
    }
    return count;
}
