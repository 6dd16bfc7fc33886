/* The sweep: section (levels as a list or from/to/step, every key, errors naming file, line and
 * key, the round trip through config.yaml), the list source driving the level hook, a level's
 * run config, and the level's `reference` object with exactly the reports' keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_case.h"
#include "sweep.h"
#include "sweep_report.h"
#include "unit_main.h"

#define S 1000000000LL

static const char *const full = "scheduler: {kind: concurrent}\n"
                                "sweep:\n"
                                "  concurrency: {from: 50, to: 160, step: 10}\n"
                                "  warmup: 60s\n"
                                "  snapshots: {count: 3, duration: 100s}\n"
                                "  drain: 45s\n"
                                "  repeat: 3\n"
                                "  exclude_error_pct: 5\n"
                                "  rate_cap: 10/s\n";

static void test_sweep_range_and_every_key(void **state) {
    (void)state;
    config_t cfg;
    config_case_load(&cfg, full);
    const config_sweep_t *s = &cfg.sweep;
    assert_int_equal(s->axis, SWEEP_AXIS_CONCURRENCY);
    assert_int_equal(s->n_levels, 12); /* 50, 60, ..., 160 */
    assert_true(s->levels[0] == 50 && s->levels[11] == 160);
    assert_true(s->warmup_ns == 60 * S && s->snapshot_ns == 100 * S && s->drain_ns == 45 * S);
    assert_int_equal(s->snapshots, 3);
    assert_int_equal(s->repeat, 3);
    assert_true(s->exclude_error_pct == 5 && s->rate_cap == 10);

    /* config.yaml writes it back, and it reads back the same */
    char *yaml = config_to_yaml(&cfg);
    assert_non_null(yaml);
    config_t again;
    config_case_load(&again, yaml);
    assert_int_equal(again.sweep.n_levels, 12);
    assert_memory_equal(again.sweep.levels, s->levels, 12 * sizeof(double));
    assert_true(again.sweep.rate_cap == 10 && again.sweep.drain_ns == 45 * S);
    config_t copy;
    assert_int_equal(config_copy(&copy, &again), 0);
    assert_true(copy.sweep.levels != again.sweep.levels && copy.sweep.levels[5] == 100);
    config_free(&copy);
    config_free(&again);
    free(yaml);
    config_free(&cfg);
}

static void test_sweep_rate_list_and_defaults(void **state) {
    (void)state;
    config_t cfg;
    config_case_load(&cfg, "sweep:\n  rate: [1/s, 2.5, 4/s]\n  snapshots: {duration: 5s}\n");
    const config_sweep_t *s = &cfg.sweep;
    assert_int_equal(s->axis, SWEEP_AXIS_RATE);
    assert_int_equal(s->n_levels, 3);
    assert_true(s->levels[1] == 2.5);
    assert_int_equal(s->snapshots, 1);
    assert_int_equal(s->repeat, 1);
    assert_true(s->warmup_ns == 0 && s->drain_ns == 30 * S && s->exclude_error_pct == 5);
    config_free(&cfg);
}

static void test_sweep_refusals_name_file_line_and_key(void **state) {
    (void)state;
    static const message_case_t cases[] = {
        {"sweep:\n  snapshots: {duration: 1s}\n",
         "bad.yaml:2:3: sweep: a sweep needs its levels: concurrency: [...] or rate: [...] (a "
         "list or {from, to, step})"},
        {"sweep:\n  concurrency: [1, 2]\n  rate: [1]\n  snapshots: {duration: 1s}\n",
         "bad.yaml:3:9: sweep.rate: a sweep varies one thing: concurrency or rate, not both"},
        {"sweep:\n  concurrency: [4, 0]\n  snapshots: {duration: 1s}\n",
         "bad.yaml:2:20: sweep.concurrency[1]: expected a concurrency of at least 1, got '0'"},
        {"sweep:\n  concurrency: {from: 10, to: 5, step: 1}\n  snapshots: {duration: 1s}\n",
         "bad.yaml:2:31: sweep.concurrency.to: to (5) is below from (10)"},
        {"sweep:\n  concurrency: {from: 10, to: 50}\n  snapshots: {duration: 1s}\n",
         "bad.yaml:2:16: sweep.concurrency.step: a range needs from, to and step"},
        {"sweep:\n  concurrency: 8\n  snapshots: {duration: 1s}\n",
         "bad.yaml:2:16: sweep.concurrency: expected a list of levels ([50, 60, 70]) or a range "
         "({from: 50, to: 160, step: 10}), got '8'"},
        {"sweep:\n  concurrency: [8]\n", "bad.yaml:2:3: sweep.snapshots: a sweep needs its "
                                         "measurement window: snapshots: {count: 3, duration: "
                                         "100s}"},
        {"sweep:\n  concurrency: [8]\n  snapshots: {count: 3}\n",
         "bad.yaml:3:14: sweep.snapshots.duration: each snapshot needs a duration, e.g. duration: "
         "100s"},
        {"sweep:\n  concurrency: [8]\n  snapshots: {duration: 1s}\n  repeat: 0\n",
         "bad.yaml:4:11: sweep.repeat: expected at least 1, got '0'"},
        {"sweep:\n  concurrency: [8]\n  snapshots: {duration: 1s}\n  exclude_error_pct: 120\n",
         "bad.yaml:4:22: sweep.exclude_error_pct: expected a percentage from 0 to 100, got '120'"},
        {"sweep:\n  rate: [2]\n  snapshots: {duration: 1s}\n  rate_cap: 10/s\n",
         "bad.yaml:4:13: sweep.rate_cap: a rate cap applies to concurrency levels; a rate sweep "
         "sets the rate itself"},
        {"limits: {duration: 10s}\nsweep:\n  concurrency: [8]\n  snapshots: {duration: 1s}\n",
         "bad.yaml:1:20: limits.duration: a sweep sets each level's duration (sweep.warmup + "
         "sweep.snapshots count x duration); drop limits.duration"},
        {"warmup: 5s\nsweep:\n  concurrency: [8]\n  snapshots: {duration: 1s}\n",
         "bad.yaml:1:9: warmup: a sweep has its own warm-up per level; use sweep.warmup"},
        {"scheduler: {kind: sequential}\nsweep:\n  concurrency: [8]\n  snapshots: {duration: "
         "1s}\n",
         "bad.yaml:3:16: sweep.concurrency: a sequential scheduler runs one session at a time; "
         "use scheduler.kind concurrent (or rate) to sweep concurrency"},
        {"sweep:\n  concurency: [8]\n  snapshots: {duration: 1s}\n",
         "bad.yaml:2:3: sweep.concurency: unknown key 'concurency'; did you mean 'concurrency'?"},
    };
    config_case_refusals(cases, sizeof cases / sizeof cases[0]);
}

static void test_sweep_list_source_gives_every_level_then_ends(void **state) {
    (void)state;
    config_t cfg;
    config_case_load(&cfg, full);
    sweep_list_t list;
    sweep_source_t source = sweep_list_source(&list, &cfg.sweep);
    assert_int_equal(source.planned, 12);
    assert_null(source.watch);
    level_spec_t spec;
    double seen[12];
    size_t n = 0;
    level_result_t previous = {0};
    for (int got; (got = source.next(source.arg, n ? &previous : NULL, &spec)) == 1; n++) {
        assert_true(n < 12);
        seen[n] = spec.value;
        assert_int_equal(spec.repeat, 3);
        assert_int_equal(spec.snapshots, 3);
        assert_true(spec.rate_cap == 10);
    }
    assert_int_equal(n, 12);
    assert_true(seen[0] == 50 && seen[1] == 60 && seen[11] == 160);
    config_free(&cfg);
}

static void test_sweep_level_config(void **state) {
    (void)state;
    config_t cfg;
    config_case_load(&cfg, full);
    level_spec_t spec;
    sweep_spec_from_config(&cfg.sweep, 2, &spec);
    sweep_apply_level(&cfg, &spec);
    /* concurrency 70 capped at 10 session starts per second: constant arrivals at the cap */
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_RATE);
    assert_int_equal(cfg.scheduler.arrival, ARRIVAL_CONSTANT);
    assert_true(cfg.scheduler.rate == 10);
    assert_int_equal(cfg.scheduler.concurrency, 70);
    assert_true(cfg.warmup_ns == 60 * S);
    assert_true(cfg.limits.duration_ns == 360 * S);
    assert_int_equal(cfg.sweep.axis, SWEEP_AXIS_NONE); /* the level is a plain run */
    config_free(&cfg);

    config_case_load(&cfg, "sweep:\n  concurrency: [8]\n  snapshots: {duration: 2s}\n");
    sweep_spec_from_config(&cfg.sweep, 0, &spec);
    sweep_apply_level(&cfg, &spec);
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_CONCURRENT);
    assert_int_equal(cfg.scheduler.concurrency, 8);
    assert_true(cfg.limits.duration_ns == 2 * S);
    config_free(&cfg);

    config_case_load(&cfg, "sweep:\n  rate: [3]\n  snapshots: {duration: 2s}\n");
    sweep_spec_from_config(&cfg.sweep, 0, &spec);
    sweep_apply_level(&cfg, &spec);
    assert_int_equal(cfg.scheduler.kind, SCHEDULER_RATE);
    assert_true(cfg.scheduler.rate == 3);
    assert_int_equal(cfg.scheduler.concurrency, 0);
    config_free(&cfg);
}

/* Every level, repetition and capacity trial gets its own text seed unless fresh_text is false;
 * sweep.fresh_text and capacity.fresh_text read and write back. */
static void test_sweep_text_seed_per_level_and_repetition(void **state) {
    (void)state;
    enum { LEVELS = 40, REPS = 5 };
    static uint64_t seen[LEVELS * REPS];
    size_t n = 0;
    for (size_t level = 0; level < LEVELS; level++)
        for (uint32_t rep = 1; rep <= REPS; rep++) {
            uint64_t seed = sweep_text_seed(7, level, rep);
            assert_true(seed != 0 && seed != 7);
            assert_true(seed == sweep_text_seed(7, level, rep)); /* a pure function */
            for (size_t k = 0; k < n; k++)
                assert_true(seen[k] != seed);
            seen[n++] = seed;
        }
    assert_true(sweep_text_seed(8, 0, 1) != sweep_text_seed(7, 0, 1));

    config_t file, level;
    config_case_load(&file, "seed: 7\nsweep:\n  concurrency: [4, 4]\n"
                            "  snapshots: {duration: 1s}\n");
    assert_true(file.sweep.fresh_text); /* the default */
    assert_int_equal(config_copy(&level, &file), 0);
    sweep_apply_text(&level, &file, 1, 2);
    assert_true(config_text_seed(&level) == sweep_text_seed(7, 1, 2));
    assert_true(level.seed == 7); /* the shapes' seed is untouched */
    char *yaml = config_to_yaml(&level);
    assert_non_null(yaml);
    config_t again;
    config_case_load(&again, yaml); /* the wire form carries the level's text seed */
    assert_true(config_text_seed(&again) == config_text_seed(&level));
    config_free(&again);
    free(yaml);
    config_free(&level);
    config_free(&file);

    config_case_load(&file, "seed: 7\ntext_seed: 9\nsweep:\n  concurrency: [4]\n"
                            "  snapshots: {duration: 1s}\n  fresh_text: false\n");
    assert_false(file.sweep.fresh_text);
    assert_int_equal(config_copy(&level, &file), 0);
    sweep_apply_text(&level, &file, 3, 1);
    assert_true(config_text_seed(&level) == 9); /* the file's own, for every level */
    yaml = config_to_yaml(&file);
    assert_non_null(yaml);
    assert_non_null(strstr(yaml, "  fresh_text: false\n"));
    config_case_load(&again, yaml);
    assert_false(again.sweep.fresh_text);
    assert_true(again.text_seed == 9);
    config_free(&again);
    free(yaml);
    config_free(&level);
    config_free(&file);

    /* a capacity search: its trials are the levels; fresh unless capacity.fresh_text is false */
    static const char *const capacity = "seed: 7\nslo: {ttft: {p95: 1s}}\n"
                                        "scheduler: {kind: rate, rate: 1}\n"
                                        "limits: {duration: 10s}\ncapacity: {axis: rate%s}\n";
    char text[512];
    snprintf(text, sizeof text, capacity, "");
    config_case_load(&file, text);
    assert_true(file.capacity.fresh_text);
    sweep_apply_text(&file, &file, 2, 1);
    assert_true(config_text_seed(&file) == sweep_text_seed(7, 2, 1));
    config_free(&file);
    snprintf(text, sizeof text, capacity, ", fresh_text: false");
    config_case_load(&file, text);
    assert_false(file.capacity.fresh_text);
    yaml = config_to_yaml(&file);
    assert_non_null(yaml);
    config_case_load(&again, yaml);
    assert_false(again.capacity.fresh_text);
    sweep_apply_text(&again, &file, 2, 1);
    assert_true(config_text_seed(&again) == 7);
    config_free(&again);
    free(yaml);
    config_free(&file);

    static const message_case_t bad[] = {
        {"sweep:\n  concurrency: [4]\n  snapshots: {duration: 1s}\n  fresh_text: maybe\n",
         "bad.yaml:4:15: sweep.fresh_text: expected true or false, got 'maybe'"},
        {"text_seed: -3\n", "bad.yaml:1:12: text_seed: expected a whole number >= 0, got '-3'"},
        {"capacity: {fresh_text: 2}\nslo: {ttft: {p95: 1s}}\nlimits: {duration: 10s}\n",
         "bad.yaml:1:24: capacity.fresh_text: expected true or false, got '2'"},
    };
    config_case_refusals(bad, sizeof bad / sizeof bad[0]);
}

static void test_sweep_reference_has_exactly_the_reports_keys(void **state) {
    (void)state;
    static const char *const keys[] = {
        "concurrency", "ttft_p50_ms",    "ttft_p95_ms",   "kv_hit_rate_pct",
        "error_pct",   "actual_rps",     "tops",          "tpot_p50_ms",
        "tpot_p95_ms", "latency_p50_ms", "latency_p95_ms"};
    window_stats_t s;
    assert_int_equal(window_stats_init(&s), 0);
    histogram_record(s.latency[METRIC_TTFT], 174000000);
    s.ok = 99;
    s.failed = 1;
    s.session_starts = 30;
    s.duration_ns = 20 * S;
    level_spec_t spec = {.axis = SWEEP_AXIS_CONCURRENCY, .value = 50};
    json_t *ref = sweep_report_reference_json(&spec, &s);
    assert_int_equal(json_object_size(ref), sizeof keys / sizeof keys[0]);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!json_object_get(ref, keys[i]))
            fail_msg("no key %s", keys[i]);
    assert_int_equal(json_integer_value(json_object_get(ref, "concurrency")), 50);
    assert_true(fabs(json_real_value(json_object_get(ref, "error_pct")) - 1) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(ref, "actual_rps")) - 1.5) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(ref, "ttft_p50_ms")) - 174) < 0.1);
    assert_true(json_is_null(json_object_get(ref, "tpot_p50_ms"))); /* absent, not zero */
    assert_true(json_is_null(json_object_get(ref, "kv_hit_rate_pct")));
    json_decref(ref);
    window_stats_free(&s);
}

static void test_sweep_across_repetitions_and_snapshot_mean(void **state) {
    (void)state;
    double rows[3][SWEEP_FIG__COUNT];
    for (int r = 0; r < 3; r++)
        for (int f = 0; f < SWEEP_FIG__COUNT; f++)
            rows[r][f] = NAN;
    rows[0][SWEEP_FIG_TPOT_P50] = 44;
    rows[1][SWEEP_FIG_TPOT_P50] = 46;
    rows[2][SWEEP_FIG_TPOT_P50] = 48;
    json_t *across = sweep_report_across_json((const double(*)[SWEEP_FIG__COUNT])rows, 3);
    json_t *tpot = json_object_get(across, "tpot_p50_ms");
    assert_true(fabs(json_real_value(json_object_get(tpot, "mean")) - 46) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(tpot, "stddev")) - 2) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(tpot, "ci95_high")) -
                     (46 + 4.303 * 2 / sqrt(3))) < 1e-9);
    assert_true(json_is_null(json_object_get(json_object_get(across, "ttft_p50_ms"), "mean")));
    json_t *mean = sweep_report_mean_json((const double(*)[SWEEP_FIG__COUNT])rows, 3);
    assert_true(fabs(json_real_value(json_object_get(mean, "tpot_p50_ms")) - 46) < 1e-9);
    json_t *stability = sweep_report_stability_json((const double(*)[SWEEP_FIG__COUNT])rows, 3);
    assert_true(fabs(json_real_value(json_object_get(stability, "tpot_p50_ms")) - 4) < 1e-9);
    assert_true(json_is_null(json_object_get(stability, "ttft_p50_ms")));
    json_decref(across);
    json_decref(mean);
    json_decref(stability);
}

UNIT_MAIN(cmocka_unit_test(test_sweep_range_and_every_key),
          cmocka_unit_test(test_sweep_rate_list_and_defaults),
          cmocka_unit_test(test_sweep_refusals_name_file_line_and_key),
          cmocka_unit_test(test_sweep_list_source_gives_every_level_then_ends),
          cmocka_unit_test(test_sweep_level_config),
          cmocka_unit_test(test_sweep_text_seed_per_level_and_repetition),
          cmocka_unit_test(test_sweep_reference_has_exactly_the_reports_keys),
          cmocka_unit_test(test_sweep_across_repetitions_and_snapshot_mean))
