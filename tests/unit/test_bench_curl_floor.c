/* bench/curl_floor.h, the libcurl floor bench_engine compares the engine to, and the server
 * wake-up count both are checked by. The comparison holds only on the same traffic: the floor
 * must start its streams at the engine's instants (a wait rounded up to the millisecond started
 * them late and together, and the mock then wrote their tokens in bunches), and the server's
 * wake-ups over each window must be counted, so a pair whose traffics differ shows it. Checked
 * against `stampede mock` on loopback. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit_main.h"

#include "../../bench/curl_floor.h"
#include "mock_spawn.h"

/* A child that sleeps 20 times, then waits on a pipe: its count is at least 20 while it waits;
 * a process that is gone has none (-1). */
static void test_bench_cpu_sleeps_counts_a_process_s_sleeps(void **state) {
    (void)state;
    int ready[2], release[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(release), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < 20; i++)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        char c = 1;
        if (write(ready[1], &c, 1) != 1 || read(release[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    long sleeps = bench_cpu_sleeps(pid);
    assert_int_equal(write(release[1], &c, 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(sleeps >= 20);
    assert_int_equal(bench_cpu_sleeps(pid), -1); /* reaped: no /proc entry */
    for (int fd = 0; fd < 2; fd++) {
        close(ready[fd]);
        close(release[fd]);
    }
}

/* A wait for 100 µs is never early and, at least once in 50 tries, well under a millisecond: a
 * wait rounded up to the millisecond (epoll_wait's) lasts a millisecond every time. The least of
 * 50 holds on a loaded machine, where single waits run late. Skipped where the kernel has no
 * epoll_pwait2. */
static void test_curl_floor_wait_keeps_the_deadline_to_below_a_millisecond(void **state) {
    (void)state;
    int ep = epoll_create1(0);
    assert_true(ep >= 0);
    struct epoll_event events[4];
    if (epoll_pwait2(ep, events, 4, &(struct timespec){0}, NULL) < 0 && errno == ENOSYS) {
        close(ep); /* before Linux 5.11 the floor waits by the millisecond, as documented */
        skip();
    }
    int64_t least = INT64_MAX;
    for (int i = 0; i < 50; i++) {
        int64_t now = loop_now_ns(), deadline = now + 100000;
        assert_int_equal(curl_floor_wait(ep, events, 4, now, deadline), 0);
        int64_t late = loop_now_ns() - deadline;
        assert_true(late >= 0);
        if (late < least)
            least = late;
    }
    close(ep);
    assert_true(least < 600000);
}

/* The floor against the mock: 20 streams for a 1 s window. It receives, has no errors, counts
 * its socket events, and counts the mock's wake-ups over its window (fewer than one a token
 * can't be: each stream's tokens are 20 ms apart, so the mock sleeps between most of them). */
static void test_curl_floor_counts_the_server_s_wakeups_over_its_window(void **state) {
    (void)state;
    mock_child_t mock;
    const char *const args[] = {"--ttft-ms", "5", "--itl-ms", "20", "--no-sent-ns", NULL};
    assert_int_equal(mock_spawn(&mock, args), 0);
    char url[96];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", mock.port);
    const char *body =
        "{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":\"floor\"}],"
        "\"max_tokens\":20,\"ignore_eos\":true,\"stream\":true}";
    curl_floor_window_t window;
    int rc = curl_floor_run(url, body, 20, 0.2, 0.5, 1.0, 0, mock.pid, &window);
    mock_stop(&mock);
    assert_int_equal(rc, 0);
    assert_int_equal(window.errors, 0);
    assert_true(window.bytes > 0 && window.socket_events > 0);
    /* 20 streams x 50 tokens/s over 1 s, less the gaps between requests: about 900 tokens */
    assert_true(window.server_sleeps > 100);
    curl_floor_result_t r = curl_floor_tokens(&window, (double)window.bytes / 900.0);
    assert_true(r.server_sleeps_per_token > 0.1 && r.server_sleeps_per_token < 2.0);
}

UNIT_MAIN(cmocka_unit_test(test_bench_cpu_sleeps_counts_a_process_s_sleeps),
          cmocka_unit_test(test_curl_floor_wait_keeps_the_deadline_to_below_a_millisecond),
          cmocka_unit_test(test_curl_floor_counts_the_server_s_wakeups_over_its_window))
