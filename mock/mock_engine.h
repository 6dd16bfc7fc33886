/* The simulated inference engine, shaped like vLLM V1's scheduler: continuous batching up to
 * max_num_seqs with a FIFO waiting queue, a KV pool of 16-token blocks, chunked prefill under a
 * per-step token budget, preemption (recompute) when decodes run out of blocks, and the prefix
 * cache living in the same KV pool. Time is passed in, never read, so tests drive it on virtual
 * time: step_begin says how long the step lasts, step_end delivers its tokens. */
#ifndef STAMPEDE_MOCK_ENGINE_H
#define STAMPEDE_MOCK_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct mock_engine_config {
    uint32_t max_num_seqs;           /* running sequences at most */
    uint32_t max_num_batched_tokens; /* tokens (prefill + decode) per step at most */
    uint64_t kv_cache_tokens;        /* KV pool size, in tokens (rounded down to blocks) */
    uint64_t prefix_cache_tokens;    /* 0 disables the prefix cache; else its capacity */
    double tpot_base_ms;             /* step time with one sequence and no prefill */
    double alpha;                    /* step time grows as running^alpha */
    double prefill_tokens_per_s;     /* prefill speed; 0 = prefill costs nothing */
    double step_fixed_ms;            /* step time independent of the batch (reading the weights) */
    /* Speculative decoding (0 draft tokens = off): each decode step drafts spec_tokens tokens
     * (spec_draft_ms each), the target verifies them, and a sequence keeps 1 + the run of
     * accepted drafts, each accepted with probability spec_acceptance if the one before was. A
     * verified draft token costs spec_verify_weight of the sequence's own share of the step. */
    uint32_t spec_tokens;
    double spec_acceptance, spec_draft_ms, spec_verify_weight;
    uint64_t seed; /* keys the acceptance draws, with each sequence's key */
} mock_engine_config_t;

typedef enum mock_seq_state {
    MOCK_SEQ_NEW,
    MOCK_SEQ_WAITING,
    MOCK_SEQ_RUNNING,
    MOCK_SEQ_FINISHED,
    MOCK_SEQ_ABORTED,
} mock_seq_state_t;

/* One request as the engine sees it; embedded in the caller's request object. */
typedef struct mock_seq {
    /* Set by the caller before mock_engine_add, borrowed until the sequence leaves the engine:
     * the chained block hashes of the whole token sequence (prompt then output). */
    const uint64_t *block_hashes;
    uint32_t n_block_hashes;
    uint32_t prompt_tokens;
    uint32_t output_tokens; /* tokens to generate, >= 1 */
    uint64_t key;           /* keys the sequence's acceptance draws (speculative decoding) */
    void *user;
    /* Engine state, read-only outside the engine. */
    mock_seq_state_t state;
    uint32_t computed;       /* tokens whose KV is computed */
    uint32_t prefill_target; /* computed must reach this before the next token is sampled */
    uint32_t generated;      /* output tokens sampled so far */
    uint32_t cached_tokens;  /* prefix-cache hit at first admission (what usage reports) */
    uint32_t step_tokens;    /* tokens scheduled in the current step */
    uint32_t step_sampled;   /* tokens sampled at the end of the last step (1 + accepted drafts) */
    uint32_t n_pins, *pins;  /* cache blocks held (block i of the sequence is pins[i]) */
    uint32_t private_blocks;
    uint32_t preemptions;
    bool admitted;
    int64_t enqueued_ns;        /* entered the waiting queue */
    int64_t first_scheduled_ns; /* left it the first time */
    int64_t first_token_ns;
    int64_t last_token_ns;
    struct mock_seq *prev, *next;
} mock_seq_t;

typedef struct mock_engine mock_engine_t;

/* Called at the end of a step once per sequence that sampled tokens: seq->step_sampled of them
 * (more than 1 only with speculative decoding), all due at now_ns. When seq->generated ==
 * seq->output_tokens the sequence has already left the engine (state FINISHED). */
typedef void (*mock_engine_token_fn)(mock_seq_t *seq, int64_t now_ns, void *arg);

/* Counters and gauges for /metrics. */
typedef struct mock_engine_stats {
    uint32_t running, waiting;
    double kv_usage;                      /* blocks in use by sequences / all blocks */
    uint64_t prefix_queries, prefix_hits; /* tokens */
    uint64_t preemptions, steps;
    uint64_t prompt_tokens, generation_tokens;
} mock_engine_stats_t;

/* A new idle engine; NULL when the configuration is unusable (no KV block) or out of memory. */
mock_engine_t *mock_engine_new(const mock_engine_config_t *config);
/* Aborts the sequences still inside, frees the engine and sets *self_p to NULL. */
void mock_engine_destroy(mock_engine_t **self_p);
/* Queues seq (state NEW) at now_ns. -1 when it can never fit in the KV pool. */
int mock_engine_add(mock_engine_t *self, mock_seq_t *seq, int64_t now_ns);
/* Removes seq wherever it is (the client went away) and frees its blocks; the engine keeps no
 * pointer to it afterwards, even in the middle of a step. */
void mock_engine_abort(mock_engine_t *self, mock_seq_t *seq);
/* Schedules one step at now_ns and returns its duration in ns, or -1 when there is no work:
 * step_fixed_ms + spec_tokens * spec_draft_ms (when a sequence decodes) + tpot_base_ms * W^alpha
 * + prefill tokens / prefill_tokens_per_s, W counting each sequence 1 and each verified draft
 * token spec_verify_weight. */
int64_t mock_engine_step_begin(mock_engine_t *self, int64_t now_ns);
/* Starts the next step if the engine is idle and has work: at *next_start_ns when it is later
 * than now_ns (a busy engine starts a step when the last one ends, not when its owner gets to
 * it), else at now_ns; *next_start_ns becomes the step's end. The step's end, or -1 when no step
 * started. */
int64_t mock_engine_step_next(mock_engine_t *self, int64_t now_ns, int64_t *next_start_ns);
/* Completes the step begun last: samples tokens, calls fn for each, retires finished ones. */
void mock_engine_step_end(mock_engine_t *self, int64_t now_ns, mock_engine_token_fn fn, void *arg);
/* True while a step is begun and not yet ended. */
bool mock_engine_in_step(const mock_engine_t *self);
/* True while any sequence waits or runs. */
bool mock_engine_has_work(const mock_engine_t *self);
/* How many leading blocks of hashes[0..n) the prefix cache holds now, changing nothing (0 with
 * the cache off): a prefix-aware router's question. */
uint32_t mock_engine_cached_blocks(const mock_engine_t *self, const uint64_t *hashes, uint32_t n);
/* Current counters and gauges. */
void mock_engine_get_stats(const mock_engine_t *self, mock_engine_stats_t *out);

#endif
