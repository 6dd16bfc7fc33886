/* A min-heap of one-shot deadlines, each carrying a callback and one user pointer, addressed by
 * ids that are never reused. common/loop keeps its timers here; the mock's virtual-time
 * simulation (mock/mock_sim.c) pops it directly. Entries live in a slot table recycled through
 * a free list, so arming and cancelling allocate nothing once the table has grown. */
#ifndef STAMPEDE_TIMER_HEAP_H
#define STAMPEDE_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The generic callback type an entry carries; its owner casts it back to the real type (C11
 * 6.3.2.3p8), which is why it is the one type -Wcast-function-type leaves alone. */
typedef void (*timer_heap_fn)(void);

/* One armed deadline. */
typedef struct timer_heap_entry {
    int64_t when_ns;
    uint64_t id;  /* > 0 */
    uint64_t seq; /* arming order (from 1): equal deadlines come out first-armed first */
    timer_heap_fn fn;
    void *arg;
} timer_heap_entry_t;

/* Embedded in its owner (a loop, a simulation); the fields are the functions' business. */
typedef struct timer_heap {
    struct timer_heap_slot *slots;
    size_t slots_len, slots_cap;
    uint32_t free_head;
    uint32_t *heap; /* slot indices ordered by (when_ns, seq) */
    size_t heap_len, heap_cap;
    uint64_t seq;
} timer_heap_t;

/* Initialises an empty heap (no allocation). */
void timer_heap_init(timer_heap_t *self);
/* Frees the storage (not what the entries point to); the heap is then empty and usable. */
void timer_heap_clear(timer_heap_t *self);
/* Arms a deadline; returns its id (> 0, never reused), or 0 when out of memory. */
uint64_t timer_heap_add(timer_heap_t *self, int64_t when_ns, timer_heap_fn fn, void *arg);
/* Disarms id; an id that already came out or was cancelled is ignored (false). */
bool timer_heap_cancel(timer_heap_t *self, uint64_t id);
/* The earliest entry (ties: first armed), or NULL when empty; valid until the next change. */
const timer_heap_entry_t *timer_heap_peek(const timer_heap_t *self);
/* Removes the earliest entry into *out; false when empty. */
bool timer_heap_pop(timer_heap_t *self, timer_heap_entry_t *out);
/* Number of armed entries. */
static inline size_t timer_heap_len(const timer_heap_t *self) {
    return self->heap_len;
}
/* The seq of the latest entry armed (0 before the first): entries armed after a reading of it
 * have a larger seq. */
static inline uint64_t timer_heap_last_seq(const timer_heap_t *self) {
    return self->seq;
}

#endif
