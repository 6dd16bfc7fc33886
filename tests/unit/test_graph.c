/* Session graphs from the workload file: bad graphs refused with their exact messages, each shape's
 * structure, and determinism (same seed, same graphs whatever the generation order). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config_case.h"
#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "support.h"
#include "workload.h"

#define TEMPLATE_HEAD                                                                              \
    "limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph:\n    shape: template\n"           \
    "    nodes:\n"

static const message_case_t bad_graphs[] = {
    {TEMPLATE_HEAD "      - {id: a, parents: [c]}\n      - {id: b, parents: [a]}\n"
                   "      - {id: c, parents: [b]}\n",
     "bad.yaml:7:9: workload.graph.nodes[0]: node 'a' is on a cycle: a -> b -> c -> a"},
    {TEMPLATE_HEAD "      - {id: a}\n      - {id: b, parents: [b]}\n",
     "bad.yaml:8:9: workload.graph.nodes[1]: node 'b' is on a cycle: b -> b"},
    {TEMPLATE_HEAD "      - {id: a}\n      - {id: b, parents: [a, z]}\n",
     "bad.yaml:8:30: workload.graph.nodes[1].parents[1]: node 'b': unknown parent 'z'"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph:\n    shape: template\n"
     "    nodes: []\n",
     "bad.yaml:6:12: workload.graph.nodes: the graph is empty: give at least one node"},
    {TEMPLATE_HEAD "      - {id: a}\n      - {id: b, parents: [a]}\n"
                   "      - {id: c, parents: [a], history_parent: b}\n",
     "bad.yaml:9:47: workload.graph.nodes[2].history_parent: node 'c': history parent 'b' is not "
     "an ancestor of it"},
    {TEMPLATE_HEAD "      - {id: a}\n      - {id: b, parents: [a], history_parent: z}\n",
     "bad.yaml:8:47: workload.graph.nodes[1].history_parent: node 'b': unknown history parent "
     "'z'"},
    {TEMPLATE_HEAD "      - {id: a}\n      - {id: a}\n",
     "bad.yaml:8:14: workload.graph.nodes[1].id: node 'a' is given twice (first at line 7)"},
    {TEMPLATE_HEAD "      - {parents: [a]}\n",
     "bad.yaml:7:9: workload.graph.nodes[0].id: node 1 (line 7) has no id"},
    {"limits: {duration: 10s}\nworkload:\n  kind: chat\n  graph: {shape: linear}\n",
     "bad.yaml:4:10: workload.graph: a graph goes with kind: graph (kind is chat)"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n",
     "bad.yaml:3:3: workload.graph: kind: graph needs graph: {shape: linear | diamond | fanout | "
     "branching | template, ...}"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph: {shape: diamond, nodes: "
     "{planer: {history: full}}}\n",
     "bad.yaml:4:35: workload.graph.nodes.planer: unknown key 'planer'; did you mean 'planner'?"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph: {shape: diamond, nodes: "
     "{planner: {history: most}}}\n",
     "bad.yaml:4:54: workload.graph.nodes.planner.history: expected full, none or a fraction in "
     "[0, 1], got 'most'"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph: {shape: fanout, children: 0}\n",
     "bad.yaml:4:36: workload.graph.children: expected at least 1, got 0"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph: {shape: diamond, children: 2}\n",
     "bad.yaml:4:27: workload.graph.children: a diamond graph does not take children (it takes: "
     "executors, executor_count, nodes, message_overhead_tokens, step_overhead, context_limit, "
     "context_margin)"},
    {"limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph: {shape: linear, step_overhead: "
     "fast}\n",
     "bad.yaml:4:41: workload.graph.step_overhead: expected a duration, a number of seconds or a "
     "distribution mapping such as {dist: exponential, mean: 2s}, got 'fast'"},
};

static void test_graph_bad_graphs_give_exact_messages(void **state) {
    CONFIG_CASE_REFUSALS(bad_graphs);
}

/* Loads yaml, then its written-back form: both must give the same sessions. */
static void load_and_reload(config_t *cfg, const char *yaml) {
    config_t again;
    config_case_load(cfg, yaml);
    char *text = config_to_yaml_unredacted(cfg);
    assert_non_null(text);
    config_case_load(&again, text);
    for (uint64_t i = 0; i < 5; i++)
        assert_true(workload_session_digest(cfg, i) == workload_session_digest(&again, i));
    free(text);
    config_free(&again);
}

/* load_and_reload of a diamond of planner, executors and aggregator with the nodes' sizes the
 * tests below count on: graph_keys are more keys of the graph (whole lines), executor_keys more
 * keys of the executor's mapping (", key: value"). */
static void load_diamond(config_t *cfg, const char *graph_keys, const char *executor_keys) {
    char text[1024];
    snprintf(text, sizeof text,
             "limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph:\n    shape: diamond\n%s"
             "    nodes:\n      planner: {input_tokens: 200, output_tokens: 170}\n"
             "      executor: {input_tokens: 470, output_tokens: 280%s}\n"
             "      aggregator: {input_tokens: 825, output_tokens: 640}\n",
             graph_keys, executor_keys);
    load_and_reload(cfg, text);
}

static workload_session_t generate(const config_t *cfg, uint64_t index) {
    workload_session_t s = {0};
    assert_int_equal(workload_session_generate(cfg, index, &s), 0);
    assert_int_equal(s.n_nodes, workload_session_size(cfg, index));
    for (uint32_t j = 0; j < s.n_nodes; j++) { /* parents first; history parent an ancestor */
        const workload_node_t *n = &s.nodes[j];
        assert_int_equal(n->index, j);
        assert_int_equal(n->history, WORKLOAD_HISTORY_CHAIN);
        for (uint32_t p = 0; p < n->n_parents; p++)
            assert_true(n->parents[p] < j);
        if (n->n_parents)
            assert_true(n->history_parent < j);
    }
    return s;
}

static void test_graph_template_is_sorted_parents_first(void **state) {
    config_t cfg;
    load_and_reload(&cfg, TEMPLATE_HEAD
                    "      - {id: report, parents: [w1, w2], history_parent: plan, role: boss,\n"
                    "         append_parent_replies: true, input_tokens: 30}\n"
                    "      - {id: w2, parents: [plan], history: none, role: worker}\n"
                    "      - {id: plan, role: boss, output_tokens: 7}\n"
                    "      - {id: w1, parents: [plan], history: 0.5, role: worker,\n"
                    "         wait_after_ready: 250ms}\n");
    assert_int_equal(cfg.workload.n_roles, 2);
    assert_string_equal(config_role_name(&cfg, 0), "boss");
    assert_string_equal(config_role_name(&cfg, 1), "worker");
    workload_session_t s = generate(&cfg, 3);
    assert_int_equal(s.n_nodes, 4);
    /* file order kept where the graph allows: plan, w2, w1, report */
    assert_string_equal(cfg.workload.graph.nodes[0].id, "plan");
    assert_string_equal(cfg.workload.graph.nodes[1].id, "w2");
    assert_string_equal(cfg.workload.graph.nodes[2].id, "w1");
    assert_int_equal(s.nodes[0].n_parents, 0);
    assert_int_equal(s.nodes[0].output_tokens, 7);
    assert_true(s.nodes[1].inherit == 0.0);
    assert_true(s.nodes[2].inherit == 0.5);
    assert_int_equal(s.nodes[2].wait_after_ready_ns, 250000000);
    const workload_node_t *report = &s.nodes[3];
    assert_int_equal(report->n_parents, 2);
    assert_int_equal(report->parents[0], 2); /* w1, as the file lists them */
    assert_int_equal(report->parents[1], 1);
    assert_int_equal(report->history_parent, 0);
    assert_true(report->append_parent_replies);
    assert_int_equal(report->role, 0);
    assert_int_equal(report->input_tokens, 30);
    assert_int_equal(s.nodes[1].role, 1);
    workload_session_free(&s);
    config_free(&cfg);
}

static void test_graph_template_fan_in_is_not_capped(void **state) {
    char yaml[16384];
    size_t len = (size_t)snprintf(yaml, sizeof yaml, TEMPLATE_HEAD "      - {id: root}\n");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(yaml + len, sizeof yaml - len,
                                "      - {id: w%d, parents: [root]}\n", i);
    len += (size_t)snprintf(yaml + len, sizeof yaml - len, "      - id: join\n        parents: [");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(yaml + len, sizeof yaml - len, "%sw%d", i ? ", " : "", i);
    snprintf(yaml + len, sizeof yaml - len, "]\n");
    config_t cfg;
    load_and_reload(&cfg, yaml);
    workload_session_t s = generate(&cfg, 0);
    assert_int_equal(s.n_nodes, 42);
    assert_int_equal(s.nodes[41].n_parents, 40);
    for (uint32_t p = 0; p < 40; p++)
        assert_int_equal(s.nodes[41].parents[p], p + 1);
    workload_session_free(&s);
    config_free(&cfg);
}

static void test_graph_diamond_parallel_and_sequential(void **state) {
    config_t cfg;
    load_diamond(&cfg,
                 "    executors: parallel\n    executor_count: 4\n    message_overhead_tokens: 0\n",
                 "");
    assert_string_equal(config_role_name(&cfg, 0), "planner");
    assert_string_equal(config_role_name(&cfg, 2), "aggregator");
    workload_session_t s = generate(&cfg, 1);
    assert_int_equal(s.n_nodes, 6);
    for (uint32_t e = 1; e <= 4; e++) {
        assert_int_equal(s.nodes[e].n_parents, 1);
        assert_int_equal(s.nodes[e].parents[0], 0);
        assert_int_equal(s.nodes[e].role, 1);
        assert_true(s.nodes[e].append_parent_replies); /* the planner's reply is its task */
        assert_true(s.nodes[e].inherit == 0.0);
        assert_int_equal(s.nodes[e].input_tokens, 470);
    }
    assert_int_equal(s.nodes[5].n_parents, 4);
    assert_int_equal(s.nodes[5].history_parent, 0);
    assert_true(s.nodes[5].append_parent_replies);
    assert_int_equal(s.nodes[5].input_tokens, 825);
    assert_int_equal(s.nodes[5].output_tokens, 640);
    workload_session_free(&s);
    config_free(&cfg);

    load_diamond(
        &cfg, /* A2A-like overhead too */
        "    executors: sequential\n    executor_count: 4\n    message_overhead_tokens: 50\n", "");
    s = generate(&cfg, 1);
    assert_int_equal(s.nodes[1].n_parents, 1);
    assert_int_equal(s.nodes[1].input_tokens, 470 + 50);
    for (uint32_t e = 2; e <= 4; e++) { /* after the planner and the previous executor */
        assert_int_equal(s.nodes[e].n_parents, 2);
        assert_int_equal(s.nodes[e].parents[0], 0);
        assert_int_equal(s.nodes[e].parents[1], e - 1);
        assert_int_equal(s.nodes[e].input_tokens, 470 + 2 * 50);
    }
    assert_int_equal(s.nodes[5].input_tokens, 825 + 4 * 50);
    workload_session_free(&s);
    config_free(&cfg);
}

/* A framework's per-step overhead is added to the wait of every node that has parents, drawn on
 * its own (the other draws do not move); the context budget keys read and write back. */
static void test_graph_step_overhead_waits_before_every_hand_off(void **state) {
    config_t plain, framework;
    load_diamond(&plain, "    executor_count: 2\n", ", wait_after_ready: 30ms");
    load_diamond(&framework,
                 "    executor_count: 2\n"
                 "    step_overhead: {dist: uniform, min: 400ms, max: 600ms}\n"
                 "    context_limit: 4096\n    context_margin: 256\n",
                 ", wait_after_ready: 30ms");
    assert_int_equal(framework.workload.graph.context_limit, 4096);
    assert_int_equal(framework.workload.graph.context_margin, 256);
    char *written = config_to_yaml(&framework);
    assert_non_null(written);
    assert_non_null(strstr(written, "    context_limit: 4096\n    context_margin: 256\n"));
    assert_non_null(strstr(written, "    step_overhead: "));
    free(written);
    for (uint64_t i = 0; i < 20; i++) {
        workload_session_t a = generate(&plain, i), b = generate(&framework, i);
        assert_int_equal(b.nodes[0].wait_after_ready_ns, 0); /* the root is sent at once */
        for (uint32_t j = 1; j < a.n_nodes; j++) {
            int64_t extra = b.nodes[j].wait_after_ready_ns - a.nodes[j].wait_after_ready_ns;
            assert_true(extra >= 400000000 && extra <= 600000000);
            assert_int_equal(a.nodes[j].input_tokens, b.nodes[j].input_tokens);
        }
        assert_int_equal(a.nodes[1].wait_after_ready_ns, 30000000);
        workload_session_free(&a);
        workload_session_free(&b);
    }
    config_free(&plain);
    config_free(&framework);
}

static void test_graph_linear_grows_one_conversation(void **state) {
    config_t cfg;
    load_and_reload(&cfg, "limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph:\n"
                          "    shape: linear\n    nodes:\n      turn:\n"
                          "        input_tokens: {dist: inverse_gaussian, mean: 300, shape: 200}\n"
                          "        output_tokens: {dist: lognormal, mean: 150, sigma: 1}\n"
                          "        wait_after_ready:\n          dist: mixture\n"
                          "          components:\n"
                          "            - {weight: 0.8, dist: uniform, min: 1ms, max: 5ms}\n"
                          "            - {weight: 0.2, dist: pareto, scale: 100ms, alpha: 1.5}\n");
    size_t tail = 0, waits = 0;
    for (uint64_t i = 0; i < 20; i++) {
        workload_session_t s = generate(&cfg, i);
        assert_true(s.n_nodes >= 100 && s.n_nodes <= 150);
        for (uint32_t j = 1; j < s.n_nodes; j++) {
            assert_int_equal(s.nodes[j].n_parents, 1);
            assert_int_equal(s.nodes[j].parents[0], j - 1);
            assert_int_equal(s.nodes[j].history_parent, j - 1);
            assert_true(s.nodes[j].inherit == 1.0);
            int64_t w = s.nodes[j].wait_after_ready_ns;
            assert_true((w >= 1000000 && w <= 5000000) || w >= 100000000);
            tail += w >= 100000000;
            waits++;
        }
        workload_session_free(&s);
    }
    assert_true(tail > waits / 10 && tail < waits * 3 / 10); /* about 20 % in the tail */
    config_free(&cfg);
}

static void test_graph_fanout_reports_back_to_a_continuation(void **state) {
    config_t cfg;
    load_and_reload(&cfg, "limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph:\n"
                          "    shape: fanout\n    children: 3\n    child_length: 2\n"
                          "    rounds: 2\n");
    workload_session_t s = generate(&cfg, 0);
    /* main, 3 x 2 children, continuation; again 3 x 2 children, continuation */
    assert_int_equal(s.n_nodes, 1 + 6 + 1 + 6 + 1);
    for (uint32_t k = 0; k < 3; k++) {
        const workload_node_t *first = &s.nodes[1 + 2 * k], *second = &s.nodes[2 + 2 * k];
        assert_int_equal(first->parents[0], 0);
        assert_true(first->inherit == 0.0 && first->append_parent_replies);
        assert_int_equal(second->parents[0], first->index);
        assert_true(second->inherit == 1.0 && !second->append_parent_replies);
    }
    const workload_node_t *cont = &s.nodes[7];
    assert_int_equal(cont->n_parents, 3);
    assert_int_equal(cont->parents[0], 2);
    assert_int_equal(cont->parents[2], 6);
    assert_int_equal(cont->history_parent, 0);
    assert_true(cont->append_parent_replies && cont->inherit == 1.0);
    assert_int_equal(s.nodes[8].parents[0], 7); /* round 2 starts from the continuation */
    assert_int_equal(s.nodes[14].history_parent, 7);
    assert_int_equal(cfg.workload.n_roles, 3);
    assert_string_equal(config_role_name(&cfg, s.nodes[3].role), "child");
    workload_session_free(&s);
    config_free(&cfg);
}

static void test_graph_branching_layers_from_a_single_root(void **state) {
    config_t cfg;
    load_and_reload(&cfg, "limits: {duration: 10s}\nworkload:\n  kind: graph\n  graph:\n"
                          "    shape: branching\n    depth: {dist: uniform, min: 1, max: 6}\n"
                          "    fan_out: {dist: uniform, min: 1, max: 3}\n"
                          "    fan_in: {dist: uniform, min: 1, max: 3}\n"
                          "    max_depth: 4\n    max_width: 5\n");
    bool saw_join = false;
    for (uint64_t i = 0; i < 30; i++) {
        workload_session_t s = generate(&cfg, i);
        assert_true(s.n_nodes >= 2 && s.n_nodes <= 1 + 4 * 5);
        uint32_t *layer = calloc(s.n_nodes, sizeof *layer), width[8] = {1};
        for (uint32_t j = 1; j < s.n_nodes; j++) {
            const workload_node_t *n = &s.nodes[j];
            assert_true(n->n_parents >= 1 && n->n_parents <= 3);
            layer[j] = layer[n->parents[0]] + 1;
            for (uint32_t p = 0; p < n->n_parents; p++) { /* all from the layer before */
                assert_int_equal(layer[n->parents[p]] + 1, layer[j]);
                for (uint32_t q = 0; q < p; q++)
                    assert_true(n->parents[p] != n->parents[q]);
            }
            assert_int_equal(n->history_parent, n->parents[0]);
            assert_true(layer[j] <= 4);
            width[layer[j]]++;
            saw_join = saw_join || n->n_parents > 1;
        }
        for (int l = 0; l < 8; l++)
            assert_true(width[l] <= 5);
        free(layer);
        workload_session_free(&s);
    }
    assert_true(saw_join);
    config_free(&cfg);
}

/* One graph of each shape. */
static const char *const shapes[] = {
    "shape: linear, length: {dist: uniform, min: 3, max: 9}",
    "shape: diamond, executors: parallel, executor_count: 3",
    "shape: diamond, executors: sequential, executor_count: 2, message_overhead_tokens: 9",
    "shape: fanout, children: 3, child_length: {dist: uniform, min: 1, max: 3}",
    "shape: branching, depth: 3, fan_out: {dist: uniform, min: 1, max: 3}, fan_in: 2",
    "shape: template, nodes: [{id: a}, {id: b, parents: [a]}, {id: c, parents: [a, b]}]",
};

/* Every shape: a session's digest is the same whatever order sessions are generated in, and the
 * whole-run digest is the sum of the sessions' (so 1 or 4 workers agree). */
static void test_graph_digest_is_independent_of_generation_order(void **state) {
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "seed: 5\nlimits: {duration: 10s}\nworkload:\n  kind: graph\n"
                 "  input_tokens: {dist: uniform, min: 10, max: 90}\n  graph: {%s}\n",
                 shapes[k]);
        config_t cfg;
        config_case_load(&cfg, yaml);
        enum { N = 12 };
        uint64_t forwards[N], sum_workers = 0;
        for (uint64_t i = 0; i < N; i++)
            forwards[i] = workload_session_digest(&cfg, i);
        for (uint64_t i = N; i-- > 0;)
            assert_true(workload_session_digest(&cfg, i) == forwards[i]);
        for (uint64_t w = 0; w < 4; w++) /* four workers, each its own sessions */
            for (uint64_t i = w; i < N; i += 4)
                sum_workers += workload_session_digest(&cfg, i);
        uint64_t sum = 0;
        for (uint64_t i = 0; i < N; i++)
            sum += forwards[i];
        assert_true(sum == sum_workers);
        uint64_t whole = workload_digest(&cfg, N);
        cfg.seed = 6; /* another seed: other graphs or lengths */
        assert_true(workload_digest(&cfg, N) != whole);
        config_free(&cfg);
    }
}

UNIT_MAIN(cmocka_unit_test(test_graph_bad_graphs_give_exact_messages),
          cmocka_unit_test(test_graph_step_overhead_waits_before_every_hand_off),
          cmocka_unit_test(test_graph_template_is_sorted_parents_first),
          cmocka_unit_test(test_graph_template_fan_in_is_not_capped),
          cmocka_unit_test(test_graph_diamond_parallel_and_sequential),
          cmocka_unit_test(test_graph_linear_grows_one_conversation),
          cmocka_unit_test(test_graph_fanout_reports_back_to_a_continuation),
          cmocka_unit_test(test_graph_branching_layers_from_a_single_root),
          cmocka_unit_test(test_graph_digest_is_independent_of_generation_order))
