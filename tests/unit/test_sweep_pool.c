/* A sweep level's pooled roles, sessions and decode overlap (controller/sweep_pool): pooling two
 * repetitions' merges gives exactly what one merge of every record gives (histograms merged,
 * never percentiles averaged), and the level's keys carry the role names and the series of the
 * last repetition added. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "client_series.h"
#include "merge.h"
#include "sweep_pool.h"
#include "unit_main.h"

#define MS 1000000LL
#define S (1000 * MS)

typedef struct fixture {
    request_record_t rec;
    int64_t chunk_ns[4];
} fixture_t;

/* An ok request of role at send (ns), TTFT ttft_ms, 3 more chunks 10 ms apart. */
static const request_record_t *make(fixture_t *f, uint32_t role, int64_t send, int64_t ttft_ms) {
    memset(f, 0, sizeof *f);
    request_record_t *rec = &f->rec;
    rec->send_ns = rec->intended_ns = send;
    rec->role = role;
    for (uint32_t i = 0; i < 4; i++)
        f->chunk_ns[i] = send + ttft_ms * MS + i * 10 * MS;
    rec->n_chunks = 4;
    rec->chunk_ns = f->chunk_ns;
    rec->first_token_ns = rec->first_content_ns = f->chunk_ns[0];
    rec->end_ns = f->chunk_ns[3];
    return rec;
}

/* Repetition a (from 0 s): fast, role 0 and 1; repetition b (from 100 s, after a): slow, more of
 * them, role 1 only, two in flight at once. all gets every record. */
static void feed(merge_t *a, merge_t *b, merge_t *all) {
    fixture_t f;
    for (int i = 0; i < 20; i++) {
        const request_record_t *rec = make(&f, (uint32_t)(i % 2), (int64_t)i * S, 20 + i);
        merge_add(a, rec);
        merge_add(all, rec);
    }
    for (int i = 0; i < 60; i++) {
        const request_record_t *rec = make(&f, 1, 100 * S + (int64_t)(i / 2) * S, 300 + 7 * i);
        merge_add(b, rec);
        merge_add(all, rec);
    }
}

static void test_sweep_pool_roles_and_overlap_equal_one_merge_of_every_record(void **state) {
    (void)state;
    merge_t *a = merge_new(NULL), *b = merge_new(NULL), *all = merge_new(NULL);
    assert_true(a && b && all);
    feed(a, b, all);
    sweep_pool_t pool;
    assert_int_equal(sweep_pool_init(&pool, 0), 0);
    assert_int_equal(sweep_pool_add(&pool, a, NULL, 1), 0);
    assert_int_equal(sweep_pool_add(&pool, b, NULL, 2), 0);
    assert_int_equal(pool.n_roles, 2);
    for (uint32_t r = 0; r < 2; r++) {
        const merge_stats_t *want = merge_role(all, r), *got = pool.roles[r];
        assert_non_null(got);
        assert_int_equal(got->requests, want->requests);
        assert_int_equal(got->ok, want->ok);
        assert_int_equal(got->output_tokens, want->output_tokens);
        for (int k = 0; k < METRIC__COUNT; k++) {
            assert_int_equal(histogram_count(got->latency[k]), histogram_count(want->latency[k]));
            for (double p = 10; p <= 100; p += 10)
                assert_int_equal(histogram_percentile(got->latency[k], p),
                                 histogram_percentile(want->latency[k], p));
        }
    }
    /* role 1's pooled p50 is the slow repetition's side, not the mean of the two p50s */
    double pa = (double)histogram_percentile(merge_role(a, 1)->latency[METRIC_TTFT], 50);
    double pb = (double)histogram_percentile(merge_role(b, 1)->latency[METRIC_TTFT], 50);
    double pooled = (double)histogram_percentile(pool.roles[1]->latency[METRIC_TTFT], 50);
    assert_true(pooled > (pa + pb) / 2 * 1.05 || pooled < (pa + pb) / 2 * 0.95);

    json_t *want = json_object(), *got = json_object();
    report_meta_t meta = {.role_names = (const char *const[]){"planner", "executor"},
                          .n_role_names = 2};
    report_level_t level = {.merge = all};
    json_t *doc = report_json(&level, 1, &meta);
    json_object_set(
        want, "decode_overlap",
        json_object_get(json_array_get(json_object_get(doc, "levels"), 0), "decode_overlap"));
    sweep_pool_json(&pool, got, &meta);
    assert_true(json_equal(json_object_get(got, "decode_overlap"),
                           json_object_get(want, "decode_overlap")));
    assert_int_equal(json_array_size(json_object_get(got, "decode_overlap")), 2);
    const json_t *roles = json_object_get(got, "roles");
    assert_int_equal(json_object_size(roles), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(roles, "executor"), "requests")), 70);
    assert_non_null(json_object_get(got, "sessions"));
    assert_true(json_is_null(json_object_get(got, "client_series")));
    json_decref(doc), json_decref(want), json_decref(got);
    sweep_pool_free(&pool);
    merge_destroy(&a), merge_destroy(&b), merge_destroy(&all);
}

static void test_sweep_pool_sessions_add_histograms_and_counts(void **state) {
    (void)state;
    sessions_stats_t x, y, sum;
    assert_int_equal(sessions_stats_init(&x, 2), 0);
    assert_int_equal(sessions_stats_init(&y, 2), 0);
    assert_int_equal(sessions_stats_init(&sum, 2), 0);
    for (int i = 1; i <= 10; i++)
        histogram_record(x.makespan, (uint64_t)i * MS);
    for (int i = 1; i <= 30; i++)
        histogram_record(y.makespan, (uint64_t)(100 + i) * MS);
    x.counted = 10, y.counted = 30;
    x.role_critical_ns[1] = 5, y.role_critical_ns[2] = 7;
    x.n_roles = 2, y.n_roles = 3;
    x.endpoint_shared[1] = 4, y.endpoint_shared[1] = 6;
    sessions_stats_pool(&sum, &x);
    sessions_stats_pool(&sum, &y);
    assert_int_equal(sum.counted, 40);
    assert_int_equal(histogram_count(sum.makespan), 40);
    assert_int_equal(histogram_percentile(sum.makespan, 50),
                     histogram_percentile(y.makespan, 100.0 * 10 / 30));
    assert_int_equal(sum.n_roles, 3);
    assert_int_equal(sum.role_critical_ns[1], 5);
    assert_int_equal(sum.role_critical_ns[2], 7);
    assert_int_equal(sum.endpoint_shared[1], 10);
    sessions_stats_free(&x), sessions_stats_free(&y), sessions_stats_free(&sum);
}

static void test_sweep_pool_keeps_the_last_repetitions_series(void **state) {
    (void)state;
    merge_t *m = merge_new(NULL);
    client_series_t *one = client_series_new(), *two = client_series_new();
    assert_true(m && one && two);
    client_series_add(one, 1.0, 3, 5.0);
    client_series_add(two, 1.0, 4, 6.0);
    client_series_add(two, 2.0, 4, 6.5);
    sweep_pool_t pool;
    assert_int_equal(sweep_pool_init(&pool, 1), 0);
    assert_int_equal(sweep_pool_add(&pool, m, one, 1), 0);
    assert_int_equal(sweep_pool_add(&pool, m, two, 3), 0);
    json_t *level = json_object();
    sweep_pool_json(&pool, level, NULL);
    assert_int_equal(json_integer_value(json_object_get(level, "client_series_from_repetition")),
                     3);
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(level, "client_series"), "t_s")), 2);
    assert_int_equal(json_array_size(json_object_get(level, "decode_overlap")), 0);
    json_decref(level);
    sweep_pool_free(&pool);
    sweep_pool_free(&pool); /* a freed pool is zeroed: freeing it again is fine */
    client_series_destroy(&one), client_series_destroy(&two);
    merge_destroy(&m);
}

UNIT_MAIN(cmocka_unit_test(test_sweep_pool_roles_and_overlap_equal_one_merge_of_every_record),
          cmocka_unit_test(test_sweep_pool_sessions_add_histograms_and_counts),
          cmocka_unit_test(test_sweep_pool_keeps_the_last_repetitions_series))
