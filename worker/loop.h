/* A small event loop in the manner of redis `ae`: file descriptors and timers on one epoll
 * (timers through one timerfd). Callbacks carry one user pointer. One loop per worker thread. */
#ifndef STAMPEDE_LOOP_H
#define STAMPEDE_LOOP_H

#include <stdint.h>

#define LOOP_READABLE 1
#define LOOP_WRITABLE 2

typedef struct loop loop_t;
/* mask: LOOP_READABLE | LOOP_WRITABLE as reported by epoll (errors/hangups report both). */
typedef void (*loop_fd_fn)(loop_t *loop, int fd, int mask, void *arg);
typedef void (*loop_timer_fn)(loop_t *loop, uint64_t timer_id, void *arg);

loop_t *loop_new(void);
void loop_destroy(loop_t **self_p);
/* Registers or changes the interest in fd (level-triggered unless edge is set). 0 ok, -1 errno. */
int loop_watch(loop_t *self, int fd, int mask, int edge, loop_fd_fn fn, void *arg);
void loop_unwatch(loop_t *self, int fd);
/* One-shot timer at an absolute CLOCK_MONOTONIC instant; returns an id > 0 (never reused). */
uint64_t loop_timer_at(loop_t *self, int64_t when_ns, loop_timer_fn fn, void *arg);
/* Cancelling an id that already fired or was cancelled is harmless. */
void loop_timer_cancel(loop_t *self, uint64_t timer_id);
/* Runs until loop_stop. */
void loop_run(loop_t *self);
void loop_stop(loop_t *self);
/* CLOCK_MONOTONIC now, in ns. */
int64_t loop_now_ns(void);

#endif
