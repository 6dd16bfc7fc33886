#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "validity.h"

#define SECOND 1000000000LL

/* A healthy worker: a quarter of a core, about one event per read, no cap wait. */
static validity_worker_t healthy(const char *name) {
    return (validity_worker_t){.name = name,
                               .has_stats = true,
                               .write_callbacks = 1000,
                               .sse_events = 1100,
                               .token_events = 1000,
                               .loop_cpu_ns = SECOND / 4,
                               .loop_wall_ns = SECOND};
}

/* A run of 100 ok requests on two healthy workers, concurrent mode. */
static validity_input_t healthy_run(validity_worker_t *workers) {
    workers[0] = healthy("a");
    workers[1] = healthy("b");
    return (validity_input_t){.requests_ok = 100,
                              .schedule_lag_p99_ms = -1,
                              .lag_threshold_ms = 10,
                              .workers = workers,
                              .n_workers = 2};
}

/* A healthy run to spoil, and its verdict: made fresh for each test (cmocka's setup). */
typedef struct judged {
    validity_worker_t w[2];
    validity_input_t in;
    validity_t v;
} judged_t;

static int judged_setup(void **state) {
    judged_t *j = calloc(1, sizeof *j);
    assert_non_null(j);
    j->in = healthy_run(j->w);
    *state = j;
    return 0;
}

static int judged_teardown(void **state) {
    free(*state);
    return 0;
}

#define JUDGED_TEST(f) cmocka_unit_test_setup_teardown(f, judged_setup, judged_teardown)

/* Judges j's run; returns the verdict. */
static const validity_t *judge(judged_t *j) {
    validity_judge(&j->in, &j->v);
    return &j->v;
}

/* Worker w's loop ran for wall_ns, cpu_ns of it on the CPU. */
static void set_loop(validity_worker_t *w, int64_t cpu_ns, int64_t wall_ns) {
    w->loop_cpu_ns = cpu_ns;
    w->loop_wall_ns = wall_ns;
}

/* j's run is in rate mode with a schedule lag p99 of lag_ms. */
static void rate_mode(judged_t *j, double lag_ms) {
    j->in.rate_mode = true;
    j->in.schedule_lag_p99_ms = lag_ms;
}

static void assert_one_reason(const validity_t *v, const char *part) {
    assert_false(v->valid);
    assert_int_equal(v->n_reasons, 1);
    if (!strstr(v->reasons[0], part))
        fail_msg("reason '%s' does not say '%s'", v->reasons[0], part);
}

static void test_validity_healthy_run_is_valid_with_no_reason(void **state) {
    judged_t *j = *state;
    assert_true(judge(j)->valid);
    assert_int_equal(j->v.n_reasons, 0);
}

static void test_validity_circuit_breaker_makes_the_run_invalid(void **state) {
    judged_t *j = *state;
    j->in.breaker = "circuit breaker: 30 of 50 requests failed (60.0 % > max_error_pct 10 %)";
    assert_one_reason(judge(j), "stopped by the circuit breaker: 30 of 50 requests failed");
}

static void
test_validity_sockets_refused_by_the_client_fd_limit_make_the_run_invalid(void **state) {
    judged_t *j = *state;
    j->in.client_fd_limit = 7;
    assert_one_reason(judge(j),
                      "7 requests could not open a socket: a worker ran out of file descriptors");
}

static void test_validity_loop_above_90_percent_of_a_core_is_saturation(void **state) {
    judged_t *j = *state;
    j->w[1].loop_cpu_ns = SECOND * 91 / 100;
    assert_one_reason(judge(j), "client saturated: worker b's loop used 91 % of a core");
    j->w[1].loop_cpu_ns = SECOND * 89 / 100;
    assert_true(judge(j)->valid);
}

/* A worker with nothing to send ends its run at once: 25 us of CPU in a 26 us span is no
 * saturation, and the same share over a second is. */
static void test_validity_loop_measured_under_a_second_is_not_judged(void **state) {
    judged_t *j = *state;
    set_loop(&j->w[1], 25000, 26000);
    j->w[1].loop_wait_ns = 0;
    assert_true(judge(j)->valid);
    set_loop(&j->w[1], SECOND * 97 / 100, SECOND);
    assert_one_reason(judge(j), "client saturated: worker b's loop used 97 % of a core");
}

static void
test_validity_several_token_events_per_read_from_a_busy_loop_is_saturation(void **state) {
    judged_t *j = *state;
    j->w[0].sse_events = 4500;
    j->w[0].token_events = 3500;       /* 3.5 per read */
    j->w[0].loop_wait_ns = SECOND / 2; /* a quarter of a core, and waiting half the run for one */
    assert_one_reason(judge(j),
                      "client saturated: worker a read 3.50 token events per read (above 1.5) "
                      "with its loop busy 75 % of the run");
    assert_true(validity_token_events_per_read(&j->w[0]) > 3.499 &&
                validity_token_events_per_read(&j->w[0]) < 3.501);
}

/* A server (or proxy) that writes several tokens at once, read by an idle loop: not the client. */
static void test_validity_several_token_events_per_read_from_an_idle_loop_is_not(void **state) {
    judged_t *j = *state;
    j->w[0].token_events = 2000;
    j->w[0].loop_wait_ns = -1; /* unknown: counts as no wait */
    assert_true(judge(j)->valid);
    assert_true(validity_loop_busy_share(&j->w[0]) > 0.249 &&
                validity_loop_busy_share(&j->w[0]) < 0.251);
}

/* One-token replies: the closing events (finish, usage, [DONE]) share the token's read. */
static void test_validity_closing_events_in_one_read_are_not_saturation(void **state) {
    judged_t *j = *state;
    j->w[0].write_callbacks = 400;
    j->w[0].sse_events = 1600;
    j->w[0].token_events = 400;
    assert_true(judge(j)->valid);
    assert_true(validity_events_per_read(&j->w[0]) > 3.999 &&
                validity_events_per_read(&j->w[0]) < 4.001);
}

static void test_validity_worker_without_stats_is_not_judged_saturated(void **state) {
    judged_t *j = *state;
    j->w[0].has_stats = false;
    j->w[0].loop_cpu_ns = 2 * SECOND;
    assert_true(judge(j)->valid);
}

static void test_validity_schedule_lag_above_threshold_in_rate_mode(void **state) {
    judged_t *j = *state;
    rate_mode(j, 25);
    assert_one_reason(judge(j), "schedule lag p99 25.000 ms is above 10 ms");
    j->in.schedule_lag_p99_ms = 9.5;
    assert_true(judge(j)->valid);
}

/* Arrivals the user's cap held back are late on purpose: the rate warning names them instead. */
static void test_validity_schedule_lag_from_the_cap_is_not_a_reason(void **state) {
    judged_t *j = *state;
    rate_mode(j, 250);
    j->w[1].cap_waits = 12;
    assert_true(judge(j)->valid);
}

static void test_validity_lost_worker_is_a_reason(void **state) {
    judged_t *j = *state;
    j->w[1].lost = true;
    j->w[1].has_stats = false;
    assert_one_reason(judge(j), "worker b was lost and its share of the load was not taken over");
}

static void test_validity_every_request_failed_is_a_reason(void **state) {
    judged_t *j = *state;
    j->in.requests_ok = 0;
    j->in.requests_failed = 40;
    assert_one_reason(judge(j), "every request failed (40)");
}

static void test_validity_length_mismatch_counts_only_for_exact_lengths(void **state) {
    judged_t *j = *state;
    j->in.requested_checked = 100;
    j->in.output_mismatched = 6;
    assert_true(judge(j)->valid); /* lengths were a maximum only */
    j->in.exact_lengths = true;
    assert_one_reason(judge(j), "6.0 % of the requests (6 of 100) received another output length");
    j->in.output_mismatched = 5;
    assert_true(judge(j)->valid);
}

static void test_validity_length_mismatch_names_the_early_stops(void **state) {
    judged_t *j = *state;
    j->in.exact_lengths = true;
    j->in.requested_checked = 100;
    j->in.output_mismatched = 8;
    j->in.stopped_early = 7;
    assert_one_reason(judge(j), "8.0 % of the requests (8 of 100) received another output length");
    assert_non_null(strstr(j->v.reasons[0],
                           "; 7 ended with finish_reason `stop` before it: the server "
                           "did not honour ignore_eos/min_tokens"));
}

static void test_validity_exact_lengths_follow_ignore_eos(void **state) {
    config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    assert_false(validity_exact_lengths(&cfg));
    cfg.target.ignore_eos = true;
    assert_true(validity_exact_lengths(&cfg));
}

static void test_validity_exact_lengths_follow_min_tokens(void **state) {
    config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.target.min_tokens = true;
    assert_true(validity_exact_lengths(&cfg));
}

static void test_validity_every_reason_is_listed(void **state) {
    judged_t *j = *state;
    j->w[0].loop_cpu_ns = SECOND;
    j->w[0].token_events = 5000; /* busy: its loop is at a full core */
    j->w[1].lost = true;
    j->in.requests_ok = 0;
    j->in.requests_failed = 3;
    judge(j);
    assert_false(j->v.valid);
    assert_int_equal(j->v.n_reasons, 4);
}

/* A rate shortfall of expected 1000 session starts (√1000 ≈ 31.6, 3σ ≈ 94.9 for Poisson), with
 * no cap wait and a schedule lag well under the 10 ms threshold. */
static validity_rate_input_t short_run(const config_scheduler_t *sched, uint64_t starts) {
    return (validity_rate_input_t){.arrivals = starts,
                                   .schedule_lag_p99_ms = 0.5,
                                   .lag_threshold_ms = 10,
                                   .busiest_loop_share = 0.2,
                                   .scheduler = sched,
                                   .expected_starts = 1000,
                                   .starts = starts};
}

static void test_validity_rate_cause_is_the_cap_when_an_arrival_waited_for_it(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_POISSON};
    validity_rate_input_t in = short_run(&sched, 500);
    in.cap_waits = 1;
    in.schedule_lag_p99_ms = 50; /* the cap comes first, even with the lag above the threshold */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_CAP);
}

static void test_validity_rate_cause_is_the_client_when_the_lag_is_above_threshold(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_POISSON};
    validity_rate_input_t in = short_run(&sched, 950); /* within 3σ: the lag still comes first */
    in.schedule_lag_p99_ms = 10.5;
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_CLIENT);
    in.schedule_lag_p99_ms = 10; /* at the threshold is not above it */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_DRAW);
}

static void test_validity_rate_cause_is_the_servers_429s_when_requests_waited_them_out(void **s) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_POISSON};
    validity_rate_input_t in = short_run(&sched, 700);
    in.schedule_lag_p99_ms = 900;
    in.retried_requests = 12;
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_RETRY_AFTER);
}

static void test_validity_schedule_lag_from_429_retries_names_them_not_the_client(void **state) {
    judged_t *j = *state;
    rate_mode(j, 900);
    j->in.retried_requests = 12;
    j->in.retry_wait_s = 9.5;
    assert_one_reason(judge(j),
                      "12 requests waited out the server's HTTP 429 Retry-After (9.5 s in all)");
    assert_null(strstr(j->v.reasons[0], "the client could not keep the schedule"));
}

static void test_validity_rate_cause_poisson_within_3_sigma_is_the_draw(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_POISSON};
    validity_rate_input_t in = short_run(&sched, 906); /* 94 short, 3σ = 94.87 */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_DRAW);
    in.starts = 905; /* 95 short: just beyond */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_UNEXPLAINED);
}

static void test_validity_rate_cause_gamma_draw_scales_with_its_cv(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_GAMMA, .arrival_cv = 2};
    validity_rate_input_t in = short_run(&sched, 811); /* 189 short, 3 · 2 · √1000 = 189.7 */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_DRAW);
    sched.arrival_cv = 1; /* the same shortfall from gamma gaps as regular as Poisson's */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_UNEXPLAINED);
}

static void test_validity_rate_cause_constant_arrivals_are_never_the_draw(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_CONSTANT};
    validity_rate_input_t in = short_run(&sched, 999); /* a single start short */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_UNEXPLAINED);
}

static void test_validity_rate_cause_poisson_far_beyond_3_sigma_is_none_of_the_three(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_POISSON};
    validity_rate_input_t in = short_run(&sched, 500); /* 500 short: over 15σ */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_UNEXPLAINED);
}

static void test_validity_rate_cause_without_an_expected_count_is_not_the_draw(void **state) {
    config_scheduler_t sched = {.kind = SCHEDULER_RATE, .arrival = ARRIVAL_POISSON};
    validity_rate_input_t in = short_run(&sched, 0);
    in.expected_starts = 0; /* an empty window */
    assert_int_equal(validity_rate_cause(&in), VALIDITY_RATE_UNEXPLAINED);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        JUDGED_TEST(test_validity_healthy_run_is_valid_with_no_reason),
        JUDGED_TEST(test_validity_circuit_breaker_makes_the_run_invalid),
        cmocka_unit_test(
            test_validity_rate_cause_is_the_servers_429s_when_requests_waited_them_out),
        JUDGED_TEST(test_validity_schedule_lag_from_429_retries_names_them_not_the_client),
        JUDGED_TEST(test_validity_sockets_refused_by_the_client_fd_limit_make_the_run_invalid),
        JUDGED_TEST(test_validity_loop_above_90_percent_of_a_core_is_saturation),
        JUDGED_TEST(test_validity_loop_measured_under_a_second_is_not_judged),
        JUDGED_TEST(test_validity_several_token_events_per_read_from_a_busy_loop_is_saturation),
        JUDGED_TEST(test_validity_several_token_events_per_read_from_an_idle_loop_is_not),
        JUDGED_TEST(test_validity_closing_events_in_one_read_are_not_saturation),
        JUDGED_TEST(test_validity_worker_without_stats_is_not_judged_saturated),
        JUDGED_TEST(test_validity_schedule_lag_above_threshold_in_rate_mode),
        JUDGED_TEST(test_validity_schedule_lag_from_the_cap_is_not_a_reason),
        JUDGED_TEST(test_validity_lost_worker_is_a_reason),
        JUDGED_TEST(test_validity_every_request_failed_is_a_reason),
        JUDGED_TEST(test_validity_length_mismatch_counts_only_for_exact_lengths),
        JUDGED_TEST(test_validity_length_mismatch_names_the_early_stops),
        cmocka_unit_test(test_validity_exact_lengths_follow_ignore_eos),
        cmocka_unit_test(test_validity_exact_lengths_follow_min_tokens),
        JUDGED_TEST(test_validity_every_reason_is_listed),
        cmocka_unit_test(test_validity_rate_cause_is_the_cap_when_an_arrival_waited_for_it),
        cmocka_unit_test(test_validity_rate_cause_is_the_client_when_the_lag_is_above_threshold),
        cmocka_unit_test(test_validity_rate_cause_poisson_within_3_sigma_is_the_draw),
        cmocka_unit_test(test_validity_rate_cause_gamma_draw_scales_with_its_cv),
        cmocka_unit_test(test_validity_rate_cause_constant_arrivals_are_never_the_draw),
        cmocka_unit_test(test_validity_rate_cause_poisson_far_beyond_3_sigma_is_none_of_the_three),
        cmocka_unit_test(test_validity_rate_cause_without_an_expected_count_is_not_the_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
