/* The simulated engine's prefix cache: full 16-token KV blocks named by a chained hash (each
 * block's hash covers every token before it), as vLLM's automatic prefix caching does. Blocks in
 * use by a running sequence are pinned (reference counted); unpinned blocks stay cached and are
 * evicted least recently used first, when the cache is over capacity or the KV pool needs room. */
#ifndef STAMPEDE_MOCK_PREFIX_CACHE_H
#define STAMPEDE_MOCK_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define MOCK_PREFIX_CACHE_BLOCK_TOKENS 16

typedef struct mock_prefix_cache mock_prefix_cache_t;

/* A cache holding at most capacity_blocks blocks (pinned or not). NULL on allocation failure. */
mock_prefix_cache_t *mock_prefix_cache_new(uint32_t capacity_blocks);
/* Frees the cache and sets *self_p to NULL. */
void mock_prefix_cache_destroy(mock_prefix_cache_t **self_p);

/* Chained block hashes of tokens[0..n_tokens): one per full block, written to out (room for
 * n_tokens / 16). Returns the number of full blocks. */
uint32_t mock_prefix_cache_hash_blocks(const uint64_t *tokens, uint32_t n_tokens, uint64_t *out);

/* Looks up hashes[0..n) in order and pins the leading run that is cached, writing each pinned
 * block's id to ids. Returns how many leading blocks were found (and pinned). */
uint32_t mock_prefix_cache_match(mock_prefix_cache_t *self, const uint64_t *hashes, uint32_t n,
                                 uint32_t *ids);
/* How many leading blocks of hashes[0..n) are cached, touching nothing (no pin, no LRU move):
 * what a prefix-aware router asks of each replica. */
uint32_t mock_prefix_cache_peek(const mock_prefix_cache_t *self, const uint64_t *hashes,
                                uint32_t n);
/* Adds hash as a block pinned by the caller (pins the existing one if already cached). Returns
 * its id, or -1 when the cache is full of pinned blocks. */
int64_t mock_prefix_cache_insert_pinned(mock_prefix_cache_t *self, uint64_t hash);
/* Releases one pin; a block with no pins left becomes the most recently used evictable one. */
void mock_prefix_cache_unpin(mock_prefix_cache_t *self, uint32_t id);
/* Evicts the least recently used unpinned block. Returns 0, or -1 when none is evictable. */
int mock_prefix_cache_evict_one(mock_prefix_cache_t *self);

/* Blocks currently cached, and pinned by at least one sequence. */
uint32_t mock_prefix_cache_blocks(const mock_prefix_cache_t *self);
uint32_t mock_prefix_cache_pinned_blocks(const mock_prefix_cache_t *self);

#endif
