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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buffer.h"
#include "config.h"
#include "fuzz.h"
#include "plan.h"
#include "prompt.h"
#include "trace.h"
#include "trace_wire.h"
#include "workload.h"

static int fuzz_dataset_fd = -1;
static char fuzz_dataset_path[64];

static void fuzz_dataset_write(const uint8_t *data, size_t size) {
    if (fuzz_dataset_fd < 0) {
        fuzz_dataset_fd = memfd_create("fuzz_dataset", 0);
        FUZZ_CHECK(fuzz_dataset_fd >= 0);
        snprintf(fuzz_dataset_path, sizeof fuzz_dataset_path, "/proc/self/fd/%d", fuzz_dataset_fd);
    }
    FUZZ_CHECK(ftruncate(fuzz_dataset_fd, 0) == 0);
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fuzz_dataset_fd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
}

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
    plan_share_t share;
    if (plan_share_for(cfg, 1, 0, &share) != 0)
        return;
    buffer_t part;
    buffer_init(&part);
    FUZZ_CHECK(trace_wire_encode(cfg, &share, &part) == 0);
    trace_t *back = trace_wire_decode((const uint8_t *)part.data, part.len);
    buffer_clear(&part);
    FUZZ_CHECK(back != NULL && back->n_sessions == t->n_sessions);
    for (size_t s = 0; s < t->n_sessions; s++)
        for (uint32_t j = 0; j < t->sessions[s].n_nodes; j++) {
            const trace_node_t *x = trace_node(t, s, j), *y = trace_node(back, s, j);
            FUZZ_CHECK(y != NULL && x->text_len == y->text_len);
            FUZZ_CHECK(x->text_tokens == y->text_tokens && x->output_tokens == y->output_tokens);
            FUZZ_CHECK(memcmp(t->text + x->text_at, back->text + y->text_at, x->text_len) == 0);
        }
    trace_unref(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    fuzz_dataset_write(data + 1, size - 1);
    size_t lines = 1;
    for (size_t i = 1; i < size; i++)
        lines += data[i] == '\n';
    config_t cfg;
    config_init(&cfg);
    cfg.workload.kind = mode & 2 ? WORKLOAD_CHAT : WORKLOAD_REQUESTS;
    cfg.workload.dataset.path = strdup(fuzz_dataset_path);
    FUZZ_CHECK(cfg.workload.dataset.path != NULL);
    cfg.workload.dataset.format = mode & 1 ? DATASET_FORMAT_JSONL : DATASET_FORMAT_SHAREGPT;
    cfg.workload.dataset.max_context_tokens = mode & 4 ? 40 : 0;
    cfg.workload.dataset.sample = mode & 8 ? 2 : 0;
    config_error_t err;
    if (config_dataset_load(&cfg, &err) != 0) {
        FUZZ_CHECK(strcmp(err.file, fuzz_dataset_path) == 0);
        FUZZ_CHECK(err.line >= 0 && (size_t)err.line <= lines);
        FUZZ_CHECK(err.message[0] != '\0');
        config_free(&cfg);
        return 0;
    }
    fuzz_dataset_check(&cfg);
    fuzz_dataset_round_trip(&cfg);
    const trace_t *t = cfg.workload.replay;
    for (uint64_t i = 0; i < t->n_sessions && i < 4; i++) {
        workload_session_t s = {0};
        FUZZ_CHECK(workload_session_generate(&cfg, i, &s) == 0);
        FUZZ_CHECK(s.n_nodes == t->sessions[i].n_nodes);
        const trace_node_t *node = trace_node(t, i, 0);
        size_t cap = workload_fresh_max_bytes(&cfg, i, 0, s.nodes[0].input_tokens);
        char *text = malloc(cap);
        FUZZ_CHECK(text != NULL);
        long n = workload_fresh_text(&cfg, i, 0, s.nodes[0].input_tokens, text, cap);
        FUZZ_CHECK(n == (long)node->text_len);
        FUZZ_CHECK(memcmp(text, t->text + node->text_at, node->text_len) == 0);
        free(text);
        workload_session_free(&s);
    }
    config_free(&cfg);
    return 0;
}
