#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

static void assert_one_reason(const validity_t *v, const char *part) {
    assert_false(v->valid);
    assert_int_equal(v->n_reasons, 1);
    if (!strstr(v->reasons[0], part))
        fail_msg("reason '%s' does not say '%s'", v->reasons[0], part);
}

static void test_validity_healthy_run_is_valid_with_no_reason(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid);
    assert_int_equal(v.n_reasons, 0);
}

static void test_validity_circuit_breaker_makes_the_run_invalid(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.breaker = "circuit breaker: 30 of 50 requests failed (60.0 % > max_error_pct 10 %)";
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "stopped by the circuit breaker: 30 of 50 requests failed");
}

static void test_validity_sockets_refused_by_the_client_fd_limit_make_the_run_invalid(void **s) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.client_fd_limit = 7;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v,
                      "7 requests could not open a socket: a worker ran out of file descriptors");
}

static void test_validity_loop_above_90_percent_of_a_core_is_saturation(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[1].loop_cpu_ns = SECOND * 91 / 100;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "client saturated: worker b's loop used 91 % of a core");
    w[1].loop_cpu_ns = SECOND * 89 / 100;
    validity_judge(&in, &v);
    assert_true(v.valid);
}

/* A worker with nothing to send ends its run at once: 25 us of CPU in a 26 us span is no
 * saturation, and the same share over a second is. */
static void test_validity_loop_measured_under_a_second_is_not_judged(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[1].loop_cpu_ns = 25000;
    w[1].loop_wall_ns = 26000;
    w[1].loop_wait_ns = 0;
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid);
    w[1].loop_cpu_ns = SECOND * 97 / 100;
    w[1].loop_wall_ns = SECOND;
    validity_judge(&in, &v);
    assert_one_reason(&v, "client saturated: worker b's loop used 97 % of a core");
}

static void test_validity_several_token_events_per_read_from_a_busy_loop_is_saturation(void **s) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[0].sse_events = 4500;
    w[0].token_events = 3500;       /* 3.5 per read */
    w[0].loop_wait_ns = SECOND / 2; /* a quarter of a core, and waiting half the run for one */
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "client saturated: worker a read 3.50 token events per read (above 1.5) "
                          "with its loop busy 75 % of the run");
    assert_true(validity_token_events_per_read(&w[0]) > 3.499 &&
                validity_token_events_per_read(&w[0]) < 3.501);
}

/* A server (or proxy) that writes several tokens at once, read by an idle loop: not the client. */
static void test_validity_several_token_events_per_read_from_an_idle_loop_is_not(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[0].token_events = 2000;
    w[0].loop_wait_ns = -1; /* unknown: counts as no wait */
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid);
    assert_true(validity_loop_busy_share(&w[0]) > 0.249 && validity_loop_busy_share(&w[0]) < 0.251);
}

/* One-token replies: the closing events (finish, usage, [DONE]) share the token's read. */
static void test_validity_closing_events_in_one_read_are_not_saturation(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[0].write_callbacks = 400;
    w[0].sse_events = 1600;
    w[0].token_events = 400;
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid);
    assert_true(validity_events_per_read(&w[0]) > 3.999 && validity_events_per_read(&w[0]) < 4.001);
}

static void test_validity_worker_without_stats_is_not_judged_saturated(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[0].has_stats = false;
    w[0].loop_cpu_ns = 2 * SECOND;
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid);
}

static void test_validity_schedule_lag_above_threshold_in_rate_mode(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.rate_mode = true;
    in.schedule_lag_p99_ms = 25;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "schedule lag p99 25.000 ms is above 10 ms");
    in.schedule_lag_p99_ms = 9.5;
    validity_judge(&in, &v);
    assert_true(v.valid);
}

/* Arrivals the user's cap held back are late on purpose: the rate warning names them instead. */
static void test_validity_schedule_lag_from_the_cap_is_not_a_reason(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.rate_mode = true;
    in.schedule_lag_p99_ms = 250;
    w[1].cap_waits = 12;
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid);
}

static void test_validity_lost_worker_is_a_reason(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[1].lost = true;
    w[1].has_stats = false;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "worker b was lost and its share of the load was not taken over");
}

static void test_validity_every_request_failed_is_a_reason(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.requests_ok = 0;
    in.requests_failed = 40;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "every request failed (40)");
}

static void test_validity_length_mismatch_counts_only_for_exact_lengths(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.requested_checked = 100;
    in.output_mismatched = 6;
    validity_t v;
    validity_judge(&in, &v);
    assert_true(v.valid); /* lengths were a maximum only */
    in.exact_lengths = true;
    validity_judge(&in, &v);
    assert_one_reason(&v, "6.0 % of the requests (6 of 100) received another output length");
    in.output_mismatched = 5;
    validity_judge(&in, &v);
    assert_true(v.valid);
}

static void test_validity_length_mismatch_names_the_early_stops(void **state) {
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.exact_lengths = true;
    in.requested_checked = 100;
    in.output_mismatched = 8;
    in.stopped_early = 7;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v, "8.0 % of the requests (8 of 100) received another output length");
    assert_non_null(strstr(v.reasons[0],
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
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    w[0].loop_cpu_ns = SECOND;
    w[0].token_events = 5000; /* busy: its loop is at a full core */
    w[1].lost = true;
    in.requests_ok = 0;
    in.requests_failed = 3;
    validity_t v;
    validity_judge(&in, &v);
    assert_false(v.valid);
    assert_int_equal(v.n_reasons, 4);
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
    validity_worker_t w[2];
    validity_input_t in = healthy_run(w);
    in.rate_mode = true;
    in.schedule_lag_p99_ms = 900;
    in.retried_requests = 12;
    in.retry_wait_s = 9.5;
    validity_t v;
    validity_judge(&in, &v);
    assert_one_reason(&v,
                      "12 requests waited out the server's HTTP 429 Retry-After (9.5 s in all)");
    assert_null(strstr(v.reasons[0], "the client could not keep the schedule"));
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
        cmocka_unit_test(test_validity_healthy_run_is_valid_with_no_reason),
        cmocka_unit_test(test_validity_circuit_breaker_makes_the_run_invalid),
        cmocka_unit_test(
            test_validity_rate_cause_is_the_servers_429s_when_requests_waited_them_out),
        cmocka_unit_test(test_validity_schedule_lag_from_429_retries_names_them_not_the_client),
        cmocka_unit_test(test_validity_sockets_refused_by_the_client_fd_limit_make_the_run_invalid),
        cmocka_unit_test(test_validity_loop_above_90_percent_of_a_core_is_saturation),
        cmocka_unit_test(test_validity_loop_measured_under_a_second_is_not_judged),
        cmocka_unit_test(
            test_validity_several_token_events_per_read_from_a_busy_loop_is_saturation),
        cmocka_unit_test(test_validity_several_token_events_per_read_from_an_idle_loop_is_not),
        cmocka_unit_test(test_validity_closing_events_in_one_read_are_not_saturation),
        cmocka_unit_test(test_validity_worker_without_stats_is_not_judged_saturated),
        cmocka_unit_test(test_validity_schedule_lag_above_threshold_in_rate_mode),
        cmocka_unit_test(test_validity_schedule_lag_from_the_cap_is_not_a_reason),
        cmocka_unit_test(test_validity_lost_worker_is_a_reason),
        cmocka_unit_test(test_validity_every_request_failed_is_a_reason),
        cmocka_unit_test(test_validity_length_mismatch_counts_only_for_exact_lengths),
        cmocka_unit_test(test_validity_length_mismatch_names_the_early_stops),
        cmocka_unit_test(test_validity_exact_lengths_follow_ignore_eos),
        cmocka_unit_test(test_validity_exact_lengths_follow_min_tokens),
        cmocka_unit_test(test_validity_every_reason_is_listed),
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
