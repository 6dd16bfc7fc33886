#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_case.h"
#include "unit_main.h"

static void test_compaction_gets_a_role_after_the_graph_roles_and_writes_back(void **state) {
    config_t a, b;
    config_case_load(&a, "limits: {duration: 10s}\n"
                         "workload:\n"
                         "  kind: graph\n"
                         "  compaction: {limit_tokens: 4000, summary_tokens: 300}\n"
                         "  graph: {shape: diamond}\n");
    const config_compaction_t *c = &a.workload.compaction;
    assert_int_equal(c->limit_tokens, 4000);
    assert_int_equal(c->summary_tokens, 300);
    assert_int_equal(c->prompt_tokens, 32);
    assert_string_equal(config_role_name(&a, c->role), "compaction");
    assert_int_equal(c->role, 3); /* planner, executor, aggregator keep 0..2 */
    assert_true(config_compaction_role(&a, 3));
    assert_false(config_compaction_role(&a, 0));
    config_case_reload(&b, &a);
    assert_int_equal(b.workload.compaction.role, 3);
    assert_int_equal(b.workload.compaction.limit_tokens, 4000);
    assert_int_equal(b.workload.compaction.summary_tokens, 300);
    assert_int_equal(b.workload.compaction.prompt_tokens, 32);
    assert_int_equal(b.workload.n_roles, 4);
    config_free(&a);
    config_free(&b);
}

static void test_compaction_in_a_chat_names_role_0_default(void **state) {
    config_t a;
    config_case_load(&a, "limits: {duration: 10s}\n"
                         "workload: {kind: chat, compaction: {limit_tokens: 100, role: squash}}\n");
    assert_string_equal(config_role_name(&a, 0), "default");
    assert_string_equal(config_role_name(&a, 1), "squash");
    assert_int_equal(a.workload.compaction.role, 1);
    config_free(&a);
    config_case_load(&a, "limits: {duration: 10s}\nworkload: {kind: chat}\n");
    assert_false(config_compaction_role(&a, 0)); /* off */
    assert_int_equal(a.workload.n_roles, 0);
    config_free(&a);
}

static const message_case_t bad_compaction_keys[] = {
    {"workload:\n  compaction: {summary_tokens: 5}\n",
     "bad.yaml:2:15: workload.compaction.limit_tokens: required: the context size (prompt + "
     "max_tokens) that triggers a summarise request"},
    {"workload:\n  compaction: {limit_tokens: 0}\n",
     "bad.yaml:2:30: workload.compaction.limit_tokens: expected a whole number >= 1, got 0"},
    {"workload:\n  kind: graph\n  compaction: {limit_tokens: 9, role: planner}\n"
     "  graph: {shape: diamond}\n",
     "bad.yaml:3:39: workload.compaction.role: role 'planner' is a node's role: summarise "
     "requests need a role of their own"},
    {"workload:\n  roles: [a]\n  compaction: {limit_tokens: 9, role: a}\n",
     "bad.yaml:3:39: workload.compaction.role: role 'a' is a node's role: summarise requests "
     "need a role of their own"},
    {"workload:\n  compaction: {limit_tokens: 9, role: 'a b'}\n",
     "bad.yaml:2:39: workload.compaction.role: 'a b' is not a role name (letters, digits, "
     "'_', '-', '.')"},
    {"workload:\n  compaction: {limit: 9}\n",
     "bad.yaml:2:16: workload.compaction.limit: unknown key 'limit'; valid keys here: "
     "limit_tokens, summary_tokens, prompt_tokens, role"},
};

static void test_compaction_bad_keys_give_exact_messages(void **state) {
    CONFIG_CASE_REFUSALS(bad_compaction_keys);
}

UNIT_MAIN(cmocka_unit_test(test_compaction_gets_a_role_after_the_graph_roles_and_writes_back),
          cmocka_unit_test(test_compaction_in_a_chat_names_role_0_default),
          cmocka_unit_test(test_compaction_bad_keys_give_exact_messages))
