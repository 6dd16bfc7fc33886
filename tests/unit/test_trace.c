/* Replay traces (common/trace*.c): the session-trace and Mooncake parsers, their refusals with
 * file:line, key and reason, the sessions they give the workload functions, and a worker's part
 * on the wire. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "message_case.h"
#include "plan.h"
#include "prompt.h"
#include "replay_file.h"
#include "support.h"
#include "temp_file.h"
#include "trace.h"
#include "trace_wire.h"
#include "unit_main.h"
#include "workload.h"

/* Writes lines to a file and loads a config replaying it (format, scheduler kind, wrap); returns
 * config_trace_load's result, with the formatted error (the file named t.jsonl) in msg and cfg
 * freed when refused. */
static int load_trace(config_t *cfg, const char *lines, const char *format, const char *scheduler,
                      bool wrap, char *msg, size_t len) {
    char path[128], yaml[1024];
    snprintf(path, sizeof path, "/tmp/stampede-test-trace-%d.jsonl", (int)getpid());
    snprintf(yaml, sizeof yaml,
             "workload:\n  kind: trace\n  trace: {path: %s, format: %s, wrap: %s}\n"
             "scheduler: {kind: %s}\nlimits: {duration: 10s}\n",
             path, format, wrap ? "true" : "false", scheduler);
    return replay_file_load(cfg, path, lines, yaml, config_trace_load, "t.jsonl", msg, len);
}

/* load_trace that must load: a refusal fails the test with its message. */
static void load_trace_ok(config_t *cfg, const char *lines, const char *format,
                          const char *scheduler, bool wrap) {
    char msg[1024] = "";
    if (load_trace(cfg, lines, format, scheduler, wrap, msg, sizeof msg) != 0)
        fail_msg("the trace should load: %s", msg);
}

/* Session i of cfg's replay arrives want_ns after the first. */
static void assert_arrival(const config_t *cfg, uint64_t i, int64_t want_ns) {
    int64_t got = workload_trace_arrival_ns(cfg, i);
    if (got != want_ns)
        fail_msg("session %llu arrives at %lld ns, expected %lld", (unsigned long long)i,
                 (long long)got, (long long)want_ns);
}

/* Each case's lines, replayed in format under scheduler (no wrap), must be refused with exactly
 * its message; every case that is not is printed, then the test fails. */
static void trace_refusals(const char *format, const char *scheduler, const message_case_t *cases,
                           size_t n) {
    size_t failures = 0;
    for (size_t i = 0; i < n; i++) {
        config_t cfg;
        char msg[1024] = "";
        int rc = load_trace(&cfg, cases[i].input, format, scheduler, false, msg, sizeof msg);
        if (rc == 0) {
            config_free(&cfg);
            print_error("%s case %zu loaded\n", format, i);
            failures++;
        } else if (strcmp(msg, cases[i].message) != 0) {
            print_error("%s case %zu:\n  expected %s\n  got      %s\n", format, i, cases[i].message,
                        msg);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static const char *diamond =
    "{\"session\": \"s1\", \"node\": \"agg\", \"parents\": [\"e1\", \"e2\"], \"history_parent\": "
    "\"plan\", \"role\": \"aggregator\", \"new_input_length\": 30, \"output_length\": 40, "
    "\"append_parent_replies\": true, \"arrival\": 2.5}\n"
    "{\"session\": \"s1\", \"node\": \"plan\", \"role\": \"planner\", \"input_length\": 100, "
    "\"output_length\": 20, \"arrival\": 2.5}\n"
    "\n"
    "{\"session\": \"s1\", \"node\": \"e1\", \"parents\": [\"plan\"], \"history\": \"none\", "
    "\"role\": \"executor\", \"new_input_length\": 7, \"output_length\": 8, \"wait_after_ready\": "
    "0.25}\n"
    "{\"session\": \"s1\", \"node\": \"e2\", \"parents\": [\"plan\"], \"history\": \"none\", "
    "\"role\": \"executor\", \"new_input_length\": 9, \"output_length\": 8}\n"
    "{\"session\": 7, \"node\": 0, \"input_length\": 50, \"output_length\": 5, \"arrival\": 1}\n"
    "{\"session\": 7, \"node\": 1, \"parents\": [0], \"input_length\": 80, \"output_length\": 5, "
    "\"arrival\": 1}\n";

static const char *mooncake =
    "{\"timestamp\": 100, \"input_length\": 1100, \"output_length\": 10, \"hash_ids\": [7, 8, "
    "9]}\n"
    "{\"timestamp\": 250, \"input_length\": 700, \"output_length\": 12, \"hash_ids\": [7, 4]}\n"
    "{\"timestamp\": 400, \"input_length\": 30, \"output_length\": 12}\n";

/* Azure's CSV: wall-clock arrivals with seven fractional digits, read to the nanosecond. */
static const char *azure = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                           "2023-11-16 18:17:03.9799600,4808,10\r\n"
                           "2023-11-16 18:17:04.0319601,3180,8\r\n"
                           "2023-11-16 23:59:59.9999999,110,0\r\n"
                           "2023-11-17 00:00:01.0000000,7,27\r\n";

static void
test_trace_session_format_orders_sessions_by_arrival_and_nodes_parents_first(void **state) {
    config_t cfg;
    load_trace_ok(&cfg, diamond, "session", "rate", false);
    const trace_t *t = cfg.workload.replay;
    assert_int_equal(t->n_sessions, 2);
    assert_true(t->timed);
    /* session 7 arrives first (1 s), s1 at 2.5 s: arrivals count from the first */
    assert_int_equal(workload_session_size(&cfg, 0), 2);
    assert_int_equal(workload_session_size(&cfg, 1), 4);
    assert_arrival(&cfg, 0, 0);
    assert_arrival(&cfg, 1, 1500000000);
    assert_int_equal(cfg.limits.max_sessions, 2); /* no wrap: the trace's sessions */
    assert_int_equal(t->max_parallel, 2);         /* the two executors */
    workload_session_t s = {0};
    /* session 7: node 1 gave only its whole prompt (80) after a turn of 50 + 5: 25 are fresh */
    assert_int_equal(workload_session_generate(&cfg, 0, &s), 0);
    assert_int_equal(s.nodes[1].input_tokens, 25);
    assert_int_equal(s.nodes[1].history_parent, 0);
    assert_int_equal(workload_session_generate(&cfg, 1, &s), 0);
    assert_int_equal(s.n_nodes, 4);
    /* plan, e1, e2, agg: parents first, the file's order otherwise */
    assert_int_equal(s.nodes[0].n_parents, 0);
    assert_int_equal(s.nodes[0].input_tokens, 100); /* input_length alone: all of it fresh */
    assert_string_equal(config_role_name(&cfg, s.nodes[0].role), "planner");
    assert_int_equal(s.nodes[1].input_tokens, 7);
    assert_int_equal(s.nodes[1].wait_after_ready_ns, 250000000);
    assert_true(s.nodes[1].inherit == 0.0);
    assert_int_equal(s.nodes[3].n_parents, 2);
    assert_int_equal(s.nodes[3].parents[0], 1);
    assert_int_equal(s.nodes[3].parents[1], 2);
    assert_int_equal(s.nodes[3].history_parent, 0);
    assert_true(s.nodes[3].inherit == 1.0);
    assert_true(s.nodes[3].append_parent_replies);
    assert_string_equal(config_role_name(&cfg, s.nodes[3].role), "aggregator");
    workload_session_free(&s);
    config_free(&cfg);
}

static void test_trace_refuses_bad_lines_with_file_line_key_and_reason(void **state) {
    static const message_case_t cases[] = {
        {"{\"session\": 1, \"node\": \"a\", \"output_length\": 3, \"new_input_length\": 2}\n"
         "{\"session\": 1, \"node\": \"b\", \"parents\": [\"z\"], \"output_length\": 3, "
         "\"new_input_length\": 2}\n",
         "t.jsonl:2: parents: session '1': node 'b': unknown parent 'z'"},
        {"{\"session\": 1, \"node\": \"a\", \"parents\": [\"c\"], \"output_length\": 3, "
         "\"new_input_length\": 2}\n"
         "{\"session\": 1, \"node\": \"b\", \"parents\": [\"a\"], \"output_length\": 3, "
         "\"new_input_length\": 2}\n"
         "{\"session\": 1, \"node\": \"c\", \"parents\": [\"b\"], \"output_length\": 3, "
         "\"new_input_length\": 2}\n",
         "t.jsonl:1: parents: session '1': node 'a' is on a cycle: a -> b -> c -> a"},
        {"{\"session\": 1, \"node\": \"a\", \"output_length\": 3, \"new_input_length\": 2}\n"
         "{\"session\": 1, \"node\": \"b\", \"parents\": [\"a\"], \"output_length\": 3, "
         "\"new_input_length\": 2}\n"
         "{\"session\": 1, \"node\": \"c\", \"parents\": [\"a\"], \"history_parent\": \"b\", "
         "\"output_length\": 3, \"new_input_length\": 2}\n",
         "t.jsonl:3: history_parent: session '1': node 'c': history parent 'b' is not an "
         "ancestor of it"},
        {"{\"session\": 1, \"node\": \"a\", \"new_input_length\": 2}\n",
         "t.jsonl:1: output_length: missing key 'output_length'"},
        {"{\"node\": \"a\", \"output_length\": 3, \"new_input_length\": 2}\n",
         "t.jsonl:1: session: missing key 'session'"},
        {"{\"session\": 1, \"node\": \"a\", \"output_length\": 3}\n",
         "t.jsonl:1: new_input_length: missing key 'new_input_length' (or 'input_length')"},
        {"{\"session\": 1, \"node\": \"a\", \"output_length\": 3, \"new_input_length\": 2}\n"
         "{\"session\": 1, \"node\": \"a\", \"output_length\": 3, \"new_input_length\": 2}\n",
         "t.jsonl:2: node: session '1': node 'a' is given twice (first at line 1)"},
        {"{\"session\": 1, \"node\": \"a\", \"output_length\": 0, \"new_input_length\": 2}\n",
         "t.jsonl:1: output_length: expected a whole number from 1 to 10000000"},
        {"{\"session\": 1, \"node\": \"a\", \"output_length\": 3, \"new_input_length\": 2\n",
         "t.jsonl:1: not JSON: '}' expected near end of file (column 69)"},
        {"", "t.jsonl: the trace is empty: give at least one request line"},
    };
    trace_refusals("session", "concurrent", cases, sizeof cases / sizeof cases[0]);
}

static void test_trace_timed_replay_needs_an_arrival_on_every_session(void **state) {
    static const message_case_t timed[] = {
        {"{\"session\": 1, \"node\": 0, \"output_length\": 3, \"new_input_length\": 2, "
         "\"arrival\": 0}\n"
         "{\"session\": 2, \"node\": 0, \"output_length\": 3, \"new_input_length\": 2}\n",
         "t.jsonl:2: arrival: session '2' has no arrival time: a timed replay "
         "(scheduler.kind: rate) needs one on every session"},
    };
    trace_refusals("session", "rate", timed, 1);
    /* untimed, the same trace loads */
    config_t cfg;
    load_trace_ok(&cfg, timed[0].input, "session", "concurrent", false);
    config_free(&cfg);
}

static void test_trace_mooncake_requests_sharing_a_hash_id_share_its_block_of_text(void **state) {
    config_t cfg;
    load_trace_ok(&cfg, mooncake, "mooncake", "rate", true);
    assert_int_equal(cfg.workload.replay->n_sessions, 3);
    assert_int_equal(workload_session_size(&cfg, 2), 1);
    assert_arrival(&cfg, 1, 150000000);
    /* wrap: copy k arrives k x (last arrival 300 ms + the mean gap 150 ms) later */
    assert_arrival(&cfg, 4, 450000000 + 150000000);
    assert_int_equal(cfg.limits.max_sessions, 0); /* wrap: only the file's limits */
    size_t cap = prompt_max_bytes(1100);
    char *a = malloc(cap), *b = malloc(cap), *c = malloc(cap);
    assert_true(workload_fresh_text(&cfg, 0, 0, 1100, a, cap) > 0);
    assert_true(workload_fresh_text(&cfg, 1, 0, 700, b, cap) > 0);
    assert_true(workload_fresh_text(&cfg, 3, 0, 1100, c, cap) > 0); /* wrapped copy of 0 */
    /* the first 512 words (hash 7) are the same text, the next block differs */
    size_t same = 0, words = 0;
    while (a[same] && a[same] == b[same]) {
        words += a[same] == ' ';
        same++;
    }
    assert_int_equal(words, 512);
    assert_string_equal(a, c); /* hash ids, not session ids, name the text */
    /* another text seed (a sweep's next level): other words, the same sharing by hash id */
    cfg.text_seed = 99;
    assert_true(workload_fresh_text(&cfg, 0, 0, 1100, c, cap) > 0);
    assert_true(strncmp(a, c, 64) != 0);
    assert_true(workload_fresh_text(&cfg, 1, 0, 700, b, cap) > 0);
    size_t block = 0;
    for (size_t k = 0, spaces = 0; c[k] && spaces < 512; k++)
        spaces += c[k] == ' ', block = k;
    assert_memory_equal(b, c, block); /* hash 7's block, in this seed's words */
    free(a);
    free(b);
    free(c);
    config_free(&cfg);
}

/* A timed replay cut by the limits requests the rate of the sessions in force, (n - 1) / the n-th
 * arrival x time_scale; the whole file its own rate; the schedule ends one mean gap after. */
static void test_trace_cut_by_the_limits_requests_the_rate_in_force(void **state) {
    char path[128], yaml[512];
    static const char *const rows =
        "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2}\n"
        "{\"timestamp\": 100, \"input_length\": 8, \"output_length\": 2}\n"
        "{\"timestamp\": 200, \"input_length\": 8, \"output_length\": 2}\n"
        "{\"timestamp\": 1000, \"input_length\": 8, \"output_length\": 2}\n";
    snprintf(path, sizeof path, "/tmp/stampede-test-trace-cut-%d.jsonl", (int)getpid());
    temp_file_write_at(path, rows);
    static const struct {
        const char *limits;
        double rate;    /* sessions per second in force */
        int64_t end_ns; /* the schedule's end, time_scale 0.5 */
    } cases[] = {
        {"{max_sessions: 10}", 3 / 0.5, 500000000 + 166666667}, /* the whole file */
        {"{max_sessions: 3}", 2 / 0.1, 100000000 + 50000000},   /* the first three rows */
        {"{max_requests: 2}", 1 / 0.05, 50000000 + 50000000},   /* the first two */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(
            yaml, sizeof yaml,
            "workload:\n  kind: trace\n  trace: {path: %s, format: mooncake, time_scale: 0.5}\n"
            "scheduler: {kind: rate}\nlimits: %s\n",
            path, cases[i].limits);
        config_t cfg;
        config_error_t err;
        assert_int_equal(config_load_string(&cfg, yaml, strlen(yaml), "w.yaml", &err), 0);
        assert_int_equal(config_trace_load(&cfg, &err), 0);
        assert_float_equal(cfg.scheduler.rate, cases[i].rate, 1e-9 * cases[i].rate);
        int64_t end = workload_schedule_end_ns(&cfg, INT64_MAX);
        assert_true(end - cases[i].end_ns <= 1 && cases[i].end_ns - end <= 1);
        assert_int_equal(workload_schedule_end_ns(&cfg, 10000000), -1); /* not by 10 ms */
        config_free(&cfg);
    }
    unlink(path);
}

/* time_scale stretches the arrivals and the wrap period alike. */
static void test_trace_time_scale_stretches_arrivals_and_wrap_period(void **state) {
    config_t cfg;
    load_trace_ok(&cfg, mooncake, "mooncake", "rate", true);
    cfg.workload.trace.time_scale = 2.0;
    assert_arrival(&cfg, 2, 600000000);
    assert_arrival(&cfg, 5, 2 * (450000000 + 300000000));
    config_free(&cfg);
}

static void test_trace_azure_rows_arrive_at_their_wall_clock_to_the_nanosecond(void **state) {
    config_t cfg;
    load_trace_ok(&cfg, azure, "azure", "rate", false);
    assert_int_equal(cfg.workload.replay->n_sessions, 4);
    assert_int_equal(cfg.limits.max_sessions, 4);
    assert_arrival(&cfg, 0, 0);
    assert_arrival(&cfg, 1, 52000100);
    /* across midnight: 23:59:59.9999999 - 18:17:03.97996 */
    assert_arrival(&cfg, 2, 20576020039900LL);
    assert_arrival(&cfg, 3, 20577020040000LL);
    const trace_t *t = cfg.workload.replay;
    assert_int_equal(t->nodes[t->sessions[0].first_node].input_tokens, 4808);
    assert_int_equal(t->nodes[t->sessions[0].first_node].output_tokens, 10);
    assert_int_equal(t->nodes[t->sessions[2].first_node].output_tokens, 1); /* 0 asks for 1 */
    config_free(&cfg);
}

/* Wall-clock arrivals two centuries apart saturate at 2^62 ns, as every time of the loader. */
static void test_trace_azure_arrivals_saturate_at_2_62_ns(void **state) {
    config_t cfg;
    load_trace_ok(&cfg,
                  "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                  "2023-11-16 18:17:03.9799600,10,2\n"
                  "2203-11-16 18:17:03.9799600,10,2\n",
                  "azure", "rate", false);
    assert_arrival(&cfg, 1, 0x4000000000000000LL);
    config_free(&cfg);
}

/* time_scale and wrap act on Azure arrivals as on Mooncake's. */
static void test_trace_azure_time_scale_and_wrap(void **state) {
    config_t cfg;
    const char *rows = "ContextTokens,GeneratedTokens,TIMESTAMP\n"
                       "10,5,2023-11-16 18:00:00.0000000\n"
                       "10,5,2023-11-16 18:00:00.1000000\n"
                       "10,5,2023-11-16 18:00:00.3000000\n";
    load_trace_ok(&cfg, rows, "azure", "rate", true);
    assert_arrival(&cfg, 2, 300000000);
    /* wrap: copy k arrives k x (last arrival 300 ms + the mean gap 150 ms) later */
    assert_arrival(&cfg, 3, 450000000);
    cfg.workload.trace.time_scale = 2.0;
    assert_arrival(&cfg, 1, 200000000);
    assert_arrival(&cfg, 4, 2 * (450000000 + 100000000));
    config_free(&cfg);
}

/* Veeksha's timed_synthetic_session rows: session_context gives the DAG; rows without it chain
 * in order (legacy linear); sessions arrive as the rate scheduler's would (no arrival in rows). */
static void
test_trace_veeksha_rows_keep_their_graph_and_arrive_at_the_scheduler_s_rate(void **state) {
    config_t cfg;
    const char *rows =
        "{\"session_id\": 8, \"input_length\": 8, \"new_input_length\": 8, \"output_length\": 4, "
        "\"session_context\": {\"node_id\": 0, \"parent_nodes\": [], \"history_parent\": null, "
        "\"wait_after_ready\": 0.0}}\n"
        "{\"session_id\": 8, \"input_length\": 8, \"new_input_length\": 8, \"output_length\": 4, "
        "\"session_context\": {\"node_id\": 1, \"parent_nodes\": [], \"history_parent\": null, "
        "\"wait_after_ready\": 0.1}}\n"
        "{\"session_id\": 8, \"input_length\": 16, \"new_input_length\": 8, \"output_length\": 5, "
        "\"session_context\": {\"node_id\": 2, \"parent_nodes\": [0, 1], \"history_parent\": 1, "
        "\"wait_after_ready\": 0.2}}\n"
        "{\"session_id\": \"a\", \"input_length\": 5, \"new_input_length\": 5, \"output_length\": "
        "3}\n"
        "{\"session_id\": \"a\", \"input_length\": 13, \"new_input_length\": 5, \"output_length\": "
        "3, "
        "\"wait_after_previous_response_s\": 0.5}\n";
    load_trace_ok(&cfg, rows, "veeksha", "rate", false);
    config_free(&cfg);
    /* again at a rate of 4 sessions/s, constant gaps: session 1 arrives 250 ms after session 0 */
    load_trace_ok(&cfg, rows, "veeksha", "rate, rate: 4, arrival: constant", false);
    const trace_t *t = cfg.workload.replay;
    assert_int_equal(t->n_sessions, 2);
    const trace_node_t *dag = &t->nodes[t->sessions[0].first_node];
    assert_int_equal(t->sessions[0].n_nodes, 3);
    assert_int_equal(dag[2].n_parents, 2);
    assert_int_equal(dag[2].history_parent, 1);
    assert_int_equal(dag[2].wait_ns, 200000000);
    const trace_node_t *chain = &t->nodes[t->sessions[1].first_node];
    assert_int_equal(t->sessions[1].n_nodes, 2);
    assert_int_equal(chain[1].n_parents, 1);
    assert_int_equal(chain[1].wait_ns, 500000000);
    assert_arrival(&cfg, 0, 0);
    assert_arrival(&cfg, 1, 250000000);
    config_free(&cfg);
}

static void test_trace_mooncake_refuses_a_line_without_timestamp(void **state) {
    static const message_case_t cases[] = {
        {"{\"timestamp\": 1, \"input_length\": 3, \"output_length\": 1}\n"
         "{\"input_length\": 3, \"output_length\": 1}\n",
         "t.jsonl:2: timestamp: missing key 'timestamp'"},
    };
    trace_refusals("mooncake", "rate", cases, 1);
}

static void test_trace_azure_refuses_bad_header_and_rows_with_line_and_column(void **state) {
    static const message_case_t cases[] = {
        {"TIMESTAMP,Context,GeneratedTokens\n",
         "t.jsonl:1: expected the Azure header TIMESTAMP,ContextTokens,"
         "GeneratedTokens, got 'TIMESTAMP,Context,GeneratedTokens'"},
        {"TIMESTAMP,ContextTokens,GeneratedTokens\n"
         "2023-11-16 18:17:03.9799600,4808,10\n"
         "2023-11-16 25:17:03.9799600,4808,10\n",
         "t.jsonl:3: TIMESTAMP: expected a time such as 2023-11-16 "
         "18:17:03.9799600, got '2023-11-16 25:17:03.9799600'"},
        /* past 2262 the nanoseconds since 1970 no longer fit in 63 bits */
        {"TIMESTAMP,ContextTokens,GeneratedTokens\n"
         "8254-11-17 00:00:00.5+01:00,4808,10\n",
         "t.jsonl:2: TIMESTAMP: expected a time such as 2023-11-16 "
         "18:17:03.9799600, got '8254-11-17 00:00:00.5+01:00'"},
        {"TIMESTAMP,ContextTokens,GeneratedTokens\n"
         "2023-11-16 18:17:03.9799600,-3,10\n",
         "t.jsonl:2: ContextTokens: expected a whole number from 0 to 10000000, got '-3'"},
    };
    trace_refusals("azure", "rate", cases, sizeof cases / sizeof cases[0]);
}

/* A part from the wire is bounded before anything is sized from it: a session larger than a
 * session may be (the fuzz target's first find: a 28 GB allocation), and a present session
 * claiming more nodes than bytes are left, are refused. */
static void test_trace_wire_refuses_sizes_beyond_the_bounds(void **state) {
    /* version 2, 1 session, period 0, untimed, size 200000 (varint), no present session */
    const uint8_t huge[] = {2, 1, 0, 0, 0xc0, 0x9a, 0x0c, 0};
    assert_null(trace_wire_decode(huge, sizeof huge));
    /* size 100 and present (step 1, arrival 1), but only 3 bytes of nodes follow */
    const uint8_t short_nodes[] = {2, 1, 0, 0, 100, 1, 1, 0, 0, 0};
    assert_null(trace_wire_decode(short_nodes, sizeof short_nodes));
    /* the same session at its bound's edge is accepted as a size (absent: no nodes) */
    const uint8_t edge[] = {2, 1, 0, 0, 0xa0, 0x8d, 0x06, 0};
    trace_t *t = trace_wire_decode(edge, sizeof edge);
    assert_non_null(t);
    assert_int_equal(t->sessions[0].n_nodes, WORKLOAD_MAX_NODES);
    trace_unref(&t);
    /* an old part (version 1) is refused whole */
    const uint8_t old[] = {1, 1, 0, 0, 0xa0, 0x8d, 0x06, 0};
    assert_null(trace_wire_decode(old, sizeof old));
}

/* A trace whose arrivals span 2^62 ns (a timestamp of 1e300 ms saturates there) loads, and its
 * wrap period (last arrival + the mean gap) saturates at 2^62 too, so the part a worker is sent
 * decodes (fuzz_trace_load's find: the period was 2^62 + gap, which the decoder refuses). */
static void test_trace_period_of_a_saturated_trace_travels(void **state) {
    config_t cfg;
    const char *lines = "{\"timestamp\": 1, \"input_length\": 3, \"output_length\": 1}\n"
                        "{\"timestamp\": 1e300, \"input_length\": 3, \"output_length\": 1}\n";
    load_trace_ok(&cfg, lines, "mooncake", "rate", false);
    assert_int_equal(cfg.workload.replay->period_ns, (int64_t)1 << 62);
    plan_share_t share;
    trace_t *t = replay_file_worker_part(&cfg, 1, 0, &share, NULL);
    assert_non_null(t);
    assert_int_equal(t->period_ns, (int64_t)1 << 62);
    trace_unref(&t);
    config_free(&cfg);
}

/* Each worker's part decodes to exactly the sessions it runs, with the same nodes and arrivals;
 * every session's size travels, other sessions' nodes do not. */
static void test_trace_wire_part_holds_the_workers_own_sessions_only(void **state) {
    config_t cfg;
    load_trace_ok(&cfg, diamond, "session", "rate", false);
    for (uint32_t w = 0; w < 2; w++) {
        plan_share_t share;
        buffer_t part;
        buffer_init(&part);
        trace_t *t = replay_file_worker_part(&cfg, 2, w, &share, &part);
        assert_non_null(t);
        assert_int_equal(t->n_sessions, 2);
        assert_int_equal(t->period_ns, cfg.workload.replay->period_ns);
        config_t mine;
        assert_int_equal(config_copy(&mine, &cfg), 0);
        trace_unref(&mine.workload.replay);
        mine.workload.replay = t;
        for (uint64_t i = 0; i < 2; i++) {
            assert_int_equal(workload_session_size(&mine, i), workload_session_size(&cfg, i));
            bool own = plan_share_owns(&share, i);
            assert_int_equal(trace_node(t, i, 0) != NULL, own);
            if (own) {
                assert_int_equal(workload_session_digest(&mine, i),
                                 workload_session_digest(&cfg, i));
                assert_int_equal(workload_trace_arrival_ns(&mine, i),
                                 workload_trace_arrival_ns(&cfg, i));
            }
        }
        assert_null(trace_wire_decode((const uint8_t *)part.data, part.len - 1));
        buffer_clear(&part);
        config_free(&mine);
    }
    config_free(&cfg);
}

/* With wrap, session t + k x n runs on worker (t + k x n) mod W: a worker needs every trace
 * session some such index reaches, and no other. */
static void test_trace_wire_wrap_sends_the_sessions_a_worker_reaches(void **state) {
    config_t cfg;
    char lines[4096] = "";
    for (int i = 0; i < 6; i++) /* 6 sessions */
        snprintf(lines + strlen(lines), sizeof lines - strlen(lines),
                 "{\"timestamp\": %d, \"input_length\": 3, \"output_length\": 1}\n", i * 10);
    load_trace_ok(&cfg, lines, "mooncake", "rate", true);
    for (uint32_t workers = 1; workers <= 5; workers++)
        for (uint32_t w = 0; w < workers; w++) {
            plan_share_t share;
            plan_share_for(&cfg, workers, w, &share);
            for (uint64_t t = 0; t < 6; t++) {
                bool reached = false;
                for (uint64_t i = t; i < 6 * workers * 2; i += 6)
                    reached = reached || plan_share_owns(&share, i);
                assert_int_equal(trace_wire_needed(&cfg, &share, t), reached);
            }
        }
    config_free(&cfg);
}

UNIT_MAIN(
    cmocka_unit_test(test_trace_session_format_orders_sessions_by_arrival_and_nodes_parents_first),
    cmocka_unit_test(test_trace_refuses_bad_lines_with_file_line_key_and_reason),
    cmocka_unit_test(test_trace_timed_replay_needs_an_arrival_on_every_session),
    cmocka_unit_test(test_trace_cut_by_the_limits_requests_the_rate_in_force),
    cmocka_unit_test(test_trace_mooncake_requests_sharing_a_hash_id_share_its_block_of_text),
    cmocka_unit_test(test_trace_time_scale_stretches_arrivals_and_wrap_period),
    cmocka_unit_test(test_trace_period_of_a_saturated_trace_travels),
    cmocka_unit_test(test_trace_mooncake_refuses_a_line_without_timestamp),
    cmocka_unit_test(test_trace_azure_rows_arrive_at_their_wall_clock_to_the_nanosecond),
    cmocka_unit_test(test_trace_azure_time_scale_and_wrap),
    cmocka_unit_test(test_trace_azure_arrivals_saturate_at_2_62_ns),
    cmocka_unit_test(test_trace_veeksha_rows_keep_their_graph_and_arrive_at_the_scheduler_s_rate),
    cmocka_unit_test(test_trace_azure_refuses_bad_header_and_rows_with_line_and_column),
    cmocka_unit_test(test_trace_wire_refuses_sizes_beyond_the_bounds),
    cmocka_unit_test(test_trace_wire_part_holds_the_workers_own_sessions_only),
    cmocka_unit_test(test_trace_wire_wrap_sends_the_sessions_a_worker_reaches))
