/* The worker's event loop: fd watches in a table indexed by fd (O(1) per event) and one-shot
 * timers in a binary heap (O(log n)) behind one timerfd armed to the earliest deadline. */
#define _GNU_SOURCE
#include "loop.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define LOOP_BATCH 512
#define LOOP_SLOT_BITS 32
#define LOOP_SLOT_MASK ((UINT64_C(1) << LOOP_SLOT_BITS) - 1)

typedef struct loop_watch_entry {
    loop_fd_fn fn;
    void *arg;
    uint32_t generation; /* bumped per new watch, so events queued for an old one are dropped */
    int mask;
    bool active;
    bool edge;
    bool in_epoll;
} loop_watch_entry_t;

typedef struct loop_timer_slot {
    int64_t when_ns;
    loop_timer_fn fn;
    void *arg;
    uint64_t id;       /* 0 when the slot is free */
    uint64_t pass;     /* the firing pass during which it was armed */
    uint64_t seq;      /* arming order, so equal deadlines fire first-armed first */
    uint32_t heap_pos; /* index in heap while armed */
    uint32_t generation;
    uint32_t next_free;
} loop_timer_slot_t;

struct loop {
    int epoll_fd;
    int timer_fd;
    bool stopping;

    loop_watch_entry_t *watches; /* indexed by fd */
    int watches_len;

    loop_timer_slot_t *slots;
    uint32_t slots_len;
    uint32_t slots_cap;
    uint32_t free_head; /* UINT32_MAX when empty */
    uint32_t *heap;     /* slot indices ordered by (when_ns, seq) */
    uint32_t heap_len;
    uint64_t seq;
    int64_t armed_ns; /* what timer_fd is set to; 0 = disarmed */
    uint64_t pass;
};

int64_t loop_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

loop_t *loop_new(void) {
    loop_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->free_head = UINT32_MAX;
    self->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    self->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (self->epoll_fd < 0 || self->timer_fd < 0)
        goto fail;
    /* The timerfd is told apart from watched fds by an all-ones tag no watch can carry. */
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (epoll_ctl(self->epoll_fd, EPOLL_CTL_ADD, self->timer_fd, &ev) < 0)
        goto fail;
    return self;
fail:
    if (self->epoll_fd >= 0)
        close(self->epoll_fd);
    if (self->timer_fd >= 0)
        close(self->timer_fd);
    free(self);
    return NULL;
}

void loop_destroy(loop_t **self_p) {
    assert(self_p);
    loop_t *self = *self_p;
    if (!self)
        return;
    close(self->epoll_fd);
    close(self->timer_fd);
    free(self->watches);
    free(self->slots);
    free(self->heap);
    free(self);
    *self_p = NULL;
}

static int loop_grow_watches(loop_t *self, int fd) {
    if (fd < self->watches_len)
        return 0;
    int len = self->watches_len ? self->watches_len : 64;
    while (len <= fd)
        len *= 2;
    loop_watch_entry_t *grown = realloc(self->watches, (size_t)len * sizeof(*grown));
    if (!grown)
        return -1;
    memset(grown + self->watches_len, 0, (size_t)(len - self->watches_len) * sizeof(*grown));
    self->watches = grown;
    self->watches_len = len;
    return 0;
}

static uint32_t loop_epoll_events(int mask, bool edge) {
    uint32_t events = 0;
    if (mask & LOOP_READABLE)
        events |= EPOLLIN;
    if (mask & LOOP_WRITABLE)
        events |= EPOLLOUT;
    if (edge)
        events |= EPOLLET;
    return events;
}

int loop_watch(loop_t *self, int fd, int mask, int edge, loop_fd_fn fn, void *arg) {
    assert(self && fd >= 0 && fn);
    if (loop_grow_watches(self, fd) < 0) {
        errno = ENOMEM;
        return -1;
    }
    loop_watch_entry_t *w = &self->watches[fd];
    if (!w->active)
        w->generation++;
    struct epoll_event ev = {.events = loop_epoll_events(mask, edge),
                             .data.u64 = ((uint64_t)w->generation << 32) | (uint32_t)fd};
    int op = w->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int rc = epoll_ctl(self->epoll_fd, op, fd, &ev);
    /* A closed-and-reopened fd number leaves the kernel and our table disagreeing; follow the
     * kernel. */
    if (rc < 0 && errno == ENOENT && op == EPOLL_CTL_MOD)
        rc = epoll_ctl(self->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    else if (rc < 0 && errno == EEXIST && op == EPOLL_CTL_ADD)
        rc = epoll_ctl(self->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
    if (rc < 0) {
        w->active = false;
        w->in_epoll = false;
        return -1;
    }
    w->fn = fn;
    w->arg = arg;
    w->mask = mask;
    w->edge = edge != 0;
    w->active = true;
    w->in_epoll = true;
    return 0;
}

void loop_unwatch(loop_t *self, int fd) {
    assert(self);
    if (fd < 0 || fd >= self->watches_len || !self->watches[fd].active)
        return;
    loop_watch_entry_t *w = &self->watches[fd];
    /* The fd may already be closed (then the kernel dropped it); either way it is gone. */
    epoll_ctl(self->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
    w->active = false;
    w->in_epoll = false;
    w->fn = NULL;
    w->arg = NULL;
}

static bool loop_timer_before(const loop_t *self, uint32_t a, uint32_t b) {
    const loop_timer_slot_t *x = &self->slots[a], *y = &self->slots[b];
    return x->when_ns < y->when_ns || (x->when_ns == y->when_ns && x->seq < y->seq);
}

static void loop_heap_set(loop_t *self, uint32_t pos, uint32_t slot) {
    self->heap[pos] = slot;
    self->slots[slot].heap_pos = pos;
}

static void loop_heap_up(loop_t *self, uint32_t pos) {
    uint32_t slot = self->heap[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!loop_timer_before(self, slot, self->heap[parent]))
            break;
        loop_heap_set(self, pos, self->heap[parent]);
        pos = parent;
    }
    loop_heap_set(self, pos, slot);
}

static void loop_heap_down(loop_t *self, uint32_t pos) {
    uint32_t slot = self->heap[pos];
    for (;;) {
        uint32_t child = 2 * pos + 1;
        if (child >= self->heap_len)
            break;
        if (child + 1 < self->heap_len &&
            loop_timer_before(self, self->heap[child + 1], self->heap[child]))
            child++;
        if (!loop_timer_before(self, self->heap[child], slot))
            break;
        loop_heap_set(self, pos, self->heap[child]);
        pos = child;
    }
    loop_heap_set(self, pos, slot);
}

static void loop_heap_remove(loop_t *self, uint32_t pos) {
    uint32_t last = self->heap[--self->heap_len];
    if (pos == self->heap_len)
        return;
    loop_heap_set(self, pos, last);
    if (pos > 0 && loop_timer_before(self, last, self->heap[(pos - 1) / 2]))
        loop_heap_up(self, pos);
    else
        loop_heap_down(self, pos);
}

/* A slot whose generation would wrap is retired for good, so that ids are never reused. */
static void loop_slot_release(loop_t *self, uint32_t slot) {
    loop_timer_slot_t *s = &self->slots[slot];
    s->id = 0;
    s->fn = NULL;
    s->arg = NULL;
    if (s->generation == UINT32_MAX)
        return;
    s->next_free = self->free_head;
    self->free_head = slot;
}

static int loop_slot_take(loop_t *self, uint32_t *slot_out) {
    if (self->free_head != UINT32_MAX) {
        *slot_out = self->free_head;
        self->free_head = self->slots[*slot_out].next_free;
        return 0;
    }
    if (self->slots_len == self->slots_cap) {
        uint32_t cap = self->slots_cap ? self->slots_cap * 2 : 64;
        loop_timer_slot_t *slots = realloc(self->slots, cap * sizeof(*slots));
        if (!slots)
            return -1;
        self->slots = slots;
        uint32_t *heap = realloc(self->heap, cap * sizeof(*heap));
        if (!heap)
            return -1;
        self->heap = heap;
        self->slots_cap = cap;
    }
    *slot_out = self->slots_len++;
    memset(&self->slots[*slot_out], 0, sizeof(self->slots[0]));
    return 0;
}

uint64_t loop_timer_at(loop_t *self, int64_t when_ns, loop_timer_fn fn, void *arg) {
    assert(self && fn);
    uint32_t slot;
    if (loop_slot_take(self, &slot) < 0)
        return 0;
    loop_timer_slot_t *s = &self->slots[slot];
    s->generation++;
    s->id = ((uint64_t)s->generation << LOOP_SLOT_BITS) | ((uint64_t)slot + 1);
    s->when_ns = when_ns;
    s->fn = fn;
    s->arg = arg;
    s->pass = self->pass;
    s->seq = ++self->seq;
    self->heap[self->heap_len] = slot;
    s->heap_pos = self->heap_len++;
    loop_heap_up(self, s->heap_pos);
    return s->id;
}

void loop_timer_cancel(loop_t *self, uint64_t timer_id) {
    assert(self);
    uint64_t index = timer_id & LOOP_SLOT_MASK;
    if (index == 0 || index > self->slots_len)
        return;
    uint32_t slot = (uint32_t)(index - 1);
    if (self->slots[slot].id != timer_id)
        return;
    loop_heap_remove(self, self->slots[slot].heap_pos);
    loop_slot_release(self, slot);
}

/* The epoll_wait timeout: 0 when a timer is already due (curl asks for "now" on every new
 * transfer, and that needs no syscall), else -1 with the timerfd pointed at the earliest
 * deadline, which costs a syscall only when that deadline moved. */
static int loop_arm(loop_t *self) {
    if (self->heap_len && self->slots[self->heap[0]].when_ns <= loop_now_ns())
        return 0;
    int64_t want = self->heap_len ? self->slots[self->heap[0]].when_ns : 0;
    if (want != 0 && want < 1)
        want = 1; /* 0 would disarm the timerfd */
    if (want == self->armed_ns)
        return -1;
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = want / 1000000000;
    spec.it_value.tv_nsec = want % 1000000000;
    timerfd_settime(self->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
    self->armed_ns = want;
    return -1;
}

/* Fires due timers. Timers armed during this pass wait for the next one, so a callback that
 * re-arms at "now" cannot keep the loop here forever. */
static void loop_fire_timers(loop_t *self) {
    if (!self->heap_len)
        return;
    uint64_t pass = ++self->pass;
    int64_t now = loop_now_ns();
    while (self->heap_len && !self->stopping) {
        uint32_t slot = self->heap[0];
        loop_timer_slot_t *s = &self->slots[slot];
        if (s->when_ns > now || s->pass >= pass)
            break;
        loop_timer_fn fn = s->fn;
        void *arg = s->arg;
        uint64_t id = s->id;
        loop_heap_remove(self, 0);
        loop_slot_release(self, slot);
        fn(self, id, arg);
    }
}

static void loop_dispatch(loop_t *self, const struct epoll_event *ev) {
    int fd = (int)(uint32_t)ev->data.u64;
    uint32_t generation = (uint32_t)(ev->data.u64 >> 32);
    if (fd >= self->watches_len)
        return;
    loop_watch_entry_t *w = &self->watches[fd];
    /* Unwatched (or replaced) by an earlier callback of this batch: the event is stale. */
    if (!w->active || w->generation != generation)
        return;
    int mask = 0;
    if (ev->events & EPOLLIN)
        mask |= LOOP_READABLE;
    if (ev->events & EPOLLOUT)
        mask |= LOOP_WRITABLE;
    if (ev->events & (EPOLLERR | EPOLLHUP))
        mask |= LOOP_READABLE | LOOP_WRITABLE;
    w->fn(self, fd, mask, w->arg);
}

static void loop_drain_timerfd(loop_t *self) {
    uint64_t expirations;
    while (read(self->timer_fd, &expirations, sizeof(expirations)) > 0)
        ;
    self->armed_ns = 0; /* a one-shot absolute timer that fired is disarmed */
}

void loop_run(loop_t *self) {
    assert(self);
    struct epoll_event events[LOOP_BATCH];
    self->stopping = false;
    while (!self->stopping) {
        int timeout = loop_arm(self);
        int n = epoll_wait(self->epoll_fd, events, LOOP_BATCH, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        /* The whole batch is delivered even after loop_stop: an edge-triggered event dropped
         * here would never be reported again. */
        for (int i = 0; i < n; i++) {
            if (events[i].data.u64 == UINT64_MAX)
                loop_drain_timerfd(self);
            else
                loop_dispatch(self, &events[i]);
        }
        loop_fire_timers(self);
    }
}

void loop_stop(loop_t *self) {
    assert(self);
    self->stopping = true;
}
