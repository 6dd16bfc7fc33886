/* A dataset of real prompts (workload.dataset, docs/workloads.md "Datasets"): a ShareGPT JSON
 * array or a JSONL file of conversations or prompts, read by the controller into the sessions of
 * a replay (common/trace.h) whose nodes carry their text: a conversation's user turns in order,
 * the assistant turns left to the server. Turns are counted in the target's tokenizer when
 * target.tokenizer is given, else in whitespace-separated words (prompt_count_words), filtered by
 * length and sampled with the seed, so the sessions are the same for any worker count. */
#ifndef STAMPEDE_DATASET_H
#define STAMPEDE_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "config.h"
#include "tokenizer.h"
#include "trace.h"

/* A turn's text is at most this many bytes (a larger one is refused, naming the limit). */
#define DATASET_MAX_TEXT_BYTES (16u << 20)

/* One user turn and the dataset's reply to it. */
typedef struct dataset_turn {
    uint64_t text_at;     /* its text in the reader's arena */
    uint32_t text_len;    /* bytes */
    uint32_t tokens;      /* the text's length as counted */
    int64_t reply_tokens; /* the dataset's reply to it as counted; -1: none */
} dataset_turn_t;

/* One conversation: turns[first_turn .. first_turn + n_turns). */
typedef struct dataset_conversation {
    uint32_t first_turn;
    uint32_t n_turns;
} dataset_conversation_t;

/* What dataset_read.c reads a file into. */
typedef struct dataset_reader {
    config_error_t *err;
    const char *file;
    const tokenizer_t *tokenizer; /* NULL: words are counted */
    tokenizer_scratch_t *scratch;
    buffer_t arena; /* user texts, end to end */
    buffer_t reply; /* the reply being gathered, for counting */
    dataset_turn_t *turns;
    size_t n_turns, cap_turns;
    dataset_conversation_t *conversations;
    size_t n_conversations, cap_conversations;
} dataset_reader_t;

/* Reads cfg->workload.dataset's file and builds its sessions into a new trace (*out, one
 * reference). 0 ok; -1 with *err naming the file, the line (and column for JSON syntax), the key
 * and the reason: bad JSON, a row of no known shape, an unknown speaker, a limit passed, no
 * conversation left after the filter, a sample larger than what is left. */
int dataset_load(const config_t *cfg, trace_t **out, config_error_t *err);

/* dataset_read.c: reads the whole file in cfg's format into rd's conversations (in file order,
 * each with at least one turn). 0 or -1 with rd->err set. */
int dataset_read(dataset_reader_t *rd, config_dataset_format_t format);
/* Fills rd->err (file, line: 0 for the whole file, column: 0 for none, key) and returns -1. */
int dataset_fail(dataset_reader_t *rd, int line, int column, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
