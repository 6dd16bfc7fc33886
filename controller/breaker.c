#include "breaker.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "collect.h"
#include "console.h"
#include "loop.h"
#include "sweep_run.h"

/* Stops the run (a sweep: the level) for the reason now in run->breaker. */
static void breaker_trip(controller_t *self) {
    measurement_t *run = self->run;
    if (self->sweep) {
        sweep_run_stop_early(self->sweep, loop_now_ns(), run->breaker);
        return;
    }
    console_say(self, "%s: stopping the run (cancelling what is in flight)", run->breaker);
    merge_mark_partial(run->merge, run->breaker);
    collect_stop(self, run->breaker);
}

void breaker_endpoint(controller_t *self, const request_record_t *rec) {
    measurement_t *run = self->run;
    int64_t after = run->cfg.limits.endpoint_dead_after_ns;
    size_t n = run->cfg.target.n_endpoints;
    if (after <= 0 || rec->endpoint >= n || run->breaker[0] || run->stopping ||
        run->phase != PHASE_RUN)
        return;
    if (!run->failing_since_ns && !(run->failing_since_ns = calloc(n, sizeof(int64_t))))
        return;
    int64_t now = loop_now_ns(), *since = &run->failing_since_ns[rec->endpoint];
    if (rec->error == ERROR_NONE) {
        *since = 0;
        return;
    }
    if (!*since)
        *since = now;
    if (now - *since < after)
        return;
    snprintf(run->breaker, sizeof run->breaker,
             "circuit breaker: every request to %s failed for %.1f s (limits.endpoint_dead_after "
             "%g s); the last: %s%s%.300s",
             run->cfg.target.endpoints[rec->endpoint], (double)(now - *since) / 1e9,
             (double)after / 1e9, error_class_name(rec->error), rec->error_message[0] ? ": " : "",
             rec->error_message);
    breaker_trip(self);
}

void breaker_check(controller_t *self) {
    measurement_t *run = self->run;
    double max = run->cfg.limits.max_error_pct;
    if (!(max > 0) || run->breaker[0] || run->stopping || run->phase != PHASE_RUN)
        return;
    uint64_t failed = run->requests_failed, done = run->requests_ok + run->requests_failed;
    if (done < CONFIG_BREAKER_MIN_REQUESTS || (double)failed * 100 <= max * (double)done)
        return;
    snprintf(run->breaker, sizeof run->breaker,
             "circuit breaker: %" PRIu64 " of %" PRIu64
             " requests failed (%.1f %% > max_error_pct %g %%)",
             failed, done, 100.0 * (double)failed / (double)done, max);
    breaker_trip(self);
}
