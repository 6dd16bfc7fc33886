/* A binary min-heap of due times: the simulated server keeps every pending emission (a stream's
 * next token, the engine's step end, a delayed admission) here and arms one timerfd to the
 * earliest. Timers are embedded in their owners; the heap only holds pointers to them. */
#ifndef STAMPEDE_MOCK_TIMER_HEAP_H
#define STAMPEDE_MOCK_TIMER_HEAP_H

#include <stdbool.h>
#include <stdint.h>

/* One pending deadline, embedded in the object it belongs to (kind tells the owner's type). */
typedef struct mock_timer {
    int64_t due_ns;      /* CLOCK_MONOTONIC deadline */
    uint32_t heap_index; /* 1-based position in the heap; 0 = not scheduled */
    uint32_t kind;       /* free for the owner: which callback to run */
    uint64_t sequence;   /* insertion order, so equal deadlines fire first-come first-served */
} mock_timer_t;

typedef struct mock_timer_heap {
    mock_timer_t **items; /* owned array of borrowed pointers */
    uint32_t len, cap;
    uint64_t next_sequence;
} mock_timer_heap_t;

/* Initialises an empty heap. */
void mock_timer_heap_init(mock_timer_heap_t *self);
/* Frees the array (not the timers). */
void mock_timer_heap_clear(mock_timer_heap_t *self);
/* Schedules timer at due_ns, or moves it there if already scheduled. 0 ok, -1 out of memory. */
int mock_timer_heap_schedule(mock_timer_heap_t *self, mock_timer_t *timer, int64_t due_ns);
/* Unschedules timer if it is scheduled. */
void mock_timer_heap_cancel(mock_timer_heap_t *self, mock_timer_t *timer);
/* The earliest timer, or NULL when empty. */
mock_timer_t *mock_timer_heap_peek(const mock_timer_heap_t *self);
/* Removes and returns the earliest timer, or NULL when empty. */
mock_timer_t *mock_timer_heap_pop(mock_timer_heap_t *self);
/* True when timer is currently scheduled. */
static inline bool mock_timer_scheduled(const mock_timer_t *timer) {
    return timer->heap_index != 0;
}

#endif
