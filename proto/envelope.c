#include "envelope.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define ARENA_FIRST_BLOCK (64 * 1024)

typedef struct arena_block {
    struct arena_block *next;
    size_t size; /* usable bytes after the header */
    size_t used;
} arena_block_t;

struct envelope_arena {
    arena_block_t *blocks;  /* the current block first */
    arena_block_t *current; /* where the next allocation is tried */
    ProtobufCAllocator allocator;
    uint64_t blocks_allocated;
    uint64_t allocations;
    size_t block_bytes; /* usable bytes of every block */
    size_t limit;       /* block_bytes never passes it */
    bool over_limit;    /* the last unpack failed for want of room under the limit */
};

size_t envelope_pack(const Stampede__Envelope *env, uint8_t **buf, size_t *cap) {
    size_t len = stampede__envelope__get_packed_size(env);
    if (buffer_grow_array(buf, cap, len, 1) < 0)
        return 0;
    return stampede__envelope__pack(env, *buf);
}

static size_t align_up(size_t n) {
    size_t a = alignof(max_align_t);
    return (n + a - 1) & ~(a - 1);
}

static uint8_t *block_data(arena_block_t *b) {
    return (uint8_t *)b + align_up(sizeof *b);
}

/* A new block able to hold at least size bytes, appended after the last one. */
static arena_block_t *add_block(envelope_arena_t *self, size_t size) {
    size_t last = 0;
    arena_block_t **tail = &self->blocks;
    while (*tail) {
        last = (*tail)->size;
        tail = &(*tail)->next;
    }
    size_t want = last ? last * 2 : ARENA_FIRST_BLOCK;
    while (want < size)
        want *= 2;
    if (want > self->limit - self->block_bytes && size <= self->limit - self->block_bytes)
        want = self->limit - self->block_bytes; /* the last block fills the budget exactly */
    if (want > self->limit - self->block_bytes) {
        self->over_limit = true;
        return NULL;
    }
    arena_block_t *b = malloc(align_up(sizeof *b) + want);
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = want;
    b->used = 0;
    *tail = b;
    self->blocks_allocated++;
    self->block_bytes += want;
    return b;
}

static void *arena_alloc(void *data, size_t size) {
    envelope_arena_t *self = data;
    size = align_up(size ? size : 1);
    self->allocations++;
    arena_block_t *b = self->current;
    while (b && b->size - b->used < size)
        b = b->next;
    if (!b && !(b = add_block(self, size)))
        return NULL;
    self->current = b;
    void *p = block_data(b) + b->used;
    b->used += size;
    return p;
}

static void arena_free(void *data, void *p) {
    /* Everything is released at once by the next unpack. */
}

envelope_arena_t *envelope_arena_new(void) {
    envelope_arena_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->allocator.alloc = arena_alloc;
    self->allocator.free = arena_free;
    self->allocator.allocator_data = self;
    self->limit = ENVELOPE_ARENA_LIMIT;
    return self;
}

void envelope_arena_destroy(envelope_arena_t **self_p) {
    envelope_arena_t *self = *self_p;
    if (!self)
        return;
    for (arena_block_t *b = self->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(self);
    *self_p = NULL;
}

Stampede__Envelope *envelope_unpack(envelope_arena_t *self, const uint8_t *data, size_t len) {
    for (arena_block_t *b = self->blocks; b; b = b->next)
        b->used = 0;
    self->current = self->blocks;
    self->over_limit = false;
    return stampede__envelope__unpack(&self->allocator, len, data);
}

void envelope_arena_set_limit(envelope_arena_t *self, size_t max_bytes) {
    self->limit = max_bytes > self->block_bytes ? max_bytes : self->block_bytes;
}

const char *envelope_arena_error(const envelope_arena_t *self) {
    return self->over_limit ? "unpacking it needs more memory than the arena's limit"
                            : "it is not a valid protobuf Envelope";
}

uint64_t envelope_arena_blocks_allocated(const envelope_arena_t *self) {
    return self->blocks_allocated;
}

uint64_t envelope_arena_allocations(const envelope_arena_t *self) {
    return self->allocations;
}

/* envelope_unpack_bounded: malloc with a header holding the size, counted against a budget. */
typedef struct bounded {
    size_t used, limit;
    bool over;
} bounded_t;

static void *bounded_alloc(void *data, size_t size) {
    bounded_t *b = data;
    size_t head = align_up(sizeof(size_t));
    if (size > b->limit - b->used || head + size < size) {
        b->over = true;
        return NULL;
    }
    uint8_t *p = malloc(head + size);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    b->used += size;
    return p + head;
}

static void bounded_free(void *data, void *ptr) {
    if (!ptr)
        return;
    uint8_t *p = (uint8_t *)ptr - align_up(sizeof(size_t));
    bounded_t *b = data;
    if (b) {
        size_t size;
        memcpy(&size, p, sizeof size);
        b->used -= size;
    }
    free(p);
}

Stampede__Envelope *envelope_unpack_bounded(const uint8_t *data, size_t len, size_t max_bytes,
                                            bool *over) {
    bounded_t budget = {.limit = max_bytes};
    ProtobufCAllocator allocator = {
        .alloc = bounded_alloc, .free = bounded_free, .allocator_data = &budget};
    Stampede__Envelope *env = stampede__envelope__unpack(&allocator, len, data);
    if (over)
        *over = !env && budget.over;
    return env;
}

void envelope_stop(Stampede__Envelope *env, Stampede__Stop *stop, uint64_t run_id,
                   const char *reason, bool cancel, bool abandon) {
    *stop = (Stampede__Stop)STAMPEDE__STOP__INIT;
    stop->reason = (char *)reason;
    stop->cancel = cancel;
    stop->abandon = abandon;
    *env = (Stampede__Envelope)STAMPEDE__ENVELOPE__INIT;
    env->body_case = STAMPEDE__ENVELOPE__BODY_STOP;
    env->stop = stop;
    env->run_id = run_id;
}

void envelope_free(Stampede__Envelope *env) {
    ProtobufCAllocator allocator = {.alloc = bounded_alloc, .free = bounded_free};
    if (env)
        stampede__envelope__free_unpacked(env, &allocator);
}
