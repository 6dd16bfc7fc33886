#include "simulate.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "measurement.h"
#include "report.h"
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
                          const simulate_options_t *o, measurement_t *first) {
    sweep_run_t *sweep = sweep_run_new(NULL, first, o->source);
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

/* One simulation of the file on `replicas` engines, results in out_dir (NULL: the options'). */
static int simulate_once(const simulate_options_t *o, uint32_t replicas, const char *out_dir,
                         bool named) {
    static const char *const target[] = {SIM_TARGET};
    report_simulation_t mark = {
        .profile = o->profile, .replicas = replicas, .router = mock_router_name(o->router)};
    run_options_t run_options = {.name = SIM_NAME,
                                 .targets = named ? NULL : target,
                                 .n_targets = named ? 0 : 1,
                                 .out_dir = out_dir ? out_dir : o->out_dir,
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
    if (o->source || first->cfg.sweep.axis != SWEEP_AXIS_NONE) {
        rc = simulate_sweep(loop, server, &run_options, o, first);
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

/* A trial of the replica search: its count, whether its run met every SLO, and the one that
 * bound it. */
typedef struct replica_trial {
    uint32_t replicas;
    bool pass;
    char binding[96];
} replica_trial_t;

/* Runs the file on n replicas into OUT/replicas-n and judges it by its analysis.slo. -1 when it
 * could not run. */
static int simulate_trial(const simulate_options_t *o, const char *base, uint32_t n, bool named,
                          replica_trial_t *t) {
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/replicas-%u", base, n);
    int rc = simulate_once(o, n, dir, named);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *root = rc == 0 || rc == 3 ? json_load_file(path, 0, NULL) : NULL;
    const json_t *slo = json_object_get(json_object_get(root, "analysis"), "slo");
    *t = (replica_trial_t){.replicas = n, .pass = json_is_true(json_object_get(slo, "pass"))};
    const char *binding = json_string_value(json_object_get(slo, "binding"));
    snprintf(t->binding, sizeof t->binding, "%s", binding ? binding : "");
    json_decref(root);
    if (!slo) {
        fprintf(stderr, SIM_NAME ": the run on %u replicas has no SLO verdict (%s)\n", n, path);
        return -1;
    }
    fprintf(stderr, SIM_NAME ": %u replica%s: %s%s\n", n, n == 1 ? "" : "s",
            t->pass ? "every SLO met" : "FAIL, binding: ", t->pass ? "" : t->binding);
    return 0;
}

/* The fewest replicas whose run meets the file's SLOs, by bisection over 1 ... bound (more
 * replicas never serve the same load worse). */
static int simulate_find_replicas(const simulate_options_t *o, bool named) {
    config_t cfg;
    config_error_t err;
    if (config_load_file(&cfg, o->config_path, &err) != 0)
        return 1;
    bool ok = cfg.slo.n > 0 && cfg.sweep.axis == SWEEP_AXIS_NONE && !o->source;
    const char *base = o->out_dir ? o->out_dir : cfg.output.dir ? cfg.output.dir : "results";
    char base_dir[4096];
    snprintf(base_dir, sizeof base_dir, "%s", base);
    config_free(&cfg);
    if (!ok) {
        fprintf(stderr,
                SIM_NAME ": %s: --find-replicas needs an slo: section and one run (no sweep: or "
                         "capacity: section): it judges the file's load on each replica count\n",
                o->config_path);
        return 1;
    }
    replica_trial_t trials[64];
    size_t n_trials = 0;
    uint32_t lo = 0, hi = o->find_replicas; /* lo fails (0: none tried), hi to be checked */
    int rc = 0;
    if (simulate_trial(o, base_dir, hi, named, &trials[n_trials]) != 0)
        return 1;
    bool found = trials[n_trials++].pass;
    while (found && hi - lo > 1 && n_trials < 64) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (simulate_trial(o, base_dir, mid, named, &trials[n_trials]) != 0)
            return 1;
        if (trials[n_trials++].pass)
            hi = mid;
        else
            lo = mid;
    }
    json_t *list = json_array();
    for (size_t i = 0; i < n_trials; i++)
        json_array_append_new(list, json_pack("{s:i, s:b, s:s}", "replicas",
                                              (json_int_t)trials[i].replicas, "pass",
                                              trials[i].pass, "binding", trials[i].binding));
    json_t *root =
        json_pack("{s:b, s:s, s:s, s:i, s:o, s:o}", "simulated", 1, "profile", o->profile, "router",
                  mock_router_name(o->router), "searched_up_to", (json_int_t)o->find_replicas,
                  "needed", found ? json_integer(hi) : json_null(), "trials", list);
    char path[4200];
    snprintf(path, sizeof path, "%s/replicas.json", base_dir);
    if (report_write_json_root(root, path) != 0) {
        fprintf(stderr, SIM_NAME ": cannot write %s\n", path);
        rc = 1;
    }
    json_decref(root);
    if (found)
        printf("Replicas needed (SIMULATED, profile %s, router %s): %u, the fewest whose run met "
               "every SLO of %s; results in %s/replicas-%u\n",
               o->profile, mock_router_name(o->router), hi, o->config_path, base_dir, hi);
    else
        printf("Replicas needed (SIMULATED, profile %s, router %s): more than %u: that many "
               "missed %s (binding: %s)\n",
               o->profile, mock_router_name(o->router), hi, o->config_path, trials[0].binding);
    return found ? rc : 1;
}

int simulate_file(const simulate_options_t *o) {
    bool named;
    if (simulate_names_endpoint(o->config_path, &named) != 0)
        return 1;
    if (o->find_replicas)
        return simulate_find_replicas(o, named);
    return simulate_once(o, o->replicas, NULL, named);
}
