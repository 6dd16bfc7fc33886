/* Counter-based randomness: every draw is a pure function of (seed, stream, session, node, field,
 * counter), so the same file and seed give the same workload whatever the worker count and the
 * order in which sessions are generated. */
#ifndef STAMPEDE_RNG_H
#define STAMPEDE_RNG_H

#include <stdint.h>

/* Streams separate unrelated consumers of randomness so adding one never shifts another. */
enum {
    RNG_STREAM_WORKLOAD = 1, /* session shape: turns, lengths, think times */
    RNG_STREAM_PROMPT = 2,   /* prompt words */
    RNG_STREAM_ARRIVAL = 3,  /* rate-mode inter-arrival gaps (session = arrival index) */
    RNG_STREAM_ROUTING = 4,  /* random endpoint choice */
    RNG_STREAM_MOCK = 5,     /* the simulated server's own draws */
    RNG_STREAM_TEST = 99,
};

/* Fields within a (session, node): which quantity is being drawn. */
enum {
    RNG_FIELD_TURNS = 1,
    RNG_FIELD_INPUT_TOKENS = 2,
    RNG_FIELD_OUTPUT_TOKENS = 3,
    RNG_FIELD_THINK_TIME = 4,
    RNG_FIELD_TEXT = 5,
    RNG_FIELD_GAP = 6,
    RNG_FIELD_SHAPE = 7,
    RNG_FIELD_SYSTEM = 8,     /* the shared system-prompt scaffold (session 0, node 0) */
    RNG_FIELD_BLOCK = 9,      /* a trace's prompt block (session = its hash id, node 0) */
    RNG_FIELD_TEXT_SEED = 10, /* a sweep level's text seed (session = level, node = repetition) */
    RNG_FIELD_STEP_OVERHEAD = 11, /* a graph node's framework overhead (workload.graph) */
    RNG_FIELD_DATASET = 12,       /* the conversations a dataset sample draws (session 0, node 0) */
};

typedef struct rng {
    uint64_t key;     /* mixed from (seed, stream, session, node, field) */
    uint64_t counter; /* draws taken so far */
} rng_t;

/* Positions the generator at draw 0 of the given coordinates. */
void rng_init(rng_t *self, uint64_t seed, uint32_t stream, uint64_t session, uint32_t node,
              uint32_t field);
/* Next 64 uniformly random bits. */
uint64_t rng_next_u64(rng_t *self);
/* Next double uniform in [0, 1) with 53 bits of precision. */
double rng_next_double(rng_t *self);
/* Next double uniform in (0, 1): safe under log(). */
double rng_next_open(rng_t *self);
/* Uniform integer in [0, bound) without modulo bias; bound > 0. */
uint64_t rng_next_below(rng_t *self, uint64_t bound);

#endif
