/* A small event loop in the manner of redis `ae`: file descriptors and timers on one epoll
 * (timers through one timerfd). Callbacks carry one user pointer. One loop per thread: the
 * worker's (curl sockets, ZeroMQ, schedules) and the mock's (connections and emissions). */
#ifndef STAMPEDE_LOOP_H
#define STAMPEDE_LOOP_H

#include <stdint.h>

#define LOOP_READABLE 1
#define LOOP_WRITABLE 2

typedef struct loop loop_t;
/* mask: LOOP_READABLE | LOOP_WRITABLE as reported by epoll (errors/hangups report both). */
typedef void (*loop_fd_fn)(loop_t *loop, int fd, int mask, void *arg);
typedef void (*loop_timer_fn)(loop_t *loop, uint64_t timer_id, void *arg);
typedef void (*loop_hook_fn)(loop_t *loop, void *arg);

/* A new loop, or NULL (errno set); the caller destroys it. */
loop_t *loop_new(void);
/* A loop on virtual time, for the simulator (sim/): no descriptors (loop_watch fails with
 * ENOTSUP) and no system clock. Its clock starts at start_ns and jumps to each timer's deadline
 * as loop_run fires it, and loop_run returns once no timer is left. While it lives, loop_now_ns()
 * on the creating thread reads that clock, so code written for a real loop (the worker's session
 * executor, the controller's run) runs unchanged in virtual time. One per thread at a time: NULL
 * (errno EBUSY) when the thread has one already, or (ENOMEM) out of memory. */
loop_t *loop_new_virtual(int64_t start_ns);
/* Closes the loop's own descriptors (not the watched ones), frees it, sets *self_p to NULL. */
void loop_destroy(loop_t **self_p);
/* Registers or changes the interest in fd (level-triggered unless edge is set); mask 0 keeps
 * the fd registered but reports only errors. 0 ok, -1 errno. */
int loop_watch(loop_t *self, int fd, int mask, int edge, loop_fd_fn fn, void *arg);
/* Forgets fd (call it before closing fd); events already queued for it are dropped. */
void loop_unwatch(loop_t *self, int fd);
/* One-shot timer at an absolute CLOCK_MONOTONIC instant; returns an id > 0 (never reused), or
 * 0 when out of memory. */
uint64_t loop_timer_at(loop_t *self, int64_t when_ns, loop_timer_fn fn, void *arg);
/* Cancelling an id that already fired or was cancelled (or 0) is harmless. */
void loop_timer_cancel(loop_t *self, uint64_t timer_id);
/* Runs fn(loop, arg) once per turn, after the turn's events and timers and before the loop
 * waits again (redis' beforesleep); NULL removes it. */
void loop_before_sleep(loop_t *self, loop_hook_fn fn, void *arg);
/* Runs until loop_stop (a virtual loop: also until no timer is left): 0, or -1 (errno set) when
 * epoll_wait fails. */
int loop_run(loop_t *self);
/* One turn without waiting: the due timers and the events already there, for a loop embedded in
 * another one's poll (the controller's). 0, or -1 (errno set) when epoll_wait fails. */
int loop_run_once(loop_t *self);
/* A descriptor readable while the loop has events or a due timer, to poll from outside; a timer
 * set outside a turn counts from the next loop_run_once. */
int loop_fd(const loop_t *self);
/* Makes loop_run return at the end of the current turn. */
void loop_stop(loop_t *self);
/* CLOCK_MONOTONIC now, in ns: stampede's one monotonic clock (the virtual loop's clock on a
 * thread that has one). */
int64_t loop_now_ns(void);
/* The clock as the loop last read it, firing timers or arming its timerfd (no syscall): inside a
 * timer callback, at most 64 timers' work behind loop_now_ns(). */
int64_t loop_time_ns(const loop_t *self);

#endif
