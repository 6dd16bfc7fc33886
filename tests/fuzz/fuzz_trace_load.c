/* The replay trace file readers (common/trace_load.c, common/trace_order.c): the session-trace
 * JSONL format, Mooncake's, Azure's CSV and Veeksha's, as config_trace_load reads a user's file.
 * The first byte picks the reading (bit 3: Azure, else bit 4: Veeksha, else bit 0: Mooncake, else
 * session; bit 1: timed, scheduler.kind rate; bit 2: wrap); the rest is the file, written to a
 * memfd the loader opens by its /proc path.
 *
 * A refusal names the file, a line of it (0: the whole file) and a reason. An accepted trace is
 * consistent (the trace_wire target's checks: nodes, parents and hash ids inside their tables,
 * parents before the node), arrivals of a timed trace are in order from 0 and below the wrap
 * period, and a worker's part encoded from it (one worker, all sessions) decodes to the same
 * sessions, nodes, edges and hash ids; every session generates. */
#define _GNU_SOURCE /* memfd_create */
#include <stdbool.h>

#include "fuzz_file.h"
#include "workload.h"

static void fuzz_trace_check(const trace_t *t, bool by_arrival) {
    FUZZ_CHECK(t->n_sessions > 0 && t->n_nodes > 0);
    size_t nodes = 0;
    int64_t last = 0;
    for (size_t s = 0; s < t->n_sessions; s++) {
        const trace_session_t *session = &t->sessions[s];
        FUZZ_CHECK(session->n_nodes > 0 && session->n_nodes <= t->max_nodes);
        FUZZ_CHECK(session->first_node == nodes); /* a loaded trace holds every session */
        nodes += session->n_nodes;
        FUZZ_CHECK(nodes <= t->n_nodes);
        FUZZ_CHECK(session->arrival_ns >= -1); /* -1: none given (untimed) */
        if (by_arrival) {
            FUZZ_CHECK(session->arrival_ns >= last); /* sessions in arrival order from 0 */
            FUZZ_CHECK(s > 0 || session->arrival_ns == 0);
            last = session->arrival_ns;
        }
        for (uint32_t j = 0; j < session->n_nodes; j++) {
            const trace_node_t *node = &t->nodes[session->first_node + j];
            FUZZ_CHECK((size_t)node->parents_at + node->n_parents <= t->n_edges);
            FUZZ_CHECK((size_t)node->hashes_at + node->n_hashes <= t->n_hashes);
            FUZZ_CHECK(node->input_tokens >= 1 && node->output_tokens >= 1);
            for (uint32_t p = 0; p < node->n_parents; p++)
                FUZZ_CHECK(t->edges[node->parents_at + p] < j);
            FUZZ_CHECK(node->history_parent == TRACE_NONE || node->history_parent < j);
        }
    }
    FUZZ_CHECK(nodes == t->n_nodes);
    FUZZ_CHECK(!by_arrival || t->period_ns >= last);
}

/* What the controller sends a single worker decodes to the trace it loaded. */
static void fuzz_trace_round_trip(const config_t *cfg) {
    const trace_t *t = cfg->workload.replay;
    trace_t *back = fuzz_file_worker_part(cfg);
    if (!back)
        return;
    FUZZ_CHECK(back->n_sessions == t->n_sessions && back->max_nodes == t->max_nodes);
    for (size_t s = 0; s < t->n_sessions; s++) {
        const trace_session_t *a = &t->sessions[s], *b = &back->sessions[s];
        FUZZ_CHECK(a->n_nodes == b->n_nodes && a->arrival_ns == b->arrival_ns);
        FUZZ_CHECK(b->first_node != TRACE_ABSENT);
        for (uint32_t j = 0; j < a->n_nodes; j++) {
            const trace_node_t *x = &t->nodes[a->first_node + j];
            const trace_node_t *y = &back->nodes[b->first_node + j];
            FUZZ_CHECK(x->n_parents == y->n_parents && x->n_hashes == y->n_hashes);
            FUZZ_CHECK(x->history_parent == y->history_parent && x->role == y->role);
            FUZZ_CHECK(x->input_tokens == y->input_tokens && x->output_tokens == y->output_tokens &&
                       x->wait_ns == y->wait_ns);
            FUZZ_CHECK(x->append_parent_replies == y->append_parent_replies);
            for (uint32_t p = 0; p < x->n_parents; p++)
                FUZZ_CHECK(t->edges[x->parents_at + p] == back->edges[y->parents_at + p]);
            for (uint32_t h = 0; h < x->n_hashes; h++)
                FUZZ_CHECK(t->hashes[x->hashes_at + h] == back->hashes[y->hashes_at + h]);
        }
    }
    trace_unref(&back);
}

static void fuzz_trace_configure(config_t *cfg, uint8_t mode, const char *path) {
    cfg->workload.kind = WORKLOAD_TRACE;
    cfg->workload.trace.path = strdup(path);
    FUZZ_CHECK(cfg->workload.trace.path != NULL);
    cfg->workload.trace.format = mode & 8    ? TRACE_FORMAT_AZURE
                                 : mode & 16 ? TRACE_FORMAT_VEEKSHA
                                 : mode & 1  ? TRACE_FORMAT_MOONCAKE
                                             : TRACE_FORMAT_SESSION;
    cfg->scheduler.kind = mode & 2 ? SCHEDULER_RATE : SCHEDULER_CONCURRENT;
    if (mode & 2)
        cfg->scheduler.rate = 1.0;
    cfg->workload.trace.wrap = (mode & 4) != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    config_t cfg;
    if (!fuzz_file_load(&cfg, data, size, fuzz_trace_configure, config_trace_load))
        return 0;
    bool timed = cfg.scheduler.kind == SCHEDULER_RATE;
    const trace_t *t = cfg.workload.replay;
    FUZZ_CHECK(t != NULL);
    FUZZ_CHECK(t->timed || !timed); /* a timed replay needs every arrival */
    FUZZ_CHECK(cfg.workload.n_roles <= CONFIG_MAX_ROLES);
    fuzz_trace_check(t, timed);
    fuzz_trace_round_trip(&cfg);
    fuzz_file_generate(&cfg, NULL);
    config_free(&cfg);
    return 0;
}
