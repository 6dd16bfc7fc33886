#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "config.h"
#include "config_case.h"
#include "session_scaffold.h"
#include "unit_main.h"

static const char scaffold_yaml[] =
    "limits: {duration: 10s}\n"
    "target: {endpoints: [\"http://127.0.0.1:9\"], api: chat}\n"
    "workload:\n"
    "  roles: [planner, executor]\n"
    "  scaffold: {system_tokens: 25, tools: 4, tool_tokens: 9, tool_results: 0.25}\n";

/* c holds scaffold_yaml's scaffold section. */
static void assert_scaffold_of_yaml(const config_t *c) {
    assert_true(c->workload.scaffold.given);
    assert_int_equal(c->workload.system_prompt_tokens, 25);
    assert_int_equal(c->workload.scaffold.tools, 4);
    assert_int_equal(c->workload.scaffold.tool_tokens, 9);
    assert_true(c->workload.scaffold.tool_results == 0.25);
}

static void test_scaffold_keys_load_and_write_back(void **state) {
    config_t a, b;
    config_case_load(&a, scaffold_yaml);
    assert_scaffold_of_yaml(&a);
    char *text = config_to_yaml(&a);
    config_case_load(&b, text);
    assert_scaffold_of_yaml(&b);
    free(text);
    config_free(&a);
    config_free(&b);
}

static void test_scaffold_words_count_tools_in_chat_only(void **state) {
    config_t c;
    config_case_load(&c, scaffold_yaml);
    assert_int_equal(config_scaffold_words(&c, 0), 25 + 4 * 9);
    assert_int_equal(config_scaffold_shared_words(&c, 1, 1), 25 + 4 * 9);
    assert_int_equal(config_scaffold_shared_words(&c, 0, 1), 0); /* each role its own */
    c.target.api = API_COMPLETIONS;
    assert_int_equal(config_scaffold_words(&c, 0), 25);
    config_free(&c);
    config_case_load(&c, "limits: {duration: 10s}\nworkload: {system_prompt_tokens: 7}\n");
    assert_int_equal(config_scaffold_shared_words(&c, 0, 1), 7); /* no section: one for all */
    config_free(&c);
}

static void test_scaffold_roles_have_their_own_sizes_and_write_back(void **state) {
    config_t a, b;
    config_case_load(&a, "limits: {duration: 10s}\n"
                         "workload:\n"
                         "  kind: graph\n"
                         "  scaffold:\n"
                         "    system_tokens: 30\n"
                         "    tools: 5\n"
                         "    tool_tokens: 6\n"
                         "    roles: {executor: {system_tokens: 12, tools: 1}}\n"
                         "  graph: {shape: diamond}\n");
    config_scaffold_size_t p = config_scaffold_size(&a, 0), e = config_scaffold_size(&a, 1);
    assert_int_equal(p.system_tokens, 30);
    assert_int_equal(p.tools, 5);
    assert_int_equal(e.system_tokens, 12);
    assert_int_equal(e.tools, 1);
    assert_int_equal(e.tool_tokens, 6); /* not given: the section's */
    assert_int_equal(config_scaffold_words(&a, 1), 12 + 6);
    char *text = config_to_yaml(&a);
    config_case_load(&b, text);
    e = config_scaffold_size(&b, 1);
    assert_int_equal(e.system_tokens, 12);
    assert_int_equal(e.tools, 1);
    assert_int_equal(e.tool_tokens, 6);
    assert_int_equal(config_scaffold_size(&b, 2).system_tokens, 30);
    free(text);
    config_free(&a);
    config_free(&b);
}

static const message_case_t bad_scaffold_keys[] = {
    {"workload:\n  system_prompt_tokens: 5\n  scaffold: {system_tokens: 5}\n",
     "bad.yaml:3:29: workload.scaffold.system_tokens: give the system prompt's size once: "
     "here or as workload.system_prompt_tokens, not both"},
    {"workload:\n  scaffold: {tool_results: 0.5}\n",
     "bad.yaml:2:28: workload.scaffold.tool_results: tool results answer tool calls: give "
     "workload.scaffold.tools (at least 1) too"},
    {"workload:\n  scaffold: {tools: 2, tool_results: 1.5}\n",
     "bad.yaml:2:38: workload.scaffold.tool_results: expected a share in [0, 1], got 1.5"},
    {"workload:\n  scaffold: {tool: 2}\n",
     "bad.yaml:2:14: workload.scaffold.tool: unknown key 'tool'; did you mean 'tools'?"},
    {"workload:\n  roles: [planner]\n  scaffold: {roles: {planer: {tools: 1}}}\n",
     "bad.yaml:3:22: workload.scaffold.roles.planer: no role is named 'planer'; did you mean "
     "'planner'?"},
    {"workload:\n  scaffold: {roles: {a: {tools: 1}}}\n",
     "bad.yaml:2:22: workload.scaffold.roles.a: no role is named 'a' (name roles in "
     "workload.roles)"},
    {"workload:\n  roles: [a]\n  scaffold: {roles: {a: {tool: 1}}}\n",
     "bad.yaml:3:26: workload.scaffold.roles.a.tool: unknown key 'tool'; did you mean "
     "'tools'?"},
    {"workload:\n  scaffold: {tools: 2000}\n",
     "bad.yaml:2:21: workload.scaffold.tools: expected a whole number <= 1024, got '2000'"},
};

static void test_scaffold_bad_keys_give_exact_messages(void **state) {
    CONFIG_CASE_REFUSALS(bad_scaffold_keys);
}

/* Every role's scaffold is a pure function of the seed and the role: the same bytes when built
 * again, different between roles, and its tools array is valid function-tool JSON. */
static void test_scaffold_is_per_role_and_the_same_bytes_every_time(void **state) {
    config_t c;
    config_case_load(&c, scaffold_yaml);
    session_scaffold_t *a = session_scaffold_new(&c), *b = session_scaffold_new(&c);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->n_roles, 2);
    for (uint32_t r = 0; r < 2; r++) {
        const session_scaffold_role_t *x = session_scaffold_of(a, r),
                                      *y = session_scaffold_of(b, r);
        assert_int_equal(x->system_len, y->system_len);
        assert_memory_equal(x->system_text, y->system_text, x->system_len);
        assert_int_equal(x->tools_len, y->tools_len);
        assert_memory_equal(x->tools_json, y->tools_json, x->tools_len);
        assert_int_equal(x->words, 25 + 4 * 9);
        json_error_t err;
        json_t *tools = json_loadb(x->tools_json, x->tools_len, 0, &err);
        assert_non_null(tools);
        assert_int_equal(json_array_size(tools), 4);
        json_t *f = json_object_get(json_array_get(tools, 3), "function");
        assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 3), "type")),
                            "function");
        assert_string_equal(json_string_value(json_object_get(f, "name")), "tool_3");
        assert_non_null(json_object_get(f, "parameters"));
        json_decref(tools);
    }
    const session_scaffold_role_t *p = session_scaffold_of(a, 0), *e = session_scaffold_of(a, 1);
    assert_true(p->system_len != e->system_len ||
                memcmp(p->system_text, e->system_text, p->system_len) != 0);
    assert_true(p->hash != e->hash);
    session_scaffold_destroy(&a);
    session_scaffold_destroy(&b);
    assert_null(a);
    config_free(&c);
}

static void test_scaffold_tool_call_and_result_are_valid_chat_messages(void **state) {
    body_t body;
    body_init(&body);
    static const char tools[] = "[{\"type\":\"function\",\"function\":{\"name\":\"tool_0\"}}]";
    body_options_t o = {.api = API_CHAT,
                        .model = "m",
                        .max_tokens = 4,
                        .stream = true,
                        .tools_json = tools,
                        .tools_len = sizeof tools - 1};
    body_begin(&body, &o);
    body_add(&body, "user", "go", 2);
    body_add_tool_call(&body, "calling \"x\"", 11, "call_3_1", "tool_0");
    body_add_tool_result(&body, "call_3_1", "out\nput", 7);
    assert_int_equal(body_end(&body), 0);
    json_error_t err;
    json_t *root = json_loadb(body.data, body.len, 0, &err);
    assert_non_null(root);
    json_t *m = json_object_get(root, "messages");
    assert_int_equal(json_array_size(m), 3);
    json_t *call = json_array_get(m, 1), *result = json_array_get(m, 2);
    assert_string_equal(json_string_value(json_object_get(call, "content")), "calling \"x\"");
    json_t *tc = json_array_get(json_object_get(call, "tool_calls"), 0);
    assert_string_equal(json_string_value(json_object_get(tc, "id")), "call_3_1");
    assert_string_equal(json_string_value(json_object_get(tc, "type")), "function");
    json_t *fn = json_object_get(tc, "function");
    assert_string_equal(json_string_value(json_object_get(fn, "name")), "tool_0");
    assert_string_equal(json_string_value(json_object_get(fn, "arguments")), "{}");
    assert_string_equal(json_string_value(json_object_get(result, "role")), "tool");
    assert_string_equal(json_string_value(json_object_get(result, "tool_call_id")), "call_3_1");
    assert_string_equal(json_string_value(json_object_get(result, "content")), "out\nput");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(root, "tools"), 0), "function"),
            "name")),
        "tool_0");
    json_decref(root);
    o.api = API_COMPLETIONS; /* no tools array, the texts only */
    body_begin(&body, &o);
    body_add_tool_call(&body, "a", 1, "call_3_1", "tool_0");
    body_add_tool_result(&body, "call_3_1", "b", 1);
    assert_int_equal(body_end(&body), 0);
    root = json_loadb(body.data, body.len, 0, &err);
    assert_string_equal(json_string_value(json_object_get(root, "prompt")), "a\nb");
    assert_null(json_object_get(root, "tools"));
    json_decref(root);
    body_free(&body);
}

UNIT_MAIN(cmocka_unit_test(test_scaffold_keys_load_and_write_back),
          cmocka_unit_test(test_scaffold_words_count_tools_in_chat_only),
          cmocka_unit_test(test_scaffold_roles_have_their_own_sizes_and_write_back),
          cmocka_unit_test(test_scaffold_bad_keys_give_exact_messages),
          cmocka_unit_test(test_scaffold_is_per_role_and_the_same_bytes_every_time),
          cmocka_unit_test(test_scaffold_tool_call_and_result_are_valid_chat_messages))
