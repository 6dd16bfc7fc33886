#include "breaker.h"

#include <inttypes.h>
#include <stdio.h>

#include "collect.h"
#include "console.h"
#include "loop.h"
#include "sweep_run.h"

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
    if (self->sweep) {
        sweep_run_stop_early(self->sweep, loop_now_ns(), run->breaker);
        return;
    }
    console_say(self, "%s: stopping the run (cancelling what is in flight)", run->breaker);
    merge_mark_partial(run->merge, run->breaker);
    collect_stop(self, run->breaker);
}
