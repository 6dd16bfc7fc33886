#include "results.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "breaker.h"
#include "client_series.h"
#include "drain.h"
#include "loop.h"
#include "losses.h"
#include "outfile.h"
#include "report_cmd.h"
#include "report_network.h"
#include "sweep_report.h"
#include "telemetry_report.h"
#include "telemetry_run.h"
#include "validity.h"

void results_open_trace(measurement_t *run) {
    /* The start is known from here on and the first record comes later: the window opens now. */
    int64_t duration = run->cfg.limits.duration_ns;
    merge_set_run_window(run->merge, run->start_ns + run->cfg.warmup_ns,
                         duration > 0 ? run->start_ns + duration : 0);
    for (size_t i = 0; i < run->n_sinks; i++)
        if (run->sinks[i].open)
            run->sinks[i].open(run->sinks[i].arg, run);
    if (!run->cfg.output.trace)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/requests.jsonl", run->cfg.output.dir);
    run->trace_out = report_trace_open(path, run->start_ns);
    if (run->trace_out && report_trace_set_workload(run->trace_out, &run->cfg) != 0)
        report_trace_close(&run->trace_out); /* no memory: said below, as for a failed open */
    if (!run->trace_out)
        measurement_say(run, "cannot write %s: %s; no trace", path, strerror(errno));
}

/* The run's worker with this index, or NULL. */
static run_worker_t *results_worker_at(const measurement_t *run, uint32_t index) {
    /* a batch's records all come from one worker: try the slot found last time first */
    static size_t last;
    if (last < run->n_workers && run->workers[last]->index == (int)index)
        return run->workers[last];
    for (size_t i = 0; i < run->n_workers; i++)
        if (run->workers[i]->index == (int)index)
            return run->workers[(last = i)];
    return NULL;
}

/* Counts a session start (its node 0 sent) inside the measured window for the worker that sent
 * it: the achieved rate. The window opens at start + warmup and ends no later than start +
 * duration; it closes earlier only at the last end of any request, after every send. */
static void results_count_start(measurement_t *run, const request_record_t *rec) {
    if (rec->node != 0 || rec->send_ns == 0)
        return;
    int64_t opens = run->start_ns + run->cfg.warmup_ns;
    int64_t duration = run->cfg.limits.duration_ns;
    if (rec->send_ns < opens || (duration > 0 && rec->send_ns > run->start_ns + duration))
        return;
    if (rec->worker < run->in_run)
        run->window_starts[rec->worker]++;
    if (run->cfg.scheduler.kind != SCHEDULER_RATE)
        return;
    if (run->schedule_end_ns == 0) { /* once: bounded by the sessions the limits allow */
        int64_t end = workload_schedule_end_ns(&run->cfg, duration > 0 ? duration : INT64_MAX);
        run->schedule_end_ns = end > 0 ? end : -1;
    }
    if (run->schedule_end_ns < 0 || rec->send_ns <= run->start_ns + run->schedule_end_ns)
        run->schedule_starts++;
}

/* Counts rec for goodput against the file's SLOs; it counts in the rates when it ended inside the
 * measured window, as the merge's request rate does. */
static void results_count_goodput(measurement_t *run, const request_record_t *rec,
                                  const metrics_t *m) {
    if (run->cfg.slo.n == 0)
        return;
    int64_t opens = run->start_ns + run->cfg.warmup_ns;
    int64_t duration = run->cfg.limits.duration_ns;
    bool in_window =
        rec->end_ns >= opens && (duration <= 0 || rec->end_ns <= run->start_ns + duration);
    slo_goodput_add(&run->goodput, &run->cfg.slo, rec, m, in_window);
}

void results_record(void *arg, request_record_t *rec) {
    measurement_t *run = arg;
    metrics_t m;
    metrics_compute(rec, &m);
    merge_add_metrics(run->merge, rec, &m);
    for (size_t i = 0; i < run->n_sinks; i++)
        run->sinks[i].record(run->sinks[i].arg, run, rec, &m);
    results_count_start(run, rec);
    results_count_goodput(run, rec, &m);
    telemetry_record(run->telemetry, rec);
    if (run->trace_out && report_trace_write(run->trace_out, rec, &m) != 0) {
        measurement_say(run, "cannot write the trace: %s; tracing stops", strerror(errno));
        report_trace_close(&run->trace_out);
    }
    run->sessions_ended += rec->session_end;
    if (rec->session_end) {
        run_worker_t *from = results_worker_at(run, rec->worker);
        if (from)
            from->sessions_ended++;
    }
    if (rec->error != ERROR_CANCELLED && breaker_endpoint(run, rec))
        drain_limit_stop(run, run->breaker);
    if (rec->error == ERROR_NONE) {
        run->requests_ok++;
        return;
    }
    if (rec->error == ERROR_CANCELLED) /* stopped by the run ending: neither ok nor failed */
        return;
    run->requests_failed++;
    if (breaker_check(run))
        drain_limit_stop(run, run->breaker);
    if (!run->have_first_error) {
        run->have_first_error = true;
        run->first_error_endpoint = rec->endpoint;
        snprintf(run->first_error, sizeof run->first_error, "%s%s%s", error_class_name(rec->error),
                 rec->error_message[0] ? ": " : "", rec->error_message);
    }
}

/* What results.json says beyond report_json: the rate, the workers and the verdict. */
typedef struct results_extra {
    bool rate_mode;
    double requested_per_s;     /* rate mode: scheduler.rate (a trace's: the rows in force) */
    double achieved_per_s;      /* session starts per second over the measured window (in rate
                                   mode, up to the schedule's end when the limits cut it) */
    char rate_warning[400];     /* why achieved fell short of requested; empty when it did not */
    uint64_t cap_waits;         /* arrivals the run's workers held for a free slot, summed */
    validity_worker_t *workers; /* the run's workers, by index */
    size_t n_workers;
    validity_t validity;
    slo_result_t slo;                /* the file's SLOs judged on the run (n = 0: none) */
    const telemetry_stats_t *server; /* the servers' side (NULL: no server metrics) */
} results_extra_t;

/* A shortfall above this share of the requested rate is warned about, naming its cause. */
#define RESULTS_RATE_SHORTFALL 0.05

/* Every worker of the run, by index, as the verdict reads it; the caller frees the array. */
static validity_worker_t *results_workers(const measurement_t *run, size_t *n) {
    validity_worker_t *out = calloc(run->in_run ? run->in_run : 1, sizeof *out);
    *n = out ? run->in_run : 0;
    for (size_t i = 0; out && i < run->n_workers; i++) {
        const run_worker_t *w = run->workers[i];
        if (!run_worker_in_run(w) || (uint32_t)w->index >= run->in_run)
            continue;
        out[w->index] = (validity_worker_t){.name = w->name,
                                            .lost = w->state == RUN_WORKER_LOST && !w->taken_over,
                                            .has_stats = w->has_stats,
                                            .write_callbacks = w->write_callbacks,
                                            .sse_events = w->sse_events,
                                            .token_events = w->token_events,
                                            .loop_cpu_ns = w->loop_cpu_ns,
                                            .loop_wall_ns = w->loop_wall_ns,
                                            .loop_wait_ns = w->loop_wait_ns,
                                            .cap_waits = w->cap_waits,
                                            .refused = w->refused,
                                            .refused_first = w->refused_first};
    }
    return out;
}

static double results_lag_p99_ms(const merge_stats_t *all) {
    const histogram_t *lag = all->latency[METRIC_SCHEDULE_LAG];
    return histogram_count(lag) ? (double)histogram_percentile(lag, 99) / 1e6 : -1;
}

/* The file's validity.max_schedule_lag, in ms (REPORT_LAG_WARNING_MS when unset). */
static double results_lag_threshold_ms(const config_t *cfg) {
    return cfg->validity.max_schedule_lag_ns > 0 ? (double)cfg->validity.max_schedule_lag_ns / 1e6
                                                 : REPORT_LAG_WARNING_MS;
}

/* The seconds of the window over which rates are taken, and the session starts in them: the
 * whole window, or in rate mode, when the limits end the arrivals inside it (a trace cut to its
 * first rows, max_sessions), the part up to the schedule's end, so that no rate counts the time
 * after its last arrival (and a start sent after it counts as late: a shortfall). */
static double results_rate_window(const measurement_t *run, uint64_t *starts) {
    double duration = merge_duration_s(run->merge);
    if (run->cfg.scheduler.kind != SCHEDULER_RATE || !(duration > 0) || run->schedule_end_ns <= 0)
        return duration;
    double in_window = (double)(run->schedule_end_ns - run->cfg.warmup_ns) / 1e9;
    if (!(in_window > 0 && in_window < duration))
        return duration;
    *starts = run->schedule_starts;
    return in_window;
}

/* Requested against achieved, and the cause when achieved fell short (validity_rate_cause). */
static void results_rate(const measurement_t *run, results_extra_t *x) {
    x->rate_mode = run->cfg.scheduler.kind == SCHEDULER_RATE;
    x->requested_per_s = x->rate_mode ? run->cfg.scheduler.rate : 0;
    validity_rate_input_t in = {.lag_threshold_ms = results_lag_threshold_ms(&run->cfg),
                                .scheduler = &run->cfg.scheduler};
    for (size_t i = 0; i < run->n_workers; i++) {
        const run_worker_t *w = run->workers[i];
        if (!run_worker_in_run(w))
            continue;
        in.starts += run->window_starts[w->index];
        in.arrivals += w->arrivals;
        in.cap_waits += w->cap_waits;
    }
    x->cap_waits = in.cap_waits;
    for (size_t i = 0; i < x->n_workers; i++)
        if (validity_loop_cpu_share(&x->workers[i]) > in.busiest_loop_share)
            in.busiest_loop_share = validity_loop_cpu_share(&x->workers[i]);
    double duration = results_rate_window(run, &in.starts);
    x->achieved_per_s = duration > 0 ? (double)in.starts / duration : 0;
    x->rate_warning[0] = '\0';
    if (!x->rate_mode || x->achieved_per_s >= x->requested_per_s * (1 - RESULTS_RATE_SHORTFALL))
        return;
    in.schedule_lag_p99_ms = results_lag_p99_ms(merge_overall(run->merge));
    in.retried_requests = merge_overall(run->merge)->retried_requests;
    in.expected_starts = x->requested_per_s * duration;
    switch (validity_rate_cause(&in)) {
    case VALIDITY_RATE_CAP:
        snprintf(x->rate_warning, sizeof x->rate_warning,
                 "the concurrency cap held arrivals back: %" PRIu64 " of %" PRIu64
                 " arrivals waited for a free slot under scheduler.concurrency = %u",
                 in.cap_waits, in.arrivals, run->cfg.scheduler.concurrency);
        break;
    case VALIDITY_RATE_RETRY_AFTER:
        snprintf(x->rate_warning, sizeof x->rate_warning,
                 "the server's HTTP 429s held the schedule back: %" PRIu64 " requests waited out "
                 "Retry-After (%.1f s in all) before their sends (schedule lag p99 %.3f ms)",
                 in.retried_requests, (double)merge_overall(run->merge)->retry_wait_ns / 1e9,
                 in.schedule_lag_p99_ms);
        break;
    case VALIDITY_RATE_CLIENT:
        snprintf(x->rate_warning, sizeof x->rate_warning,
                 "the client could not keep the schedule: schedule lag p99 %.3f ms, the busiest "
                 "worker loop at %.0f %% of a core",
                 in.schedule_lag_p99_ms, in.busiest_loop_share * 100);
        break;
    case VALIDITY_RATE_DRAW:
        snprintf(x->rate_warning, sizeof x->rate_warning,
                 "the arrival process drew fewer arrivals than the mean for this window (%" PRIu64
                 " session starts in %.3f s); a longer run evens it out",
                 in.starts, duration);
        break;
    case VALIDITY_RATE_UNEXPLAINED:
        snprintf(x->rate_warning, sizeof x->rate_warning,
                 "the workers started %" PRIu64 " sessions in %.3f s where the schedule had about "
                 "%.0f; neither the cap, the schedule lag (p99 %.3f ms) nor the arrival draw "
                 "explains it (see validity and the workers' log)",
                 in.starts, duration, in.expected_starts, in.schedule_lag_p99_ms);
        break;
    }
}

static void results_validity(const measurement_t *run, results_extra_t *x) {
    const merge_stats_t *all = merge_overall(run->merge);
    validity_input_t in = {
        .requests_ok = run->requests_ok,
        .requests_failed = run->requests_failed,
        .rate_mode = x->rate_mode,
        .schedule_lag_p99_ms = results_lag_p99_ms(all),
        .lag_threshold_ms = results_lag_threshold_ms(&run->cfg),
        .exact_lengths = validity_exact_lengths(&run->cfg),
        .requested_checked = all->requested_checked,
        .output_mismatched = all->output_mismatched,
        .stopped_early = all->stopped_early,
        .workers = x->workers,
        .n_workers = x->n_workers,
        .breaker = run->breaker[0] ? run->breaker : NULL,
        .client_fd_limit = all->errors[ERROR_CLIENT_FD_LIMIT],
        .retried_requests = all->retried_requests,
        .retry_wait_s = (double)all->retry_wait_ns / 1e9,
    };
    validity_judge(&in, &x->validity);
}

/* The file's SLOs on the whole run, with goodput over the measured window. */
static void results_slo(const measurement_t *run, results_extra_t *x) {
    const merge_stats_t *all = merge_overall(run->merge);
    slo_input_t in = {.latency = all->latency,
                      .ok = all->ok,
                      .failed = all->failed,
                      .goodput = &run->goodput,
                      .window_s = merge_duration_s(run->merge)};
    slo_evaluate(&run->cfg.slo, &in, &x->slo);
}

static json_t *results_rate_json(const results_extra_t *x) {
    json_t *o = json_object();
    json_object_set_new(o, "requested_per_s",
                        x->rate_mode ? json_real(x->requested_per_s) : json_null());
    json_object_set_new(o, "achieved_per_s", json_real(x->achieved_per_s));
    json_object_set_new(o, "warning",
                        x->rate_warning[0] ? json_string(x->rate_warning) : json_null());
    return o;
}

static json_t *results_validity_json(const validity_t *v) {
    json_t *reasons = json_array();
    for (size_t i = 0; i < v->n_reasons; i++)
        json_array_append_new(reasons, json_string(v->reasons[i]));
    return json_pack("{s:b, s:o}", "valid", v->valid, "reasons", reasons);
}

static json_t *results_workers_json(const measurement_t *run, const results_extra_t *x) {
    json_t *array = json_array();
    for (size_t i = 0; i < x->n_workers; i++) {
        const validity_worker_t *w = &x->workers[i];
        const run_worker_t *r = results_worker_at(run, (uint32_t)i);
        uint64_t arrivals = r ? r->arrivals : 0, starts = run->window_starts[i];
        json_t *o = json_object();
        json_object_set_new(o, "worker", json_integer((json_int_t)i));
        json_object_set_new(o, "name", json_string(w->name ? w->name : ""));
        json_object_set_new(o, "lost", json_boolean(r && r->state == RUN_WORKER_LOST));
        json_object_set_new(o, "taken_over", json_boolean(r && r->taken_over));
        json_object_set_new(o, "lost_sessions", json_integer(r ? (json_int_t)r->lost_sessions : 0));
        json_object_set_new(o, "refused", json_integer(r ? (json_int_t)r->refused : 0));
        json_object_set_new(o, "events_per_read",
                            w->has_stats ? json_real(validity_events_per_read(w)) : json_null());
        json_object_set_new(o, "token_events_per_read",
                            w->has_stats ? json_real(validity_token_events_per_read(w))
                                         : json_null());
        json_object_set_new(o, "loop_cpu_share",
                            w->has_stats ? json_real(validity_loop_cpu_share(w)) : json_null());
        json_object_set_new(o, "loop_busy_share",
                            w->has_stats ? json_real(validity_loop_busy_share(w)) : json_null());
        json_object_set_new(o, "write_callbacks", json_integer((json_int_t)w->write_callbacks));
        json_object_set_new(o, "sse_events", json_integer((json_int_t)w->sse_events));
        json_object_set_new(o, "token_events", json_integer((json_int_t)w->token_events));
        json_object_set_new(o, "loop_cpu_s", json_real((double)w->loop_cpu_ns / 1e9));
        json_object_set_new(o, "loop_wall_s", json_real((double)w->loop_wall_ns / 1e9));
        json_object_set_new(o, "loop_wait_s",
                            w->has_stats && w->loop_wait_ns >= 0
                                ? json_real((double)w->loop_wait_ns / 1e9)
                                : json_null());
        json_object_set_new(o, "arrivals", json_integer((json_int_t)arrivals));
        json_object_set_new(o, "cap_waits", json_integer((json_int_t)w->cap_waits));
        json_object_set_new(o, "window_session_starts", json_integer((json_int_t)starts));
        json_array_append_new(array, o);
    }
    return array;
}

/* A percentile of h in ms, NaN when it is empty. */
static double results_ms(const histogram_t *h, double p) {
    return histogram_count(h) ? (double)histogram_percentile(h, p) / 1e6 : NAN;
}

/* The run's level as the reports' "Reference Data (JSON)" (the keys a sweep's levels have). */
static json_t *results_reference_json(const measurement_t *run, const results_extra_t *x) {
    const merge_stats_t *all = merge_overall(run->merge);
    double duration = merge_duration_s(run->merge), f[SWEEP_FIG__COUNT];
    for (int i = 0; i < SWEEP_FIG__COUNT; i++)
        f[i] = NAN;
    f[SWEEP_FIG_TTFT_P50] = results_ms(all->latency[METRIC_TTFT], 50);
    f[SWEEP_FIG_TTFT_P95] = results_ms(all->latency[METRIC_TTFT], 95);
    f[SWEEP_FIG_TPOT_P50] = results_ms(all->latency[METRIC_TPOT], 50);
    f[SWEEP_FIG_TPOT_P95] = results_ms(all->latency[METRIC_TPOT], 95);
    f[SWEEP_FIG_LATENCY_P50] = results_ms(all->latency[METRIC_E2E], 50);
    f[SWEEP_FIG_LATENCY_P95] = results_ms(all->latency[METRIC_E2E], 95);
    if (all->ok + all->failed)
        f[SWEEP_FIG_ERROR_PCT] = 100.0 * (double)all->failed / (double)(all->ok + all->failed);
    f[SWEEP_FIG_ACTUAL_RPS] = x->achieved_per_s;
    f[SWEEP_FIG_TOPS] = duration > 0 ? (double)all->window_output_tokens / duration : 0;
    if (all->usage_prompt_tokens)
        f[SWEEP_FIG_KV_HIT_PCT] =
            100.0 * (double)all->cached_tokens / (double)all->usage_prompt_tokens;
    bool rate = run->cfg.scheduler.kind == SCHEDULER_RATE;
    level_spec_t spec = {.axis = rate ? SWEEP_AXIS_RATE : SWEEP_AXIS_CONCURRENCY,
                         .value = rate ? run->cfg.scheduler.rate : run->cfg.scheduler.concurrency};
    return sweep_report_reference_of(&spec, f);
}

/* The end of the run's load: start + duration when the duration ended it, else now. */
static int64_t results_end_ns(const measurement_t *run) {
    int64_t now = loop_now_ns(), d = run->cfg.limits.duration_ns;
    return d > 0 && run->start_ns + d < now ? run->start_ns + d : now;
}

/* results.json: report_json's document with the rate (in the level), the workers and the verdict.
 */
static int results_write_json(const measurement_t *run, const report_meta_t *meta,
                              const results_extra_t *x, const char *path) {
    report_level_t level = {.merge = run->merge};
    json_t *root = report_json(&level, 1, meta);
    if (!root) {
        errno = ENOMEM;
        return -1;
    }
    json_t *first = json_array_get(json_object_get(root, "levels"), 0);
    if (first) {
        json_object_set_new(first, "rate", results_rate_json(x));
        json_object_set_new(first, "reference", results_reference_json(run, x));
        if (x->server)
            telemetry_run_json(run, x->server, first);
        else if (run->server_figures)
            json_object_set(first, "server", run->server_figures);
        json_object_set_new(first, "client_series", client_series_json(run->client_series));
        losses_json(run, results_end_ns(run), first);
        char label[200];
        snprintf(label, sizeof label, "%s %g%s%s%s", meta->level_kind, meta->level_value,
                 meta->level_note && *meta->level_note ? " (" : "",
                 meta->level_note ? meta->level_note : "",
                 meta->level_note && *meta->level_note ? ")" : "");
        json_object_set_new(first, "label", json_string(label));
    }
    json_object_set_new(root, "kind", json_string("run"));
    json_object_set_new(json_object_get(root, "run"), "routing",
                        json_string(config_routing_name(run->cfg.target.routing)));
    json_object_set_new(json_object_get(root, "run"), "network",
                        report_network_json(&run->cfg.target));
    if (run->cfg.deployment) /* the file's deployment: map, verbatim, for the reports */
        json_object_set_new(json_object_get(root, "run"), "deployment",
                            json_loads(run->cfg.deployment, 0, NULL));
    json_object_set_new(root, "validity", results_validity_json(&x->validity));
    json_object_set_new(root, "workers", results_workers_json(run, x));
    if (x->slo.n > 0) {
        json_t *analysis = json_object_get(root, "analysis");
        if (!analysis)
            json_object_set_new(root, "analysis", analysis = json_object());
        json_object_set_new(analysis, "slo", slo_json(&x->slo));
    }
    int rc = report_write_json_root(root, path);
    json_decref(root);
    return rc;
}

static int write_files(measurement_t *run, const report_meta_t *meta, const results_extra_t *x) {
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", run->cfg.output.dir);
    if (results_write_json(run, meta, x, path) != 0) {
        measurement_say(run, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/config.yaml", run->cfg.output.dir);
    FILE *f = outfile_fopen(path);
    if (!f || config_write_yaml(&run->cfg, f) != 0) {
        measurement_say(run, "cannot write %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

/* Every worker of the run's measured clock, for results.json; the caller frees it. */
static report_worker_clock_t *worker_clocks(const measurement_t *run, size_t *n_clocks) {
    report_worker_clock_t *clocks = calloc(run->in_run ? run->in_run : 1, sizeof *clocks);
    *n_clocks = 0;
    for (size_t i = 0; clocks && i < run->n_workers; i++) {
        const run_worker_t *w = run->workers[i];
        if (run_worker_in_run(w))
            clocks[(*n_clocks)++] =
                (report_worker_clock_t){(uint32_t)w->index, w->offset_ns, w->rtt_ns};
    }
    return clocks;
}

/* The exit status the requests earn, warm-up included: 1 when none succeeded (saying why), else
 * 0. A cancelled request (stopped by the run ending) is neither a success nor a failure. */
static int verdict(measurement_t *run, bool interrupted) {
    uint64_t ok = run->requests_ok, failed = run->requests_failed;
    if (ok == 0 && failed > 0) {
        const char *url = run->first_error_endpoint < run->cfg.target.n_endpoints
                              ? run->cfg.target.endpoints[run->first_error_endpoint]
                              : "?";
        measurement_say(run,
                        "every request failed (%" PRIu64 " of %" PRIu64 "): first error: %s (%s)",
                        failed, failed, run->first_error, url);
        return 1;
    }
    if (ok == 0 && !interrupted) {
        measurement_say(run, "no request completed");
        return 1;
    }
    return 0;
}

/* Which limit ended a run that was neither interrupted nor cut short. The workers do not say, the
 * counts do: every request or session the limits allow was done, or else the duration ran out. */
static const char *limit_reached(const measurement_t *run) {
    const config_limits_t *limits = &run->cfg.limits;
    if (limits->max_requests && merge_records(run->merge) >= limits->max_requests)
        return "max_requests reached";
    if (limits->max_sessions && run->sessions_ended >= limits->max_sessions)
        return "max_sessions reached";
    return limits->duration_ns > 0 ? "duration reached" : "completed";
}

/* An invalid run that would otherwise succeed exits 3, unless --allow-invalid; a failure (1)
 * keeps its own status. */
static int results_invalid_status(measurement_t *run, const validity_t *validity, int rc) {
    if (validity->valid || rc != 0)
        return rc;
    if (run->options.allow_invalid) {
        measurement_say(run, "the run is invalid (see the table); exit 0 as --allow-invalid asks");
        return 0;
    }
    measurement_say(run, "the run is invalid: %s%s (exit 3; --allow-invalid accepts it)",
                    validity->reasons[0], validity->n_reasons > 1 ? ", and more" : "");
    return 3;
}

int results_reports(const run_options_t *options, const run_link_t *link, const char *dir) {
    char err[4400];
    if (report_cmd_render(dir, err, sizeof err) != 0) {
        measurement_link_say(link, options->name, "cannot write the reports: %s", err);
        return -1;
    }
    if (options->print_report) { /* --print-report: the Markdown summary into the log */
        char path[4200], chunk[8192];
        snprintf(path, sizeof path, "%s/report.md", dir);
        FILE *f = fopen(path, "r");
        if (!f) {
            measurement_link_say(link, options->name, "cannot print %s: %s", path, strerror(errno));
            return -1;
        }
        fflush(stdout);
        printf("\n<!-- %s -->\n", path);
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
            fwrite(chunk, 1, n, stdout);
        fclose(f);
        fflush(stdout);
    }
    return 0;
}

int results_finish(measurement_t *run, bool interrupted) {
    telemetry_stats_t server;
    bool have_server = telemetry_run_close(run, &server) == 0;
    if (have_server && telemetry_stats_absent(&server)) { /* said in one line already */
        telemetry_stats_clear(&server);
        have_server = false;
    }
    /* A run the duration ended was offered load until start + duration, whenever its last request
     * ended; any other run (a count limit, an interrupt) until its last request ended. */
    bool duration_ran_out =
        !interrupted && !run->stop_reason && strcmp(limit_reached(run), "duration reached") == 0;
    merge_close_run_window(run->merge, duration_ran_out);
    size_t n_clocks;
    report_worker_clock_t *clocks = worker_clocks(run, &n_clocks);
    const char *partial = NULL;
    bool is_partial = merge_partial(run->merge, &partial);
    bool rate = run->cfg.scheduler.kind == SCHEDULER_RATE;
    report_meta_t meta = {
        .level_kind = rate ? "rate" : "concurrency",
        .level_value = rate ? run->cfg.scheduler.rate : (double)run->cfg.scheduler.concurrency,
        .workers = run->in_run,
        .clocks = clocks,
        .n_clocks = n_clocks,
        .start_unix_ns = run->start_unix_ns,
        /* What ended the run; why it is partial (a lost worker) is results.json's partial_reason.
         */
        .stop_reason = run->breaker[0]    ? run->breaker
                       : run->stop_reason ? run->stop_reason
                       : interrupted      ? "interrupted"
                                          : limit_reached(run),
        .config_file = run->config_path,
        .seed = run->cfg.seed,
        .http_phases = run->options.http_phases,
        .run_id = run->id,
        .role_names = (const char *const *)run->cfg.workload.roles,
        .n_role_names = run->cfg.workload.n_roles,
        .lag_warning_ms = results_lag_threshold_ms(&run->cfg),
        .simulated_profile = run->options.simulated_profile,
        .simulation = run->options.simulation,
        .server_said = run->server_said,
    };
    char note[128];
    losses_label(run, results_end_ns(run), note, sizeof note);
    meta.level_note = note;
    results_extra_t extra = {0};
    extra.workers = results_workers(run, &extra.n_workers);
    results_rate(run, &extra);
    meta.cap_waits = extra.cap_waits;
    results_validity(run, &extra);
    results_slo(run, &extra);
    if (have_server) {
        telemetry_run_judge(&server, &extra.validity);
        extra.server = &server;
    }
    bool owned = run->policy.end != NULL;
    if (owned) { /* a repetition of a level: one line, the table comes after the sweep */
        json_t *server_json = NULL;
        if (have_server) { /* {"server", "gap"} of this repetition, for the sweep's level */
            server_json = json_object();
            telemetry_run_json(run, &server, server_json);
        } else if (run->server_figures) {
            server_json = json_pack("{s:O}", "server", run->server_figures);
        }
        run->policy.end(run->policy.arg, run, &extra.validity, meta.stop_reason, interrupted,
                        server_json);
        json_decref(server_json);
    } else {
        report_print(run->merge, &meta, stdout);
        report_network_print(stdout, &run->cfg.target);
        if (have_server)
            telemetry_report_print(stdout, &server, run->merge);
        if (extra.rate_mode)
            report_print_rate(stdout, extra.requested_per_s, extra.achieved_per_s,
                              extra.rate_warning[0] ? extra.rate_warning : NULL);
        else /* beside the table's request and token rates: what the references call RPS */
            fprintf(stdout, "conversation starts/s: %.3f (the reference reports' \"Actual RPS\")\n",
                    extra.achieved_per_s);
        losses_print(run, stdout);
        report_print_validity(stdout, &extra.validity);
        slo_print(stdout, &extra.slo);
        fflush(stdout);
    }
    int rc = 0;
    if (run->trace_out) {
        trace_writer_stats_t trace = {0};
        meta.traced = true;
        if (report_trace_finish(&run->trace_out, &trace) != 0)
            measurement_say(
                run, "the trace %s/requests.jsonl is incomplete: %" PRIu64 " lines dropped%s%s",
                run->cfg.output.dir, trace.lines_dropped, trace.error ? ": " : "",
                trace.error ? strerror(trace.error) : "");
        meta.trace_lines_written = trace.lines_written;
        meta.trace_lines_dropped = trace.lines_dropped;
    }
    if (write_files(run, &meta, &extra) != 0)
        rc = 1;
    else if (!owned)
        measurement_say(run, "results in %s/results.json%s", run->cfg.output.dir,
                        is_partial ? " (partial)" : "");
    if (rc == 0 && !owned && results_reports(&run->options, &run->link, run->cfg.output.dir) != 0)
        rc = 1;
    free(clocks);
    if (verdict(run, interrupted) != 0)
        rc = 1;
    rc = results_invalid_status(run, &extra.validity, rc);
    if (run->loss_abort[0] && (rc == 0 || rc == 3)) { /* the abort is the reason, not validity */
        measurement_say(run, "the run was ended early: %s (exit 4)", run->loss_abort);
        rc = 4;
    }
    free(extra.workers);
    if (have_server)
        telemetry_stats_clear(&server);
    return interrupted ? 130 : rc;
}
