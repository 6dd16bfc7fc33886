/* The worker engine under load against `stampede mock` in fixed mode, the mock pinned to another
 * core: CPU per streamed token, SSE events per write callback, the delay the client adds
 * (receive stamp - the chunk's sent_ns, same host), errors, and RSS per stream; then the client
 * loop Python benchmarks use (bench/peer_aiohttp.py) against the same mock, as a ratio.
 * Prints numbers and RESULT lines; never passes or fails on them.
 *
 *   bench_engine [--streams 1000,5000,10000] [--itl-ms 20,50,100] [--tokens 100] [--ttft-ms 10]
 *                [--seconds 8] [--warmup 2] [--peer-streams 1000] [--no-peer] [--no-floor]
 *                [--buffer BYTES] [--coalesce 2,3] [--coalesce-streams 1000] [--no-coalesce]
 *                [--tokenizer tokenizer.json] [--no-curl-floor] [--curl-floor-buffer BYTES]
 *                [--pairs N] [--no-sent-ns]
 * The floor, per level, is the kernel's cost of the same traffic with no HTTP at all; the libcurl
 * floor (curl_floor.h), run beside each level against the same mock, is the least a libcurl
 * client of the same streams costs (its RSS per stream too: libcurl's own memory). With --pairs N
 * (at most 64) each level runs N times, the engine and the libcurl floor back to back, the floor
 * first in every other pair (the order moves the ratio: whichever client runs first against the
 * fresh mock pays a few per cent more; alternating puts that on both alike), and the ratio of CPU
 * per token is given per pair and as the median of the pairs with its 95 % interval: single runs of
 * either move by 5-10 % on a shared machine, more than what the engine adds, and a pair's two runs
 * share the machine's state of the moment. The other RATIO lines are the median pair's. Each
 * RESULT line gives the server's wake-ups a token over the window (server_sleeps_per_token): two
 * clients are compared on the same traffic only when those agree (the floor starts its streams
 * on the nanosecond, as the engine does, for that). The
 * coalescing comparison runs the client against the benches' own server (sse_server.h) at one
 * event per write and at the --coalesce pattern, same streams and token rate. With --tokenizer,
 * every level runs again with the replies counted in it (target.tokenizer), and the CPU per
 * token is given as a ratio to the run without (the goal: at most 1.10x).
 * --no-sent-ns runs the mock with its flag of that name: its chunks are then vLLM's, byte for
 * byte, without the "sent_ns" field that only the delay figures read (they are then 0), so the
 * engine parses what it would from a real server.
 * Under `valgrind --tool=callgrind` the measured window is marked, so Ir / tokens is the client's
 * user-space instructions per token (bench/callgrind_engine.sh). */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else /* without valgrind's header, the window cannot be marked for callgrind */
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)
#endif

#include "bench_cpu.h"
#include "engine.h"
#include "histogram.h"
#include "loop.h"
#include "memtrim.h"
#include "tokenizer.h"

/* One way to start and stop `stampede mock`, shared with the unit tests. */
#include "../tests/unit/mock_spawn.h"
/* The benches' own server, for a fixed number of events per write. */
#include "sse_server.h"
/* Bare epoll + recv of the same traffic: the reference the engine is compared to. */
#include "floor.h"
/* A bare libcurl receiver of the same streams: the least any libcurl client costs. */
#include "curl_floor.h"

#define MS 1000000LL
#define MAX_LEVELS 8
#define MAX_PAIRS 64

typedef struct bench_config {
    int streams[MAX_LEVELS];
    double itl_ms[MAX_LEVELS];
    int levels;
    int tokens;
    double ttft_ms;
    double seconds;
    double warmup;
    int peer_streams;
    int peer;
    uint32_t buffer_size;
    int floor;
    const tokenizer_t *tokenizer;        /* --tokenizer: loaded once */
    int counting;                        /* the level being run counts replies in it */
    int curl_floor;                      /* the bare libcurl receiver after each level */
    uint32_t curl_floor_buffer;          /* its CURLOPT_BUFFERSIZE; 0: libcurl's default */
    int coalesce;                        /* compare k events per write against one */
    int coalesce_streams;                /* at this level's streams and ITL */
    int pattern[SSE_SERVER_MAX_PATTERN]; /* events per write of the coalescing server */
    int pattern_len;
    int pairs; /* --pairs: runs of each level, each the engine then the libcurl floor */
    int pin;   /* two CPUs or more: the client on CPU 0, the server on CPU 1 */
    /* the mock's chunks carry its "sent_ns" (the delay figures need it); --no-sent-ns: vLLM's
     * chunks, byte for byte, and no delay figures */
    int sent_ns;
} bench_config_t;

typedef struct slot {
    struct level *level;
    request_record_t record;
} slot_t;

typedef struct level {
    loop_t *loop;
    engine_t *engine;
    const char *url;
    const char *body;
    size_t body_len;
    int max_tokens; /* the body's */
    slot_t *slots;
    int streams;
    pid_t server_pid;
    long server_sleeps_start, server_sleeps_end; /* bench_cpu_sleeps of the server, -1 unknown */
    int stopping;
    uint64_t errors;
    uint64_t errors_by_class[ERROR__COUNT];
    char last_error[160];
    histogram_t *delay;
    histogram_t *ttft; /* send -> first token, of the requests that finished in the window */
    /* Snapshots at the start and end of the measured window. */
    engine_stats_t stats_start, stats_end;
    struct rusage usage_start, usage_end;
    int64_t t_start, t_end;
    uint64_t errors_start;
    long rss_peak_kb, anon_peak_kb;
} level_t;

static int cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) < 0)
        return 1;
    return CPU_COUNT(&set);
}

/* `stampede mock` in fixed mode, pinned to CPU 1 when pin (the mock is one thread, so pinning
 * its pid pins all of it). STAMPEDE_BIN names the binary, build/stampede by default. */
static int server_start(mock_child_t *server, const bench_config_t *cfg, double itl_ms) {
    char ttft[32], itl[32];
    snprintf(ttft, sizeof(ttft), "%g", cfg->ttft_ms);
    snprintf(itl, sizeof(itl), "%g", itl_ms);
    /* without sent_ns, the mock's chunks are vLLM's, byte for byte */
    const char *const args[] = {
        "--ttft-ms", ttft, "--itl-ms", itl, cfg->sent_ns ? NULL : "--no-sent-ns", NULL};
    int pin = cfg->pin;
    setenv("STAMPEDE_BIN", "build/stampede", 0);
    if (mock_spawn(server, args) < 0)
        return -1;
    if (pin)
        bench_cpu_pin(server->pid, 1);
    return 0;
}

/* The server a level runs against: the mock, or the benches' own with pattern events per write
 * (pattern_len 0: the mock). The server runs on CPU 1 when pinning. */
static int server_open(const bench_config_t *cfg, double itl_ms, const int *pattern,
                       int pattern_len, mock_child_t *server) {
    if (pattern_len == 0)
        return server_start(server, cfg, itl_ms);
    sse_server_config_t sc = {
        .ttft_ms = cfg->ttft_ms, .itl_ms = itl_ms, .pattern_len = pattern_len};
    memcpy(sc.pattern, pattern, (size_t)pattern_len * sizeof(int));
    return sse_server_spawn(&sc, cfg->pin ? 1 : -1, &server->pid, &server->port);
}

static void slot_submit(slot_t *slot);

static void slot_done(void *arg, request_record_t *record, const char *reply, size_t len) {
    slot_t *slot = arg;
    level_t *level = slot->level;
    if (record->error != ERROR_NONE && record->error != ERROR_CANCELLED) {
        level->errors++;
        level->errors_by_class[record->error]++;
        snprintf(level->last_error, sizeof(level->last_error), "%s", record->error_message);
    }
    if (record->first_token_ns && level->t_start)
        histogram_record(level->ttft, (uint64_t)(record->first_token_ns - record->send_ns));
    if (!level->stopping)
        slot_submit(slot);
}

static void slot_submit(slot_t *slot) {
    level_t *level = slot->level;
    memset(&slot->record, 0, sizeof(slot->record));
    slot->record.requested_output_tokens = (uint32_t)level->max_tokens; /* as a worker's session */
    engine_request_t request = {.url = level->url,
                                .body = level->body,
                                .body_len = level->body_len,
                                .reply_unused = true, /* the bench reads no reply */
                                .record = &slot->record};
    if (engine_submit(level->engine, &request, slot_done, slot) < 0)
        level->errors++;
}

static void slot_start(loop_t *loop, uint64_t id, void *arg) {
    slot_submit(arg);
}

static void window_start(loop_t *loop, uint64_t id, void *arg) {
    level_t *level = arg;
    histogram_reset(level->delay);
    engine_stats(level->engine, &level->stats_start);
    getrusage(RUSAGE_SELF, &level->usage_start);
    level->server_sleeps_start = bench_cpu_sleeps(level->server_pid);
    level->t_start = loop_now_ns();
    level->errors_start = level->errors;
    CALLGRIND_ZERO_STATS; /* under callgrind, instructions are counted over the window only */
}

static void window_end(loop_t *loop, uint64_t id, void *arg) {
    level_t *level = arg;
    getrusage(RUSAGE_SELF, &level->usage_end);
    level->server_sleeps_end = bench_cpu_sleeps(level->server_pid);
    engine_stats(level->engine, &level->stats_end);
    level->t_end = loop_now_ns();
    CALLGRIND_DUMP_STATS_AT("window");
    level->rss_peak_kb = bench_cpu_rss_split_kb(&level->anon_peak_kb);
    level->stopping = 1;
    loop_stop(loop);
}

typedef struct result {
    double cpu_us_per_token;
    double sys_us_per_token; /* the kernel's part of it (getrusage's system time) */
    /* voluntary context switches / tokens: how often the client's wait for events slept */
    double sleeps_per_token;
    /* the server's wake-ups a token over the same window: how bunched the client's traffic was
     * (two clients compared on CPU a token must have had the same); 0 when unknown */
    double server_sleeps_per_token;
    double delay_p50_us;
    double delay_p99_us;
    uint64_t tokens;
    uint64_t errors;
    double tokens_per_s;
    double events_per_callback;
    double shaped_share; /* of the SSE events, those read without the parser (stream.c) */
    double tokens_per_socket_event;
    double rss_kb_per_stream;
    double anon_kb_per_stream; /* without shared file pages (bench_cpu_rss_split_kb) */
    double connections_per_request;
} result_t;

/* The libcurl floor's window against the level's server (the same url, body, streams and ramp
 * as the engine's); -1 (said) when it could not run. */
static int run_curl_floor(const bench_config_t *cfg, const level_t *level, double ramp_s,
                          double warmup, curl_floor_window_t *window) {
    if (curl_floor_run(level->url, level->body, level->streams, ramp_s, warmup, cfg->seconds,
                       cfg->curl_floor_buffer, level->server_pid, window) < 0) {
        fprintf(stderr, "the libcurl floor could not run at %d streams\n", level->streams);
        return -1;
    }
    return 0;
}

/* The floor's window per token, in the body bytes per token the engine counted in its own. */
static void curl_floor_fill(const level_t *level, const curl_floor_window_t *window,
                            result_t *out) {
    uint64_t tokens = level->stats_end.token_chunks - level->stats_start.token_chunks;
    uint64_t bytes = level->stats_end.body_bytes - level->stats_start.body_bytes;
    if (!tokens)
        return;
    curl_floor_result_t floor = curl_floor_tokens(window, (double)bytes / (double)tokens);
    out->cpu_us_per_token = floor.cpu_us_per_token;
    out->sys_us_per_token = floor.sys_us_per_token;
    out->sleeps_per_token = floor.sleeps_per_token;
    out->server_sleeps_per_token = floor.server_sleeps_per_token;
    out->tokens = floor.tokens;
    out->tokens_per_s = floor.tokens_per_s;
    out->tokens_per_socket_event = floor.tokens_per_socket_event;
    out->rss_kb_per_stream = floor.rss_kb_per_stream;
    out->anon_kb_per_stream = floor.anon_kb_per_stream;
    out->errors = floor.errors;
}

/* One level against a server of its own: the engine, and with curl_floor the libcurl floor, after
 * the engine or (floor_first) before it. */
static int run_level(const bench_config_t *cfg, int streams, double itl_ms, const int *pattern,
                     int pattern_len, result_t *result, result_t *curl_floor, bool floor_first) {
    mock_child_t server;
    if (server_open(cfg, itl_ms, pattern, pattern_len, &server) < 0)
        return -1;
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", server.port);
    char body[512];
    int body_len = snprintf(body, sizeof(body),
                            "{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":"
                            "\"benchmark the engine\"}],\"max_tokens\":%d,\"ignore_eos\":true,"
                            "\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
                            cfg->tokens);
    level_t level = {.url = url,
                     .body = body,
                     .body_len = (size_t)body_len,
                     .max_tokens = cfg->tokens,
                     .streams = streams,
                     .server_pid = server.pid};
    /* Streams start at random instants over one request's duration (5 s at most, still many
     * ITLs), so that their tokens are spread evenly in time as a real population's are, not
     * emitted by the mock in one burst per ITL; the closed loop then keeps each stream's phase.
     * The warm-up covers the ramp. */
    double request_s = (cfg->ttft_ms + cfg->tokens * itl_ms) / 1e3;
    double ramp_s = request_s < 5 ? request_s : 5;
    double warmup = cfg->warmup > ramp_s + 1 ? cfg->warmup : ramp_s + 1;
    curl_floor_window_t floor_window;
    bool floor_ran = false;
    if (curl_floor && floor_first)
        floor_ran = run_curl_floor(cfg, &level, ramp_s, warmup, &floor_window) == 0;
    /* The bench's own histograms are no stream's memory: made before the level's RSS is read. */
    histogram_t *delay = histogram_new(), *ttft = histogram_new();
    /* The free pages an earlier run left in the heap go back to the kernel first: this run would
     * reuse them unseen, and its growth would read near 0. */
    memtrim_release();
    long anon_before, rss_before = bench_cpu_rss_split_kb(&anon_before);
    level.loop = loop_new();
    engine_options_t options = {.max_streams = (uint32_t)streams,
                                .timeout_ns = 120000 * MS,
                                .connect_timeout_ns = 30000 * MS,
                                .buffer_size = cfg->buffer_size,
                                .tokenizer = cfg->counting ? cfg->tokenizer : NULL};
    level.engine = engine_new(level.loop, &options);
    level.delay = delay;
    level.ttft = ttft;
    engine_set_sent_delay(level.engine, level.delay);
    level.slots = calloc((size_t)streams, sizeof(slot_t));
    int64_t now = loop_now_ns();
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < streams; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        double offset = (double)(seed >> 11) / 9007199254740992.0 * ramp_s;
        level.slots[i].level = &level;
        loop_timer_at(level.loop, now + (int64_t)(offset * 1e9), slot_start, &level.slots[i]);
    }
    loop_timer_at(level.loop, now + (int64_t)(warmup * 1e9), window_start, &level);
    loop_timer_at(level.loop, now + (int64_t)((warmup + cfg->seconds) * 1e9), window_end, &level);
    loop_run(level.loop);

    uint64_t tokens = level.stats_end.token_chunks - level.stats_start.token_chunks;
    uint64_t callbacks = level.stats_end.write_callbacks - level.stats_start.write_callbacks;
    uint64_t socket_events = level.stats_end.socket_events - level.stats_start.socket_events;
    uint64_t events = level.stats_end.sse_events - level.stats_start.sse_events;
    uint64_t requests = level.stats_end.requests_finished - level.stats_start.requests_finished;
    uint64_t connections = level.stats_end.connections - level.stats_start.connections;
    double cpu = bench_cpu_seconds(&level.usage_end) - bench_cpu_seconds(&level.usage_start);
    double wall = (double)(level.t_end - level.t_start) / 1e9;
    result->tokens = tokens;
    result->cpu_us_per_token = tokens ? cpu * 1e6 / (double)tokens : 0;
    double sys =
        bench_cpu_sys_seconds(&level.usage_end) - bench_cpu_sys_seconds(&level.usage_start);
    result->sys_us_per_token = tokens ? sys * 1e6 / (double)tokens : 0;
    result->sleeps_per_token =
        tokens ? (double)(level.usage_end.ru_nvcsw - level.usage_start.ru_nvcsw) / (double)tokens
               : 0;
    if (tokens && level.server_sleeps_start >= 0 && level.server_sleeps_end >= 0)
        result->server_sleeps_per_token =
            (double)(level.server_sleeps_end - level.server_sleeps_start) / (double)tokens;
    result->tokens_per_s = tokens / wall;
    result->delay_p50_us = histogram_percentile(level.delay, 50) / 1e3;
    result->delay_p99_us = histogram_percentile(level.delay, 99) / 1e3;
    result->events_per_callback = callbacks ? (double)events / (double)callbacks : 0;
    uint64_t shaped = level.stats_end.shaped_events - level.stats_start.shaped_events;
    result->shaped_share = events ? (double)shaped / (double)events : 0;
    result->tokens_per_socket_event = socket_events ? (double)tokens / (double)socket_events : 0;
    result->errors = level.errors - level.errors_start;
    result->rss_kb_per_stream = (double)(level.rss_peak_kb - rss_before) / streams;
    result->anon_kb_per_stream = (double)(level.anon_peak_kb - anon_before) / streams;
    result->connections_per_request = requests ? (double)connections / (double)requests : 0;
    printf("streams=%d itl=%gms %s: %.0f tokens/s, client CPU %.0f%% of a core, %.0f requests "
           "in the window, %.3f new connections per request, TTFT p50 %.1f ms (server: %g ms)\n",
           streams, itl_ms, pattern_len ? "own server" : "mock", result->tokens_per_s,
           cpu / wall * 100, (double)requests, result->connections_per_request,
           histogram_percentile(level.ttft, 50) / 1e6, cfg->ttft_ms);
    /* Closed loop: each stream receives its tokens over TTFT + tokens x ITL. */
    double scheduled = streams * cfg->tokens / ((cfg->ttft_ms + cfg->tokens * itl_ms) / 1e3);
    if (result->tokens_per_s < 0.95 * scheduled)
        printf("NOTE streams=%d itl_ms=%g against the %s: %.0f tokens/s of the %.0f scheduled; the "
               "server or the client fell behind, so this row describes an overloaded machine\n",
               streams, itl_ms, pattern_len ? "own server" : "mock", result->tokens_per_s,
               scheduled);
    if (level.errors) {
        printf("  errors:");
        for (int c = 0; c < ERROR__COUNT; c++)
            if (level.errors_by_class[c])
                printf(" %s=%llu", error_class_name((error_class_t)c),
                       (unsigned long long)level.errors_by_class[c]);
        printf(" (last: %s)\n", level.last_error);
    }

    engine_destroy(&level.engine);
    loop_destroy(&level.loop);
    histogram_destroy(&level.delay);
    histogram_destroy(&level.ttft);
    free(level.slots);
    if (curl_floor && !floor_first)
        floor_ran = run_curl_floor(cfg, &level, ramp_s, warmup, &floor_window) == 0;
    if (floor_ran)
        curl_floor_fill(&level, &floor_window, curl_floor);
    mock_stop(&server);
    return 0;
}

static int result_field(const char *line, const char *key, double *out) {
    const char *p = strstr(line, key);
    if (!p)
        return -1;
    *out = strtod(p + strlen(key), NULL);
    return 0;
}

static int run_peer(const bench_config_t *cfg, int streams, double itl_ms, result_t *result) {
    mock_child_t server;
    if (server_start(&server, cfg, itl_ms) < 0)
        return -1;
    char url[128], streams_s[16], tokens_s[16], seconds_s[32], warmup_s[32];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", server.port);
    snprintf(streams_s, sizeof(streams_s), "%d", streams);
    snprintf(tokens_s, sizeof(tokens_s), "%d", cfg->tokens);
    snprintf(seconds_s, sizeof(seconds_s), "%g", cfg->seconds);
    snprintf(warmup_s, sizeof(warmup_s), "%g", cfg->warmup);
    int out[2];
    if (pipe(out) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (cfg->pin)
            bench_cpu_pin(0, 0);
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        /* Debian's interpreter: python3-aiohttp is installed for it, whatever PATH says. */
        const char *python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
        execlp(python, python, "bench/peer_aiohttp.py", "--url", url, "--streams", streams_s,
               "--max-tokens", tokens_s, "--seconds", seconds_s, "--warmup", warmup_s,
               (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        fputs(line, stdout);
        char *r = strstr(line, "RESULT ");
        if (!r)
            continue;
        double tokens = 0, errors = 0;
        if (result_field(r, " cpu_us_per_token=", &result->cpu_us_per_token) == 0 &&
            result_field(r, " delay_p50_us=", &result->delay_p50_us) == 0 &&
            result_field(r, " delay_p99_us=", &result->delay_p99_us) == 0 &&
            result_field(r, " tokens=", &tokens) == 0 &&
            result_field(r, " errors=", &errors) == 0) {
            result->tokens = (uint64_t)tokens;
            result->errors = (uint64_t)errors;
            found = 1;
        }
    }
    fclose(f);
    int status;
    waitpid(pid, &status, 0);
    mock_stop(&server);
    return found ? 0 : -1;
}

/* The floor at one level, as a result row. */
static int run_floor(const bench_config_t *cfg, int streams, double itl_ms, result_t *result) {
    floor_result_t floor;
    if (floor_run(streams, itl_ms, cfg->warmup, cfg->seconds, cfg->pin, &floor) < 0)
        return -1;
    result->cpu_us_per_token = floor.cpu_us_per_token;
    result->sys_us_per_token = floor.sys_us_per_token;
    result->delay_p50_us = floor.delay_p50_us;
    result->delay_p99_us = floor.delay_p99_us;
    result->tokens = floor.tokens;
    result->tokens_per_s = floor.tokens_per_s;
    result->tokens_per_socket_event = floor.tokens_per_socket_event;
    return 0;
}

static double ratio(double a, double b) {
    return b > 0 ? a / b : 0;
}

static void result_print(const char *name, int streams, double itl_ms, const result_t *r,
                         const char *note) {
    printf("RESULT name=%s streams=%d itl_ms=%g cpu_us_per_token=%.2f sys_us_per_token=%.2f "
           "sleeps_per_token=%.3f server_sleeps_per_token=%.3f delay_p50_us=%.0f "
           "delay_p99_us=%.0f tokens=%llu errors=%llu events_per_callback=%.2f "
           "shaped_events=%.2f tokens_per_socket_event=%.2f tokens_per_s=%.0f "
           "rss_kb_per_stream=%.2f anon_kb_per_stream=%.2f%s\n",
           name, streams, itl_ms, r->cpu_us_per_token, r->sys_us_per_token, r->sleeps_per_token,
           r->server_sleeps_per_token, r->delay_p50_us, r->delay_p99_us,
           (unsigned long long)r->tokens, (unsigned long long)r->errors, r->events_per_callback,
           r->shaped_share, r->tokens_per_socket_event, r->tokens_per_s, r->rss_kb_per_stream,
           r->anon_kb_per_stream, note);
    fflush(stdout);
}

typedef struct pair_ratio {
    double ratio; /* stampede / libcurl floor, CPU per token */
    int pair;     /* the run it came from */
} pair_ratio_t;

static int ratio_order(const void *a, const void *b) {
    double x = ((const pair_ratio_t *)a)->ratio, y = ((const pair_ratio_t *)b)->ratio;
    return (x > y) - (x < y);
}

/* The k (1-based) of the distribution-free 95 % interval for the median of n values: the k-th
 * smallest to the k-th largest, k the largest with P(Binomial(n, 1/2) < k) <= 0.025, so that
 * the interval misses the true median at most 5 % of the time whatever the ratios'
 * distribution. 0 when n is too small for one (n < 6); 15 pairs give the 4th to the 12th. */
static int median_interval_k(int n) {
    double term = 1, below = 0; /* C(n, j) / 2^n for j = 0 .. k - 1 */
    for (int j = 0; j < n; j++)
        term /= 2;
    int k = 0;
    for (int j = 0; j < n; j++) {
        if (below + term > 0.025)
            break;
        below += term;
        k = j + 1;
        term = term * (n - j) / (j + 1);
    }
    return k;
}

/* Level i, cfg->pairs times: each run the engine and (curl_floor non-NULL) the libcurl floor,
 * the floor first in every other pair. *ours and *curl_floor get the pair whose ratio is the
 * median; a RATIO line gives every pair's ratio and the median when there are several. */
static int run_pairs(const bench_config_t *cfg, int i, result_t *ours, result_t *curl_floor) {
    int streams = cfg->streams[i];
    double itl_ms = cfg->itl_ms[i];
    result_t runs[MAX_PAIRS][2];
    pair_ratio_t ratios[MAX_PAIRS];
    int n = 0;
    for (int k = 0; k < cfg->pairs; k++) {
        result_t *pair = runs[k];
        pair[0] = pair[1] = (result_t){0};
        /* odd pairs run the floor first: what the order does to either, it does to both */
        if (run_level(cfg, streams, itl_ms, NULL, 0, &pair[0], curl_floor ? &pair[1] : NULL,
                      k % 2 == 1) < 0)
            return -1;
        result_print("stampede", streams, itl_ms, &pair[0], "");
        if (pair[1].cpu_us_per_token > 0) {
            result_print("curl_floor", streams, itl_ms, &pair[1],
                         " (libcurl multi-socket, no-op write callback: libcurl's and the "
                         "kernel's share)");
            if (pair[0].cpu_us_per_token > 0) {
                ratios[n++] =
                    (pair_ratio_t){pair[0].cpu_us_per_token / pair[1].cpu_us_per_token, k};
                printf("PAIR streams=%d itl_ms=%g pair=%d first=%s cpu_per_token=%.3fx\n", streams,
                       itl_ms, k + 1, k % 2 ? "curl_floor" : "stampede", ratios[n - 1].ratio);
            }
        }
    }
    int median = 0;
    if (n > 0) {
        qsort(ratios, (size_t)n, sizeof ratios[0], ratio_order);
        median = ratios[(n - 1) / 2].pair;
    }
    *ours = runs[median][0];
    if (curl_floor)
        *curl_floor = runs[median][1];
    /* memory from the level's first run (each run's heap is trimmed before it starts, so every
     * run measures its own streams; the process's first run also holds what the process
     * allocates once, about 0.5-1 MiB) */
    ours->rss_kb_per_stream = runs[0][0].rss_kb_per_stream;
    ours->anon_kb_per_stream = runs[0][0].anon_kb_per_stream;
    if (n > 1) {
        printf("RATIO streams=%d itl_ms=%g cpu_per_token_median=%.3fx pairs=%d of", streams, itl_ms,
               n % 2 ? ratios[n / 2].ratio : (ratios[n / 2 - 1].ratio + ratios[n / 2].ratio) / 2,
               n);
        for (int k = 0; k < n; k++)
            printf("%s%.3f", k ? "," : " ", ratios[k].ratio);
        int k = median_interval_k(n);
        if (k > 0) /* the goal holds, fails, or this many pairs cannot say */
            printf(" median_95pct=%.3f-%.3f goal=%s", ratios[k - 1].ratio, ratios[n - k].ratio,
                   ratios[n - k].ratio <= 1.1  ? "met"
                   : ratios[k - 1].ratio > 1.1 ? "missed"
                                               : "undecided");
        else
            printf(" median_95pct=none (6 pairs at least)");
        /* chunks=vllm: --no-sent-ns, what a real server's stream costs; mock: with sent_ns */
        printf(" chunks=%s (stampede / libcurl floor, each pair back to back, the floor first in "
               "every other; goal cpu <= 1.1x)\n",
               cfg->sent_ns ? "mock" : "vllm");
        fflush(stdout);
    }
    return 0;
}

/* The same client against the benches' own server writing one event per write, then the
 * pattern's k per write (a coalescing server), at the same token rate: what coalescing costs
 * or saves per token, and whether it moves the client's delay. */
static int compare_coalescing(const bench_config_t *cfg) {
    int level = 0;
    for (int i = 0; i < cfg->levels; i++)
        if (cfg->streams[i] == cfg->coalesce_streams)
            level = i;
    int streams = cfg->coalesce_streams, one[] = {1};
    double itl = cfg->itl_ms[level];
    char pattern_text[64] = "";
    for (int i = 0, n = 0; i < cfg->pattern_len; i++)
        n += snprintf(pattern_text + n, sizeof(pattern_text) - (size_t)n, "%s%d", i ? "," : "",
                      cfg->pattern[i]);
    result_t single = {0}, coalesced = {0};
    if (run_level(cfg, streams, itl, one, 1, &single, NULL, false) < 0 ||
        run_level(cfg, streams, itl, cfg->pattern, cfg->pattern_len, &coalesced, NULL, false) < 0) {
        fprintf(stderr, "the coalescing comparison could not start its server\n");
        return -1;
    }
    result_print("stampede_1_per_write", streams, itl, &single, "");
    char note[96];
    snprintf(note, sizeof(note), " (events per write: %s)", pattern_text);
    result_print("stampede_coalesced", streams, itl, &coalesced, note);
    printf("RATIO streams=%d itl_ms=%g cpu_per_token=%.2fx delay_p50=%.2fx delay_p99=%.2fx "
           "(%s events per write / 1 per write)\n",
           streams, itl, ratio(coalesced.cpu_us_per_token, single.cpu_us_per_token),
           ratio(coalesced.delay_p50_us, single.delay_p50_us),
           ratio(coalesced.delay_p99_us, single.delay_p99_us), pattern_text);
    return 0;
}

/* Reads up to `max` comma-separated numbers; returns how many, or -1 on one that is not. */
static int parse_list(const char *s, double *out, int max) {
    int n = 0;
    for (char *end; *s && n < max; s = *end ? end + 1 : end) {
        out[n++] = strtod(s, &end);
        if (end == s)
            return -1;
    }
    return n;
}

typedef enum option_kind { OPTION_INT, OPTION_DOUBLE, OPTION_BYTES, OPTION_OFF } option_kind_t;

/* The options that set one field of the config (OPTION_OFF: turn a part of the bench off). */
static const struct {
    const char *name;
    option_kind_t kind;
    size_t offset; /* of the field in bench_config_t */
} field_options[] = {
    {"tokens", OPTION_INT, offsetof(bench_config_t, tokens)},
    {"ttft-ms", OPTION_DOUBLE, offsetof(bench_config_t, ttft_ms)},
    {"seconds", OPTION_DOUBLE, offsetof(bench_config_t, seconds)},
    {"warmup", OPTION_DOUBLE, offsetof(bench_config_t, warmup)},
    {"peer-streams", OPTION_INT, offsetof(bench_config_t, peer_streams)},
    {"no-peer", OPTION_OFF, offsetof(bench_config_t, peer)},
    {"no-floor", OPTION_OFF, offsetof(bench_config_t, floor)},
    {"no-curl-floor", OPTION_OFF, offsetof(bench_config_t, curl_floor)},
    {"curl-floor-buffer", OPTION_BYTES, offsetof(bench_config_t, curl_floor_buffer)},
    {"buffer", OPTION_BYTES, offsetof(bench_config_t, buffer_size)},
    {"coalesce-streams", OPTION_INT, offsetof(bench_config_t, coalesce_streams)},
    {"no-coalesce", OPTION_OFF, offsetof(bench_config_t, coalesce)},
    {"pairs", OPTION_INT, offsetof(bench_config_t, pairs)},
    {"no-sent-ns", OPTION_OFF, offsetof(bench_config_t, sent_ns)},
};
#define N_FIELD_OPTIONS (sizeof field_options / sizeof field_options[0])
#define FIELD_OPTION_VAL 256 /* getopt_long's value for field_options[i] is this + i */

static void field_option_set(bench_config_t *cfg, size_t i, const char *arg) {
    char *field = (char *)cfg + field_options[i].offset;
    switch (field_options[i].kind) {
    case OPTION_INT:
        *(int *)field = atoi(arg);
        break;
    case OPTION_DOUBLE:
        *(double *)field = atof(arg);
        break;
    case OPTION_BYTES:
        *(uint32_t *)field = (uint32_t)atol(arg);
        break;
    case OPTION_OFF:
        *(int *)field = 0;
        break;
    }
}

int main(int argc, char **argv) {
    /* As `stampede worker` does (worker_serve): the cost of mapping curl's 64 KiB upload buffer per
     * transfer is part of what a worker spends (common/memtrim.h). */
    memtrim_map_large((size_t)64 * 1024);
    /* libcurl's global init (OpenSSL's, ~2.2 MiB, most of it libcrypto's code pages) is paid once
     * per process, before any level: no stream's memory, as the libcurl floor counts it too. */
    curl_global_init(CURL_GLOBAL_DEFAULT);
    bench_config_t cfg = {.streams = {1000, 5000, 10000},
                          .itl_ms = {20, 50, 100},
                          .levels = 3,
                          .tokens = 100,
                          .ttft_ms = 10,
                          .seconds = 8,
                          .warmup = 2,
                          .peer_streams = 1000,
                          .peer = 1,
                          .floor = 1,
                          .curl_floor = 1,
                          .coalesce = 1,
                          .coalesce_streams = 1000,
                          .pattern = {2, 3},
                          .pattern_len = 2,
                          .pairs = 1,
                          .sent_ns = 1};
    int n_itl = 3;
    const char *tokenizer_path = NULL;
    struct option longs[4 + N_FIELD_OPTIONS + 1] = {{"streams", required_argument, 0, 's'},
                                                    {"itl-ms", required_argument, 0, 'i'},
                                                    {"coalesce", required_argument, 0, 'c'},
                                                    {"tokenizer", required_argument, 0, 't'}};
    for (size_t i = 0; i < N_FIELD_OPTIONS; i++)
        longs[4 + i] =
            (struct option){field_options[i].name,
                            field_options[i].kind == OPTION_OFF ? no_argument : required_argument,
                            0, FIELD_OPTION_VAL + (int)i};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 's': {
            double streams[MAX_LEVELS];
            cfg.levels = parse_list(optarg, streams, MAX_LEVELS);
            for (int i = 0; i < cfg.levels; i++)
                cfg.streams[i] = (int)streams[i];
            break;
        }
        case 'i':
            n_itl = parse_list(optarg, cfg.itl_ms, MAX_LEVELS);
            break;
        case 't':
            tokenizer_path = optarg;
            break;
        case 'c':
            cfg.pattern_len = sse_server_parse_pattern(optarg, cfg.pattern);
            if (cfg.pattern_len < 0) {
                fprintf(stderr,
                        "bench_engine: --coalesce takes events per write, e.g. 2,3 "
                        "(each 1 to 64, at most %d)\n",
                        SSE_SERVER_MAX_PATTERN);
                return 2;
            }
            break;
        default:
            if (c < FIELD_OPTION_VAL || c >= FIELD_OPTION_VAL + (int)N_FIELD_OPTIONS) {
                fprintf(stderr, "usage: see the comment at the top of bench/bench_engine.c\n");
                return 2;
            }
            field_option_set(&cfg, (size_t)(c - FIELD_OPTION_VAL), optarg);
        }
    }
    if (cfg.pairs < 1 || cfg.pairs > MAX_PAIRS) {
        fprintf(stderr, "bench_engine: --pairs takes 1 to %d\n", MAX_PAIRS);
        return 2;
    }
    if (cfg.levels <= 0 || n_itl <= 0) {
        fprintf(stderr, "bench_engine: --streams and --itl-ms take comma-separated numbers\n");
        return 2;
    }
    for (int i = n_itl; i < cfg.levels; i++)
        cfg.itl_ms[i] = cfg.itl_ms[n_itl - 1];
    tokenizer_t *tokenizer = NULL;
    char err[512];
    if (tokenizer_path && tokenizer_load(tokenizer_path, &tokenizer, err, sizeof err) < 0) {
        fprintf(stderr, "bench_engine: %s\n", err);
        return 2;
    }
    cfg.tokenizer = tokenizer;
    cfg.pin = cpu_count() >= 2; /* before pinning ourselves, which narrows the count to one */
    if (cfg.pin)
        bench_cpu_pin(0, 0);
    printf("engine benchmark: mock fixed mode ttft=%gms, %d tokens per request, closed loop, "
           "%gs measured after a warm-up of max(%gs, ramp + 1s); client on CPU 0%s\n",
           cfg.ttft_ms, cfg.tokens, cfg.seconds, cfg.warmup,
           cfg.pin ? ", mock on CPU 1" : " (one CPU: not pinned)");
    /* Other tenants of the machine show up in the delays; say how busy it was. */
    FILE *loadavg = fopen("/proc/loadavg", "r");
    double load1 = 0;
    if (loadavg) {
        if (fscanf(loadavg, "%lf", &load1) == 1)
            printf("load average (1 min) at start: %.2f on %ld CPUs\n", load1,
                   sysconf(_SC_NPROCESSORS_ONLN));
        fclose(loadavg);
    }
    int failed = 0;
    result_t ours[MAX_LEVELS] = {0}, floors[MAX_LEVELS] = {0}, curl_floors[MAX_LEVELS] = {0};
    for (int i = 0; i < cfg.levels; i++)
        if (run_pairs(&cfg, i, &ours[i], cfg.curl_floor ? &curl_floors[i] : NULL) < 0)
            failed = 1;
    for (int i = 0; cfg.floor && i < cfg.levels; i++) {
        if (run_floor(&cfg, cfg.streams[i], cfg.itl_ms[i], &floors[i]) < 0) {
            fprintf(stderr, "the floor probe could not open %d loopback connections\n",
                    cfg.streams[i]);
            continue;
        }
        result_print("floor", cfg.streams[i], cfg.itl_ms[i], &floors[i],
                     " (epoll_wait + recv only, no HTTP: the kernel's and the machine's share)");
    }
    for (int i = 0; cfg.floor && i < cfg.levels; i++)
        if (floors[i].cpu_us_per_token > 0 && ours[i].cpu_us_per_token > 0)
            printf("RATIO streams=%d itl_ms=%g cpu_per_token=%.2fx delay_p50=%.2fx "
                   "delay_p99=%.2fx (stampede / floor; goal cpu <= 1.25x)\n",
                   cfg.streams[i], cfg.itl_ms[i],
                   ours[i].cpu_us_per_token / floors[i].cpu_us_per_token,
                   ratio(ours[i].delay_p50_us, floors[i].delay_p50_us),
                   ratio(ours[i].delay_p99_us, floors[i].delay_p99_us));
    for (int i = 0; tokenizer && i < cfg.levels; i++) {
        result_t counted = {0};
        cfg.counting = 1;
        int rc = run_level(&cfg, cfg.streams[i], cfg.itl_ms[i], NULL, 0, &counted, NULL, false);
        cfg.counting = 0;
        if (rc < 0) {
            failed = 1;
            continue;
        }
        result_print("stampede_tokenizer", cfg.streams[i], cfg.itl_ms[i], &counted,
                     " (replies counted in --tokenizer)");
        printf("RATIO streams=%d itl_ms=%g cpu_per_token=%.2fx delay_p50=%.2fx delay_p99=%.2fx "
               "(with the tokenizer / without; goal cpu <= 1.10x)\n",
               cfg.streams[i], cfg.itl_ms[i],
               ratio(counted.cpu_us_per_token, ours[i].cpu_us_per_token),
               ratio(counted.delay_p50_us, ours[i].delay_p50_us),
               ratio(counted.delay_p99_us, ours[i].delay_p99_us));
    }
    tokenizer_destroy(&tokenizer);
    for (int i = 0; i < cfg.levels; i++)
        if (curl_floors[i].cpu_us_per_token > 0 && ours[i].cpu_us_per_token > 0)
            printf("RATIO streams=%d itl_ms=%g cpu_per_token=%.2fx rss_per_stream=%.2fx "
                   "anon_per_stream=%.2fx chunks=%s (stampede / libcurl floor; goal cpu <= 1.1x; "
                   "stampede's anon_kb_per_stream <= 16)\n",
                   cfg.streams[i], cfg.itl_ms[i],
                   ours[i].cpu_us_per_token / curl_floors[i].cpu_us_per_token,
                   ratio(ours[i].rss_kb_per_stream, curl_floors[i].rss_kb_per_stream),
                   ratio(ours[i].anon_kb_per_stream, curl_floors[i].anon_kb_per_stream),
                   cfg.sent_ns ? "mock" : "vllm");
    if (cfg.coalesce && compare_coalescing(&cfg) < 0)
        failed = 1;
    if (cfg.peer) {
        int level = -1;
        for (int i = 0; i < cfg.levels; i++)
            if (cfg.streams[i] == cfg.peer_streams)
                level = i;
        double itl = level >= 0 ? cfg.itl_ms[level] : cfg.itl_ms[0];
        result_t peer = {0};
        if (run_peer(&cfg, cfg.peer_streams, itl, &peer) < 0) {
            fprintf(stderr, "bench/peer_aiohttp.py did not report a RESULT line\n");
            failed = 1;
        } else if (level >= 0 && ours[level].cpu_us_per_token > 0 && ours[level].delay_p99_us > 0) {
            printf("RATIO streams=%d itl_ms=%g cpu_per_token=%.1fx delay_p99=%.1fx "
                   "(aiohttp / stampede)\n",
                   cfg.peer_streams, itl, peer.cpu_us_per_token / ours[level].cpu_us_per_token,
                   peer.delay_p99_us / ours[level].delay_p99_us);
        }
    }
    return failed;
}
