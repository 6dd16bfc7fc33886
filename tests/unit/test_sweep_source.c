/* The level hook end to end: a controller (in this process) with a source of its own in
 * controller_options_t.source, one `stampede worker` and the fixed-timing mock as children. The
 * source doubles the concurrency while TTFT p50 stays under a bound, reading each previous level
 * through the sweep_result_* accessors; its watch stops the second level's window early. The
 * workers stay connected from level to level, and results.json tells what happened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller.h"
#include "mock_spawn.h"
#include "sweep.h"
#include "unit_main.h"

#define S 1000000000LL

typedef struct doubling {
    int calls;
    double seen_ttft_p50[4];
    double seen_error_pct[4];
    double seen_rps[4];
    uint32_t seen_valid[4];
    int watched;
} doubling_t;

/* 2, then 4, then ends: up to three levels, each 1 s of window after 300 ms of warm-up. */
static int doubling_next(void *arg, const level_result_t *previous, level_spec_t *out) {
    doubling_t *d = arg;
    int call = d->calls++;
    if (call > 0) {
        assert_non_null(previous);
        d->seen_ttft_p50[call - 1] = window_stats_percentile_ms(previous->pooled, METRIC_TTFT, 50);
        d->seen_error_pct[call - 1] = window_stats_error_pct(previous->pooled);
        d->seen_rps[call - 1] =
            window_stats_per_s(previous->pooled, previous->pooled->session_starts);
        d->seen_valid[call - 1] = previous->valid;
    } else {
        assert_null(previous);
    }
    if (call >= 2)
        return 0;
    *out = (level_spec_t){.axis = SWEEP_AXIS_CONCURRENCY,
                          .value = call == 0 ? 2 : 4,
                          .warmup_ns = 300000000LL,
                          .snapshots = 2,
                          .snapshot_ns = 2 * S,
                          .drain_ns = 5 * S,
                          .repeat = 1,
                          .exclude_error_pct = 5};
    return 1;
}

/* Stops the second level once its window has some requests. */
static bool doubling_watch(void *arg, const level_result_t *so_far) {
    doubling_t *d = arg;
    d->watched++;
    return so_far->spec->value == 4 && so_far->pooled->ok >= 5;
}

static pid_t start_worker(const char *endpoint) {
    pid_t pid = fork();
    if (pid == 0) {
        const char *bin = getenv("STAMPEDE_BIN");
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDERR_FILENO);
        execl(bin, bin, "worker", "--connect", endpoint, "--id", "w0", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void test_sweep_source_drives_the_fleet(void **state) {
    (void)state;
    mock_child_t mock;
    static const char *const mock_args[] = {"--ttft-ms", "15", "--itl-ms", "5", NULL};
    assert_int_equal(mock_spawn(&mock, mock_args), 0);
    char dir[] = "/tmp/stampede-sweep-source.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[512], target[64], out[600];
    snprintf(path, sizeof path, "%s/w.yaml", dir);
    snprintf(target, sizeof target, "http://127.0.0.1:%d", mock.port);
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("target: {ignore_eos: true}\nworkload: {input_tokens: 8, output_tokens: 8}\n"
          "limits: {max_requests: 1000000}\n",
          f);
    fclose(f);

    doubling_t d = {0};
    sweep_source_t source = {.next = doubling_next, .watch = doubling_watch, .arg = &d};
    const char *targets[] = {target};
    controller_options_t o = {.config_path = path,
                              .targets = targets,
                              .n_targets = 1,
                              .bind = "tcp://127.0.0.1:*",
                              .expect_workers = 1,
                              .out_dir = out,
                              .register_timeout_ns = 20 * S,
                              .name = "test",
                              .source = &source};
    controller_t *ctl = controller_new(&o);
    assert_non_null(ctl);
    pid_t worker = start_worker(controller_endpoint(ctl));
    int rc = controller_run(ctl);
    controller_destroy(&ctl);
    kill(worker, SIGTERM);
    waitpid(worker, NULL, 0);
    mock_stop(&mock);
    assert_int_equal(rc, 0);

    assert_int_equal(d.calls, 3); /* NULL, level 2's result, level 4's result */
    for (int i = 0; i < 2; i++) {
        assert_true(d.seen_ttft_p50[i] >= 15 && d.seen_ttft_p50[i] < 100);
        assert_true(d.seen_error_pct[i] == 0);
        assert_true(d.seen_rps[i] > 0);
        assert_int_equal(d.seen_valid[i], 1);
    }
    assert_true(d.watched >= 1);

    char results[700];
    snprintf(results, sizeof results, "%s/results.json", out);
    json_error_t error;
    json_t *root = json_load_file(results, 0, &error);
    if (!root)
        fail_msg("%s: %s", results, error.text);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(root, "sweep"), "source")), "hook");
    json_t *levels = json_object_get(root, "levels");
    assert_int_equal(json_array_size(levels), 2);
    json_t *second = json_array_get(levels, 1);
    assert_int_equal(json_integer_value(json_object_get(second, "concurrency")), 4);
    assert_true(json_is_true(json_object_get(second, "stopped_early")));
    json_t *rep = json_array_get(json_object_get(second, "repetitions"), 0);
    double measured =
        json_real_value(json_object_get(json_object_get(rep, "window"), "duration_s"));
    assert_true(measured > 0 && measured < 4); /* cut at the stop, not the full 4 s */
    assert_true(json_is_false(json_object_get(json_array_get(levels, 0), "stopped_early")));
    json_decref(root);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

UNIT_MAIN(cmocka_unit_test(test_sweep_source_drives_the_fleet))
