#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "support.h"
#include "workload.h"

/* Built in code (defaults from config_init, not YAML) so these tests exercise the workload code. */
static void make_config(config_t *cfg, config_workload_kind_t kind, uint64_t seed) {
    config_init(cfg);
    cfg->seed = seed;
    cfg->workload.kind = kind;
    dist_clear(&cfg->workload.turns);
    dist_fixed(&cfg->workload.turns, 1);
    dist_clear(&cfg->workload.input_tokens);
    dist_fixed(&cfg->workload.input_tokens, 100);
    dist_clear(&cfg->workload.output_tokens);
    dist_fixed(&cfg->workload.output_tokens, 50);
    dist_clear(&cfg->workload.think_time);
    dist_fixed(&cfg->workload.think_time, 0);
    cfg->workload.system_prompt_tokens = 0;
    cfg->scheduler.kind = SCHEDULER_CONCURRENT;
}

static void set_dist(dist_t *d, const char *spec) {
    char err[256] = "";
    dist_clear(d);
    if (dist_parse_spec(spec, d, err, sizeof err) != 0)
        fail_msg("%s: %s", spec, err);
}

static void clear_config(config_t *cfg) {
    config_free(cfg);
}

static void test_workload_requests_are_single_nodes_without_parents(void **state) {
    config_t cfg;
    make_config(&cfg, WORKLOAD_REQUESTS, 1);
    set_dist(&cfg.workload.input_tokens, "lognormal:mean=300,sigma=0.6");
    set_dist(&cfg.workload.think_time, "5"); /* ignored: a request has nothing to wait for */
    workload_session_t s = {0};
    for (uint64_t i = 0; i < 500; i++) {
        assert_int_equal(workload_session_generate(&cfg, i, &s), 0);
        assert_int_equal(s.index, i);
        assert_int_equal(s.n_nodes, 1);
        assert_int_equal(s.nodes[0].n_parents, 0);
        assert_int_equal(s.nodes[0].wait_after_ready_ns, 0);
        assert_true(s.nodes[0].input_tokens >= 1);
        assert_int_equal(s.nodes[0].output_tokens, 50);
        assert_int_equal(workload_session_size(&cfg, i), 1);
    }
    workload_session_free(&s);
    assert_null(s.nodes);
    clear_config(&cfg);
}

static void test_workload_chat_is_a_chain_with_think_time(void **state) {
    config_t cfg;
    make_config(&cfg, WORKLOAD_CHAT, 7);
    set_dist(&cfg.workload.turns, "uniform:min=1,max=8");
    set_dist(&cfg.workload.think_time, "uniform:min=0.5,max=2");
    workload_session_t s = {0};
    uint32_t seen_turns[10] = {0};
    for (uint64_t i = 0; i < 2000; i++) {
        assert_int_equal(workload_session_generate(&cfg, i, &s), 0);
        assert_true(s.n_nodes >= 1 && s.n_nodes <= 8);
        assert_int_equal(s.n_nodes, workload_session_size(&cfg, i));
        seen_turns[s.n_nodes]++;
        for (uint32_t j = 0; j < s.n_nodes; j++) {
            const workload_node_t *n = &s.nodes[j];
            assert_int_equal(n->index, j);
            assert_true(n->inherit == 1.0);
            if (j == 0) {
                assert_int_equal(n->n_parents, 0);
                assert_int_equal(n->wait_after_ready_ns, 0);
            } else {
                assert_int_equal(n->n_parents, 1);
                assert_int_equal(n->parents[0], j - 1);
                assert_true(n->wait_after_ready_ns >= 500000000LL);
                assert_true(n->wait_after_ready_ns <= 2000000000LL);
            }
        }
    }
    /* uniform [1, 8) rounded: 1 and 8 half as likely as 2..7, every count reached */
    for (uint32_t t = 1; t <= 8; t++)
        assert_true(seen_turns[t] > 0);
    workload_session_free(&s);
    clear_config(&cfg);
}

static void test_workload_token_counts_round_to_at_least_one(void **state) {
    config_t cfg;
    make_config(&cfg, WORKLOAD_CHAT, 3);
    set_dist(&cfg.workload.turns, "0.2"); /* rounds to 0: still one turn */
    set_dist(&cfg.workload.input_tokens, "normal:mean=0.2,stddev=0.1");
    set_dist(&cfg.workload.output_tokens, "normal:mean=10,stddev=3");
    workload_session_t s = {0};
    for (uint64_t i = 0; i < 1000; i++) {
        assert_int_equal(workload_session_generate(&cfg, i, &s), 0);
        assert_int_equal(s.n_nodes, 1);
        assert_int_equal(s.nodes[0].input_tokens, 1);
        assert_true(s.nodes[0].output_tokens >= 1);
        /* rounding, not truncation: the value equals the draw rounded to nearest */
        rng_t rng;
        rng_init(&rng, 3, RNG_STREAM_WORKLOAD, i, 0, RNG_FIELD_OUTPUT_TOKENS);
        double x = dist_sample(&cfg.workload.output_tokens, &rng);
        assert_int_equal(s.nodes[0].output_tokens, x < 1.0 ? 1 : (uint32_t)llround(x));
    }
    workload_session_free(&s);
    clear_config(&cfg);
}

/* Session i of a into sa and of b into sb; the two have the same number of nodes. */
static void generate_both(const config_t *a, const config_t *b, uint64_t i, workload_session_t *sa,
                          workload_session_t *sb) {
    assert_int_equal(workload_session_generate(a, i, sa), 0);
    assert_int_equal(workload_session_generate(b, i, sb), 0);
    assert_int_equal(sa->n_nodes, sb->n_nodes);
}

static void test_workload_each_quantity_is_drawn_independently(void **state) {
    /* Changing the output distribution must leave input lengths, turns and think times alone. */
    config_t a, b;
    make_config(&a, WORKLOAD_CHAT, 11);
    make_config(&b, WORKLOAD_CHAT, 11);
    set_dist(&a.workload.turns, "poisson:mean=4");
    set_dist(&b.workload.turns, "poisson:mean=4");
    set_dist(&a.workload.input_tokens, "lognormal:mean=200,sigma=1");
    set_dist(&b.workload.input_tokens, "lognormal:mean=200,sigma=1");
    set_dist(&a.workload.think_time, "exponential:mean=2");
    set_dist(&b.workload.think_time, "exponential:mean=2");
    set_dist(&a.workload.output_tokens, "gamma:mean=100,cv=3");
    set_dist(&b.workload.output_tokens, "uniform:min=1,max=5");
    workload_session_t sa = {0}, sb = {0};
    for (uint64_t i = 0; i < 300; i++) {
        generate_both(&a, &b, i, &sa, &sb);
        for (uint32_t j = 0; j < sa.n_nodes; j++) {
            assert_int_equal(sa.nodes[j].input_tokens, sb.nodes[j].input_tokens);
            assert_int_equal(sa.nodes[j].wait_after_ready_ns, sb.nodes[j].wait_after_ready_ns);
        }
    }
    workload_session_free(&sa);
    workload_session_free(&sb);
    clear_config(&a);
    clear_config(&b);
}

static void gap_moments(config_t *cfg, int n, double *mean, double *cv) {
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, cfg);
    assert_int_equal(workload_arrivals_time_ns(&arrivals, 0), 0);
    double sum = 0, sum_sq = 0;
    int64_t previous = 0;
    for (int i = 1; i <= n; i++) {
        int64_t t = workload_arrivals_time_ns(&arrivals, (uint64_t)i);
        assert_true(t >= previous);
        double gap = (double)(t - previous) / 1e9;
        sum += gap;
        sum_sq += gap * gap;
        previous = t;
    }
    *mean = sum / n;
    *cv = sqrt(sum_sq / n - *mean * *mean) / *mean;
}

static void test_workload_arrivals_have_mean_gap_one_over_rate(void **state) {
    enum { N = 200000 };
    config_t cfg;
    make_config(&cfg, WORKLOAD_REQUESTS, 9);
    cfg.scheduler.kind = SCHEDULER_RATE;
    cfg.scheduler.rate = 50.0;
    double mean, cv;
    /* poisson: exponential gaps, sd = mean, so the mean is within 5 sd / sqrt(N) = 1.1 % */
    cfg.scheduler.arrival = ARRIVAL_POISSON;
    gap_moments(&cfg, N, &mean, &cv);
    assert_float_equal(mean, 0.02, 5 * 0.02 / sqrt(N));
    assert_float_equal(cv, 1.0, 0.02);
    /* gamma with cv 2: sd = 2 mean */
    cfg.scheduler.arrival = ARRIVAL_GAMMA;
    cfg.scheduler.arrival_cv = 2.0;
    gap_moments(&cfg, N, &mean, &cv);
    assert_float_equal(mean, 0.02, 5 * 2 * 0.02 / sqrt(N));
    assert_float_equal(cv, 2.0, 0.1);
    /* constant: exactly i / rate (to the nanosecond) */
    cfg.scheduler.arrival = ARRIVAL_CONSTANT;
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, &cfg);
    assert_int_equal(workload_arrivals_time_ns(&arrivals, 1000), 20000000000LL);
    assert_int_equal(workload_arrivals_time_ns(&arrivals, 1001), 20020000000LL);
    clear_config(&cfg);
}

static void test_workload_arrivals_are_the_same_whatever_the_query_order(void **state) {
    config_t cfg;
    make_config(&cfg, WORKLOAD_REQUESTS, 9);
    cfg.scheduler.kind = SCHEDULER_RATE;
    cfg.scheduler.rate = 10.0;
    cfg.scheduler.arrival = ARRIVAL_POISSON;
    static int64_t all[1000];
    workload_arrivals_t a;
    workload_arrivals_init(&a, &cfg);
    for (int i = 0; i < 1000; i++)
        all[i] = workload_arrivals_time_ns(&a, (uint64_t)i);
    /* Four workers, each taking every fourth arrival, and one asking backwards. */
    for (int w = 0; w < 4; w++) {
        workload_arrivals_t mine;
        workload_arrivals_init(&mine, &cfg);
        for (int i = w; i < 1000; i += 4)
            assert_int_equal(workload_arrivals_time_ns(&mine, (uint64_t)i), all[i]);
    }
    workload_arrivals_t back;
    workload_arrivals_init(&back, &cfg);
    for (int i = 999; i >= 0; i -= 37)
        assert_int_equal(workload_arrivals_time_ns(&back, (uint64_t)i), all[i]);
    cfg.seed = 10;
    workload_arrivals_init(&a, &cfg);
    assert_true(workload_arrivals_time_ns(&a, 999) != all[999]);
    clear_config(&cfg);
}

static uint32_t count_words(const char *text) {
    uint32_t n = 0;
    for (const char *c = text; *c; c++)
        n += *c != ' ' && (c == text || c[-1] == ' ');
    return n;
}

static void test_workload_text_is_reproducible_and_the_system_prompt_shared(void **state) {
    config_t cfg;
    make_config(&cfg, WORKLOAD_CHAT, 21);
    cfg.workload.system_prompt_tokens = 256;
    size_t cap = prompt_max_bytes(1000);
    char *a = malloc(cap), *b = malloc(cap);
    assert_non_null(a);
    assert_non_null(b);
    long la = workload_fresh_text(&cfg, 4, 2, 1000, a, cap);
    long lb = workload_fresh_text(&cfg, 4, 2, 1000, b, cap);
    assert_true(la > 0);
    assert_int_equal(la, lb);
    assert_string_equal(a, b);
    assert_int_equal(count_words(a), 1000);
    assert_true(workload_fresh_text(&cfg, 4, 3, 1000, b, cap) > 0);
    assert_true(strcmp(a, b) != 0); /* another node, another text */
    assert_true(workload_system_text(&cfg, a, cap) > 0);
    assert_int_equal(count_words(a), 256);
    assert_true(workload_system_text(&cfg, b, cap) > 0);
    assert_string_equal(a, b);
    cfg.seed = 22;
    assert_true(workload_system_text(&cfg, b, cap) > 0);
    assert_true(strcmp(a, b) != 0);
    assert_int_equal(workload_fresh_text(&cfg, 0, 0, 1000, a, 100), -1);
    free(a);
    free(b);
    clear_config(&cfg);
}

static void make_varied_config(config_t *cfg, uint64_t seed) {
    make_config(cfg, WORKLOAD_CHAT, seed);
    set_dist(&cfg->workload.turns, "poisson:mean=3,min=1");
    set_dist(&cfg->workload.input_tokens, "lognormal:median=120,sigma=0.8,max=2000");
    set_dist(&cfg->workload.output_tokens, "empirical:values=16;64;256,weights=3;2;1");
    set_dist(&cfg->workload.think_time, "inverse_gaussian:mean=1.5,shape=3");
    cfg->workload.system_prompt_tokens = 64;
}

/* A sweep level's text seed changes every prompt word (fresh text, the scaffold) and no shape:
 * lengths, turns and waits are the seed's alone. text_seed 0 is the seed. */
static void test_workload_text_seed_changes_the_words_and_never_the_shapes(void **state) {
    config_t a, b;
    make_varied_config(&a, 99);
    make_varied_config(&b, 99);
    b.text_seed = 12345;
    size_t cap = prompt_max_bytes(2000);
    char *ta = malloc(cap), *tb = malloc(cap);
    assert_non_null(ta);
    assert_non_null(tb);
    workload_session_t sa = {0}, sb = {0};
    for (uint64_t i = 0; i < 200; i++) {
        generate_both(&a, &b, i, &sa, &sb);
        for (uint32_t j = 0; j < sa.n_nodes; j++) {
            const workload_node_t *na = &sa.nodes[j], *nb = &sb.nodes[j];
            assert_int_equal(na->input_tokens, nb->input_tokens);
            assert_int_equal(na->output_tokens, nb->output_tokens);
            assert_int_equal(na->wait_after_ready_ns, nb->wait_after_ready_ns);
            long la = workload_fresh_text(&a, i, j, na->input_tokens, ta, cap);
            long lb = workload_fresh_text(&b, i, j, nb->input_tokens, tb, cap);
            assert_true(la > 0 && lb > 0);
            assert_int_equal(count_words(ta), count_words(tb));
            assert_true(strcmp(ta, tb) != 0);
        }
        assert_true(workload_session_digest(&a, i) != workload_session_digest(&b, i));
    }
    assert_true(workload_system_text(&a, ta, cap) > 0 && workload_system_text(&b, tb, cap) > 0);
    assert_true(strcmp(ta, tb) != 0);
    b.text_seed = 0; /* the seed's own words again */
    assert_true(workload_fresh_text(&a, 3, 0, 50, ta, cap) > 0);
    assert_true(workload_fresh_text(&b, 3, 0, 50, tb, cap) > 0);
    assert_string_equal(ta, tb);
    assert_int_equal(workload_digest(&a, 100), workload_digest(&b, 100));
    workload_session_free(&sa);
    workload_session_free(&sb);
    free(ta);
    free(tb);
    clear_config(&a);
    clear_config(&b);
}

/* The schedule the limits leave: max_sessions, or the sessions holding max_requests requests,
 * ends one mean gap after its last arrival; nothing ends an unlimited schedule. */
static void test_workload_schedule_cut_by_max_sessions_or_max_requests(void **state) {
    config_t cfg;
    make_config(&cfg, WORKLOAD_CHAT, 5);
    set_dist(&cfg.workload.turns, "3");
    cfg.scheduler.kind = SCHEDULER_RATE;
    cfg.scheduler.rate = 10;
    uint64_t n;
    int64_t last;
    assert_false(workload_schedule_cut(&cfg, INT64_MAX, &n, &last)); /* no limit */
    assert_int_equal(workload_schedule_end_ns(&cfg, INT64_MAX), -1);
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, &cfg);
    cfg.limits.max_sessions = 50;
    assert_true(workload_schedule_cut(&cfg, INT64_MAX, &n, &last));
    assert_int_equal(n, 50);
    assert_int_equal(last, workload_arrivals_time_ns(&arrivals, 49));
    assert_int_equal(workload_schedule_end_ns(&cfg, INT64_MAX), last + 100000000);
    assert_false(workload_schedule_cut(&cfg, last - 1, &n, &last)); /* goes on past the horizon */
    cfg.limits.max_requests = 10; /* 3 requests a session: the 4th holds the 10th request */
    assert_true(workload_schedule_cut(&cfg, INT64_MAX, &n, &last));
    assert_int_equal(n, 4);
    assert_int_equal(last, workload_arrivals_time_ns(&arrivals, 3));
    clear_config(&cfg);
}

static void test_workload_digest_is_independent_of_generation_order(void **state) {
    enum { N = 1000 };
    config_t cfg;
    make_varied_config(&cfg, 99);
    static uint64_t forwards[N];
    uint64_t sum_forwards = 0, sum_backwards = 0, sum_workers = 0;
    for (uint64_t i = 0; i < N; i++) {
        forwards[i] = workload_session_digest(&cfg, i);
        sum_forwards += forwards[i];
    }
    for (uint64_t i = N; i-- > 0;) {
        uint64_t d = workload_session_digest(&cfg, i);
        assert_int_equal(d, forwards[i]);
        sum_backwards += d;
    }
    for (uint64_t w = 0; w < 4; w++) { /* four workers, strided */
        for (uint64_t i = w; i < N; i += 4)
            sum_workers += workload_session_digest(&cfg, i);
    }
    assert_int_equal(sum_forwards, sum_backwards);
    assert_int_equal(sum_forwards, sum_workers);
    uint64_t whole = workload_digest(&cfg, N);
    assert_int_equal(whole, workload_digest(&cfg, N));
    assert_true(whole != workload_digest(&cfg, N - 1));

    config_t other;
    make_varied_config(&other, 100);
    assert_true(workload_digest(&other, N) != whole);
    clear_config(&other);
    /* One parameter changed: the digest notices. */
    set_dist(&cfg.workload.think_time, "inverse_gaussian:mean=1.6,shape=3");
    assert_true(workload_digest(&cfg, N) != whole);
    clear_config(&cfg);
}

static void test_workload_rate_mode_digest_covers_arrival_times(void **state) {
    config_t cfg;
    make_varied_config(&cfg, 5);
    cfg.scheduler.kind = SCHEDULER_RATE;
    cfg.scheduler.rate = 10.0;
    uint64_t poisson = workload_digest(&cfg, 200);
    cfg.scheduler.rate = 11.0;
    assert_true(workload_digest(&cfg, 200) != poisson);
    clear_config(&cfg);
}

UNIT_MAIN(cmocka_unit_test(test_workload_requests_are_single_nodes_without_parents),
          cmocka_unit_test(test_workload_chat_is_a_chain_with_think_time),
          cmocka_unit_test(test_workload_token_counts_round_to_at_least_one),
          cmocka_unit_test(test_workload_each_quantity_is_drawn_independently),
          cmocka_unit_test(test_workload_arrivals_have_mean_gap_one_over_rate),
          cmocka_unit_test(test_workload_arrivals_are_the_same_whatever_the_query_order),
          cmocka_unit_test(test_workload_text_is_reproducible_and_the_system_prompt_shared),
          cmocka_unit_test(test_workload_text_seed_changes_the_words_and_never_the_shapes),
          cmocka_unit_test(test_workload_schedule_cut_by_max_sessions_or_max_requests),
          cmocka_unit_test(test_workload_digest_is_independent_of_generation_order),
          cmocka_unit_test(test_workload_rate_mode_digest_covers_arrival_times))
