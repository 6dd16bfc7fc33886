/* The floor of bench_engine: the kernel's and the machine's cost of the engine benchmark's
 * traffic with no HTTP at all, to which the engine's figures are compared in the same run.
 * Header-only (static functions) because each bench/bench_*.c is a program of its own. */
#ifndef STAMPEDE_BENCH_FLOOR_H
#define STAMPEDE_BENCH_FLOOR_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_cpu.h"
#include "histogram.h"
#include "loop.h"

typedef struct floor_result {
    double cpu_us_per_token;
    double sys_us_per_token; /* the kernel's part of it */
    double delay_p50_us;
    double delay_p99_us;
    uint64_t tokens;
    double tokens_per_s;
    double tokens_per_socket_event;
} floor_result_t;

/* The kernel's share alone: the same token rate over the same number of loopback TCP connections,
 * ~300-byte messages like the mock's chunks, received with nothing but epoll_wait + recv. What
 * stampede costs above this is curl's and stampede's own work. */
static int floor_run(int streams, double itl_ms, double warmup_s, double seconds, int pin,
                     floor_result_t *result) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(listener, 4096) < 0 ||
        getsockname(listener, (struct sockaddr *)&addr, &alen) < 0)
        return -1;
    double rate = streams * 1e3 / itl_ms; /* messages per second, as the mock's tokens */
    double total_s = warmup_s + seconds + 0.5;
    /* The sender accepts in its own process, so neither side holds more than one fd per stream. */
    pid_t pid = fork();
    if (pid == 0) {
        if (pin)
            bench_cpu_pin(0, 1);
        int *server = calloc((size_t)streams, sizeof(int));
        for (int i = 0; i < streams; i++) {
            server[i] = accept(listener, NULL, NULL);
            int one = 1;
            setsockopt(server[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
        char msg[300];
        memset(msg, 'x', sizeof(msg));
        int64_t start = loop_now_ns();
        for (uint64_t k = 0;; k++) {
            int64_t due = start + (int64_t)((double)k * 1e9 / rate);
            if (due - start > (int64_t)(total_s * 1e9))
                break;
            int64_t sent;
            while ((sent = loop_now_ns()) < due)
                ;
            memcpy(msg, &sent, sizeof(sent)); /* the floor's own sent_ns */
            if (write(server[(k * 7919) % (uint64_t)streams], msg, sizeof(msg)) < 0)
                break;
        }
        _exit(0);
    }
    close(listener);
    int *client = calloc((size_t)streams, sizeof(int));
    for (int i = 0; i < streams; i++) {
        client[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(client[i], (struct sockaddr *)&addr, sizeof(addr)) < 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
    }
    int ep = epoll_create1(0);
    for (int i = 0; i < streams; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, client[i], &ev);
    }
    uint64_t *received = calloc((size_t)streams, sizeof(uint64_t)); /* bytes, per connection */
    histogram_t *delay = histogram_new();
    static char buf[65536];
    struct epoll_event events[512];
    struct rusage u0, u1;
    uint64_t bytes = 0, recvs = 0;
    int64_t t0 = loop_now_ns(), window = t0 + (int64_t)(warmup_s * 1e9),
            end = window + (int64_t)(seconds * 1e9);
    int measuring = 0;
    for (int64_t now = t0; now < end; now = loop_now_ns()) {
        if (!measuring && now >= window) {
            getrusage(RUSAGE_SELF, &u0);
            bytes = 0;
            recvs = 0;
            histogram_reset(delay);
            measuring = 1;
        }
        int n = epoll_wait(ep, events, 512, 100);
        for (int i = 0; i < n; i++) {
            uint32_t c = events[i].data.u32;
            ssize_t got = recv(client[c], buf, sizeof(buf), 0);
            int64_t at = loop_now_ns();
            recvs++;
            if (got <= 0)
                continue;
            bytes += (uint64_t)got;
            /* Messages are 300 bytes, each starting with its send time. */
            for (uint64_t off = (300 - received[c] % 300) % 300; off + 8 <= (uint64_t)got;
                 off += 300) {
                int64_t sent;
                memcpy(&sent, buf + off, sizeof(sent));
                if (at >= sent)
                    histogram_record(delay, (uint64_t)(at - sent));
            }
            received[c] += (uint64_t)got;
        }
    }
    getrusage(RUSAGE_SELF, &u1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < streams; i++)
        close(client[i]);
    close(ep);
    free(client);
    free(received);
    result->delay_p50_us = histogram_percentile(delay, 50) / 1e3;
    result->delay_p99_us = histogram_percentile(delay, 99) / 1e3;
    histogram_destroy(&delay);
    result->tokens = bytes / 300;
    result->tokens_per_s = (double)result->tokens / seconds;
    result->tokens_per_socket_event = recvs ? (double)result->tokens / (double)recvs : 0;
    result->cpu_us_per_token = result->tokens ? (bench_cpu_seconds(&u1) - bench_cpu_seconds(&u0)) *
                                                    1e6 / (double)result->tokens
                                              : 0;
    result->sys_us_per_token = result->tokens
                                   ? (bench_cpu_sys_seconds(&u1) - bench_cpu_sys_seconds(&u0)) *
                                         1e6 / (double)result->tokens
                                   : 0;
    return 0;
}

#endif
