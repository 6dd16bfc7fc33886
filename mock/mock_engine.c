#include "mock_engine.h"

#include <math.h>
#include <stdlib.h>

#include "mock_prefix_cache.h"
#include "rng.h"

#define BLOCK MOCK_PREFIX_CACHE_BLOCK_TOKENS

typedef struct mock_seq_list {
    mock_seq_t *head, *tail;
    uint32_t len;
} mock_seq_list_t;

struct mock_engine {
    mock_engine_config_t config;
    mock_prefix_cache_t *cache; /* NULL when prefix caching is off */
    uint64_t total_blocks, private_blocks;
    mock_seq_list_t waiting, running;
    mock_seq_t **stepped; /* sequences that sample a token at the end of the step */
    uint32_t n_stepped, stepped_cap;
    bool in_step;
    mock_engine_stats_t counters;
};

static void mock_seq_list_remove(mock_seq_list_t *list, mock_seq_t *seq) {
    if (seq->prev)
        seq->prev->next = seq->next;
    else
        list->head = seq->next;
    if (seq->next)
        seq->next->prev = seq->prev;
    else
        list->tail = seq->prev;
    seq->prev = seq->next = NULL;
    list->len--;
}

static void mock_seq_list_push_back(mock_seq_list_t *list, mock_seq_t *seq) {
    seq->next = NULL;
    seq->prev = list->tail;
    if (list->tail)
        list->tail->next = seq;
    else
        list->head = seq;
    list->tail = seq;
    list->len++;
}

static void mock_seq_list_push_front(mock_seq_list_t *list, mock_seq_t *seq) {
    seq->prev = NULL;
    seq->next = list->head;
    if (list->head)
        list->head->prev = seq;
    else
        list->tail = seq;
    list->head = seq;
    list->len++;
}

static uint64_t mock_blocks_for(uint64_t tokens) {
    return (tokens + BLOCK - 1) / BLOCK;
}

mock_engine_t *mock_engine_new(const mock_engine_config_t *config) {
    uint64_t total_blocks = config->kv_cache_tokens / BLOCK;
    if (total_blocks == 0 || total_blocks > UINT32_MAX || config->max_num_seqs == 0 ||
        config->max_num_batched_tokens == 0)
        return NULL;
    mock_engine_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->config = *config;
    self->total_blocks = total_blocks;
    self->stepped_cap = config->max_num_seqs;
    self->stepped = calloc(self->stepped_cap, sizeof(*self->stepped));
    if (config->prefix_cache_tokens) {
        uint64_t cache_blocks = config->prefix_cache_tokens / BLOCK;
        if (cache_blocks > total_blocks)
            cache_blocks = total_blocks;
        self->cache = mock_prefix_cache_new((uint32_t)cache_blocks);
    }
    if (!self->stepped || (config->prefix_cache_tokens && !self->cache)) {
        mock_engine_destroy(&self);
        return NULL;
    }
    return self;
}

void mock_engine_destroy(mock_engine_t **self_p) {
    mock_engine_t *self = *self_p;
    if (!self)
        return;
    while (self->running.head)
        mock_engine_abort(self, self->running.head);
    while (self->waiting.head)
        mock_engine_abort(self, self->waiting.head);
    mock_prefix_cache_destroy(&self->cache);
    free(self->stepped);
    free(self);
    *self_p = NULL;
}

int mock_engine_add(mock_engine_t *self, mock_seq_t *seq, int64_t now_ns) {
    uint64_t tokens = (uint64_t)seq->prompt_tokens + seq->output_tokens;
    if (seq->output_tokens == 0 || mock_blocks_for(tokens) > self->total_blocks)
        return -1;
    seq->pins = malloc(mock_blocks_for(tokens) * sizeof(*seq->pins));
    if (!seq->pins)
        return -1;
    seq->state = MOCK_SEQ_WAITING;
    seq->computed = seq->prefill_target = seq->generated = 0;
    seq->cached_tokens = seq->step_tokens = 0;
    seq->n_pins = seq->private_blocks = seq->preemptions = 0;
    seq->admitted = false;
    seq->enqueued_ns = now_ns;
    seq->first_scheduled_ns = seq->first_token_ns = seq->last_token_ns = 0;
    mock_seq_list_push_back(&self->waiting, seq);
    return 0;
}

/* Blocks nobody uses, making room by evicting cached blocks when needed. */
static bool mock_engine_reserve(mock_engine_t *self, uint64_t n) {
    for (;;) {
        uint64_t cached = self->cache ? mock_prefix_cache_blocks(self->cache) : 0;
        uint64_t free_blocks = self->total_blocks - self->private_blocks - cached;
        if (free_blocks >= n)
            break;
        if (!self->cache || mock_prefix_cache_evict_one(self->cache) < 0)
            return false;
    }
    self->private_blocks += n;
    return true;
}

static void mock_engine_release(mock_engine_t *self, mock_seq_t *seq) {
    for (uint32_t i = 0; i < seq->n_pins; i++)
        mock_prefix_cache_unpin(self->cache, seq->pins[i]);
    seq->n_pins = 0;
    self->private_blocks -= seq->private_blocks;
    seq->private_blocks = 0;
}

static void mock_engine_retire(mock_engine_t *self, mock_seq_t *seq, mock_seq_state_t state) {
    mock_engine_release(self, seq);
    free(seq->pins);
    seq->pins = NULL;
    seq->state = state;
}

void mock_engine_abort(mock_engine_t *self, mock_seq_t *seq) {
    if (self->in_step) /* the caller may free seq before the step ends: forget it now */
        for (uint32_t i = 0; i < self->n_stepped; i++)
            if (self->stepped[i] == seq)
                self->stepped[i] = NULL;
    if (seq->state == MOCK_SEQ_WAITING)
        mock_seq_list_remove(&self->waiting, seq);
    else if (seq->state == MOCK_SEQ_RUNNING)
        mock_seq_list_remove(&self->running, seq);
    else
        return;
    mock_engine_retire(self, seq, MOCK_SEQ_ABORTED);
}

/* Recompute preemption, as vLLM V1 does: drop the KV, go back to the head of the queue. */
static void mock_engine_preempt(mock_engine_t *self, mock_seq_t *seq) {
    mock_seq_list_remove(&self->running, seq);
    mock_engine_release(self, seq);
    seq->computed = seq->prefill_target = 0;
    seq->step_tokens = 0;
    seq->preemptions++;
    seq->state = MOCK_SEQ_WAITING;
    mock_seq_list_push_front(&self->waiting, seq);
    self->counters.preemptions++;
}

/* What an admission must compute: the prompt, plus after a preemption every token sampled so
 * far (vLLM's recompute). Decoding then keeps computed == prompt + generated - 1. */
static uint32_t mock_seq_target(const mock_seq_t *seq) {
    return seq->prompt_tokens + seq->generated;
}

/* Tokens a decode step of seq computes: its last token, plus the drafts the target verifies
 * (no more than the sequence has left to generate, nor than a step's token budget holds). */
static uint32_t mock_engine_decode_tokens(const mock_engine_t *self, const mock_seq_t *seq) {
    uint32_t drafts = self->config.spec_tokens;
    if (drafts > seq->output_tokens - seq->generated - 1)
        drafts = seq->output_tokens - seq->generated - 1;
    if (drafts > self->config.max_num_batched_tokens - 1) /* a step must be able to hold it */
        drafts = self->config.max_num_batched_tokens - 1;
    return 1 + drafts;
}

/* Gives a decoding sequence the blocks its step's tokens need; may preempt the newest sequence
 * (possibly seq itself). Returns false when seq was preempted. */
static bool mock_engine_grow(mock_engine_t *self, mock_seq_t *seq) {
    uint32_t tokens = mock_engine_decode_tokens(self, seq);
    while (mock_blocks_for(seq->computed + tokens) > seq->n_pins + seq->private_blocks) {
        if (mock_engine_reserve(self, 1)) {
            seq->private_blocks++;
            break;
        }
        mock_seq_t *victim = self->running.tail;
        mock_engine_preempt(self, victim);
        if (victim == seq)
            return false;
    }
    return true;
}

/* Moves the head of the queue into the batch if the KV pool can hold its prompt. */
static bool mock_engine_admit(mock_engine_t *self, mock_seq_t *seq, int64_t now_ns) {
    uint32_t target = mock_seq_target(seq);
    uint32_t hit_blocks = 0;
    if (self->cache) {
        uint32_t lookable = (target - 1) / BLOCK; /* one token is always computed */
        if (lookable > seq->n_block_hashes)
            lookable = seq->n_block_hashes;
        hit_blocks = mock_prefix_cache_match(self->cache, seq->block_hashes, lookable, seq->pins);
        seq->n_pins = hit_blocks;
    }
    uint64_t need = mock_blocks_for(target) - hit_blocks;
    if (!mock_engine_reserve(self, need)) {
        mock_engine_release(self, seq);
        return false;
    }
    seq->private_blocks = (uint32_t)need;
    seq->computed = hit_blocks * BLOCK;
    seq->prefill_target = target;
    self->counters.prefix_queries += target;
    self->counters.prefix_hits += (uint64_t)hit_blocks * BLOCK;
    if (!seq->admitted) {
        seq->admitted = true;
        seq->cached_tokens = hit_blocks * BLOCK;
        seq->first_scheduled_ns = now_ns;
    }
    mock_seq_list_remove(&self->waiting, seq);
    seq->state = MOCK_SEQ_RUNNING;
    mock_seq_list_push_back(&self->running, seq);
    return true;
}

int64_t mock_engine_step_begin(mock_engine_t *self, int64_t now_ns) {
    uint32_t budget = self->config.max_num_batched_tokens;
    uint64_t prefill_tokens = 0;
    uint32_t decoding = 0, drafts = 0;
    self->n_stepped = 0;
    for (mock_seq_t *seq = self->running.head; seq; seq = seq->next) {
        seq->step_tokens = 0;
        if (budget == 0)
            continue;
        if (seq->computed < seq->prefill_target) {
            uint32_t n = seq->prefill_target - seq->computed;
            seq->step_tokens = n < budget ? n : budget;
            prefill_tokens += seq->step_tokens;
        } else {
            uint32_t n = mock_engine_decode_tokens(self, seq);
            if (n > budget)
                continue;
            /* Growing preempts from the tail: when seq itself goes, nothing runs after it. */
            if (!mock_engine_grow(self, seq))
                break;
            seq->step_tokens = n;
            decoding++;
            drafts += n - 1;
        }
        budget -= seq->step_tokens;
        self->stepped[self->n_stepped++] = seq;
    }
    while (self->waiting.head && self->running.len < self->config.max_num_seqs && budget > 0) {
        mock_seq_t *seq = self->waiting.head;
        if (!mock_engine_admit(self, seq, now_ns))
            break;
        uint32_t n = seq->prefill_target - seq->computed;
        seq->step_tokens = n < budget ? n : budget;
        prefill_tokens += seq->step_tokens;
        budget -= seq->step_tokens;
        self->stepped[self->n_stepped++] = seq;
    }
    if (self->n_stepped == 0)
        return -1;
    self->in_step = true;
    self->counters.steps++;
    const mock_engine_config_t *cf = &self->config;
    double weight = (double)self->n_stepped + cf->spec_verify_weight * drafts;
    double ms = cf->step_fixed_ms + cf->tpot_base_ms * pow(weight, cf->alpha);
    if (decoding > 0)
        ms += cf->spec_tokens * cf->spec_draft_ms;
    if (cf->prefill_tokens_per_s > 0)
        ms += 1e3 * (double)prefill_tokens / cf->prefill_tokens_per_s;
    int64_t ns = (int64_t)llround(ms * 1e6);
    return ns > 0 ? ns : 1;
}

/* Publishes the sequence's newly full blocks to the prefix cache, converting them from private
 * blocks to shared pinned ones (so later requests hit them while this one still runs). */
static void mock_engine_publish_blocks(mock_engine_t *self, mock_seq_t *seq) {
    if (!self->cache)
        return;
    uint32_t full = seq->computed / BLOCK;
    if (full > seq->n_block_hashes)
        full = seq->n_block_hashes;
    while (seq->n_pins < full && seq->private_blocks > 0) {
        int64_t id = mock_prefix_cache_insert_pinned(self->cache, seq->block_hashes[seq->n_pins]);
        if (id < 0)
            break;
        seq->pins[seq->n_pins++] = (uint32_t)id;
        seq->private_blocks--;
        self->private_blocks--;
    }
}

/* Tokens a decode step of seq keeps: its own, then the drafts up to the first rejected one (each
 * accepted with probability spec_acceptance), drawn from (seed, seq->key, tokens so far). */
static uint32_t mock_engine_accepted(const mock_engine_t *self, const mock_seq_t *seq) {
    uint32_t drafts = seq->step_tokens - 1, kept = 1;
    if (drafts == 0)
        return 1;
    rng_t rng;
    rng_init(&rng, self->config.seed, RNG_STREAM_MOCK, seq->key, 2, seq->generated);
    while (kept <= drafts && rng_next_double(&rng) < self->config.spec_acceptance)
        kept++;
    return kept;
}

void mock_engine_step_end(mock_engine_t *self, int64_t now_ns, mock_engine_token_fn fn, void *arg) {
    if (!self->in_step)
        return;
    self->in_step = false;
    uint32_t n_sampled = 0;
    for (uint32_t i = 0; i < self->n_stepped; i++) {
        mock_seq_t *seq = self->stepped[i];
        if (!seq || seq->state != MOCK_SEQ_RUNNING || seq->step_tokens == 0)
            continue; /* aborted or preempted after it was scheduled */
        bool prefilling = seq->computed < seq->prefill_target;
        /* A decode keeps its accepted tokens' KV; a rejected draft's slot is written over. */
        uint32_t sampled = prefilling ? 1 : mock_engine_accepted(self, seq);
        seq->computed += prefilling ? seq->step_tokens : sampled;
        seq->step_tokens = 0;
        mock_engine_publish_blocks(self, seq);
        if (prefilling && seq->computed < seq->prefill_target)
            continue; /* a chunk of a longer prefill */
        if (seq->generated == 0) {
            seq->first_token_ns = now_ns;
            self->counters.prompt_tokens += seq->prompt_tokens;
        }
        seq->step_sampled = sampled;
        seq->generated += sampled;
        seq->last_token_ns = now_ns;
        self->counters.generation_tokens += sampled;
        if (seq->generated >= seq->output_tokens) {
            mock_seq_list_remove(&self->running, seq);
            mock_engine_retire(self, seq, MOCK_SEQ_FINISHED);
        }
        self->stepped[n_sampled++] = seq;
    }
    self->n_stepped = 0;
    for (uint32_t i = 0; i < n_sampled; i++) {
        mock_seq_t *seq = self->stepped[i];
        if (seq->state == MOCK_SEQ_ABORTED)
            continue; /* an earlier callback aborted it */
        fn(seq, now_ns, arg);
    }
}

int64_t mock_engine_step_next(mock_engine_t *self, int64_t now_ns, int64_t *next_start_ns) {
    if (mock_engine_in_step(self) || !mock_engine_has_work(self))
        return -1;
    int64_t start = *next_start_ns > now_ns ? *next_start_ns : now_ns;
    int64_t duration = mock_engine_step_begin(self, start);
    if (duration < 0)
        return -1;
    *next_start_ns = start + duration;
    return *next_start_ns;
}

bool mock_engine_in_step(const mock_engine_t *self) {
    return self->in_step;
}

bool mock_engine_has_work(const mock_engine_t *self) {
    return self->waiting.len > 0 || self->running.len > 0;
}

uint32_t mock_engine_cached_blocks(const mock_engine_t *self, const uint64_t *hashes, uint32_t n) {
    return self->cache ? mock_prefix_cache_peek(self->cache, hashes, n) : 0;
}

void mock_engine_get_stats(const mock_engine_t *self, mock_engine_stats_t *out) {
    *out = self->counters;
    out->running = self->running.len;
    out->waiting = self->waiting.len;
    uint64_t used = self->private_blocks;
    if (self->cache)
        used += mock_prefix_cache_pinned_blocks(self->cache);
    out->kv_usage = (double)used / (double)self->total_blocks;
}
