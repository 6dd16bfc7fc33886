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

/* Every figure of path is expected's, exactly; a failure names the case and the figure. */
static void assert_path(const char *name, const sessions_path_t *path, sessions_path_t expected) {
    const struct {
        const char *figure;
        int64_t got, expected;
    } figures[] = {
        {"makespan_ns", path->makespan_ns, expected.makespan_ns},
        {"critical_ns", path->critical_ns, expected.critical_ns},
        {"idle_ns", path->idle_ns, expected.idle_ns},
        {"sibling_wait_ns", path->sibling_wait_ns, expected.sibling_wait_ns},
        {"length", path->length, expected.length},
    };
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (figures[i].got != figures[i].expected)
            fail_msg("%s: %s is %lld, expected %lld", name, figures[i].figure,
                     (long long)figures[i].got, (long long)figures[i].expected);
}

/* One session's graph, its requests' send and end times, and the figures of its critical path. */
typedef struct path_case {
    const char *name;
    uint32_t n;
    int parents[4][3]; /* node j's parents, -1 ending the list */
    uint32_t roles[4];
    int64_t send[4], end[4];
    uint32_t n_roles;   /* 0: the time per role is not asked */
    int64_t role_ns[3]; /* the critical path's time per role */
    sessions_path_t expected;
} path_case_t;

#define CHAIN                                                                                      \
    {                                                                                              \
        {-1}, {0, -1}, {1, -1}, {                                                                  \
            2, -1                                                                                  \
        }                                                                                          \
    }

static const path_case_t path_cases[] = {
    /* planner 0 -> executors 1, 2 -> aggregator 3: the executor that ended last (2) is on the
     * path, 100 + 395 + 280 ms of requests, the 5 + 20 ms waits on it idle; executor 1 ended at
     * 1300 while executor 2 (sent at 1105) ran until 1500 */
    {"a diamond",
     4,
     {{-1}, {0, -1}, {0, -1}, {1, 2, -1}},
     {0, 1, 1, 2},
     {1000 * MS, 1110 * MS, 1105 * MS, 1520 * MS},
     {1100 * MS, 1300 * MS, 1500 * MS, 1800 * MS},
     3,
     {100 * MS, 395 * MS, 280 * MS},
     {.makespan_ns = 800 * MS,
      .critical_ns = 775 * MS,
      .idle_ns = 25 * MS,
      .sibling_wait_ns = 200 * MS,
      .length = 3}},
    /* P -> E0 -> E1 -> A with no waits: the path is every request, idle 0 */
    {"sequential executors",
     4,
     CHAIN,
     {0, 1, 1, 2},
     {0 + 1, 100 * MS, 250 * MS, 600 * MS},
     {100 * MS, 250 * MS, 600 * MS, 900 * MS},
     0,
     {0},
     {.makespan_ns = 900 * MS - 1,
      .critical_ns = 900 * MS - 1,
      .idle_ns = 0,
      .sibling_wait_ns = 0,
      .length = 4}},
    /* three turns with 1 s of think time before turns 1 and 2: idle is the think time */
    {"a chat with think time",
     3,
     CHAIN,
     {0},
     {10 * MS, 1210 * MS, 2500 * MS},
     {210 * MS, 1500 * MS, 2600 * MS},
     1,
     {590 * MS},
     {.makespan_ns = 2590 * MS,
      .critical_ns = 590 * MS,
      .idle_ns = 2000 * MS,
      .sibling_wait_ns = 0,
      .length = 3}},
    /* an unsent node cuts the path there: the walk stops at the first node with no sent parent */
    {"node 0 unsent",
     3,
     CHAIN,
     {0},
     {0, 50 * MS, 100 * MS},
     {0, 80 * MS, 130 * MS},
     0,
     {0},
     {.makespan_ns = 80 * MS,
      .critical_ns = 60 * MS,
      .idle_ns = 20 * MS,
      .sibling_wait_ns = 0,
      .length = 2}},
    {"no node sent", 3, CHAIN, {0}, {0}, {0}, 0, {0}, {0}},
};

static void test_sessions_path_figures_of_each_graph(void **state) {
    for (size_t i = 0; i < sizeof path_cases / sizeof path_cases[0]; i++) {
        const path_case_t *c = &path_cases[i];
        workload_node_t nodes[4];
        workload_session_t g;
        make_graph(&g, nodes, c->n, c->parents, c->roles);
        uint64_t role_ns[3] = {0};
        sessions_path_t path;
        sessions_path(&g, c->send, c->end, c->n_roles ? role_ns : NULL, c->n_roles, &path);
        assert_path(c->name, &path, c->expected);
        for (uint32_t r = 0; r < c->n_roles; r++)
            if ((int64_t)role_ns[r] != c->role_ns[r])
                fail_msg("%s: role %u has %lld ns on the path, expected %lld", c->name, r,
                         (long long)role_ns[r], (long long)c->role_ns[r]);
    }
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

/* A sessions table over chats (chat_config) and the config it reads, for one test. */
typedef struct chat_sessions {
    config_t cfg;
    sessions_t *sessions;
} chat_sessions_t;

/* Opens the table for chats of turns turns fed by workers workers; returns it. */
static sessions_t *chat_sessions_open(chat_sessions_t *f, double turns, uint32_t workers) {
    chat_config(&f->cfg, turns);
    f->sessions = sessions_new(&f->cfg, workers);
    assert_non_null(f->sessions);
    return f->sessions;
}

/* Destroys the table (its pointer set to NULL) and frees the config. */
static void chat_sessions_close(chat_sessions_t *f) {
    sessions_destroy(&f->sessions);
    assert_null(f->sessions);
    config_free(&f->cfg);
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

/* Replica affinity: a session answered by one replica at an endpoint is held; one whose third
 * turn another replica answered moved; a session at two endpoints counts at each; records
 * without a replica are not checked. */
static void test_sessions_replica_affinity_detects_a_session_that_moved(void **state) {
    chat_sessions_t f;
    sessions_t *s = chat_sessions_open(&f, 3, 2);
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
    chat_sessions_close(&f);
}

/* A three-turn chat closes on its last record: one session counted, its figures and the reuse
 * (turn 1 shares turn 0's 100 + 50, turn 2 shares turn 1's 160 + 50) exactly; nothing left open. */
static void test_sessions_fold_a_chat(void **state) {
    chat_sessions_t f;
    sessions_t *s = chat_sessions_open(&f, 3, 2);
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
    chat_sessions_close(&f);
}

/* Sessions that started before the window, ended past its limit, missed a node or had a warm-up
 * or cancelled request close without being counted. */
static void test_sessions_only_complete_sessions_in_the_window_count(void **state) {
    chat_sessions_t f;
    sessions_t *s = chat_sessions_open(&f, 2, 1);
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
    chat_sessions_close(&f);
}

/* Many sessions open at once, interleaved, closed in another order: the table grows, each closes
 * with its own records, and none is left open. */
static void test_sessions_interleaved_sessions_close_apart(void **state) {
    enum { N = 500 };
    chat_sessions_t f;
    sessions_t *s = chat_sessions_open(&f, 2, 1);
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
    chat_sessions_close(&f);
}

UNIT_MAIN(cmocka_unit_test(test_sessions_path_figures_of_each_graph),
          cmocka_unit_test(test_sessions_fold_a_chat),
          cmocka_unit_test(test_sessions_replica_affinity_detects_a_session_that_moved),
          cmocka_unit_test(test_sessions_only_complete_sessions_in_the_window_count),
          cmocka_unit_test(test_sessions_interleaved_sessions_close_apart))
