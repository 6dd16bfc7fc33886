#include "dataset.h"

#include <stdlib.h>
#include <string.h>

#include "graph_shapes.h"
#include "rng.h"
#include "workload.h"

/* The turns of a conversation that pass the filter: from the first up to the first that does
 * not (a conversation is cut there, its later turns would continue a context the server never
 * saw). kind requests sends the first turn only. The context is the dataset's: every earlier turn
 * and reply, the turn and its reply. */
static uint32_t dataset_kept_turns(const config_t *cfg, const dataset_reader_t *rd,
                                   const dataset_conversation_t *c) {
    const config_dataset_t *d = &cfg->workload.dataset;
    uint32_t n = cfg->workload.kind == WORKLOAD_REQUESTS ? 1 : c->n_turns;
    uint64_t context = 0;
    for (uint32_t k = 0; k < n; k++) {
        const dataset_turn_t *t = &rd->turns[c->first_turn + k];
        uint64_t reply = t->reply_tokens > 0 ? (uint64_t)t->reply_tokens : 0;
        if (t->tokens < d->min_input_tokens || t->tokens > WORKLOAD_MAX_TOKENS ||
            (d->max_input_tokens && t->tokens > d->max_input_tokens) ||
            (d->max_context_tokens && context + t->tokens + reply > d->max_context_tokens))
            return k;
        context += t->tokens + reply;
    }
    return n;
}

static int dataset_by_index(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The conversations to replay, in file order, into *chosen (malloc'd) and *n: those the filter
 * leaves a turn, then `sample` of them drawn with the seed alone (a partial Fisher-Yates
 * shuffle), so the selection is the same for any worker count. */
static int dataset_select(const config_t *cfg, dataset_reader_t *rd, uint32_t **chosen, size_t *n) {
    const config_dataset_t *d = &cfg->workload.dataset;
    uint32_t *index = malloc(rd->n_conversations * sizeof *index);
    if (!index)
        return dataset_fail(rd, 0, 0, NULL, "out of memory");
    size_t left = 0;
    for (size_t c = 0; c < rd->n_conversations; c++) {
        dataset_conversation_t *conv = &rd->conversations[c];
        conv->n_turns = dataset_kept_turns(cfg, rd, conv);
        if (conv->n_turns)
            index[left++] = (uint32_t)c;
    }
    if (left == 0 || d->sample > left) {
        free(index);
        if (left == 0)
            return dataset_fail(rd, 0, 0, "workload.dataset",
                                "none of its %zu conversations has a first turn that passes "
                                "the filter (min_input_tokens %u, max_input_tokens %u, "
                                "max_context_tokens %u; 0: none)",
                                rd->n_conversations, (unsigned)d->min_input_tokens,
                                (unsigned)d->max_input_tokens, (unsigned)d->max_context_tokens);
        return dataset_fail(rd, 0, 0, "workload.dataset.sample",
                            "asks for %llu conversations: %zu of the %zu read pass the filter",
                            (unsigned long long)d->sample, left, rd->n_conversations);
    }
    if (d->sample) {
        rng_t rng;
        rng_init(&rng, cfg->seed, RNG_STREAM_WORKLOAD, 0, 0, RNG_FIELD_DATASET);
        for (size_t i = 0; i < d->sample; i++) {
            size_t j = i + (size_t)rng_next_below(&rng, left - i);
            uint32_t t = index[i];
            index[i] = index[j];
            index[j] = t;
        }
        left = d->sample;
        qsort(index, left, sizeof *index, dataset_by_index);
    }
    *chosen = index;
    *n = left;
    return 0;
}

/* A chat (every kept turn, each continuing the whole conversation before it) or one request. */
static int dataset_chain(const config_t *cfg, uint64_t index, uint32_t n, workload_session_t *out) {
    if (workload_session_reserve(out, n, n ? n - 1 : 0) != 0)
        return -1;
    for (uint32_t j = 0; j < n; j++) {
        workload_node_t *node = &out->nodes[j];
        node->history = WORKLOAD_HISTORY_CHAIN;
        if (j == 0)
            continue;
        node->n_parents = 1;
        node->parents = &out->edges[j - 1];
        node->parents[0] = j - 1;
        node->history_parent = j - 1;
        node->inherit = 1.0;
        node->wait_after_ready_ns = workload_seconds_to_ns(
            workload_draw(cfg, &cfg->workload.think_time, index, j, RNG_FIELD_THINK_TIME));
    }
    out->index = index;
    return 0;
}

/* Whether node j takes text from the dataset: every turn of a chat or request; in a graph, the
 * nodes of dataset.roles, or the roots. */
static bool dataset_feeds(const config_t *cfg, const workload_node_t *node) {
    if (cfg->workload.kind != WORKLOAD_GRAPH)
        return true;
    uint64_t roles = cfg->workload.dataset.roles;
    return roles ? node->role < 64 && (roles >> node->role & 1) : node->n_parents == 0;
}

/* max_tokens of a dataset turn: the dataset.output_tokens distribution when given; else the
 * dataset's reply's length, or, for a turn without one, workload.output_tokens. */
static uint32_t dataset_output(const config_t *cfg, const dataset_turn_t *t, uint64_t session,
                               uint32_t node) {
    const config_dataset_t *d = &cfg->workload.dataset;
    if (!d->output_given && t->reply_tokens > 0)
        return t->reply_tokens > WORKLOAD_MAX_TOKENS ? WORKLOAD_MAX_TOKENS
                                                     : (uint32_t)t->reply_tokens;
    const dist_t *dist = d->output_given ? &d->output_tokens : &cfg->workload.output_tokens;
    return workload_count(workload_draw(cfg, dist, session, node, RNG_FIELD_OUTPUT_TOKENS),
                          WORKLOAD_MAX_TOKENS);
}

typedef struct builder {
    const config_t *cfg;
    const dataset_reader_t *rd;
    trace_t *trace;
    size_t cap_nodes, cap_edges;
} builder_t;

/* Appends session `index` (shape from ws, text from conversation c) to the trace. */
static int dataset_add_session(builder_t *b, uint64_t index, const workload_session_t *ws,
                               const dataset_conversation_t *c) {
    trace_t *t = b->trace;
    if (buffer_grow_array(&t->nodes, &b->cap_nodes, t->n_nodes + ws->n_nodes, sizeof *t->nodes) ||
        buffer_grow_array(&t->edges, &b->cap_edges, t->n_edges + ws->n_edges + 1, sizeof *t->edges))
        return -1;
    trace_session_t *s = &t->sessions[index];
    s->n_nodes = ws->n_nodes;
    s->first_node = (uint32_t)t->n_nodes;
    s->arrival_ns = -1; /* untimed: a rate scheduler's arrivals */
    uint32_t fed = 0;
    for (uint32_t j = 0; j < ws->n_nodes; j++) {
        const workload_node_t *w = &ws->nodes[j];
        trace_node_t *node = &t->nodes[t->n_nodes++];
        memset(node, 0, sizeof *node);
        node->parents_at = (uint32_t)t->n_edges;
        node->n_parents = w->n_parents;
        for (uint32_t p = 0; p < w->n_parents; p++)
            t->edges[t->n_edges++] = w->parents[p];
        node->history_parent = w->n_parents ? w->history_parent : TRACE_NONE;
        node->history = w->inherit;
        node->role = w->role;
        node->input_tokens = w->input_tokens;
        node->output_tokens = w->output_tokens;
        node->wait_ns = w->wait_after_ready_ns;
        node->append_parent_replies = w->append_parent_replies;
        if (!dataset_feeds(b->cfg, w))
            continue;
        const dataset_turn_t *turn = &b->rd->turns[c->first_turn + fed++ % c->n_turns];
        uint64_t input = turn->tokens;
        if (w->append_parent_replies) /* the envelope words graph_shapes adds */
            input += (uint64_t)b->cfg->workload.graph.message_overhead_tokens * w->n_parents;
        node->input_tokens = input > WORKLOAD_MAX_TOKENS ? WORKLOAD_MAX_TOKENS : (uint32_t)input;
        node->output_tokens = dataset_output(b->cfg, turn, index, j);
        if (trace_set_text(t, node, b->rd->arena.data + turn->text_at, turn->text_len,
                           turn->tokens) != 0)
            return -1;
    }
    return 0;
}

static int dataset_build(const config_t *cfg, dataset_reader_t *rd, const uint32_t *chosen,
                         size_t n, trace_t *trace) {
    builder_t b = {.cfg = cfg, .rd = rd, .trace = trace};
    if (!(trace->sessions = calloc(n, sizeof *trace->sessions)))
        return dataset_fail(rd, 0, 0, NULL, "out of memory");
    trace->n_sessions = n;
    workload_session_t ws = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const dataset_conversation_t *c = &rd->conversations[chosen[i]];
        rc = cfg->workload.kind == WORKLOAD_GRAPH ? graph_session_generate(cfg, i, &ws)
                                                  : dataset_chain(cfg, i, c->n_turns, &ws);
        if (rc == 0)
            rc = dataset_add_session(&b, i, &ws, c);
    }
    workload_session_free(&ws);
    if (rc != 0)
        return dataset_fail(rd, 0, 0, NULL, "out of memory building %zu sessions", n);
    trace_finish(trace);
    return 0;
}

int dataset_load(const config_t *cfg, trace_t **out, config_error_t *err) {
    const config_dataset_t *d = &cfg->workload.dataset;
    dataset_reader_t rd = {.err = err, .file = d->path ? d->path : ""};
    tokenizer_t *tokenizer = NULL;
    uint32_t *chosen = NULL;
    size_t n = 0;
    trace_t *trace = trace_new();
    buffer_init(&rd.arena);
    buffer_init(&rd.reply);
    *out = NULL;
    int rc = trace ? 0 : dataset_fail(&rd, 0, 0, NULL, "out of memory");
    if (rc == 0 && cfg->target.tokenizer) {
        char why[512];
        if (tokenizer_load(cfg->target.tokenizer, &tokenizer, why, sizeof why) != 0 ||
            !(rd.scratch = tokenizer_scratch_new()))
            rc = dataset_fail(&rd, 0, 0, "target.tokenizer",
                              "cannot count the dataset's "
                              "tokens: %s",
                              tokenizer ? "out of memory" : why);
        rd.tokenizer = tokenizer;
    }
    if (rc == 0)
        rc = dataset_read(&rd, d->format);
    if (rc == 0)
        rc = dataset_select(cfg, &rd, &chosen, &n);
    if (rc == 0)
        rc = dataset_build(cfg, &rd, chosen, n, trace);
    free(chosen);
    free(rd.turns);
    free(rd.conversations);
    buffer_clear(&rd.arena);
    buffer_clear(&rd.reply);
    tokenizer_scratch_destroy(&rd.scratch);
    tokenizer_destroy(&tokenizer);
    if (rc != 0) {
        trace_unref(&trace);
        return -1;
    }
    *out = trace;
    return 0;
}
