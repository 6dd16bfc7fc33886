/* config_trace_load: a kind: trace file's replay, read into the config once the whole file is
 * (the trace file's sessions, and the limits and rate they imply). Above config.c, which only
 * shares and drops the loaded trace (config_trace.c). */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "trace.h"
#include "trace_load.h"
#include "workload.h"

/* The rate of the schedule in force: the sessions the limits allow over their own span
 * ((n - 1) / the n-th arrival, time_scale applied), or, when nothing ends a wrapping replay, the
 * trace's (its sessions per wrap period). Both give the whole file's rate for the whole file. */
static double config_trace_load_rate(const config_t *self, const trace_t *trace) {
    uint64_t n;
    int64_t last;
    if (workload_schedule_cut(self, INT64_MAX, &n, &last) && n > 1 && last > 0)
        return (double)(n - 1) / ((double)last / 1e9);
    return (double)trace->n_sessions / (trace->period_ns / 1e9 * self->workload.trace.time_scale);
}

int config_trace_load(config_t *self, config_error_t *err) {
    config_workload_t *w = &self->workload;
    if (w->kind != WORKLOAD_TRACE)
        return 0;
    trace_t *trace = NULL;
    if (trace_load(self, &trace, err) != 0)
        return -1;
    config_replay_set(self, trace, !w->trace.wrap);
    if (self->scheduler.kind == SCHEDULER_RATE && trace->period_ns > 0)
        self->scheduler.rate = config_trace_load_rate(self, trace);
    if (w->trace.wrap && self->scheduler.kind == SCHEDULER_RATE && trace->period_ns == 0) {
        memset(err, 0, sizeof *err);
        snprintf(err->file, sizeof err->file, "%s", w->trace.path);
        snprintf(err->message, sizeof err->message,
                 "wrap needs arrivals spread over some time: every session of this trace "
                 "arrives at once");
        return -1;
    }
    return 0;
}
