/* common/loop: timers in deadline order, cancellation, fd callbacks (level and edge),
 * unwatching and cancelling from inside callbacks, the before-sleep hook, the timer budget
 * that lets sockets in, and the cached clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit_main.h"

#include "loop.h"

#define MS 1000000LL

typedef struct fired {
    int64_t at[20000];
    uint64_t ids[20000];
    int n;
} fired_t;

static void record_fire(loop_t *loop, uint64_t id, void *arg) {
    fired_t *f = arg;
    f->ids[f->n] = id;
    f->at[f->n] = loop_now_ns();
    f->n++;
}

static void stop_loop(loop_t *loop, uint64_t id, void *arg) {
    loop_stop(loop);
}

static void watchdog_fired(loop_t *loop, uint64_t id, void *arg) {
    *(int *)arg = 1;
    loop_stop(loop);
}

/* Runs the loop with a watchdog so a broken loop fails the test instead of hanging it. */
static void run_bounded(loop_t *loop, int64_t limit_ns) {
    int expired = 0;
    uint64_t dog = loop_timer_at(loop, loop_now_ns() + limit_ns, watchdog_fired, &expired);
    assert_int_equal(loop_run(loop), 0);
    loop_timer_cancel(loop, dog);
    assert_int_equal(expired, 0);
}

/* Runs the loop for ms milliseconds (bounded by the watchdog). */
static void run_for_ms(loop_t *loop, int64_t ms) {
    loop_timer_at(loop, loop_now_ns() + ms * MS, stop_loop, NULL);
    run_bounded(loop, 5000 * MS);
}

/* A non-blocking pipe; close_pipe closes both ends. */
static void open_pipe(int fds[2]) {
    assert_int_equal(pipe2(fds, O_NONBLOCK), 0);
}

static void close_pipe(int fds[2]) {
    close(fds[0]);
    close(fds[1]);
}

/* A loop and a pipe (fds[0] the read end), for the fd tests. */
typedef struct piped_loop {
    loop_t *loop;
    int fds[2];
} piped_loop_t;

static piped_loop_t piped_loop_new(void) {
    piped_loop_t p = {.loop = loop_new()};
    assert_non_null(p.loop);
    open_pipe(p.fds);
    return p;
}

static void piped_loop_free(piped_loop_t *p) {
    close_pipe(p->fds);
    loop_destroy(&p->loop);
}

static void test_loop_timers_fire_in_deadline_order_and_not_early(void **state) {
    loop_t *loop = loop_new();
    assert_non_null(loop);
    static fired_t fired;
    fired.n = 0;
    int64_t base = loop_now_ns() + 20 * MS;
    /* A scrambled order of 50 deadlines 1 ms apart (37 is coprime to 50). */
    for (int i = 0; i < 50; i++) {
        int k = (i * 37) % 50;
        uint64_t id = loop_timer_at(loop, base + k * MS, record_fire, &fired);
        assert_true(id > 0);
    }
    loop_timer_at(loop, base + 60 * MS, stop_loop, NULL);
    run_bounded(loop, 5000 * MS);
    assert_int_equal(fired.n, 50);
    for (int i = 1; i < 50; i++)
        assert_true(fired.at[i] >= fired.at[i - 1]);
    /* The i-th to fire has deadline base + i ms and must not fire before it. */
    for (int i = 0; i < 50; i++)
        assert_true(fired.at[i] >= base + i * MS);
    loop_destroy(&loop);
    assert_null(loop);
}

static void test_loop_ten_thousand_random_timers_fire_sorted(void **state) {
    loop_t *loop = loop_new();
    static fired_t fired;
    fired.n = 0;
    int64_t base = loop_now_ns();
    static int64_t deadline_of_slot[10000];
    static uint64_t ids[10000];
    srand(7);
    for (int i = 0; i < 10000; i++) {
        deadline_of_slot[i] = base + (rand() % 50000) * 1000LL; /* within 50 ms */
        ids[i] = loop_timer_at(loop, deadline_of_slot[i], record_fire, &fired);
    }
    /* Cancel every third one. */
    int cancelled = 0;
    for (int i = 0; i < 10000; i += 3) {
        loop_timer_cancel(loop, ids[i]);
        cancelled++;
    }
    loop_timer_at(loop, base + 80 * MS, stop_loop, NULL);
    run_bounded(loop, 5000 * MS);
    assert_int_equal(fired.n, 10000 - cancelled);
    /* Map ids back to deadlines and check the firing order is by deadline. */
    int64_t prev = 0;
    for (int k = 0; k < fired.n; k++) {
        int64_t deadline = -1;
        for (int i = 0; i < 10000; i++) {
            if (ids[i] == fired.ids[k]) {
                assert_true(i % 3 != 0);
                deadline = deadline_of_slot[i];
                break;
            }
        }
        assert_true(deadline >= 0);
        assert_true(deadline >= prev);
        assert_true(fired.at[k] >= deadline);
        prev = deadline;
    }
    loop_destroy(&loop);
}

static void test_loop_cancelled_timer_never_fires_and_stale_cancel_is_harmless(void **state) {
    loop_t *loop = loop_new();
    static fired_t fired;
    fired.n = 0;
    int64_t now = loop_now_ns();
    uint64_t a = loop_timer_at(loop, now + 5 * MS, record_fire, &fired);
    uint64_t b = loop_timer_at(loop, now + 10 * MS, record_fire, &fired);
    loop_timer_cancel(loop, b);
    loop_timer_at(loop, now + 30 * MS, stop_loop, NULL);
    run_bounded(loop, 5000 * MS);
    assert_int_equal(fired.n, 1);
    assert_true(fired.ids[0] == a);
    /* a fired, b was cancelled: cancelling either again must not disturb a new timer that
     * may now occupy the same internal slot. */
    uint64_t c = loop_timer_at(loop, loop_now_ns() + 5 * MS, record_fire, &fired);
    assert_true(c != a && c != b);
    loop_timer_cancel(loop, a);
    loop_timer_cancel(loop, b);
    loop_timer_cancel(loop, 0);
    loop_timer_cancel(loop, UINT64_MAX);
    loop_timer_at(loop, loop_now_ns() + 30 * MS, stop_loop, NULL);
    run_bounded(loop, 5000 * MS);
    assert_int_equal(fired.n, 2);
    assert_true(fired.ids[1] == c);
    loop_destroy(&loop);
}

typedef struct cancel_pair {
    loop_t *loop;
    uint64_t other;
    int fired_first;
    int fired_other;
} cancel_pair_t;

static void first_cancels_other(loop_t *loop, uint64_t id, void *arg) {
    cancel_pair_t *p = arg;
    p->fired_first++;
    loop_timer_cancel(loop, p->other);
    loop_timer_cancel(loop, id); /* cancelling oneself while firing is harmless */
}

static void other_fires(loop_t *loop, uint64_t id, void *arg) {
    ((cancel_pair_t *)arg)->fired_other++;
}

static void test_loop_timer_cancelled_from_a_callback_of_the_same_instant(void **state) {
    loop_t *loop = loop_new();
    cancel_pair_t p = {.loop = loop};
    int64_t when = loop_now_ns() + 5 * MS;
    loop_timer_at(loop, when, first_cancels_other, &p);
    p.other = loop_timer_at(loop, when, other_fires, &p);
    loop_timer_at(loop, when + 20 * MS, stop_loop, NULL);
    run_bounded(loop, 5000 * MS);
    assert_int_equal(p.fired_first, 1);
    assert_int_equal(p.fired_other, 0);
    loop_destroy(&loop);
}

typedef struct rearm {
    int count;
    int fd_seen;
} rearm_t;

static void rearm_now(loop_t *loop, uint64_t id, void *arg) {
    rearm_t *r = arg;
    if (++r->count < 1000000 && !r->fd_seen)
        loop_timer_at(loop, 0, rearm_now, r); /* a deadline in the past: fires next pass */
}

static void pipe_seen(loop_t *loop, int fd, int mask, void *arg) {
    rearm_t *r = arg;
    r->fd_seen = 1;
    char buf[16];
    while (read(fd, buf, sizeof(buf)) > 0)
        ;
    loop_stop(loop);
}

static void test_loop_timer_rearming_in_the_past_does_not_starve_fds(void **state) {
    piped_loop_t p = piped_loop_new();
    rearm_t r = {0};
    assert_int_equal(loop_watch(p.loop, p.fds[0], LOOP_READABLE, 0, pipe_seen, &r), 0);
    assert_int_equal(write(p.fds[1], "x", 1), 1);
    loop_timer_at(p.loop, 0, rearm_now, &r);
    run_bounded(p.loop, 5000 * MS);
    assert_int_equal(r.fd_seen, 1);
    assert_true(r.count < 1000);
    piped_loop_free(&p);
}

typedef struct fd_seen {
    int calls;
    int mask;
    void *arg;
    int other_fd;
    int unwatch_other;
} fd_seen_t;

static void count_readable(loop_t *loop, int fd, int mask, void *arg) {
    fd_seen_t *s = arg;
    s->calls++;
    s->mask = mask;
    s->arg = arg;
    if (s->unwatch_other)
        loop_unwatch(loop, s->other_fd);
}

static void test_loop_level_triggered_fd_reports_readable_until_drained(void **state) {
    piped_loop_t p = piped_loop_new();
    fd_seen_t s = {0};
    assert_int_equal(loop_watch(p.loop, p.fds[0], LOOP_READABLE, 0, count_readable, &s), 0);
    run_for_ms(p.loop, 20);
    assert_int_equal(s.calls, 0); /* nothing written yet */
    assert_int_equal(write(p.fds[1], "ab", 2), 2);
    run_for_ms(p.loop, 20);
    /* Never read: level-triggered keeps reporting it, once per loop iteration. */
    assert_true(s.calls > 1);
    assert_int_equal(s.mask & LOOP_READABLE, LOOP_READABLE);
    assert_ptr_equal(s.arg, &s);
    int before = s.calls;
    loop_unwatch(p.loop, p.fds[0]);
    run_for_ms(p.loop, 20);
    assert_int_equal(s.calls, before);
    piped_loop_free(&p);
}

static void test_loop_edge_triggered_fd_reports_once_per_new_data(void **state) {
    piped_loop_t p = piped_loop_new();
    fd_seen_t s = {0};
    assert_int_equal(loop_watch(p.loop, p.fds[0], LOOP_READABLE, 1, count_readable, &s), 0);
    assert_int_equal(write(p.fds[1], "a", 1), 1);
    run_for_ms(p.loop, 20);
    assert_int_equal(s.calls, 1); /* not drained, yet reported once only */
    assert_int_equal(write(p.fds[1], "b", 1), 1);
    run_for_ms(p.loop, 20);
    assert_int_equal(s.calls, 2);
    piped_loop_free(&p);
}

static void test_loop_unwatch_from_a_callback_drops_the_other_fds_pending_event(void **state) {
    piped_loop_t p = piped_loop_new();
    int b[2];
    open_pipe(b);
    /* Both become readable in the same epoll batch; whichever runs first unwatches the
     * other, so exactly one callback runs in total. */
    fd_seen_t sa = {.other_fd = b[0], .unwatch_other = 1};
    fd_seen_t sb = {.other_fd = p.fds[0], .unwatch_other = 1};
    assert_int_equal(loop_watch(p.loop, p.fds[0], LOOP_READABLE, 1, count_readable, &sa), 0);
    assert_int_equal(loop_watch(p.loop, b[0], LOOP_READABLE, 1, count_readable, &sb), 0);
    assert_int_equal(write(p.fds[1], "a", 1), 1);
    assert_int_equal(write(b[1], "b", 1), 1);
    run_for_ms(p.loop, 20);
    assert_int_equal(sa.calls + sb.calls, 1);
    close_pipe(b);
    piped_loop_free(&p);
}

static void test_loop_writable_interest_and_watch_change(void **state) {
    piped_loop_t p = piped_loop_new();
    fd_seen_t s = {0};
    /* An empty pipe's write end is writable at once. */
    assert_int_equal(loop_watch(p.loop, p.fds[1], LOOP_WRITABLE, 1, count_readable, &s), 0);
    run_for_ms(p.loop, 10);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.mask & LOOP_WRITABLE, LOOP_WRITABLE);
    /* Changing the interest to readable-only on the write end: no more events. */
    assert_int_equal(loop_watch(p.loop, p.fds[1], LOOP_READABLE, 1, count_readable, &s), 0);
    run_for_ms(p.loop, 10);
    assert_int_equal(s.calls, 1);
    piped_loop_free(&p);
}

static void test_loop_watch_of_a_bad_fd_fails_with_errno(void **state) {
    loop_t *loop = loop_new();
    fd_seen_t s = {0};
    int fd = dup(0);
    close(fd);
    errno = 0;
    assert_int_equal(loop_watch(loop, fd, LOOP_READABLE, 0, count_readable, &s), -1);
    assert_int_equal(errno, EBADF);
    loop_unwatch(loop, fd); /* harmless */
    loop_destroy(&loop);
}

typedef struct turn_log {
    int fd_calls, hook_calls;
    int fd_calls_when_hook_ran;
} turn_log_t;

static void fd_then_hook_readable(loop_t *loop, int fd, int mask, void *arg) {
    turn_log_t *t = arg;
    char buf[16];
    while (read(fd, buf, sizeof(buf)) > 0)
        ;
    t->fd_calls++;
}

static void hook_stops_once_the_fd_ran(loop_t *loop, void *arg) {
    turn_log_t *t = arg;
    t->hook_calls++;
    if (t->fd_calls && !t->fd_calls_when_hook_ran) {
        t->fd_calls_when_hook_ran = t->fd_calls;
        loop_stop(loop);
    }
}

static void test_loop_before_sleep_runs_after_the_turns_callbacks(void **state) {
    piped_loop_t p = piped_loop_new();
    turn_log_t t = {0};
    loop_before_sleep(p.loop, hook_stops_once_the_fd_ran, &t);
    assert_int_equal(loop_watch(p.loop, p.fds[0], LOOP_READABLE, 0, fd_then_hook_readable, &t), 0);
    assert_int_equal(write(p.fds[1], "x", 1), 1);
    run_bounded(p.loop, 5000 * MS);
    assert_int_equal(t.fd_calls_when_hook_ran, 1); /* the hook saw the turn's fd callback */
    assert_true(t.hook_calls >= 1);
    loop_before_sleep(p.loop, NULL, NULL);
    piped_loop_free(&p);
}

typedef struct busy_timers {
    int fired;
    int fired_when_fd_ran; /* -1 until the fd callback runs */
    int total;
} busy_timers_t;

/* Ten microseconds of work per timer; the last one stops the loop. */
static void busy_timer(loop_t *loop, uint64_t id, void *arg) {
    busy_timers_t *b = arg;
    int64_t until = loop_now_ns() + 10000;
    while (loop_now_ns() < until)
        ;
    if (++b->fired == b->total)
        loop_stop(loop);
}

static void note_fd_turn(loop_t *loop, int fd, int mask, void *arg) {
    busy_timers_t *b = arg;
    if (b->fired_when_fd_ran < 0)
        b->fired_when_fd_ran = b->fired;
    loop_unwatch(loop, fd);
}

static void test_loop_a_backlog_of_due_timers_lets_fds_in_within_the_budget(void **state) {
    piped_loop_t p = piped_loop_new();
    /* 2,000 timers already due hold 20 ms of work; the fd is ready from the start. Without the
     * 1 ms timer budget every one of them would run before the fd's turn. */
    busy_timers_t b = {.fired_when_fd_ran = -1, .total = 2000};
    for (int i = 0; i < b.total; i++)
        assert_true(loop_timer_at(p.loop, 0, busy_timer, &b) > 0);
    assert_int_equal(loop_watch(p.loop, p.fds[0], LOOP_READABLE, 0, note_fd_turn, &b), 0);
    assert_int_equal(write(p.fds[1], "x", 1), 1);
    run_bounded(p.loop, 10000 * MS);
    assert_int_equal(b.fired, b.total);
    assert_true(b.fired_when_fd_ran >= 0);
    assert_true(b.fired_when_fd_ran < b.total / 2);
    piped_loop_free(&p);
}

typedef struct clock_seen {
    int64_t deadline, cached, fresh;
} clock_seen_t;

static void read_both_clocks(loop_t *loop, uint64_t id, void *arg) {
    clock_seen_t *c = arg;
    c->cached = loop_time_ns(loop);
    c->fresh = loop_now_ns();
    loop_stop(loop);
}

static void test_loop_time_in_a_timer_callback_is_past_its_deadline_and_not_ahead(void **state) {
    loop_t *loop = loop_new();
    clock_seen_t c = {.deadline = loop_now_ns() + 5 * MS};
    loop_timer_at(loop, c.deadline, read_both_clocks, &c);
    run_bounded(loop, 5000 * MS);
    assert_true(c.cached >= c.deadline);
    assert_true(c.cached <= c.fresh);
    loop_destroy(&loop);
}

/* A loop polled from outside (the controller's zmq_poll): loop_fd wakes the poll for a timer
 * due later and for one already due, and loop_run_once fires them without waiting. */
static void test_loop_fd_wakes_a_poll_for_due_timers_and_run_once_never_waits(void **state) {
    loop_t *loop = loop_new();
    static fired_t fired;
    fired.n = 0;
    /* 300 ms ahead, and the run-once must return within 200: a wait for the timer would take
     * 300, and a loaded machine's preemption does not take 200 */
    loop_timer_at(loop, loop_now_ns() + 300 * MS, record_fire, &fired);
    int64_t t0 = loop_now_ns();
    assert_int_equal(loop_run_once(loop), 0);
    assert_true(loop_now_ns() - t0 < 200 * MS);
    assert_int_equal(fired.n, 0);
    struct pollfd p = {.fd = loop_fd(loop), .events = POLLIN};
    assert_int_equal(poll(&p, 1, 2000), 1);
    assert_true(loop_now_ns() - t0 >= 299 * MS);
    assert_int_equal(loop_run_once(loop), 0);
    assert_int_equal(fired.n, 1);
    loop_timer_at(loop, 0, record_fire, &fired); /* due already */
    assert_int_equal(loop_run_once(loop), 0);
    assert_int_equal(fired.n, 2);
    /* Timers set outside a turn are known to loop_fd after the next loop_run_once. */
    loop_timer_at(loop, loop_now_ns() + 5 * MS, record_fire, &fired);
    loop_timer_at(loop, loop_now_ns() + 5 * MS, record_fire, &fired);
    assert_int_equal(loop_run_once(loop), 0);
    for (int i = 0; i < 200 && fired.n < 4; i++) {
        assert_int_equal(poll(&p, 1, 2000), 1);
        loop_run_once(loop);
    }
    assert_int_equal(fired.n, 4);
    p.revents = 0;
    assert_int_equal(poll(&p, 1, 50), 0); /* nothing left: the poll sleeps */
    loop_destroy(&loop);
}

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* loop_now_ns is CLOCK_MONOTONIC in ns: over 100,000 calls it never goes back, and each
 * clock_gettime(CLOCK_MONOTONIC) reading taken between two calls lies between them. */
static void test_loop_now_never_decreases_and_brackets_clock_monotonic(void **state) {
    int64_t prev = loop_now_ns();
    size_t back = 0, outside = 0;
    for (int i = 0; i < 100000; i++) {
        int64_t mono = monotonic_ns();
        int64_t now = loop_now_ns();
        if (now < prev)
            back++;
        if (mono < prev || mono > now)
            outside++;
        prev = now;
    }
    assert_int_equal(back, 0);
    assert_int_equal(outside, 0);
}

UNIT_MAIN(cmocka_unit_test(test_loop_timers_fire_in_deadline_order_and_not_early),
          cmocka_unit_test(test_loop_ten_thousand_random_timers_fire_sorted),
          cmocka_unit_test(test_loop_cancelled_timer_never_fires_and_stale_cancel_is_harmless),
          cmocka_unit_test(test_loop_timer_cancelled_from_a_callback_of_the_same_instant),
          cmocka_unit_test(test_loop_timer_rearming_in_the_past_does_not_starve_fds),
          cmocka_unit_test(test_loop_level_triggered_fd_reports_readable_until_drained),
          cmocka_unit_test(test_loop_edge_triggered_fd_reports_once_per_new_data),
          cmocka_unit_test(test_loop_unwatch_from_a_callback_drops_the_other_fds_pending_event),
          cmocka_unit_test(test_loop_writable_interest_and_watch_change),
          cmocka_unit_test(test_loop_watch_of_a_bad_fd_fails_with_errno),
          cmocka_unit_test(test_loop_before_sleep_runs_after_the_turns_callbacks),
          cmocka_unit_test(test_loop_a_backlog_of_due_timers_lets_fds_in_within_the_budget),
          cmocka_unit_test(test_loop_time_in_a_timer_callback_is_past_its_deadline_and_not_ahead),
          cmocka_unit_test(test_loop_fd_wakes_a_poll_for_due_timers_and_run_once_never_waits),
          cmocka_unit_test(test_loop_now_never_decreases_and_brackets_clock_monotonic))
