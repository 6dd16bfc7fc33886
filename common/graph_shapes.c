/* The shape generators. Each runs twice per session: once counting nodes and edges, once filling
 * the arrays sized from the count; the structure's draws restart from the same generator, so both
 * passes see the same graph. */
#include "graph_shapes.h"

#include <string.h>

#define GRAPH_MAX_WIDTH CONFIG_GRAPH_MAX_WIDTH

typedef struct graph_builder {
    const config_t *cfg;
    uint64_t session;
    workload_session_t *out; /* NULL while counting */
    uint32_t n_nodes;
    size_t n_edges;
    rng_t shape; /* the structure's draws */
} graph_builder_t;

static void graph_builder_start(graph_builder_t *b, const config_t *cfg, uint64_t session,
                                workload_session_t *out) {
    b->cfg = cfg;
    b->session = session;
    b->out = out;
    b->n_nodes = 0;
    b->n_edges = 0;
    rng_init(&b->shape, cfg->seed, RNG_STREAM_WORKLOAD, session, 0, RNG_FIELD_SHAPE);
}

/* Whether k more nodes fit under WORKLOAD_MAX_NODES. */
static bool graph_room(const graph_builder_t *b, uint64_t k) {
    return b->n_nodes + k <= WORKLOAD_MAX_NODES;
}

/* A count drawn from the structure's generator, in [lo, hi]. */
static uint32_t graph_draw_count(graph_builder_t *b, const dist_t *d, uint32_t lo, uint32_t hi) {
    double x = dist_sample(d, &b->shape);
    uint32_t n = x < 0.5 ? 0 : workload_count(x, hi);
    return n < lo ? lo : n > hi ? hi : n;
}

/* Adds a node of the slot's settings with these parents (history parent: the first, inherit:
 * history, unless overridden); returns its index. */
static uint32_t graph_emit_as(graph_builder_t *b, const config_graph_node_t *slot,
                              const uint32_t *parents, uint32_t n_parents, uint32_t history_parent,
                              double history, bool append) {
    uint32_t j = b->n_nodes++;
    size_t first_edge = b->n_edges;
    b->n_edges += n_parents;
    if (b->out == NULL)
        return j;
    const config_t *cfg = b->cfg;
    workload_node_t *node = &b->out->nodes[j];
    node->index = j;
    node->n_parents = n_parents;
    node->parents = n_parents ? &b->out->edges[first_edge] : NULL;
    if (n_parents)
        memcpy(node->parents, parents, n_parents * sizeof *parents);
    node->role = slot->role;
    node->history = WORKLOAD_HISTORY_CHAIN;
    node->history_parent = n_parents ? history_parent : 0;
    node->inherit = history;
    node->append_parent_replies = append && n_parents > 0;
    uint64_t input = workload_count(
        workload_draw(cfg, &slot->input_tokens, b->session, j, RNG_FIELD_INPUT_TOKENS),
        WORKLOAD_MAX_TOKENS);
    if (node->append_parent_replies)
        input += (uint64_t)cfg->workload.graph.message_overhead_tokens * n_parents;
    node->input_tokens = input > WORKLOAD_MAX_TOKENS ? WORKLOAD_MAX_TOKENS : (uint32_t)input;
    node->output_tokens = workload_count(
        workload_draw(cfg, &slot->output_tokens, b->session, j, RNG_FIELD_OUTPUT_TOKENS),
        WORKLOAD_MAX_TOKENS);
    if (n_parents)
        node->wait_after_ready_ns =
            workload_seconds_to_ns(
                workload_draw(cfg, &slot->wait_after_ready, b->session, j, RNG_FIELD_THINK_TIME)) +
            workload_seconds_to_ns(workload_draw(cfg, &cfg->workload.graph.step_overhead,
                                                 b->session, j, RNG_FIELD_STEP_OVERHEAD));
    return j;
}

static uint32_t graph_emit(graph_builder_t *b, const config_graph_node_t *slot,
                           const uint32_t *parents, uint32_t n_parents) {
    return graph_emit_as(b, slot, parents, n_parents, n_parents ? parents[0] : 0, slot->history,
                         slot->append_parent_replies);
}

/* turn 0 -> turn 1 -> ... : each continues the whole conversation before it. */
static void graph_linear(graph_builder_t *b) {
    const config_graph_t *g = &b->cfg->workload.graph;
    uint32_t n = graph_draw_count(b, &g->length, 1, WORKLOAD_MAX_NODES);
    uint32_t prev = graph_emit(b, &g->nodes[0], NULL, 0);
    for (uint32_t j = 1; j < n; j++)
        prev = graph_emit(b, &g->nodes[0], &prev, 1);
}

/* planner -> executors (parallel, or each after the previous) -> aggregator. */
static void graph_diamond(graph_builder_t *b) {
    const config_graph_t *g = &b->cfg->workload.graph;
    uint32_t planner = graph_emit(b, &g->nodes[0], NULL, 0);
    uint32_t first = b->n_nodes, n = g->executor_count;
    for (uint32_t e = 0; e < n; e++) {
        uint32_t parents[2] = {planner, first + e - 1};
        graph_emit(b, &g->nodes[1], parents, g->sequential && e > 0 ? 2 : 1);
    }
    uint32_t executors[CONFIG_GRAPH_MAX_FAN];
    for (uint32_t e = 0; e < n; e++)
        executors[e] = first + e;
    graph_emit_as(b, &g->nodes[2], executors, n, planner, g->nodes[2].history,
                  g->nodes[2].append_parent_replies);
}

/* main -> K sub-sessions of L requests -> continuation (fan-in), for each round; a round's
 * continuation is the next round's main. */
static void graph_fanout(graph_builder_t *b) {
    const config_graph_t *g = &b->cfg->workload.graph;
    const config_graph_node_t *main_slot = &g->nodes[0], *child = &g->nodes[1],
                              *cont = &g->nodes[2];
    uint32_t main = graph_emit(b, main_slot, NULL, 0);
    uint32_t lasts[CONFIG_GRAPH_MAX_FAN];
    for (uint32_t round = 0; round < g->rounds; round++) {
        uint32_t lengths[CONFIG_GRAPH_MAX_FAN];
        uint64_t total = 1;
        for (uint32_t k = 0; k < g->children; k++) {
            lengths[k] = graph_draw_count(b, &g->child_length, 1, WORKLOAD_MAX_NODES);
            total += lengths[k];
        }
        if (!graph_room(b, total))
            return;
        for (uint32_t k = 0; k < g->children; k++) {
            uint32_t prev = graph_emit(b, child, &main, 1);
            for (uint32_t j = 1; j < lengths[k]; j++) /* the sub-session continues itself */
                prev = graph_emit_as(b, child, &prev, 1, prev, 1.0, false);
            lasts[k] = prev;
        }
        main = graph_emit_as(b, cont, lasts, g->children, main, cont->history,
                             cont->append_parent_replies);
    }
}

/* A single root, then layers: each node of a layer has a spawning parent in the layer before
 * (its history parent) and fan_in - 1 more distinct parents drawn from that layer. */
static void graph_branching(graph_builder_t *b) {
    const config_graph_t *g = &b->cfg->workload.graph;
    const config_graph_node_t *slot = &g->nodes[0];
    uint32_t layers[2][GRAPH_MAX_WIDTH], spawn[GRAPH_MAX_WIDTH], candidates[GRAPH_MAX_WIDTH],
        parents[GRAPH_MAX_WIDTH];
    uint32_t max_width = g->max_width < GRAPH_MAX_WIDTH ? g->max_width : GRAPH_MAX_WIDTH;
    uint32_t depth = graph_draw_count(b, &g->depth, 0, g->max_depth);
    uint32_t *prev = layers[0], *cur = layers[1], n_prev = 1;
    prev[0] = graph_emit(b, slot, NULL, 0);
    for (uint32_t layer = 0; layer < depth; layer++) {
        uint32_t width = 0;
        if (g->width_given) {
            width = graph_draw_count(b, &g->width, 1, max_width);
            for (uint32_t k = 0; k < width; k++)
                spawn[k] = (uint32_t)((uint64_t)k * n_prev / width);
        } else {
            for (uint32_t p = 0; p < n_prev; p++) {
                uint32_t f = graph_draw_count(b, &g->fan_out, 1, max_width);
                for (uint32_t k = 0; k < f && width < max_width; k++)
                    spawn[width++] = p;
            }
        }
        if (!graph_room(b, width))
            return;
        for (uint32_t k = 0; k < width; k++) {
            uint32_t fan_in = graph_draw_count(b, &g->fan_in, 1, n_prev);
            uint32_t n_cand = 0;
            for (uint32_t p = 0; p < n_prev; p++)
                if (p != spawn[k])
                    candidates[n_cand++] = prev[p];
            parents[0] = prev[spawn[k]];
            for (uint32_t i = 1; i < fan_in; i++) { /* partial Fisher-Yates */
                uint32_t pick = (uint32_t)rng_next_below(&b->shape, n_cand - (i - 1)) + (i - 1);
                uint32_t t = candidates[i - 1];
                candidates[i - 1] = candidates[pick];
                candidates[pick] = t;
                parents[i] = candidates[i - 1];
            }
            cur[k] = graph_emit(b, slot, parents, fan_in);
        }
        uint32_t *t = prev;
        prev = cur;
        cur = t;
        n_prev = width;
    }
}

/* The file's node list, as loaded (parents first). */
static void graph_template(graph_builder_t *b) {
    const config_graph_t *g = &b->cfg->workload.graph;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const config_graph_node_t *n = &g->nodes[i];
        graph_emit_as(b, n, n->parents, (uint32_t)n->n_parents, n->history_parent, n->history,
                      n->append_parent_replies);
    }
}

static void graph_build(graph_builder_t *b) {
    switch (b->cfg->workload.graph.shape) {
    case GRAPH_LINEAR:
        graph_linear(b);
        break;
    case GRAPH_DIAMOND:
        graph_diamond(b);
        break;
    case GRAPH_FANOUT:
        graph_fanout(b);
        break;
    case GRAPH_BRANCHING:
        graph_branching(b);
        break;
    case GRAPH_TEMPLATE:
        graph_template(b);
        break;
    }
}

uint32_t graph_session_size(const config_t *cfg, uint64_t index) {
    uint32_t constant = graph_constant_size(cfg);
    if (constant)
        return constant;
    graph_builder_t b;
    graph_builder_start(&b, cfg, index, NULL);
    graph_build(&b);
    return b.n_nodes;
}

uint32_t graph_constant_size(const config_t *cfg) {
    const config_graph_t *g = &cfg->workload.graph;
    if (g->shape == GRAPH_DIAMOND)
        return g->executor_count + 2;
    if (g->shape == GRAPH_TEMPLATE)
        return (uint32_t)g->n_nodes;
    return 0;
}

int graph_session_generate(const config_t *cfg, uint64_t index, workload_session_t *out) {
    graph_builder_t b;
    graph_builder_start(&b, cfg, index, NULL);
    graph_build(&b);
    if (workload_session_reserve(out, b.n_nodes, b.n_edges) != 0)
        return -1;
    graph_builder_start(&b, cfg, index, out);
    graph_build(&b);
    out->index = index;
    return 0;
}

uint32_t graph_max_parallel(const config_t *cfg) {
    const config_graph_t *g = &cfg->workload.graph;
    switch (g->shape) {
    case GRAPH_DIAMOND:
        return g->sequential ? 1 : g->executor_count;
    case GRAPH_FANOUT:
        return g->children;
    case GRAPH_BRANCHING:
        return g->max_width;
    case GRAPH_TEMPLATE: { /* nodes with no path between them: at most all but one per edge */
        uint32_t n = (uint32_t)g->n_nodes;
        return n > CONFIG_GRAPH_MAX_FAN ? CONFIG_GRAPH_MAX_FAN : n;
    }
    default:
        return 1;
    }
}
