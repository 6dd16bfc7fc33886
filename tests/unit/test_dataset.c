/* Datasets (common/dataset*.c, workload.dataset): ShareGPT arrays and JSONL rows read into
 * sessions whose turns carry their real text, counted and filtered, sampled with the seed the same
 * for any worker count, each worker sent only its own sessions; and malformed files refused with
 * file:line and key. The fixtures are written here: nobody else's data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "buffer.h"
#include "config.h"
#include "plan.h"
#include "prompt.h"
#include "replay_file.h"
#include "support.h"
#include "trace.h"
#include "trace_wire.h"
#include "unit_main.h"
#include "workload.h"

/* Three conversations: a two-turn chat; one with a system message and one turn; one that opens
 * with a reply, has two user messages in a row, and ends on a user turn without a reply. */
static const char *sharegpt =
    "[\n"
    "  {\"id\": \"a\", \"conversations\": [\n"
    "    {\"from\": \"human\", \"value\": \"Write a haiku about the sea at night.\"},\n"
    "    {\"from\": \"gpt\", \"value\": \"Dark waves fold and turn under a silver moon.\"},\n"
    "    {\"from\": \"human\", \"value\": \"Now the mountains, please.\"},\n"
    "    {\"from\": \"gpt\", \"value\": \"Stone shoulders in cloud.\"}]},\n"
    "  {\"id\": \"b\", \"conversations\": [\n"
    "    {\"from\": \"system\", \"value\": \"You are terse.\"},\n"
    "    {\"from\": \"human\", \"value\": \"What is two plus two?\"},\n"
    "    {\"from\": \"gpt\", \"value\": \"Four.\"}]},\n"
    "  {\"id\": \"c\", \"conversations\": [\n"
    "    {\"from\": \"gpt\", \"value\": \"Hello! How can I help?\"},\n"
    "    {\"from\": \"human\", \"value\": \"List three primes.\"},\n"
    "    {\"from\": \"human\", \"value\": \"Small ones.\"},\n"
    "    {\"from\": \"gpt\", \"value\": \"2, 3 and 5.\"},\n"
    "    {\"from\": \"human\", \"value\": \"Thanks, bye\"}]}\n"
    "]\n";

static unsigned seed = 5; /* the workload's seed */

/* Writes text to the dataset file and loads a workload around it (extra: more workload keys, a
 * YAML flow mapping's inside for the dataset: `format: jsonl, sample: 2`). Returns
 * config_dataset_load's result; msg gets the formatted error with the file named d.json, and cfg
 * is freed when refused. */
static int load_dataset(config_t *cfg, const char *text, const char *kind, const char *dataset,
                        char *msg, size_t len) {
    char path[128], yaml[2048];
    snprintf(path, sizeof path, "/tmp/stampede-test-dataset-%d.json", (int)getpid());
    snprintf(yaml, sizeof yaml,
             "seed: %u\nworkload:\n  kind: %s\n  output_tokens: 77\n  dataset: {path: %s%s%s}\n"
             "scheduler: {kind: concurrent, concurrency: 3}\n",
             seed, kind, path, dataset[0] ? ", " : "", dataset);
    return replay_file_load(cfg, path, text, yaml, config_dataset_load, "d.json", msg, len);
}

/* load_dataset that must load: a refusal fails the test with its message. */
static void load_dataset_ok(config_t *cfg, const char *text, const char *kind,
                            const char *dataset) {
    char msg[1024] = "";
    if (load_dataset(cfg, text, kind, dataset, msg, sizeof msg) != 0)
        fail_msg("the dataset should load: %s", msg);
}

/* The fresh text of (session, node) as a worker would send it. */
static char *fresh_text(const config_t *cfg, uint64_t session, uint32_t node) {
    workload_session_t s = {0};
    assert_int_equal(workload_session_generate(cfg, session, &s), 0);
    uint32_t words = s.nodes[node].input_tokens;
    workload_session_free(&s);
    size_t cap = workload_fresh_max_bytes(cfg, session, node, words);
    char *text = malloc(cap);
    assert_non_null(text);
    assert_true(workload_fresh_text(cfg, session, node, words, text, cap) >= 0);
    return text;
}

/* The fresh text of (session, node) is expected, to the byte. */
static void assert_fresh_text(const config_t *cfg, uint64_t session, uint32_t node,
                              const char *expected) {
    char *text = fresh_text(cfg, session, node);
    if (strcmp(text, expected) != 0)
        fail_msg("session %llu node %u: fresh text \"%s\", expected \"%s\"",
                 (unsigned long long)session, node, text, expected);
    free(text);
}

static void test_dataset_sharegpt_chat_replays_the_user_turns_with_their_lengths(void **state) {
    config_t cfg;
    load_dataset_ok(&cfg, sharegpt, "chat", "");
    const trace_t *t = cfg.workload.replay;
    assert_int_equal(t->n_sessions, 3);
    assert_int_equal(cfg.limits.max_sessions, 3);
    assert_int_equal(workload_session_size(&cfg, 0), 2);
    assert_int_equal(workload_session_size(&cfg, 1), 1);
    assert_int_equal(workload_session_size(&cfg, 2), 2);
    workload_session_t s = {0};
    assert_int_equal(workload_session_generate(&cfg, 0, &s), 0);
    assert_int_equal(s.nodes[0].input_tokens, 8);  /* "Write a haiku about the sea at night." */
    assert_int_equal(s.nodes[0].output_tokens, 9); /* the reply's words */
    assert_int_equal(s.nodes[1].input_tokens, 4);
    assert_int_equal(s.nodes[1].output_tokens, 4);
    assert_int_equal(s.nodes[1].n_parents, 1);
    assert_int_equal(s.nodes[1].history_parent, 0);
    assert_true(s.nodes[1].inherit == 1.0);
    /* session 2: the leading reply dropped, the two user messages one turn, the last turn
     * without a reply asks workload.output_tokens */
    assert_int_equal(workload_session_generate(&cfg, 2, &s), 0);
    assert_int_equal(s.nodes[0].input_tokens, 5);
    assert_int_equal(s.nodes[0].output_tokens, 4);
    assert_int_equal(s.nodes[1].output_tokens, 77);
    workload_session_free(&s);
    assert_fresh_text(&cfg, 0, 0, "Write a haiku about the sea at night.");
    assert_fresh_text(&cfg, 2, 0, "List three primes.\nSmall ones.");
    static const char two_plus_two[] = "What is two plus two?";
    assert_fresh_text(&cfg, 1, 0, two_plus_two);
    assert_int_equal(prompt_count_words(two_plus_two, strlen(two_plus_two)), 5);
    config_free(&cfg);
}

static void test_dataset_requests_send_each_conversations_first_turn(void **state) {
    config_t cfg;
    load_dataset_ok(&cfg, sharegpt, "requests", "");
    assert_int_equal(cfg.workload.replay->n_sessions, 3);
    for (uint64_t i = 0; i < 3; i++)
        assert_int_equal(workload_session_size(&cfg, i), 1);
    assert_fresh_text(&cfg, 2, 0, "List three primes.\nSmall ones.");
    config_free(&cfg);
}

/* The digest of every session as the workers that own them would generate them from their parts
 * (each worker decodes only its own sessions). */
static uint64_t digest_over_workers(const config_t *cfg, uint32_t workers) {
    uint64_t sum = 0, n = cfg->workload.replay->n_sessions;
    for (uint32_t w = 0; w < workers; w++) {
        config_t mine;
        char *yaml = config_to_yaml(cfg);
        config_error_t err;
        assert_int_equal(config_load_string(&mine, yaml, strlen(yaml), "assigned", &err), 0);
        free(yaml);
        assert_null(mine.workload.replay); /* a worker never reads the file */
        plan_share_t share;
        mine.workload.replay = replay_file_worker_part(cfg, workers, w, &share, NULL);
        assert_non_null(mine.workload.replay);
        for (uint64_t i = 0; i < n; i++) {
            assert_int_equal(workload_session_size(&mine, i), workload_session_size(cfg, i));
            bool own = plan_share_owns(&share, i) != 0;
            assert_int_equal(trace_node(mine.workload.replay, i, 0) != NULL, own);
            if (own)
                sum += workload_session_digest(&mine, i);
        }
        config_free(&mine);
    }
    return sum;
}

static void test_dataset_sessions_are_the_same_for_one_and_three_workers(void **state) {
    static const char *const settings[] = {"", "sample: 2",
                                           "output_tokens: {dist: uniform, min: "
                                           "1, max: 99}"};
    for (size_t k = 0; k < 3; k++) {
        config_t cfg;
        load_dataset_ok(&cfg, sharegpt, "chat", settings[k]);
        uint64_t whole = 0, n = cfg.workload.replay->n_sessions;
        for (uint64_t i = 0; i < n; i++)
            whole += workload_session_digest(&cfg, i);
        assert_true(whole == digest_over_workers(&cfg, 1));
        assert_true(whole == digest_over_workers(&cfg, 3));
        config_free(&cfg);
    }
}

/* One row per line in each shape: a prompt (with and without its reply's length), OpenAI
 * messages (the system message not sent; text parts joined), LMSYS's conversation. */
static const char *jsonl =
    "{\"prompt\": \"Describe a quiet railway station at dawn.\"}\n"
    "\n"
    "{\"prompt\": \"Give four tips for clear errors.\", \"output_tokens\": 120}\n"
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be careful.\"}, {\"role\": \"user\", "
    "\"content\": \"Is free() twice safe?\"}, {\"role\": \"assistant\", \"content\": \"No, it is "
    "undefined.\"}, {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Why "
    "not?\"}, {\"type\": \"text\", \"text\": \"Explain.\"}]}]}\n"
    "{\"conversation\": [{\"role\": \"user\", \"content\": \"Minutes in a week?\"}, {\"role\": "
    "\"assistant\", \"content\": \"10,080 minutes.\"}]}\n";

static void test_dataset_jsonl_reads_prompts_messages_and_conversations(void **state) {
    config_t cfg;
    load_dataset_ok(&cfg, jsonl, "chat", "format: jsonl");
    assert_int_equal(cfg.workload.replay->n_sessions, 4);
    workload_session_t s = {0};
    assert_int_equal(workload_session_generate(&cfg, 0, &s), 0);
    assert_int_equal(s.n_nodes, 1);
    assert_int_equal(s.nodes[0].input_tokens, 7);
    assert_int_equal(s.nodes[0].output_tokens, 77); /* no reply: workload.output_tokens */
    assert_int_equal(workload_session_generate(&cfg, 1, &s), 0);
    assert_int_equal(s.nodes[0].output_tokens, 120);
    assert_int_equal(workload_session_generate(&cfg, 2, &s), 0);
    assert_int_equal(s.n_nodes, 2);
    assert_int_equal(s.nodes[0].output_tokens, 4); /* "No, it is undefined." */
    assert_int_equal(s.nodes[1].input_tokens, 3);
    assert_int_equal(workload_session_generate(&cfg, 3, &s), 0);
    assert_int_equal(s.nodes[0].output_tokens, 2);
    workload_session_free(&s);
    assert_fresh_text(&cfg, 2, 0, "Is free() twice safe?");
    assert_fresh_text(&cfg, 2, 1, "Why not?\nExplain.");
    config_free(&cfg);
}

/* A turn outside the lengths, or whose context (the dataset's turns and replies so far) would
 * pass max_context_tokens, ends its conversation; one left without a turn is not replayed. */
static void test_dataset_filter_cuts_conversations_at_the_first_turn_outside(void **state) {
    config_t cfg;
    /* a: 8 + 9 words, then 4 + 4; b: 5 + 1; c: 5 + 4, then 2 */
    load_dataset_ok(&cfg, sharegpt, "chat", "min_input_tokens: 5");
    assert_int_equal(cfg.workload.replay->n_sessions, 3);
    assert_int_equal(workload_session_size(&cfg, 0), 1); /* its 4-word turn cut */
    assert_int_equal(workload_session_size(&cfg, 2), 1);
    config_free(&cfg);
    load_dataset_ok(&cfg, sharegpt, "chat", "max_input_tokens: 7");
    assert_int_equal(cfg.workload.replay->n_sessions, 2); /* a's first turn has 8 */
    assert_fresh_text(&cfg, 0, 0, "What is two plus two?");
    config_free(&cfg);
    load_dataset_ok(&cfg, sharegpt, "chat", "max_context_tokens: 17");
    assert_int_equal(cfg.workload.replay->n_sessions, 3);
    assert_int_equal(workload_session_size(&cfg, 0), 1); /* 17 + 4 + 4 > 17 */
    assert_int_equal(workload_session_size(&cfg, 2), 2); /* 9 + 2 */
    config_free(&cfg);
}

static void test_dataset_sample_draws_with_the_seed_in_file_order(void **state) {
    char rows[4096] = "";
    for (int i = 0; i < 20; i++) /* conversation i: i + 1 words */
        for (int w = 0; w <= i; w++)
            strcat(rows, w == 0   ? (i ? "{\"prompt\": \"w" : "{\"prompt\": \"w\"}\n")
                         : w == i ? " w\"}\n"
                                  : " w");
    config_t cfg;
    char msg[1024] = "";
    uint32_t first[5];
    load_dataset_ok(&cfg, rows, "requests", "format: jsonl, sample: 5");
    assert_int_equal(cfg.workload.replay->n_sessions, 5);
    workload_session_t s = {0};
    for (uint64_t i = 0; i < 5; i++) {
        assert_int_equal(workload_session_generate(&cfg, i, &s), 0);
        first[i] = s.nodes[0].input_tokens;
        assert_true(i == 0 || first[i] > first[i - 1]); /* file order kept */
    }
    uint64_t digest = workload_digest(&cfg, 5);
    config_free(&cfg);
    /* the same seed draws the same five; another seed others */
    load_dataset_ok(&cfg, rows, "requests", "format: jsonl, sample: 5");
    assert_true(workload_digest(&cfg, 5) == digest);
    config_free(&cfg);
    seed = 6;
    load_dataset_ok(&cfg, rows, "requests", "format: jsonl, sample: 5");
    seed = 5;
    bool same = true;
    for (uint64_t i = 0; i < 5; i++) {
        assert_int_equal(workload_session_generate(&cfg, i, &s), 0);
        same = same && s.nodes[0].input_tokens == first[i];
    }
    assert_false(same);
    workload_session_free(&s);
    config_free(&cfg);
    assert_int_equal(load_dataset(&cfg, rows, "requests",
                                  "format: jsonl, sample: 5, max_input_tokens: 4", msg, sizeof msg),
                     -1);
    assert_string_equal(msg, "d.json: workload.dataset.sample: asks for 5 conversations: 4 of "
                             "the 20 read pass the filter");
}

static void test_dataset_output_tokens_from_a_distribution(void **state) {
    config_t cfg;
    load_dataset_ok(&cfg, sharegpt, "chat", "output_tokens: {dist: uniform, min: 30, max: 40}");
    workload_session_t s = {0};
    for (uint64_t i = 0; i < 3; i++) {
        assert_int_equal(workload_session_generate(&cfg, i, &s), 0);
        for (uint32_t j = 0; j < s.n_nodes; j++)
            assert_in_range(s.nodes[j].output_tokens, 30, 40);
    }
    workload_session_free(&s);
    config_free(&cfg);
}

/* A diamond whose planner and executors take their text from a conversation's turns in node
 * order (planner the first, executors the next, cycling), the aggregator drawn words. */
static void test_dataset_diamond_takes_planner_and_executor_prompts(void **state) {
    config_t cfg;
    load_dataset_ok(&cfg, sharegpt,
                    "graph\n  graph: {shape: diamond, executor_count: 2, "
                    "message_overhead_tokens: 3, nodes: {executor: "
                    "{input_tokens: 50}}}",
                    "roles: [planner, executor]");
    workload_session_t s = {0};
    assert_int_equal(workload_session_generate(&cfg, 0, &s), 0);
    assert_int_equal(s.n_nodes, 4);
    assert_int_equal(s.nodes[0].input_tokens, 8);
    assert_int_equal(s.nodes[1].input_tokens, 4 + 3); /* the second turn, plus the envelope */
    assert_int_equal(s.nodes[2].input_tokens, 8 + 3); /* cycling back to the first */
    char *text = fresh_text(&cfg, 0, 1);
    assert_true(strncmp(text, "Now the mountains, please. ", 27) == 0);
    assert_int_equal(prompt_count_words(text, strlen(text)), 7);
    free(text);
    text = fresh_text(&cfg, 0, 3); /* the aggregator: drawn words */
    assert_null(strstr(text, "mountains"));
    free(text);
    workload_session_free(&s);
    config_free(&cfg);
    /* without roles: the roots only */
    load_dataset_ok(&cfg, sharegpt, "graph\n  graph: {shape: diamond}", "");
    assert_int_equal(workload_session_generate(&cfg, 1, &s), 0);
    assert_int_equal(s.nodes[0].input_tokens, 5);
    assert_int_equal(s.nodes[1].input_tokens, 512);
    workload_session_free(&s);
    config_free(&cfg);
}

/* What the controller sends a worker loads back to the same settings. */
static void test_dataset_settings_write_back_and_load_the_same(void **state) {
    config_t cfg, back;
    load_dataset_ok(&cfg, sharegpt, "graph\n  graph: {shape: diamond}",
                    "min_input_tokens: 2, max_input_tokens: 900, "
                    "max_context_tokens: 4000, sample: 2, output_tokens: {dist: "
                    "uniform, min: 3, max: 9}, roles: [executor]");
    char *yaml = config_to_yaml(&cfg);
    config_error_t err;
    assert_int_equal(config_load_string(&back, yaml, strlen(yaml), "back", &err), 0);
    char *again = config_to_yaml(&back);
    assert_string_equal(yaml, again);
    assert_non_null(strstr(yaml, "    roles: [\"executor\"]\n"));
    const config_dataset_t *d = &back.workload.dataset;
    assert_int_equal(d->max_context_tokens, 4000);
    assert_int_equal(d->sample, 2);
    assert_true(d->output_given);
    free(yaml);
    free(again);
    config_free(&back);
    config_free(&cfg);
}

/* Each refusal names the file, the line (and column for bad JSON) and the key. */
static void test_dataset_malformed_files_are_refused_with_file_line_and_key(void **state) {
    static const struct {
        const char *text, *dataset, *expected;
    } cases[] = {
        {"[\n {\"conversations\": []},\n {\"conversations\": [{\"from\": \"human\" \"value\": "
         "\"x\"}]}\n]\n",
         "", "d.json:3:44: not JSON: '}' expected near '\"value\"'"}, /* as jansson on the whole */
        {"[{\"prompt\": \"a\"}, {\"b\" 2}]", "", "d.json:1:24: not JSON: ':' expected near '2'"},
        {"[\n {\"conversations\": [\n  {\"from\": \"human\", \"value\": \"hi\"}]},\n {\"id\": 2,\n"
         "  \"conversations\": [{\"from\": \"robot\", \"value\": \"x\"}]}\n]",
         "",
         "d.json:4: [1].conversations[0].from: unknown speaker 'robot' (expected human or user, "
         "gpt or assistant, or system)"},
        {"[{\"conversations\": [{\"from\": \"human\", \"value\": 7}]}]", "",
         "d.json:1: [0].conversations[0].value: expected a string (or a list of text parts)"},
        {"[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}]}] x", "",
         "d.json:1:56: text after the array's closing ']'"},
        {"{\"conversations\": []}", "",
         "d.json:1:1: expected a JSON array of conversations ('[' "
         "first)"},
        {"[{\"conversations\": [{\"from\": \"gpt\", \"value\": \"only a reply\"}]}]", "",
         "d.json: no conversation with a user turn in it: the dataset is empty"},
        {"{\"prompt\": \"a\"}\n{\"prompt\": \"b\"\n", "format: jsonl",
         "d.json:2:14: not JSON: '}' expected near end of file"},
        {"{\"prompt\": \"a\"}\n\n{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": "
         "\"image_url\"}]}]}\n",
         "format: jsonl",
         "d.json:3: messages[0].content: a part that is not {\"type\": \"text\", \"text\": ...}: "
         "only text is sent"},
        {"{\"text\": \"a\"}\n", "format: jsonl",
         "d.json:1: expected a row with 'conversations', 'conversation', 'messages' or 'prompt'"},
        {"{\"prompt\": \"a\", \"output_tokens\": 0}\n", "format: jsonl",
         "d.json:1: output_tokens: expected a whole number from 1 to 10000000"},
        {"[[1]]", "", "d.json:1: [0].: expected a JSON object (a conversation or a prompt)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        config_t cfg;
        char msg[1024] = "";
        assert_int_equal(
            load_dataset(&cfg, cases[i].text, "chat", cases[i].dataset, msg, sizeof msg), -1);
        if (strcmp(msg, cases[i].expected) != 0)
            fail_msg("case %zu:\n got      %s\n expected %s", i, msg, cases[i].expected);
    }
}

/* The workload file's own mistakes are its lines. */
static void test_dataset_keys_are_checked_in_the_workload_file(void **state) {
    static const struct {
        const char *yaml, *expected;
    } cases[] = {
        {"workload:\n  kind: trace\n  trace: {path: t.jsonl}\n  dataset: {path: d.json}\n",
         "w.yaml:4:12: workload.dataset: a dataset goes with kind requests, chat or graph (kind "
         "is trace: its file gives the sessions)"},
        {"workload:\n  kind: chat\n  dataset: {path: d.json, roles: [x]}\n",
         "w.yaml:3:34: workload.dataset.roles: roles go with kind: graph (kind is chat)"},
        {"workload:\n  dataset: {path: d.json, smaple: 3}\n",
         "w.yaml:2:27: workload.dataset.smaple: unknown key 'smaple'; did you mean 'sample'?"},
        {"workload:\n  dataset: {format: jsonl}\n",
         "w.yaml:2:12: workload.dataset.path: a dataset needs path: the ShareGPT JSON or JSONL "
         "file"},
        {"workload:\n  dataset: {path: d.json, min_input_tokens: 9, max_input_tokens: 3}\n",
         "w.yaml:2:66: workload.dataset.max_input_tokens: 3 is below min_input_tokens 9: no turn "
         "would be left"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[512], msg[1024];
        snprintf(yaml, sizeof yaml, "%slimits: {max_sessions: 1}\n", cases[i].yaml);
        config_t cfg;
        config_error_t err;
        assert_int_equal(config_load_string(&cfg, yaml, strlen(yaml), "w.yaml", &err), -1);
        config_error_format(&err, msg, sizeof msg);
        if (strcmp(msg, cases[i].expected) != 0)
            fail_msg("case %zu:\n got      %s\n expected %s", i, msg, cases[i].expected);
    }
}

UNIT_MAIN(cmocka_unit_test(test_dataset_sessions_are_the_same_for_one_and_three_workers),
          cmocka_unit_test(test_dataset_sharegpt_chat_replays_the_user_turns_with_their_lengths),
          cmocka_unit_test(test_dataset_requests_send_each_conversations_first_turn),
          cmocka_unit_test(test_dataset_jsonl_reads_prompts_messages_and_conversations),
          cmocka_unit_test(test_dataset_filter_cuts_conversations_at_the_first_turn_outside),
          cmocka_unit_test(test_dataset_sample_draws_with_the_seed_in_file_order),
          cmocka_unit_test(test_dataset_output_tokens_from_a_distribution),
          cmocka_unit_test(test_dataset_diamond_takes_planner_and_executor_prompts),
          cmocka_unit_test(test_dataset_settings_write_back_and_load_the_same),
          cmocka_unit_test(test_dataset_malformed_files_are_refused_with_file_line_and_key),
          cmocka_unit_test(test_dataset_keys_are_checked_in_the_workload_file))
