/* A worker's part of a replay trace (common/trace_wire.c) from arbitrary bytes: what a worker
 * decodes from Assign.trace_part, so from the wire. A decoded part is consistent: every present
 * session's nodes lie inside the node table, every node's parents and hash ids inside theirs,
 * parents and the history parent below the node (topological order), and max_nodes bounds every
 * session. An absent session has no nodes of its own in the table. */
#include "fuzz.h"
#include "trace.h"
#include "trace_wire.h"

static void fuzz_trace_check(const trace_t *t) {
    for (size_t s = 0; s < t->n_sessions; s++) {
        const trace_session_t *session = &t->sessions[s];
        FUZZ_CHECK(session->n_nodes <= t->max_nodes);
        if (session->first_node == TRACE_ABSENT)
            continue;
        FUZZ_CHECK((size_t)session->first_node + session->n_nodes <= t->n_nodes);
        for (uint32_t j = 0; j < session->n_nodes; j++) {
            const trace_node_t *node = &t->nodes[session->first_node + j];
            FUZZ_CHECK((size_t)node->parents_at + node->n_parents <= t->n_edges);
            FUZZ_CHECK((size_t)node->hashes_at + node->n_hashes <= t->n_hashes);
            for (uint32_t p = 0; p < node->n_parents; p++)
                FUZZ_CHECK(t->edges[node->parents_at + p] < j);
            FUZZ_CHECK(node->history_parent == TRACE_NONE || node->history_parent < j);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    trace_t *t = trace_wire_decode(data, size);
    if (!t)
        return 0;
    fuzz_trace_check(t);
    trace_unref(&t);
    FUZZ_CHECK(t == NULL);
    return 0;
}
