#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <string.h>

#include "sessions.h"

#define MS 1000000LL

/* A graph of n nodes: parents[j] lists node j's parents (-1 ends the list), roles[j] its role. */
static void make_graph(workload_session_t *g, workload_node_t *nodes, uint32_t n,
                       const int parents[][3], const uint32_t *roles) {
    static uint32_t edges[8][3]; /* the parent lists; one graph per test */
    assert_true(n <= 8);
    memset(nodes, 0, n * sizeof *nodes);
    for (uint32_t j = 0; j < n; j++) {
        nodes[j].index = j;
        nodes[j].role = roles[j];
        nodes[j].parents = edges[j];
        for (int p = 0; p < 3 && parents[j][p] >= 0; p++)
            nodes[j].parents[nodes[j].n_parents++] = (uint32_t)parents[j][p];
    }
    *g = (workload_session_t){.index = 0, .n_nodes = n, .nodes = nodes};
}

/* A chain 0 -> 1 -> ... -> n - 1 (n <= 4); roles[j] is node j's role, all 0 when roles is NULL. */
static void make_chain(workload_session_t *g, workload_node_t *nodes, uint32_t n,
                       const uint32_t *roles) {
    static const int chain[][3] = {{-1}, {0, -1}, {1, -1}, {2, -1}};
    static const uint32_t zero[4] = {0};
    assert_true(n <= 4);
    make_graph(g, nodes, n, chain, roles ? roles : zero);
}

/* Planner 0 -> executors 1, 2 -> aggregator 3 (roles 0, 1, 1, 2). The executor that ended last
 * (2) is on the path: 100 + 395 + 280 ms of requests, the 5 + 20 ms waits on the path idle. */
static void test_sessions_path_of_a_diamond(void **state) {
    (void)state;
    const int parents[][3] = {{-1}, {0, -1}, {0, -1}, {1, 2, -1}};
    const uint32_t roles[] = {0, 1, 1, 2};
    workload_node_t nodes[4];
    workload_session_t g;
    make_graph(&g, nodes, 4, parents, roles);
    const int64_t send[] = {1000 * MS, 1110 * MS, 1105 * MS, 1520 * MS};
    const int64_t end[] = {1100 * MS, 1300 * MS, 1500 * MS, 1800 * MS};
    uint64_t role_ns[3] = {0};
    sessions_path_t path;
    sessions_path(&g, send, end, role_ns, 3, &path);
    assert_int_equal(path.makespan_ns, 800 * MS);
    assert_int_equal(path.critical_ns, 775 * MS);
    assert_int_equal(path.idle_ns, 25 * MS);
    /* executor 1 ended at 1300 while executor 2 (sent at 1105) ran until 1500 */
    assert_int_equal(path.sibling_wait_ns, 200 * MS);
    assert_int_equal(path.length, 3);
    assert_int_equal(role_ns[0], 100 * MS);
    assert_int_equal(role_ns[1], 395 * MS);
    assert_int_equal(role_ns[2], 280 * MS);
}

/* Sequential executors (P -> E0 -> E1 -> A, no waits): the path is every request, idle 0. */
static void test_sessions_path_sequential_has_no_idle(void **state) {
    (void)state;
    const uint32_t roles[] = {0, 1, 1, 2};
    workload_node_t nodes[4];
    workload_session_t g;
    make_chain(&g, nodes, 4, roles);
    const int64_t send[] = {0 + 1, 100 * MS, 250 * MS, 600 * MS};
    const int64_t end[] = {100 * MS, 250 * MS, 600 * MS, 900 * MS};
    sessions_path_t path;
    sessions_path(&g, send, end, NULL, 0, &path);
    assert_int_equal(path.makespan_ns, 900 * MS - 1);
    assert_int_equal(path.critical_ns, path.makespan_ns);
    assert_int_equal(path.idle_ns, 0);
    assert_int_equal(path.sibling_wait_ns, 0);
    assert_int_equal(path.length, 4);
}

/* A chat of three turns with 1 s of think time before turns 1 and 2: idle is the think time. */
static void test_sessions_path_chat_idle_is_think_time(void **state) {
    (void)state;
    workload_node_t nodes[3];
    workload_session_t g;
    make_chain(&g, nodes, 3, NULL);
    const int64_t send[] = {10 * MS, 1210 * MS, 2500 * MS};
    const int64_t end[] = {210 * MS, 1500 * MS, 2600 * MS};
    uint64_t role_ns[1] = {0};
    sessions_path_t path;
    sessions_path(&g, send, end, role_ns, 1, &path);
    assert_int_equal(path.makespan_ns, 2590 * MS);
    assert_int_equal(path.critical_ns, 590 * MS);
    assert_int_equal(path.idle_ns, 2000 * MS);
    assert_int_equal(role_ns[0], 590 * MS);
}

/* An unsent node cuts the path there: the walk stops at the first node with no sent parent. */
static void test_sessions_path_stops_at_unsent_parents(void **state) {
    (void)state;
    workload_node_t nodes[3];
    workload_session_t g;
    make_chain(&g, nodes, 3, NULL);
    const int64_t send[] = {0, 50 * MS, 100 * MS};
    const int64_t end[] = {0, 80 * MS, 130 * MS};
    sessions_path_t path;
    sessions_path(&g, send, end, NULL, 0, &path);
    assert_int_equal(path.makespan_ns, 80 * MS);
    assert_int_equal(path.critical_ns, 60 * MS);
    assert_int_equal(path.length, 2);
    const int64_t none[] = {0, 0, 0};
    sessions_path(&g, none, none, NULL, 0, &path);
    assert_int_equal(path.makespan_ns, 0);
    assert_int_equal(path.length, 0);
}

/* Chats of `turns` turns (think time 0, 100 fresh words, 50 out, a 20-word system prompt). */
static void chat_config(config_t *cfg, double turns) {
    config_init(cfg);
    cfg->workload.kind = WORKLOAD_CHAT;
    dist_clear(&cfg->workload.turns);
    dist_fixed(&cfg->workload.turns, turns);
    dist_clear(&cfg->workload.think_time);
    dist_fixed(&cfg->workload.think_time, 0);
    cfg->workload.system_prompt_tokens = 20;
}

/* An ok record of (session, node): sent at send_ms, 100 ms long, usage prompt/completion. */
static request_record_t chat_record(uint64_t session, uint32_t node, int64_t send_ms,
                                    uint32_t prompt, uint32_t completion, bool last) {
    request_record_t rec;
    memset(&rec, 0, sizeof rec);
    rec.session = session;
    rec.node = node;
    rec.send_ns = send_ms * MS;
    rec.first_token_ns = rec.send_ns + 10 * MS;
    rec.end_ns = rec.send_ns + 100 * MS;
    rec.has_usage = true;
    rec.prompt_tokens = prompt;
    rec.completion_tokens = completion;
    rec.session_end = last;
    return rec;
}

/* A three-turn chat closes on its last record: one session counted, its figures and the reuse
 * (turn 1 shares turn 0's 100 + 50, turn 2 shares turn 1's 160 + 50) exactly; nothing left open. */
/* Replica affinity: a session answered by one replica at an endpoint is held; one whose third
 * turn another replica answered moved; a session at two endpoints counts at each; records
 * without a replica are not checked. */
static void test_sessions_replica_affinity_detects_a_session_that_moved(void **state) {
    (void)state;
    config_t cfg;
    chat_config(&cfg, 3);
    sessions_t *s = sessions_new(&cfg, 2);
    assert_non_null(s);
    const uint64_t a = 0xA, b = 0xB;
    uint64_t replicas[4][3] = {{a, a, a}, {a, a, b}, {a, b, a}, {0, 0, 0}};
    for (uint64_t session = 0; session < 4; session++)
        for (uint32_t node = 0; node < 3; node++) {
            request_record_t r = chat_record(session, node, 1000 + node * 300, 100, 50, node == 2);
            r.replica = replicas[session][node];
            r.endpoint = session == 2 ? node % 2 : 0; /* session 2: endpoints 0, 1, 0 */
            assert_int_equal(sessions_add(s, &r), 0);
        }
    const sessions_stats_t *st = sessions_stats(s);
    assert_int_equal(st->replica_checked, 3);
    assert_int_equal(st->replica_moved, 1); /* session 1; session 2's b came from endpoint 1 */
    assert_int_equal(st->endpoint_replica_checked[0], 3);
    assert_int_equal(st->endpoint_replica_moved[0], 1);
    assert_int_equal(st->endpoint_replica_checked[1], 1);
    assert_int_equal(st->endpoint_replica_moved[1], 0);
    sessions_destroy(&s);
    config_free(&cfg);
}

static void test_sessions_fold_a_chat(void **state) {
    (void)state;
    config_t cfg;
    chat_config(&cfg, 3);
    sessions_t *s = sessions_new(&cfg, 2);
    assert_non_null(s);
    request_record_t recs[] = {chat_record(7, 0, 1000, 100, 50, false),
                               chat_record(7, 1, 1300, 160, 50, false),
                               chat_record(7, 2, 1700, 320, 50, true)};
    recs[2].endpoint = 1;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sessions_open(s), i ? 1 : 0);
        assert_int_equal(sessions_add(s, &recs[i]), 0);
    }
    assert_int_equal(sessions_open(s), 0);
    const sessions_stats_t *st = sessions_stats(s);
    assert_int_equal(st->closed, 1);
    assert_int_equal(st->counted, 1);
    assert_int_equal(histogram_max(st->makespan), 800 * MS);
    assert_int_equal(histogram_max(st->critical), 300 * MS);
    assert_int_equal(histogram_max(st->idle), 500 * MS);
    assert_int_equal(histogram_max(st->requests), 3);
    assert_int_equal(st->critical_ns, 300 * MS);
    assert_int_equal(st->role_critical_ns[0], 300 * MS);
    assert_int_equal(st->n_roles, 1);
    assert_int_equal(st->reuse_shared, 150 + 210);
    assert_int_equal(st->reuse_prompt, 100 + 160 + 320);
    assert_int_equal(st->endpoint_shared[0], 150);
    assert_int_equal(st->endpoint_prompt[1], 320);
    assert_int_equal(st->affinity_checked, 1);
    assert_int_equal(st->affinity_split, 1);
    sessions_destroy(&s);
    assert_null(s);
    config_free(&cfg);
}

/* Sessions that started before the window, ended past its limit, missed a node or had a warm-up
 * or cancelled request close without being counted. */
static void test_sessions_only_complete_sessions_in_the_window_count(void **state) {
    (void)state;
    config_t cfg;
    chat_config(&cfg, 2);
    sessions_t *s = sessions_new(&cfg, 1);
    sessions_set_window(s, 1000 * MS, 5000 * MS);
    request_record_t early[] = {chat_record(1, 0, 900, 10, 5, false),
                                chat_record(1, 1, 1200, 20, 5, true)};
    request_record_t late[] = {chat_record(2, 0, 4800, 10, 5, false),
                               chat_record(2, 1, 4950, 20, 5, true)};
    request_record_t missing[] = {chat_record(3, 0, 2000, 10, 5, true)};
    request_record_t cancelled[] = {chat_record(4, 0, 2000, 10, 5, false),
                                    chat_record(4, 1, 2200, 20, 5, true)};
    cancelled[1].error = ERROR_CANCELLED;
    request_record_t warm[] = {chat_record(5, 0, 2000, 10, 5, false),
                               chat_record(5, 1, 2200, 20, 5, true)};
    warm[0].warmup = true;
    request_record_t good[] = {chat_record(6, 0, 2000, 10, 5, false),
                               chat_record(6, 1, 2200, 20, 5, true)};
    for (int i = 0; i < 2; i++) {
        sessions_add(s, &early[i]);
        sessions_add(s, &late[i]);
        sessions_add(s, &cancelled[i]);
        sessions_add(s, &warm[i]);
        sessions_add(s, &good[i]);
    }
    sessions_add(s, &missing[0]);
    const sessions_stats_t *st = sessions_stats(s);
    assert_int_equal(st->closed, 6);
    assert_int_equal(st->counted, 1);
    assert_int_equal(histogram_max(st->makespan), 300 * MS);
    assert_int_equal(sessions_open(s), 0);
    sessions_destroy(&s);
    config_free(&cfg);
}

/* Many sessions open at once, interleaved, closed in another order: the table grows, each closes
 * with its own records, and none is left open. */
static void test_sessions_interleaved_sessions_close_apart(void **state) {
    (void)state;
    enum { N = 500 };
    config_t cfg;
    chat_config(&cfg, 2);
    sessions_t *s = sessions_new(&cfg, 1);
    for (uint64_t i = 0; i < N; i++) {
        request_record_t rec = chat_record(i * 1000003, 0, 1000 + (int64_t)i, 10, 5, false);
        assert_int_equal(sessions_add(s, &rec), 0);
    }
    assert_int_equal(sessions_open(s), N);
    for (uint64_t k = 0; k < N; k++) {
        uint64_t i = (k * 211) % N;
        request_record_t rec = chat_record(i * 1000003, 1, 2000 + (int64_t)i, 20, 5, true);
        assert_int_equal(sessions_add(s, &rec), 0);
        assert_int_equal(sessions_open(s), N - k - 1);
    }
    const sessions_stats_t *st = sessions_stats(s);
    assert_int_equal(st->counted, N);
    assert_int_equal(histogram_min(st->makespan), 1100 * MS);
    assert_int_equal(histogram_max(st->makespan), 1100 * MS);
    assert_int_equal(st->reuse_shared, N * 15);
    assert_int_equal(st->affinity_split, 0);
    sessions_destroy(&s);
    config_free(&cfg);
}

UNIT_MAIN(cmocka_unit_test(test_sessions_path_of_a_diamond),
          cmocka_unit_test(test_sessions_path_sequential_has_no_idle),
          cmocka_unit_test(test_sessions_path_chat_idle_is_think_time),
          cmocka_unit_test(test_sessions_path_stops_at_unsent_parents),
          cmocka_unit_test(test_sessions_fold_a_chat),
          cmocka_unit_test(test_sessions_replica_affinity_detects_a_session_that_moved),
          cmocka_unit_test(test_sessions_only_complete_sessions_in_the_window_count),
          cmocka_unit_test(test_sessions_interleaved_sessions_close_apart))
