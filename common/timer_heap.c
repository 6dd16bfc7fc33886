/* Entries sit in a slot table; the heap orders slot indices by (when_ns, seq). An id is the
 * slot's generation above its 1-based index, so a stale id never matches a reused slot. */
#include "timer_heap.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define TIMER_HEAP_SLOT_BITS 32
#define TIMER_HEAP_SLOT_MASK ((UINT64_C(1) << TIMER_HEAP_SLOT_BITS) - 1)
#define TIMER_HEAP_NONE UINT32_MAX

typedef struct timer_heap_slot {
    timer_heap_entry_t entry; /* entry.id is 0 while the slot is free */
    uint32_t heap_pos;
    uint32_t generation;
    uint32_t next_free;
} timer_heap_slot_t;

void timer_heap_init(timer_heap_t *self) {
    memset(self, 0, sizeof(*self));
    self->free_head = TIMER_HEAP_NONE;
}

void timer_heap_clear(timer_heap_t *self) {
    free(self->slots);
    free(self->heap);
    timer_heap_init(self);
}

static bool timer_heap_before(const timer_heap_t *self, uint32_t a, uint32_t b) {
    const timer_heap_entry_t *x = &self->slots[a].entry, *y = &self->slots[b].entry;
    return x->when_ns < y->when_ns || (x->when_ns == y->when_ns && x->seq < y->seq);
}

static void timer_heap_set(timer_heap_t *self, size_t pos, uint32_t slot) {
    self->heap[pos] = slot;
    self->slots[slot].heap_pos = (uint32_t)pos;
}

static void timer_heap_up(timer_heap_t *self, size_t pos) {
    uint32_t slot = self->heap[pos];
    while (pos > 0) {
        size_t parent = (pos - 1) / 2;
        if (!timer_heap_before(self, slot, self->heap[parent]))
            break;
        timer_heap_set(self, pos, self->heap[parent]);
        pos = parent;
    }
    timer_heap_set(self, pos, slot);
}

static void timer_heap_down(timer_heap_t *self, size_t pos) {
    uint32_t slot = self->heap[pos];
    for (;;) {
        size_t child = 2 * pos + 1;
        if (child >= self->heap_len)
            break;
        if (child + 1 < self->heap_len &&
            timer_heap_before(self, self->heap[child + 1], self->heap[child]))
            child++;
        if (!timer_heap_before(self, self->heap[child], slot))
            break;
        timer_heap_set(self, pos, self->heap[child]);
        pos = child;
    }
    timer_heap_set(self, pos, slot);
}

static void timer_heap_remove_at(timer_heap_t *self, size_t pos) {
    uint32_t last = self->heap[--self->heap_len];
    if (pos == self->heap_len)
        return;
    timer_heap_set(self, pos, last);
    if (pos > 0 && timer_heap_before(self, last, self->heap[(pos - 1) / 2]))
        timer_heap_up(self, pos);
    else
        timer_heap_down(self, pos);
}

/* A slot whose generation would wrap is retired for good, so that ids are never reused. */
static void timer_heap_release(timer_heap_t *self, uint32_t slot) {
    timer_heap_slot_t *s = &self->slots[slot];
    memset(&s->entry, 0, sizeof(s->entry));
    if (s->generation == UINT32_MAX)
        return;
    s->next_free = self->free_head;
    self->free_head = slot;
}

static int timer_heap_take(timer_heap_t *self, uint32_t *slot_out) {
    if (self->free_head != TIMER_HEAP_NONE) {
        *slot_out = self->free_head;
        self->free_head = self->slots[*slot_out].next_free;
        return 0;
    }
    if (self->slots_len >= TIMER_HEAP_SLOT_MASK - 1 ||
        buffer_grow_array(&self->slots, &self->slots_cap, self->slots_len + 1,
                          sizeof(*self->slots)) < 0 ||
        buffer_grow_array(&self->heap, &self->heap_cap, self->slots_len + 1, sizeof(*self->heap)) <
            0)
        return -1;
    *slot_out = (uint32_t)self->slots_len++;
    return 0;
}

uint64_t timer_heap_add(timer_heap_t *self, int64_t when_ns, timer_heap_fn fn, void *arg) {
    assert(self);
    uint32_t slot;
    if (timer_heap_take(self, &slot) < 0)
        return 0;
    timer_heap_slot_t *s = &self->slots[slot];
    s->generation++;
    s->entry = (timer_heap_entry_t){
        .when_ns = when_ns,
        .id = ((uint64_t)s->generation << TIMER_HEAP_SLOT_BITS) | ((uint64_t)slot + 1),
        .seq = ++self->seq,
        .fn = fn,
        .arg = arg,
    };
    self->heap[self->heap_len] = slot;
    timer_heap_up(self, self->heap_len++);
    return s->entry.id;
}

bool timer_heap_cancel(timer_heap_t *self, uint64_t id) {
    assert(self);
    uint64_t index = id & TIMER_HEAP_SLOT_MASK;
    if (index == 0 || index > self->slots_len)
        return false;
    uint32_t slot = (uint32_t)(index - 1);
    if (self->slots[slot].entry.id != id)
        return false;
    timer_heap_remove_at(self, self->slots[slot].heap_pos);
    timer_heap_release(self, slot);
    return true;
}

const timer_heap_entry_t *timer_heap_peek(const timer_heap_t *self) {
    assert(self);
    return self->heap_len ? &self->slots[self->heap[0]].entry : NULL;
}

bool timer_heap_pop(timer_heap_t *self, timer_heap_entry_t *out) {
    assert(self && out);
    if (!self->heap_len)
        return false;
    uint32_t slot = self->heap[0];
    *out = self->slots[slot].entry;
    timer_heap_remove_at(self, 0);
    timer_heap_release(self, slot);
    return true;
}
