#include "mock_prefix_cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <xxhash.h>

#define MOCK_PREFIX_CACHE_NONE UINT32_MAX

typedef struct mock_prefix_block {
    uint64_t hash;
    uint32_t pins;
    uint32_t lru_prev, lru_next; /* evictable list, oldest at head */
    uint32_t bucket_next;        /* hash chain, or the free list when unused */
    bool used;
} mock_prefix_block_t;

struct mock_prefix_cache {
    mock_prefix_block_t *blocks; /* capacity entries */
    uint32_t *buckets;           /* power of two, chains through bucket_next */
    uint32_t bucket_mask;
    uint32_t capacity, n_used, n_pinned;
    uint32_t free_head;
    uint32_t lru_head, lru_tail;
};

mock_prefix_cache_t *mock_prefix_cache_new(uint32_t capacity_blocks) {
    mock_prefix_cache_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    uint32_t n_buckets = 16;
    while (n_buckets < capacity_blocks * 2u && n_buckets < (1u << 30))
        n_buckets <<= 1;
    self->capacity = capacity_blocks;
    self->blocks = calloc(capacity_blocks ? capacity_blocks : 1, sizeof(*self->blocks));
    self->buckets = malloc(n_buckets * sizeof(*self->buckets));
    if (!self->blocks || !self->buckets) {
        mock_prefix_cache_destroy(&self);
        return NULL;
    }
    self->bucket_mask = n_buckets - 1;
    for (uint32_t i = 0; i < n_buckets; i++)
        self->buckets[i] = MOCK_PREFIX_CACHE_NONE;
    for (uint32_t i = 0; i < capacity_blocks; i++)
        self->blocks[i].bucket_next = i + 1 < capacity_blocks ? i + 1 : MOCK_PREFIX_CACHE_NONE;
    self->free_head = capacity_blocks ? 0 : MOCK_PREFIX_CACHE_NONE;
    self->lru_head = self->lru_tail = MOCK_PREFIX_CACHE_NONE;
    return self;
}

void mock_prefix_cache_destroy(mock_prefix_cache_t **self_p) {
    if (!*self_p)
        return;
    free((*self_p)->blocks);
    free((*self_p)->buckets);
    free(*self_p);
    *self_p = NULL;
}

uint32_t mock_prefix_cache_hash_blocks(const uint64_t *tokens, uint32_t n_tokens, uint64_t *out) {
    uint32_t n_blocks = n_tokens / MOCK_PREFIX_CACHE_BLOCK_TOKENS;
    uint64_t parent = 0x9e3779b97f4a7c15ull; /* the root's "parent hash" */
    for (uint32_t b = 0; b < n_blocks; b++) {
        parent = XXH3_64bits_withSeed(tokens + (size_t)b * MOCK_PREFIX_CACHE_BLOCK_TOKENS,
                                      MOCK_PREFIX_CACHE_BLOCK_TOKENS * sizeof(uint64_t), parent);
        out[b] = parent;
    }
    return n_blocks;
}

static uint32_t mock_prefix_cache_bucket(const mock_prefix_cache_t *self, uint64_t hash) {
    return (uint32_t)(hash ^ (hash >> 32)) & self->bucket_mask;
}

static uint32_t mock_prefix_cache_find(const mock_prefix_cache_t *self, uint64_t hash) {
    uint32_t id = self->buckets[mock_prefix_cache_bucket(self, hash)];
    while (id != MOCK_PREFIX_CACHE_NONE && self->blocks[id].hash != hash)
        id = self->blocks[id].bucket_next;
    return id;
}

static void mock_prefix_cache_lru_unlink(mock_prefix_cache_t *self, uint32_t id) {
    mock_prefix_block_t *b = &self->blocks[id];
    if (b->lru_prev != MOCK_PREFIX_CACHE_NONE)
        self->blocks[b->lru_prev].lru_next = b->lru_next;
    else
        self->lru_head = b->lru_next;
    if (b->lru_next != MOCK_PREFIX_CACHE_NONE)
        self->blocks[b->lru_next].lru_prev = b->lru_prev;
    else
        self->lru_tail = b->lru_prev;
}

static void mock_prefix_cache_lru_append(mock_prefix_cache_t *self, uint32_t id) {
    mock_prefix_block_t *b = &self->blocks[id];
    b->lru_next = MOCK_PREFIX_CACHE_NONE;
    b->lru_prev = self->lru_tail;
    if (self->lru_tail != MOCK_PREFIX_CACHE_NONE)
        self->blocks[self->lru_tail].lru_next = id;
    else
        self->lru_head = id;
    self->lru_tail = id;
}

static void mock_prefix_cache_pin(mock_prefix_cache_t *self, uint32_t id) {
    mock_prefix_block_t *b = &self->blocks[id];
    if (b->pins++ == 0) {
        mock_prefix_cache_lru_unlink(self, id);
        self->n_pinned++;
    }
}

uint32_t mock_prefix_cache_match(mock_prefix_cache_t *self, const uint64_t *hashes, uint32_t n,
                                 uint32_t *ids) {
    uint32_t found = 0;
    while (found < n) {
        uint32_t id = mock_prefix_cache_find(self, hashes[found]);
        if (id == MOCK_PREFIX_CACHE_NONE)
            break;
        mock_prefix_cache_pin(self, id);
        ids[found++] = id;
    }
    return found;
}

uint32_t mock_prefix_cache_peek(const mock_prefix_cache_t *self, const uint64_t *hashes,
                                uint32_t n) {
    uint32_t found = 0;
    while (found < n && mock_prefix_cache_find(self, hashes[found]) != MOCK_PREFIX_CACHE_NONE)
        found++;
    return found;
}

int mock_prefix_cache_evict_one(mock_prefix_cache_t *self) {
    uint32_t id = self->lru_head;
    if (id == MOCK_PREFIX_CACHE_NONE)
        return -1;
    mock_prefix_cache_lru_unlink(self, id);
    mock_prefix_block_t *b = &self->blocks[id];
    uint32_t *link = &self->buckets[mock_prefix_cache_bucket(self, b->hash)];
    while (*link != id)
        link = &self->blocks[*link].bucket_next;
    *link = b->bucket_next;
    b->used = false;
    b->bucket_next = self->free_head;
    self->free_head = id;
    self->n_used--;
    return 0;
}

int64_t mock_prefix_cache_insert_pinned(mock_prefix_cache_t *self, uint64_t hash) {
    uint32_t id = mock_prefix_cache_find(self, hash);
    if (id != MOCK_PREFIX_CACHE_NONE) {
        mock_prefix_cache_pin(self, id);
        return id;
    }
    if (self->free_head == MOCK_PREFIX_CACHE_NONE && mock_prefix_cache_evict_one(self) < 0)
        return -1;
    id = self->free_head;
    mock_prefix_block_t *b = &self->blocks[id];
    self->free_head = b->bucket_next;
    uint32_t bucket = mock_prefix_cache_bucket(self, hash);
    b->hash = hash;
    b->pins = 1;
    b->used = true;
    b->bucket_next = self->buckets[bucket];
    self->buckets[bucket] = id;
    self->n_used++;
    self->n_pinned++;
    return id;
}

void mock_prefix_cache_unpin(mock_prefix_cache_t *self, uint32_t id) {
    mock_prefix_block_t *b = &self->blocks[id];
    if (--b->pins == 0) {
        self->n_pinned--;
        mock_prefix_cache_lru_append(self, id);
    }
}

uint32_t mock_prefix_cache_blocks(const mock_prefix_cache_t *self) {
    return self->n_used;
}

uint32_t mock_prefix_cache_pinned_blocks(const mock_prefix_cache_t *self) {
    return self->n_pinned;
}
