/* The workload digests: a second reading of what common/workload generates, summed so that the
 * order of generation and the split over workers cannot change it (test_workload, test_graph,
 * test_trace, test_dataset). */
#include "support.h"

#include <string.h>
#include <xxhash.h>

#include "buffer.h"
#include "prompt.h"
#include "workload.h"

static uint64_t workload_node_digest(const config_t *cfg, uint64_t session,
                                     const workload_node_t *node, buffer_t *text) {
    uint64_t fields[10] = {0};
    uint64_t inherit_bits;
    memcpy(&inherit_bits, &node->inherit, sizeof inherit_bits);
    fields[0] = session;
    fields[1] = node->index;
    fields[2] = node->role;
    fields[3] = node->input_tokens;
    fields[4] = node->output_tokens;
    fields[5] = (uint64_t)node->wait_after_ready_ns;
    fields[6] = inherit_bits;
    fields[7] = node->n_parents;
    fields[8] = (uint64_t)node->history << 32 | node->append_parent_replies;
    fields[9] = node->history_parent;
    uint64_t parents_hash = XXH3_64bits(node->parents, node->n_parents * sizeof(uint32_t));
    uint64_t text_hash = 0;
    if (buffer_reserve(
            text, workload_fresh_max_bytes(cfg, session, node->index, node->input_tokens)) == 0) {
        long len = workload_fresh_text(cfg, session, node->index, node->input_tokens, text->data,
                                       text->cap);
        text_hash = XXH3_64bits(text->data, len > 0 ? (size_t)len : 0);
    }
    return XXH3_64bits_withSeed(fields, sizeof fields, text_hash ^ parents_hash);
}

static uint64_t workload_session_digest_with(const config_t *cfg, uint64_t index,
                                             workload_session_t *session, buffer_t *text) {
    if (workload_session_generate(cfg, index, session) != 0)
        return 0;
    uint64_t sum = 0;
    for (uint32_t j = 0; j < session->n_nodes; j++)
        sum += workload_node_digest(cfg, index, &session->nodes[j], text);
    return XXH3_64bits_withSeed(&sum, sizeof sum, session->n_nodes);
}

uint64_t workload_session_digest(const config_t *cfg, uint64_t index) {
    workload_session_t session = {0};
    buffer_t text; /* scratch for prompt text while digesting */
    buffer_init(&text);
    uint64_t digest = workload_session_digest_with(cfg, index, &session, &text);
    workload_session_free(&session);
    buffer_clear(&text);
    return digest;
}

uint64_t workload_digest(const config_t *cfg, uint64_t n_sessions) {
    workload_session_t session = {0};
    buffer_t text; /* scratch for prompt text while digesting */
    buffer_init(&text);
    uint64_t digest = 0;
    if (buffer_reserve(&text, prompt_max_bytes(cfg->workload.system_prompt_tokens)) == 0) {
        long len = workload_system_text(cfg, text.data, text.cap);
        digest = XXH3_64bits(text.data, len > 0 ? (size_t)len : 0);
    }
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, cfg);
    for (uint64_t i = 0; i < n_sessions; i++) {
        digest += workload_session_digest_with(cfg, i, &session, &text);
        if (cfg->scheduler.kind == SCHEDULER_RATE) {
            uint64_t arrival[2] = {i, (uint64_t)workload_arrivals_time_ns(&arrivals, i)};
            digest += XXH3_64bits(arrival, sizeof arrival);
        }
    }
    workload_session_free(&session);
    buffer_clear(&text);
    return digest;
}
