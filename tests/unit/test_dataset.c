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

static char dataset_path[128];

/* Writes text to the dataset file and loads a workload around it (extra: more workload keys, a
 * YAML flow mapping's inside for the dataset: `format: jsonl, sample: 2`). Returns
 * config_dataset_load's result; msg gets the formatted error with the file named d.json, and cfg
 * is freed when refused. */
static int load_dataset(config_t *cfg, const char *text, const char *kind, const char *dataset,
                        char *msg, size_t len) {
    snprintf(dataset_path, sizeof dataset_path, "/tmp/stampede-test-dataset-%d.json",
             (int)getpid());
    FILE *f = fopen(dataset_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "seed: 5\nworkload:\n  kind: %s\n  output_tokens: 77\n  dataset: {path: %s%s%s}\n"
             "scheduler: {kind: concurrent, concurrency: 3}\n",
             kind, dataset_path, dataset[0] ? ", " : "", dataset);
    config_error_t err;
    if (config_load_string(cfg, yaml, strlen(yaml), "w.yaml", &err) != 0) {
        config_error_format(&err, msg, len);
        fail_msg("the workload should load: %s", msg);
    }
    int rc = config_dataset_load(cfg, &err);
    unlink(dataset_path);
    if (rc != 0) {
        char full[900];
        config_error_format(&err, full, sizeof full);
        const char *name = strstr(full, "stampede-test-dataset-");
        const char *rest = name ? strchr(name, ':') : NULL;
        snprintf(msg, len, "d.json%s", rest ? rest : full);
        config_free(cfg);
    }
    return rc;
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

static void test_dataset_sharegpt_chat_replays_the_user_turns_with_their_lengths(void **state) {
    (void)state;
    config_t cfg;
    char msg[1024] = "";
    assert_int_equal(load_dataset(&cfg, sharegpt, "chat", "", msg, sizeof msg), 0);
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
    char *text = fresh_text(&cfg, 0, 0);
    assert_string_equal(text, "Write a haiku about the sea at night.");
    free(text);
    text = fresh_text(&cfg, 2, 0);
    assert_string_equal(text, "List three primes.\nSmall ones.");
    free(text);
    text = fresh_text(&cfg, 1, 0);
    assert_string_equal(text, "What is two plus two?");
    assert_int_equal(prompt_count_words(text, strlen(text)), 5);
    free(text);
    config_free(&cfg);
}

static void test_dataset_requests_send_each_conversations_first_turn(void **state) {
    (void)state;
    config_t cfg;
    char msg[1024] = "";
    assert_int_equal(load_dataset(&cfg, sharegpt, "requests", "", msg, sizeof msg), 0);
    assert_int_equal(cfg.workload.replay->n_sessions, 3);
    for (uint64_t i = 0; i < 3; i++)
        assert_int_equal(workload_session_size(&cfg, i), 1);
    char *text = fresh_text(&cfg, 2, 0);
    assert_string_equal(text, "List three primes.\nSmall ones.");
    free(text);
    config_free(&cfg);
}

/* The digest of every session as the workers that own them would generate them from their parts
 * (each worker decodes only its own sessions). */
static uint64_t digest_over_workers(const config_t *cfg, uint32_t workers) {
    uint64_t sum = 0, n = cfg->workload.replay->n_sessions;
    for (uint32_t w = 0; w < workers; w++) {
        plan_share_t share;
        assert_int_equal(plan_share_for(cfg, workers, w, &share), 0);
        buffer_t part;
        buffer_init(&part);
        assert_int_equal(trace_wire_encode(cfg, &share, &part), 0);
        config_t mine;
        char *yaml = config_to_yaml(cfg);
        config_error_t err;
        assert_int_equal(config_load_string(&mine, yaml, strlen(yaml), "assigned", &err), 0);
        free(yaml);
        assert_null(mine.workload.replay); /* a worker never reads the file */
        mine.workload.replay = trace_wire_decode((const uint8_t *)part.data, part.len);
        assert_non_null(mine.workload.replay);
        for (uint64_t i = 0; i < n; i++) {
            assert_int_equal(workload_session_size(&mine, i), workload_session_size(cfg, i));
            bool own = plan_share_owns(&share, i) != 0;
            assert_int_equal(trace_node(mine.workload.replay, i, 0) != NULL, own);
            if (own)
                sum += workload_session_digest(&mine, i);
        }
        buffer_clear(&part);
        config_free(&mine);
    }
    return sum;
}

static void test_dataset_sessions_are_the_same_for_one_and_three_workers(void **state) {
    (void)state;
    config_t cfg;
    char msg[1024] = "";
    assert_int_equal(load_dataset(&cfg, sharegpt, "chat", "", msg, sizeof msg), 0);
    uint64_t whole = 0;
    for (uint64_t i = 0; i < 3; i++)
        whole += workload_session_digest(&cfg, i);
    assert_true(whole == digest_over_workers(&cfg, 1));
    assert_true(whole == digest_over_workers(&cfg, 3));
    config_free(&cfg);
}

UNIT_MAIN(cmocka_unit_test(test_dataset_sessions_are_the_same_for_one_and_three_workers),
          cmocka_unit_test(test_dataset_sharegpt_chat_replays_the_user_turns_with_their_lengths),
          cmocka_unit_test(test_dataset_requests_send_each_conversations_first_turn))
