#include "mock_timer_heap.h"

#include <stdlib.h>

void mock_timer_heap_init(mock_timer_heap_t *self) {
    self->items = NULL;
    self->len = self->cap = 0;
    self->next_sequence = 0;
}

void mock_timer_heap_clear(mock_timer_heap_t *self) {
    for (uint32_t i = 0; i < self->len; i++)
        self->items[i]->heap_index = 0;
    free(self->items);
    mock_timer_heap_init(self);
}

static bool mock_timer_before(const mock_timer_t *a, const mock_timer_t *b) {
    return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->sequence < b->sequence);
}

static void mock_timer_heap_place(mock_timer_heap_t *self, uint32_t i, mock_timer_t *timer) {
    self->items[i] = timer;
    timer->heap_index = i + 1;
}

static void mock_timer_heap_sift_up(mock_timer_heap_t *self, uint32_t i) {
    mock_timer_t *timer = self->items[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!mock_timer_before(timer, self->items[parent]))
            break;
        mock_timer_heap_place(self, i, self->items[parent]);
        i = parent;
    }
    mock_timer_heap_place(self, i, timer);
}

static void mock_timer_heap_sift_down(mock_timer_heap_t *self, uint32_t i) {
    mock_timer_t *timer = self->items[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= self->len)
            break;
        if (child + 1 < self->len && mock_timer_before(self->items[child + 1], self->items[child]))
            child++;
        if (!mock_timer_before(self->items[child], timer))
            break;
        mock_timer_heap_place(self, i, self->items[child]);
        i = child;
    }
    mock_timer_heap_place(self, i, timer);
}

int mock_timer_heap_schedule(mock_timer_heap_t *self, mock_timer_t *timer, int64_t due_ns) {
    timer->sequence = self->next_sequence++;
    if (timer->heap_index) {
        int64_t old = timer->due_ns;
        timer->due_ns = due_ns;
        if (due_ns < old)
            mock_timer_heap_sift_up(self, timer->heap_index - 1);
        else
            mock_timer_heap_sift_down(self, timer->heap_index - 1);
        return 0;
    }
    if (self->len == self->cap) {
        uint32_t cap = self->cap ? self->cap * 2 : 64;
        mock_timer_t **items = realloc(self->items, cap * sizeof(*items));
        if (!items)
            return -1;
        self->items = items;
        self->cap = cap;
    }
    timer->due_ns = due_ns;
    self->items[self->len] = timer;
    timer->heap_index = ++self->len;
    mock_timer_heap_sift_up(self, self->len - 1);
    return 0;
}

void mock_timer_heap_cancel(mock_timer_heap_t *self, mock_timer_t *timer) {
    if (!timer->heap_index)
        return;
    uint32_t i = timer->heap_index - 1;
    timer->heap_index = 0;
    self->len--;
    if (i == self->len)
        return;
    mock_timer_t *last = self->items[self->len];
    mock_timer_heap_place(self, i, last);
    if (i > 0 && mock_timer_before(last, self->items[(i - 1) / 2]))
        mock_timer_heap_sift_up(self, i);
    else
        mock_timer_heap_sift_down(self, i);
}

mock_timer_t *mock_timer_heap_peek(const mock_timer_heap_t *self) {
    return self->len ? self->items[0] : NULL;
}

mock_timer_t *mock_timer_heap_pop(mock_timer_heap_t *self) {
    mock_timer_t *top = mock_timer_heap_peek(self);
    if (top)
        mock_timer_heap_cancel(self, top);
    return top;
}
