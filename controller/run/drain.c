#include "drain.h"

#include "loop.h"

/* Stop{cancel} (or not) with reason to every unfinished worker of the run; how many. */
static uint32_t stop_unfinished(measurement_t *run, const char *reason, bool cancel) {
    uint32_t n = 0;
    for (size_t i = 0; i < run->n_workers; i++)
        if (run_worker_in_run(run->workers[i]) && !run_worker_finished(run->workers[i])) {
            measurement_send_stop(run, run->workers[i], reason, cancel, false);
            n++;
        }
    return n;
}

void drain_stop(measurement_t *run, const char *reason) {
    run->stopping = true;
    run->cancel_at_ns = 0;
    run->deadline_ns = loop_now_ns() + DRAIN_NS;
    stop_unfinished(run, reason, true);
}

void drain_limit_stop(measurement_t *run, const char *why) {
    if (run->policy.stop) {
        run->policy.stop(run->policy.arg, run, why);
        return;
    }
    measurement_say(run, "%s: stopping the run (cancelling what is in flight)", why);
    merge_mark_partial(run->merge, why);
    drain_stop(run, why);
}

void drain_stop_grace(measurement_t *run, const char *reason, int64_t grace_ns) {
    if (grace_ns <= 0) {
        drain_stop(run, reason);
        return;
    }
    run->stopping = true;
    run->cancel_at_ns = loop_now_ns() + grace_ns;
    run->deadline_ns = run->cancel_at_ns + DRAIN_NS;
    stop_unfinished(run, reason, false);
}

void drain_grace_step(measurement_t *run, int64_t now) {
    if (!run->stopping || !run->cancel_at_ns || now < run->cancel_at_ns)
        return;
    run->cancel_at_ns = 0;
    uint32_t inflight = measurement_inflight(run);
    if (stop_unfinished(run, "the grace period ran out", true))
        measurement_say(run, "grace period over: cancelling the requests still in flight (%u)",
                        inflight);
}
