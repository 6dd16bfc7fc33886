/* The event loop: fd watches in a table indexed by fd (O(1) per event) and one-shot timers in
 * common/timer_heap behind one timerfd. The timerfd is watched edge-triggered and never read:
 * re-arming it clears its expiry count, so a timer wake-up costs no read syscall. */
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

#include "buffer.h"
#include "timer_heap.h"

#define LOOP_BATCH 512
/* Timers run at most this long between socket turns: a loop behind schedule would otherwise
 * find timers due for ever and starve its sockets. */
#define LOOP_TIMER_BUDGET_NS 1000000
/* The clock is read again after this many timers fired on one reading. */
#define LOOP_TIMERS_PER_CLOCK_READ 64
/* The epoll tag of the timerfd, one no watch can carry (a watch is generation << 32 | fd). */
#define LOOP_TIMER_TAG UINT64_MAX

typedef struct loop_watch_entry {
    loop_fd_fn fn;
    void *arg;
    uint32_t generation; /* bumped per new watch, so events queued for an old one are dropped */
    bool active;         /* watched, and so in the epoll set */
} loop_watch_entry_t;

struct loop {
    int epoll_fd;
    int timer_fd;
    bool stopping;

    loop_watch_entry_t *watches; /* indexed by fd */
    size_t watches_len;

    timer_heap_t timers;
    int64_t armed_ns; /* the timerfd's pending deadline; 0 = none (fired or never armed) */
    int64_t now_ns;   /* the clock as the loop last read it (a timer pass, or loop_arm) */

    loop_hook_fn before_sleep;
    void *before_sleep_arg;
    bool virtual_time; /* loop_new_virtual's: no descriptors, now_ns jumps from timer to timer */
};

/* The thread's virtual loop, whose clock loop_now_ns reads instead of the system's. */
static __thread loop_t *loop_virtual;

int64_t loop_now_ns(void) {
    if (loop_virtual)
        return loop_virtual->now_ns;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t loop_time_ns(const loop_t *self) {
    assert(self);
    return self->now_ns;
}

loop_t *loop_new(void) {
    loop_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    self->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    timer_heap_init(&self->timers);
    self->now_ns = loop_now_ns();
    if (self->epoll_fd < 0 || self->timer_fd < 0)
        goto fail;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = LOOP_TIMER_TAG};
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

loop_t *loop_new_virtual(int64_t start_ns) {
    if (loop_virtual) {
        errno = EBUSY;
        return NULL;
    }
    loop_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->epoll_fd = self->timer_fd = -1;
    self->virtual_time = true;
    self->now_ns = start_ns;
    timer_heap_init(&self->timers);
    loop_virtual = self;
    return self;
}

void loop_destroy(loop_t **self_p) {
    assert(self_p);
    loop_t *self = *self_p;
    if (!self)
        return;
    if (loop_virtual == self)
        loop_virtual = NULL;
    if (!self->virtual_time) {
        close(self->epoll_fd);
        close(self->timer_fd);
    }
    free(self->watches);
    timer_heap_clear(&self->timers);
    free(self);
    *self_p = NULL;
}

static int loop_grow_watches(loop_t *self, int fd) {
    size_t need = (size_t)fd + 1;
    return buffer_grow_array(&self->watches, &self->watches_len, need < 64 ? 64 : need,
                             sizeof(*self->watches));
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
    if (self->virtual_time) { /* no descriptor can wait on virtual time */
        errno = ENOTSUP;
        return -1;
    }
    if (loop_grow_watches(self, fd) < 0) {
        errno = ENOMEM;
        return -1;
    }
    loop_watch_entry_t *w = &self->watches[fd];
    if (!w->active)
        w->generation++;
    struct epoll_event ev = {.events = loop_epoll_events(mask, edge),
                             .data.u64 = ((uint64_t)w->generation << 32) | (uint32_t)fd};
    int op = w->active ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int rc = epoll_ctl(self->epoll_fd, op, fd, &ev);
    /* A closed-and-reopened fd number leaves the kernel and our table disagreeing; follow the
     * kernel. */
    if (rc < 0 && errno == ENOENT && op == EPOLL_CTL_MOD)
        rc = epoll_ctl(self->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    else if (rc < 0 && errno == EEXIST && op == EPOLL_CTL_ADD)
        rc = epoll_ctl(self->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
    if (rc < 0) {
        w->active = false;
        return -1;
    }
    w->fn = fn;
    w->arg = arg;
    w->active = true;
    return 0;
}

void loop_unwatch(loop_t *self, int fd) {
    assert(self);
    if (self->virtual_time || fd < 0 || (size_t)fd >= self->watches_len ||
        !self->watches[fd].active)
        return;
    loop_watch_entry_t *w = &self->watches[fd];
    /* The fd may already be closed (then the kernel dropped it); either way it is gone. */
    epoll_ctl(self->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
    w->active = false;
    w->fn = NULL;
    w->arg = NULL;
}

uint64_t loop_timer_at(loop_t *self, int64_t when_ns, loop_timer_fn fn, void *arg) {
    assert(self && fn);
    return timer_heap_add(&self->timers, when_ns, (timer_heap_fn)fn, arg);
}

void loop_timer_cancel(loop_t *self, uint64_t timer_id) {
    assert(self);
    timer_heap_cancel(&self->timers, timer_id);
}

void loop_before_sleep(loop_t *self, loop_hook_fn fn, void *arg) {
    assert(self);
    self->before_sleep = fn;
    self->before_sleep_arg = arg;
}

/* The epoll_wait timeout: 0 when a timer is already due (curl asks for "now" on every new
 * transfer, and that needs no syscall), else -1 with the timerfd armed no later than the
 * earliest deadline. An armed deadline still ahead and no later than the earliest is kept
 * (waking early only costs a turn), so cancelling and re-arming later costs no syscall. */
static int loop_arm(loop_t *self) {
    const timer_heap_entry_t *top = timer_heap_peek(&self->timers);
    if (!top)
        return -1;
    /* The clock is read only when the answer depends on it: a deadline the last timer pass's
     * reading already passed is due, and one the armed timerfd covers waits for it (the timerfd
     * fires at once for a deadline that has passed since). */
    if (top->when_ns <= self->now_ns)
        return 0;
    if (self->armed_ns != 0 && self->armed_ns <= top->when_ns)
        return -1;
    self->now_ns = loop_now_ns();
    if (top->when_ns <= self->now_ns)
        return 0;
    int64_t due = top->when_ns > 0 ? top->when_ns : 1; /* 0 would disarm */
    struct itimerspec spec = {
        .it_value = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000}};
    timerfd_settime(self->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
    self->armed_ns = due;
    return -1;
}

/* Fires due timers, for at most LOOP_TIMER_BUDGET_NS (then loop_arm finds one due and the next
 * turn comes straight back). Timers armed during this pass wait for the next one, so a callback
 * that re-arms at "now" cannot keep the loop here forever. */
static void loop_fire_timers(loop_t *self) {
    if (!timer_heap_len(&self->timers))
        return;
    uint64_t last_seq = timer_heap_last_seq(&self->timers);
    int64_t now = self->now_ns = loop_now_ns(), stop = now + LOOP_TIMER_BUDGET_NS;
    const timer_heap_entry_t *top;
    for (uint32_t n = 1; !self->stopping && (top = timer_heap_peek(&self->timers)); n++) {
        if (top->seq > last_seq)
            break;
        if (top->when_ns > now || n % LOOP_TIMERS_PER_CLOCK_READ == 0) {
            if (n > 1) /* timers fired since the reading above: read again before stopping */
                now = self->now_ns = loop_now_ns();
            if (top->when_ns > now || now >= stop)
                break;
        }
        timer_heap_entry_t due;
        timer_heap_pop(&self->timers, &due);
        ((loop_timer_fn)due.fn)(self, due.id, due.arg);
    }
}

static void loop_dispatch(loop_t *self, const struct epoll_event *ev) {
    int fd = (int)(uint32_t)ev->data.u64;
    uint32_t generation = (uint32_t)(ev->data.u64 >> 32);
    if ((size_t)fd >= self->watches_len)
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

/* One turn: wait for events (up to the next timer when block, not at all otherwise), fire the
 * due timers, deliver the events, run the before-sleep hook. 0, or -1 when epoll_wait fails. */
static int loop_turn(loop_t *self, bool block) {
    struct epoll_event events[LOOP_BATCH];
    int timeout = loop_arm(self);
    int n = epoll_wait(self->epoll_fd, events, LOOP_BATCH, block ? timeout : 0);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    loop_fire_timers(self); /* first: they are the ones on a deadline */
    /* The whole batch is delivered even after loop_stop: an edge-triggered event dropped
     * here would never be reported again. */
    for (int i = 0; i < n; i++) {
        if (events[i].data.u64 == LOOP_TIMER_TAG)
            self->armed_ns = 0; /* expired: nothing is armed any more */
        else
            loop_dispatch(self, &events[i]);
    }
    loop_fire_timers(self);
    if (self->before_sleep)
        self->before_sleep(self, self->before_sleep_arg);
    return 0;
}

/* One turn of a virtual loop: the clock jumps to the earliest timer (never back), which fires,
 * then the before-sleep hook runs. false when no timer is left: nothing can happen any more. */
static bool loop_virtual_turn(loop_t *self) {
    timer_heap_entry_t due;
    if (!timer_heap_pop(&self->timers, &due))
        return false;
    if (due.when_ns > self->now_ns)
        self->now_ns = due.when_ns;
    ((loop_timer_fn)due.fn)(self, due.id, due.arg);
    if (self->before_sleep)
        self->before_sleep(self, self->before_sleep_arg);
    return true;
}

int loop_run(loop_t *self) {
    assert(self);
    self->stopping = false;
    if (self->virtual_time) {
        while (!self->stopping && loop_virtual_turn(self))
            ;
        return 0;
    }
    while (!self->stopping)
        if (loop_turn(self, true) < 0)
            return -1;
    return 0;
}

int loop_run_once(loop_t *self) {
    assert(self);
    self->stopping = false;
    if (self->virtual_time) {
        loop_virtual_turn(self);
        return 0;
    }
    int rc = loop_turn(self, false);
    /* The next timer wakes a poll on loop_fd; one already due, at once (an expired instant). */
    if (loop_arm(self) == 0) {
        struct itimerspec spec = {.it_value = {.tv_sec = 0, .tv_nsec = 1}};
        timerfd_settime(self->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
        self->armed_ns = 1;
    }
    return rc;
}

int loop_fd(const loop_t *self) {
    assert(self);
    return self->epoll_fd;
}

void loop_stop(loop_t *self) {
    assert(self);
    self->stopping = true;
}
