/* Loading a replay trace: a session-trace JSONL file of 100,000 requests (20,000 agentic sessions
 * of 5 nodes with fan-out, fan-in, roles and hash ids) and a Mooncake file of 100,000 requests,
 * each loaded as `stampede run` does on the controller (config_load_file), then encoded into one
 * worker's part of four. The goal is under 2 s per 100,000 requests. Prints numbers; never passes
 * or fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_load.h"
#include "trace.h"

#define REQUESTS 100000

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
    bench_load_t run;
    if (bench_load_run(&run, name, path, yaml) != 0)
        return -1;
    double decode_start = bench_load_now_s();
    trace_t *decoded = trace_wire_decode((const uint8_t *)run.part.data, run.part.len);
    double decode_s = bench_load_now_s() - decode_start;
    printf("RESULT name=trace_load format=%s requests=%d sessions=%zu load_s=%.3f "
           "worker_part_bytes=%zu encode_ms=%.1f decode_ms=%.1f\n",
           format, REQUESTS, run.cfg.workload.replay->n_sessions, run.load_s, run.part.len,
           run.encode_s * 1e3, decode_s * 1e3);
    trace_unref(&decoded);
    bench_load_free(&run);
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
