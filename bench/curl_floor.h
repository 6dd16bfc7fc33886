/* The libcurl floor of bench_engine: the least any libcurl client can cost for the engine
 * benchmark's traffic. The same streams against the same mock, each a closed loop of the same
 * request, driven by curl_multi_socket_action from a bare epoll loop, with a write callback that
 * only adds up bytes: no SSE parsing, no stamps, no records, no timers of its own. What stampede
 * costs above this is ours (parsing, stamping, batching, timers); the rest is libcurl's and the
 * kernel's. It runs in a child process, so its resident memory per stream is its own.
 * Header-only (static functions) because each bench/bench_*.c is a program of its own. */
#ifndef STAMPEDE_BENCH_CURL_FLOOR_H
#define STAMPEDE_BENCH_CURL_FLOOR_H

#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)
#endif

#include "bench_cpu.h"
#include "loop.h"

#define CURL_FLOOR_SHARD 256 /* streams per multi handle, as the engine's shards */

typedef struct curl_floor_result {
    double cpu_us_per_token;
    double sys_us_per_token; /* the kernel's part of it */
    double sleeps_per_token; /* voluntary context switches (a wait that slept) / tokens */
    double tokens_per_s;
    double tokens_per_socket_event;
    /* the server's wake-ups a token (bench_cpu_sleeps); 0: unknown */
    double server_sleeps_per_token;
    double rss_kb_per_stream;
    double anon_kb_per_stream;
    uint64_t tokens;
    uint64_t errors;
} curl_floor_result_t;

/* What the floor's child measured over its window, in bytes: the floor does not parse, so its
 * tokens are its bytes over the engine's bytes per token of the same server (curl_floor_tokens),
 * which may be measured before or after it. */
typedef struct curl_floor_window {
    double cpu_s, sys_s, seconds;
    uint64_t bytes;
    uint64_t sleeps;    /* voluntary context switches */
    long server_sleeps; /* the server's over the window, -1 when unknown */
    uint64_t socket_events;
    uint64_t errors;
    double rss_kb_per_stream;
    double anon_kb_per_stream;
} curl_floor_window_t;

typedef struct curl_floor_shard {
    struct curl_floor *floor;
    CURLM *multi;
    uint32_t index;
    int64_t timeout_at; /* curl's timer, as a loop_now_ns() deadline; 0 when none */
} curl_floor_shard_t;

typedef struct curl_floor {
    int epoll_fd;
    curl_floor_shard_t *shards;
    uint32_t n_shards;
    uint64_t bytes;
    uint64_t socket_events;
    uint64_t errors;
} curl_floor_t;

/* The whole of the floor's per-byte work. */
static size_t curl_floor_on_write(char *data, size_t size, size_t nmemb, void *arg) {
    curl_floor_t *self = arg;
    (void)data;
    self->bytes += size * nmemb;
    return size * nmemb;
}

/* epoll's data carries the shard index and the fd. */
static int curl_floor_on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *socketp) {
    curl_floor_shard_t *shard = arg;
    (void)easy;
    struct epoll_event ev = {.data.u64 = (uint64_t)shard->index << 32 | (uint32_t)fd};
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(shard->floor->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
        curl_multi_assign(shard->multi, fd, NULL);
        return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (epoll_ctl(shard->floor->epoll_fd, socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
        epoll_ctl(shard->floor->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
    if (!socketp)
        curl_multi_assign(shard->multi, fd, shard);
    return 0;
}

static int curl_floor_on_timer(CURLM *multi, long timeout_ms, void *arg) {
    curl_floor_shard_t *shard = arg;
    (void)multi;
    shard->timeout_at = timeout_ms < 0 ? 0 : loop_now_ns() + timeout_ms * 1000000LL;
    return 0;
}

/* Finished transfers go straight back in: a closed loop per stream. */
static void curl_floor_drain(curl_floor_t *self, curl_floor_shard_t *shard) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(shard->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        if (msg->data.result != CURLE_OK)
            self->errors++;
        curl_multi_remove_handle(shard->multi, easy);
        curl_multi_add_handle(shard->multi, easy);
    }
}

static CURL *curl_floor_easy(curl_floor_t *self, const char *url, const char *body,
                             struct curl_slist *headers, long buffer_size) {
    CURL *e = curl_easy_init();
    if (!e)
        return NULL;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_floor_on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, self);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    if (buffer_size)
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, buffer_size);
    return e;
}

static void curl_floor_act(curl_floor_t *self, curl_floor_shard_t *shard, curl_socket_t fd,
                           int mask) {
    int running;
    curl_multi_socket_action(shard->multi, fd, mask, &running);
    curl_floor_drain(self, shard);
}

/* Waits for events until deadline_ns (loop_now_ns), to the nanosecond as the engine's timerfd
 * does. A wait rounded up to the millisecond would start streams late by up to one, several at
 * once, and streams started together have their tokens due together for the rest of the run:
 * the server would then write them out in bunches, which costs a client fewer wake-ups a token
 * than the engine's traffic does (measured: 0.31 against 0.45 sleeps a token at 1,000 streams,
 * the server's own wake-ups 22,000 against 34,000 a window). */
static int curl_floor_wait(int epoll_fd, struct epoll_event *events, int max, int64_t now,
                           int64_t deadline_ns) {
    int64_t wait_ns = deadline_ns > now ? deadline_ns - now : 0;
    struct timespec ts = {.tv_sec = wait_ns / 1000000000, .tv_nsec = wait_ns % 1000000000};
    int n = epoll_pwait2(epoll_fd, events, max, &ts, NULL);
    /* before Linux 5.11: the millisecond wait, as docs/bench.md says */
    if (n < 0 && errno == ENOSYS)
        n = epoll_wait(epoll_fd, events, max, (int)((wait_ns + 999999) / 1000000));
    return n;
}

/* Where the floor's window starts: its own CPU time, bytes and socket events, and the server's
 * wake-ups. */
typedef struct curl_floor_mark {
    struct rusage usage;
    uint64_t bytes, events;
    long server_sleeps;
} curl_floor_mark_t;

/* The loop: epoll, each ready socket handed to its shard, curl's timers when due. Streams start
 * at the instants in start_at (ns), as the engine's do. Returns at end_ns. */
static void curl_floor_loop(curl_floor_t *self, CURL **easies, const int64_t *start_at, int streams,
                            int64_t window_ns, int64_t end_ns, pid_t server_pid,
                            curl_floor_mark_t *mark) {
    struct epoll_event events[512];
    int started = 0, measuring = 0;
    for (int64_t now = loop_now_ns(); now < end_ns; now = loop_now_ns()) {
        for (; started < streams && start_at[started] <= now; started++)
            curl_multi_add_handle(self->shards[started % (int)self->n_shards].multi,
                                  easies[started]);
        if (!measuring && now >= window_ns) {
            getrusage(RUSAGE_SELF, &mark->usage);
            mark->bytes = self->bytes;
            mark->events = self->socket_events;
            mark->server_sleeps = bench_cpu_sleeps(server_pid);
            measuring = 1;
            CALLGRIND_ZERO_STATS;
        }
        int64_t next = end_ns;
        if (started < streams && start_at[started] < next)
            next = start_at[started];
        if (!measuring && window_ns < next)
            next = window_ns;
        for (uint32_t i = 0; i < self->n_shards; i++)
            if (self->shards[i].timeout_at && self->shards[i].timeout_at < next)
                next = self->shards[i].timeout_at;
        int n = curl_floor_wait(self->epoll_fd, events, 512, now, next);
        for (int i = 0; i < n; i++) {
            curl_floor_shard_t *shard = &self->shards[events[i].data.u64 >> 32];
            int mask = (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR) ? CURL_CSELECT_IN : 0) |
                       (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0);
            self->socket_events++;
            curl_floor_act(self, shard, (curl_socket_t)(uint32_t)events[i].data.u64, mask);
        }
        now = loop_now_ns();
        for (uint32_t i = 0; i < self->n_shards; i++)
            if (self->shards[i].timeout_at && self->shards[i].timeout_at <= now) {
                self->shards[i].timeout_at = 0;
                curl_floor_act(self, &self->shards[i], CURL_SOCKET_TIMEOUT, 0);
            }
    }
    CALLGRIND_DUMP_STATS_AT("curl_floor");
}

static int curl_floor_by_time(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The child's whole run; writes the result to fd. */
static void curl_floor_child(const char *url, const char *body, int streams, double ramp_s,
                             double warmup_s, double seconds, long buffer_size, pid_t server_pid,
                             int fd) {
    curl_floor_window_t result = {0};
    curl_global_init(CURL_GLOBAL_DEFAULT);
    malloc_trim(0); /* the parent's free heap pages would hide the floor's own growth */
    long anon_before, rss_before = bench_cpu_rss_split_kb(&anon_before);
    curl_floor_t self = {.epoll_fd = epoll_create1(0)};
    self.n_shards = (uint32_t)((streams + CURL_FLOOR_SHARD - 1) / CURL_FLOOR_SHARD);
    self.shards = calloc(self.n_shards, sizeof(*self.shards));
    for (uint32_t i = 0; i < self.n_shards; i++) {
        curl_floor_shard_t *shard = &self.shards[i];
        shard->floor = &self;
        shard->index = i;
        shard->multi = curl_multi_init();
        curl_multi_setopt(shard->multi, CURLMOPT_SOCKETFUNCTION, curl_floor_on_socket);
        curl_multi_setopt(shard->multi, CURLMOPT_SOCKETDATA, shard);
        curl_multi_setopt(shard->multi, CURLMOPT_TIMERFUNCTION, curl_floor_on_timer);
        curl_multi_setopt(shard->multi, CURLMOPT_TIMERDATA, shard);
        curl_multi_setopt(shard->multi, CURLMOPT_MAXCONNECTS, (long)streams);
    }
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    CURL **easies = calloc((size_t)streams, sizeof(*easies));
    int64_t *start_at = calloc((size_t)streams, sizeof(*start_at));
    int64_t t0 = loop_now_ns();
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < streams; i++) {
        easies[i] = curl_floor_easy(&self, url, body, headers, buffer_size);
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        start_at[i] = t0 + (int64_t)((double)(seed >> 11) / 9007199254740992.0 * ramp_s * 1e9);
    }
    qsort(start_at, (size_t)streams, sizeof(*start_at), curl_floor_by_time); /* in start order */
    struct rusage u1;
    curl_floor_mark_t mark = {0};
    int64_t window = t0 + (int64_t)(warmup_s * 1e9), end = window + (int64_t)(seconds * 1e9);
    curl_floor_loop(&self, easies, start_at, streams, window, end, server_pid, &mark);
    getrusage(RUSAGE_SELF, &u1);
    long server_sleeps = bench_cpu_sleeps(server_pid);
    long anon_after, rss_after = bench_cpu_rss_split_kb(&anon_after);
    result.rss_kb_per_stream = (double)(rss_after - rss_before) / streams;
    result.anon_kb_per_stream = (double)(anon_after - anon_before) / streams;
    result.cpu_s = bench_cpu_seconds(&u1) - bench_cpu_seconds(&mark.usage);
    result.sys_s = bench_cpu_sys_seconds(&u1) - bench_cpu_sys_seconds(&mark.usage);
    result.seconds = seconds;
    result.bytes = self.bytes - mark.bytes;
    result.sleeps = (uint64_t)(u1.ru_nvcsw - mark.usage.ru_nvcsw);
    result.server_sleeps =
        server_sleeps >= 0 && mark.server_sleeps >= 0 ? server_sleeps - mark.server_sleeps : -1;
    result.socket_events = self.socket_events - mark.events;
    result.errors = self.errors;
    if (write(fd, &result, sizeof(result)) != (ssize_t)sizeof(result))
        _exit(1);
    _exit(0); /* the connections go with the process */
}

/* Runs the floor in a child against url (the same server the engine is measured against, process
 * server_pid) with the same body, streams and start ramp. 0 with *window filled, or -1. */
static int curl_floor_run(const char *url, const char *body, int streams, double ramp_s,
                          double warmup_s, double seconds, long buffer_size, pid_t server_pid,
                          curl_floor_window_t *window) {
    int out[2];
    if (pipe(out) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(out[0]);
        curl_floor_child(url, body, streams, ramp_s, warmup_s, seconds, buffer_size, server_pid,
                         out[1]);
    }
    close(out[1]);
    ssize_t got = read(out[0], window, sizeof(*window));
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return got == (ssize_t)sizeof(*window) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0
                                                                                            : -1;
}

/* The window's figures per token, given the body bytes per token of the server (as the engine
 * counted them against it). */
static curl_floor_result_t curl_floor_tokens(const curl_floor_window_t *w, double bytes_per_token) {
    curl_floor_result_t r = {.rss_kb_per_stream = w->rss_kb_per_stream,
                             .anon_kb_per_stream = w->anon_kb_per_stream,
                             .errors = w->errors};
    double tokens = bytes_per_token > 0 ? (double)w->bytes / bytes_per_token : 0;
    if (tokens <= 0)
        return r;
    r.tokens = (uint64_t)tokens;
    r.tokens_per_s = tokens / w->seconds;
    r.cpu_us_per_token = w->cpu_s * 1e6 / tokens;
    r.sys_us_per_token = w->sys_s * 1e6 / tokens;
    r.sleeps_per_token = (double)w->sleeps / tokens;
    r.tokens_per_socket_event = w->socket_events ? tokens / (double)w->socket_events : 0;
    r.server_sleeps_per_token = w->server_sleeps >= 0 ? (double)w->server_sleeps / tokens : 0;
    return r;
}

#endif
