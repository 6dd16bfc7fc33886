#include "results.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "console.h"
#include "controller_internal.h"

int results_make_dir(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

void results_open_trace(controller_t *self) {
    /* The start is known from here on and the first record comes later: the window opens now. */
    int64_t duration = self->cfg.limits.duration_ns;
    merge_set_run_window(self->merge, self->start_ns + self->cfg.warmup_ns,
                         duration > 0 ? self->start_ns + duration : 0);
    if (!self->trace)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/requests.jsonl", self->out_dir);
    self->trace_out = report_trace_open(path, self->start_ns);
    if (!self->trace_out)
        console_say(self, "cannot write %s: %s; no trace", path, strerror(errno));
}

void results_record(void *arg, request_record_t *rec) {
    controller_t *self = arg;
    metrics_t m;
    metrics_compute(rec, &m);
    merge_add_metrics(self->merge, rec, &m);
    if (self->trace_out && report_trace_write(self->trace_out, rec, &m) != 0) {
        console_say(self, "cannot write the trace: %s; tracing stops", strerror(errno));
        report_trace_close(&self->trace_out);
    }
    self->sessions_ended += rec->session_end;
    if (rec->error == ERROR_NONE) {
        self->requests_ok++;
        return;
    }
    if (rec->error == ERROR_CANCELLED) /* stopped by the run ending: neither ok nor failed */
        return;
    self->requests_failed++;
    if (!self->have_first_error) {
        self->have_first_error = true;
        self->first_error_endpoint = rec->endpoint;
        snprintf(self->first_error, sizeof self->first_error, "%s%s%s",
                 error_class_name(rec->error), rec->error_message[0] ? ": " : "",
                 rec->error_message);
    }
}

static int write_files(controller_t *self, const report_meta_t *meta) {
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", self->out_dir);
    if (report_write_json(self->merge, path, meta) != 0) {
        console_say(self, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/config.yaml", self->out_dir);
    FILE *f = fopen(path, "w");
    if (!f || config_write_yaml(&self->cfg, f) != 0) {
        console_say(self, "cannot write %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

/* Every worker of the run's measured clock, for results.json; the caller frees it. */
static report_worker_clock_t *worker_clocks(const controller_t *self, size_t *n_clocks) {
    report_worker_clock_t *clocks = calloc(self->in_run ? self->in_run : 1, sizeof *clocks);
    *n_clocks = 0;
    for (size_t i = 0; clocks && i < self->n_workers; i++) {
        const registry_worker_t *w = &self->workers[i];
        if (registry_in_run(w))
            clocks[(*n_clocks)++] =
                (report_worker_clock_t){(uint32_t)w->index, w->offset_ns, w->rtt_ns};
    }
    return clocks;
}

/* The exit status the requests earn, warm-up included: 1 when none succeeded (saying why), else
 * 0. A cancelled request (stopped by the run ending) is neither a success nor a failure. */
static int verdict(controller_t *self, bool interrupted) {
    uint64_t ok = self->requests_ok, failed = self->requests_failed;
    if (ok == 0 && failed > 0) {
        const char *url = self->first_error_endpoint < self->cfg.target.n_endpoints
                              ? self->cfg.target.endpoints[self->first_error_endpoint]
                              : "?";
        console_say(self, "every request failed (%" PRIu64 " of %" PRIu64 "): first error: %s (%s)",
                    failed, failed, self->first_error, url);
        return 1;
    }
    if (ok == 0 && !interrupted) {
        console_say(self, "no request completed");
        return 1;
    }
    return 0;
}

/* Which limit ended a run that was neither interrupted nor cut short. The workers do not say, the
 * counts do: every request or session the limits allow was done, or else the duration ran out. */
static const char *limit_reached(const controller_t *self) {
    const config_limits_t *limits = &self->cfg.limits;
    if (limits->max_requests && merge_records(self->merge) >= limits->max_requests)
        return "max_requests reached";
    if (limits->max_sessions && self->sessions_ended >= limits->max_sessions)
        return "max_sessions reached";
    return limits->duration_ns > 0 ? "duration reached" : "completed";
}

int results_finish(controller_t *self, bool interrupted) {
    console_clear(self);
    /* A run the duration ended was offered load until start + duration, whenever its last request
     * ended; any other run (a count limit, an interrupt) until its last request ended. */
    bool duration_ran_out = !interrupted && strcmp(limit_reached(self), "duration reached") == 0;
    merge_close_run_window(self->merge, duration_ran_out);
    size_t n_clocks;
    report_worker_clock_t *clocks = worker_clocks(self, &n_clocks);
    const char *partial = NULL;
    bool is_partial = merge_partial(self->merge, &partial);
    bool rate = self->cfg.scheduler.kind == SCHEDULER_RATE;
    report_meta_t meta = {
        .level_kind = rate ? "rate" : "concurrency",
        .level_value = rate ? self->cfg.scheduler.rate : (double)self->cfg.scheduler.concurrency,
        .workers = self->in_run,
        .clocks = clocks,
        .n_clocks = n_clocks,
        .start_unix_ns = self->start_unix_ns,
        /* What ended the run; why it is partial (a lost worker) is results.json's partial_reason.
         */
        .stop_reason = interrupted ? "interrupted" : limit_reached(self),
        .config_file = self->config_path,
        .seed = self->cfg.seed,
        .http_phases = self->options.http_phases,
        .run_id = self->run_id,
    };
    report_print(self->merge, &meta, stdout);
    fflush(stdout);
    int rc = 0;
    if (self->trace_out) {
        trace_writer_stats_t trace = {0};
        meta.traced = true;
        if (report_trace_finish(&self->trace_out, &trace) != 0)
            console_say(self,
                        "the trace %s/requests.jsonl is incomplete: %" PRIu64 " lines dropped%s%s",
                        self->out_dir, trace.lines_dropped, trace.error ? ": " : "",
                        trace.error ? strerror(trace.error) : "");
        meta.trace_lines_written = trace.lines_written;
        meta.trace_lines_dropped = trace.lines_dropped;
    }
    if (write_files(self, &meta) != 0)
        rc = 1;
    else
        console_say(self, "results in %s/results.json%s", self->out_dir,
                    is_partial ? " (partial)" : "");
    free(clocks);
    if (verdict(self, interrupted) != 0)
        rc = 1;
    return interrupted ? 130 : rc;
}
