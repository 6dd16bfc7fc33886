#include "simulate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "measurement.h"
#include "sim_run.h"
#include "sweep_run.h"

#define SIM_NAME "simulate"
/* The endpoint a file that names none is given (no request ever leaves the process). */
#define SIM_TARGET "http://simulated.invalid/v1"
/* Where virtual time starts: far from 0, which records read as "did not happen". */
#define SIM_EPOCH_NS 1000000000000LL

static void sim_sweep_step(void *arg, int64_t now) {
    sweep_run_step(arg, now);
}

/* The levels of a sweep, each repetition a simulated run; first is the file's run. */
static int simulate_sweep(loop_t *loop, mock_virtual_t *server, const run_options_t *run_options,
                          const simulate_options_t *o, const sweep_source_t *source,
                          measurement_t *first) {
    sweep_run_t *sweep = sweep_run_new(NULL, first, source);
    if (!sweep) {
        measurement_destroy(&first);
        return 1;
    }
    sim_run_hooks_t hooks = {.step = sim_sweep_step, .arg = sweep};
    int rc = 0, got;
    bool ran = true;
    while (ran && (got = sweep_run_next_level(sweep)) > 0) {
        for (uint32_t rep = 1; rep <= sweep_run_spec(sweep)->repeat; rep++) {
            measurement_t *run = first ? first : measurement_new(run_options, o->config_path, 1, 1);
            first = NULL;
            int run_rc = 1;
            if (run && sweep_run_prepare(sweep, run, rep) == 0)
                run_rc = sim_run(loop, server, o->network_delay_ns, run, &hooks);
            else
                ran = false;
            measurement_destroy(&run);
            if (!rc)
                rc = run_rc;
            if (!ran)
                break;
        }
        sweep_run_end_level(sweep, !ran);
    }
    if (got < 0 && !rc)
        rc = 1;
    measurement_destroy(&first);
    if (sweep_run_finish(sweep, false) != 0 && !rc)
        rc = 1;
    sweep_run_destroy(&sweep);
    return rc;
}

/* The config as a run loads it, to see whether it names an endpoint. */
static int simulate_names_endpoint(const char *path, bool *named) {
    config_t cfg;
    config_error_t err;
    if (config_load_file(&cfg, path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, SIM_NAME ": %s\n", msg);
        return -1;
    }
    *named = cfg.target.n_endpoints > 0;
    config_free(&cfg);
    return 0;
}

/* One simulation of the file on `replicas` engines, results in out_dir (NULL: the file's), the
 * levels source's (NULL: the file's sweep section, or one run). */
static int simulate_once(const simulate_options_t *o, uint32_t replicas, const char *out_dir,
                         bool named, const sweep_source_t *source) {
    static const char *const target[] = {SIM_TARGET};
    report_simulation_t mark = {
        .profile = o->profile, .replicas = replicas, .router = mock_router_name(o->router)};
    run_options_t run_options = {.name = SIM_NAME,
                                 .targets = named ? NULL : target,
                                 .n_targets = named ? 0 : 1,
                                 .out_dir = out_dir,
                                 .trace = o->trace,
                                 .no_preflight = true,
                                 .allow_invalid = o->allow_invalid,
                                 .print_report = o->print_report,
                                 .expect_workers = 1,
                                 .simulated_profile = o->profile,
                                 .simulation = &mark};
    measurement_t *first = measurement_new(&run_options, o->config_path, 1, 1);
    if (!first)
        return 1;
    char err[512];
    loop_t *loop = loop_new_virtual(SIM_EPOCH_NS);
    mock_virtual_t *server =
        loop ? mock_virtual_new(loop, o->engine, replicas, o->router, err, sizeof err) : NULL;
    if (!server) {
        fprintf(stderr, SIM_NAME ": %s\n", loop ? err : "cannot make the virtual clock");
        measurement_destroy(&first);
        loop_destroy(&loop);
        return 1;
    }
    int rc;
    if (source || first->cfg.sweep.axis != SWEEP_AXIS_NONE) {
        rc = simulate_sweep(loop, server, &run_options, o, source, first);
    } else {
        rc = sim_run(loop, server, o->network_delay_ns, first, NULL);
        measurement_destroy(&first);
    }
    for (uint32_t i = 0; i < mock_virtual_replicas(server); i++) {
        mock_engine_stats_t st;
        mock_virtual_stats(server, i, &st);
        fprintf(stderr,
                SIM_NAME ": replica %u: %llu prompt tokens, %llu from the prefix cache (%.1f %%), "
                         "%llu preemptions, %.1f s of virtual time\n",
                i, (unsigned long long)st.prefix_queries, (unsigned long long)st.prefix_hits,
                st.prefix_queries ? 100.0 * (double)st.prefix_hits / (double)st.prefix_queries
                                  : 0.0,
                (unsigned long long)st.preemptions, (double)(loop_now_ns() - SIM_EPOCH_NS) / 1e9);
    }
    mock_virtual_destroy(&server);
    loop_destroy(&loop);
    return rc;
}

int simulate_on(const simulate_options_t *o, uint32_t replicas, const char *out_dir) {
    bool named;
    if (simulate_names_endpoint(o->config_path, &named) != 0)
        return 1;
    out_dir = out_dir ? out_dir : o->out_dir;
    if (!o->search)
        return simulate_once(o, replicas, out_dir, named, o->source);
    sweep_source_t source;
    void *search;
    if (o->search->open(o->search->arg, out_dir, &source, &search) != 0)
        return 1;
    return o->search->close(search, simulate_once(o, replicas, out_dir, named, &source));
}

int simulate_file(const simulate_options_t *o) {
    return simulate_on(o, o->replicas, NULL);
}
