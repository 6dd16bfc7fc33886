/* Loading a replay trace: a session-trace JSONL file of 100,000 requests (20,000 agentic sessions
 * of 5 nodes with fan-out, fan-in, roles and hash ids) and a Mooncake file of 100,000 requests,
 * each loaded as `stampede run` does on the controller (config_load_file), then encoded into one
 * worker's part of four. The goal is under 2 s per 100,000 requests. Prints numbers; never passes
 * or fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buffer.h"
#include "config.h"
#include "plan.h"
#include "trace.h"
#include "trace_wire.h"

#define REQUESTS 100000

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_session_trace(const char *path) {
    static const char *const nodes[] = {"plan", "e0", "e1", "e2", "agg"};
    FILE *f = fopen(path, "w");
    for (int i = 0; i < REQUESTS; i++) {
        int s = i / 5, n = i % 5;
        fprintf(f, "{\"session\": \"task-%d\", \"node\": \"%s\", ", s, nodes[n]);
        if (n == 0)
            fputs("\"parents\": [], \"role\": \"planner\", ", f);
        else if (n < 4)
            fputs("\"parents\": [\"plan\"], \"history\": \"none\", \"role\": \"executor\", "
                  "\"append_parent_replies\": true, ",
                  f);
        else
            fputs("\"parents\": [\"e0\", \"e1\", \"e2\"], \"history_parent\": \"plan\", "
                  "\"role\": \"aggregator\", \"append_parent_replies\": true, ",
                  f);
        fprintf(f,
                "\"input_length\": %d, \"new_input_length\": %d, \"output_length\": %d, "
                "\"wait_after_ready\": 0.05, \"arrival\": %.3f, \"hash_ids\": [%d, %d]}\n",
                800 + n * 50, 200 + n, 170 + n * 30, s * 0.2, s % 50, 1000 + i);
    }
    fclose(f);
}

static void write_mooncake(const char *path) {
    FILE *f = fopen(path, "w");
    for (int i = 0; i < REQUESTS; i++)
        fprintf(f,
                "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, "
                "\"hash_ids\": [%d, %d, %d, %d]}\n",
                i * 3, 1500 + i % 500, 20 + i % 300, i % 7, 7 + i % 11, 100 + 2 * i, 101 + 2 * i);
    fclose(f);
}

static int bench(const char *name, const char *dir, const char *trace, const char *format) {
    char yaml[512], path[600];
    snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
    snprintf(yaml, sizeof yaml,
             "workload: {kind: trace, trace: {path: %s, format: %s}}\nscheduler: {kind: rate}\n",
             trace, format);
    FILE *f = fopen(path, "w");
    fputs(yaml, f);
    fclose(f);
    config_t cfg;
    config_error_t err;
    double t0 = now_s();
    if (config_load_file(&cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", name, msg);
        return -1;
    }
    double t1 = now_s();
    plan_share_t share;
    plan_share_for(&cfg, 4, 1, &share);
    buffer_t part;
    buffer_init(&part);
    trace_wire_encode(&cfg, &share, &part);
    double t2 = now_s();
    trace_t *decoded = trace_wire_decode((const uint8_t *)part.data, part.len);
    double t3 = now_s();
    printf("RESULT name=trace_load format=%s requests=%d sessions=%zu load_s=%.3f "
           "worker_part_bytes=%zu encode_ms=%.1f decode_ms=%.1f\n",
           format, REQUESTS, cfg.workload.replay->n_sessions, t1 - t0, part.len, (t2 - t1) * 1e3,
           (t3 - t2) * 1e3);
    trace_unref(&decoded);
    buffer_clear(&part);
    config_free(&cfg);
    return 0;
}

int main(void) {
    char dir[] = "/tmp/stampede-bench-trace.XXXXXX", sessions[64], mooncake[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(sessions, sizeof sessions, "%s/sessions.jsonl", dir);
    snprintf(mooncake, sizeof mooncake, "%s/mooncake.jsonl", dir);
    write_session_trace(sessions);
    write_mooncake(mooncake);
    int rc =
        bench("sessions", dir, sessions, "session") | bench("mooncake", dir, mooncake, "mooncake");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = -1;
    return rc ? 1 : 0;
}
