/* The dataset readers (common/dataset_read.c, common/dataset.c): a ShareGPT array or a JSONL file
 * of rows, as config_dataset_load reads a user's file. The first byte picks the reading (bit 0:
 * JSONL, else the array; bit 1: kind chat, else requests; bit 2: max_context_tokens 40; bit 3:
 * sample 2); the rest is the file, written to a memfd the loader opens by its /proc path.
 *
 * A refusal names the file, a line of it (0: the whole file) and a reason. An accepted dataset
 * gives sessions whose every node carries text inside the trace's text, counted as its words, of
 * at least one word; requests have one node, chats a chain; a worker's part (one worker) decodes
 * to the same nodes and the same text bytes; every session generates, and its fresh text is the
 * node's text. */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>

#include "fuzz_file.h"
#include "prompt.h"
#include "workload.h"

static void fuzz_dataset_check(const config_t *cfg) {
    const trace_t *t = cfg->workload.replay;
    FUZZ_CHECK(t != NULL && t->n_sessions > 0);
    FUZZ_CHECK(cfg->limits.max_sessions == t->n_sessions);
    for (size_t s = 0; s < t->n_sessions; s++) {
        const trace_session_t *session = &t->sessions[s];
        FUZZ_CHECK(session->n_nodes >= 1);
        FUZZ_CHECK(cfg->workload.kind == WORKLOAD_CHAT || session->n_nodes == 1);
        for (uint32_t j = 0; j < session->n_nodes; j++) {
            const trace_node_t *node = &t->nodes[session->first_node + j];
            FUZZ_CHECK(node->text_at + node->text_len <= t->text_len);
            FUZZ_CHECK(node->text_tokens >= 1 && node->input_tokens == node->text_tokens);
            FUZZ_CHECK(node->text_tokens ==
                       prompt_count_words(t->text + node->text_at, node->text_len));
            FUZZ_CHECK(node->output_tokens >= 1);
            FUZZ_CHECK(j == 0 ? node->n_parents == 0 && node->history_parent == TRACE_NONE
                              : node->n_parents == 1 && t->edges[node->parents_at] == j - 1);
        }
    }
}

/* What the controller sends a single worker decodes to the same nodes and text. */
static void fuzz_dataset_round_trip(const config_t *cfg) {
    const trace_t *t = cfg->workload.replay;
    trace_t *back = fuzz_file_worker_part(cfg);
    if (!back)
        return;
    FUZZ_CHECK(back->n_sessions == t->n_sessions);
    for (size_t s = 0; s < t->n_sessions; s++)
        for (uint32_t j = 0; j < t->sessions[s].n_nodes; j++) {
            const trace_node_t *x = trace_node(t, s, j), *y = trace_node(back, s, j);
            FUZZ_CHECK(y != NULL && x->text_len == y->text_len);
            FUZZ_CHECK(x->text_tokens == y->text_tokens && x->output_tokens == y->output_tokens);
            FUZZ_CHECK(memcmp(t->text + x->text_at, back->text + y->text_at, x->text_len) == 0);
        }
    trace_unref(&back);
}

static void fuzz_dataset_configure(config_t *cfg, uint8_t mode, const char *path) {
    cfg->workload.kind = mode & 2 ? WORKLOAD_CHAT : WORKLOAD_REQUESTS;
    cfg->workload.dataset.path = strdup(path);
    FUZZ_CHECK(cfg->workload.dataset.path != NULL);
    cfg->workload.dataset.format = mode & 1 ? DATASET_FORMAT_JSONL : DATASET_FORMAT_SHAREGPT;
    cfg->workload.dataset.max_context_tokens = mode & 4 ? 40 : 0;
    cfg->workload.dataset.sample = mode & 8 ? 2 : 0;
}

/* A session's fresh text is its first node's text. */
static void fuzz_dataset_fresh_text(const config_t *cfg, uint64_t i, const workload_session_t *s) {
    const trace_t *t = cfg->workload.replay;
    const trace_node_t *node = trace_node(t, i, 0);
    size_t cap = workload_fresh_max_bytes(cfg, i, 0, s->nodes[0].input_tokens);
    char *text = malloc(cap);
    FUZZ_CHECK(text != NULL);
    long n = workload_fresh_text(cfg, i, 0, s->nodes[0].input_tokens, text, cap);
    FUZZ_CHECK(n == (long)node->text_len);
    FUZZ_CHECK(memcmp(text, t->text + node->text_at, node->text_len) == 0);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    config_t cfg;
    if (!fuzz_file_load(&cfg, data, size, fuzz_dataset_configure, config_dataset_load))
        return 0;
    fuzz_dataset_check(&cfg);
    fuzz_dataset_round_trip(&cfg);
    fuzz_file_generate(&cfg, fuzz_dataset_fresh_text);
    config_free(&cfg);
    return 0;
}
