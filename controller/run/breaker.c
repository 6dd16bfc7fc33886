#include "breaker.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "loop.h"

bool breaker_endpoint(measurement_t *run, const request_record_t *rec) {
    int64_t after = run->cfg.limits.endpoint_dead_after_ns;
    size_t n = run->cfg.target.n_endpoints;
    if (after <= 0 || rec->endpoint >= n || run->breaker[0] || run->stopping ||
        run->phase != PHASE_RUN)
        return false;
    if (!run->failing_since_ns && !(run->failing_since_ns = calloc(n, sizeof(int64_t))))
        return false;
    int64_t now = loop_now_ns(), *since = &run->failing_since_ns[rec->endpoint];
    if (rec->error == ERROR_NONE) {
        *since = 0;
        return false;
    }
    if (!*since)
        *since = now;
    if (now - *since < after)
        return false;
    snprintf(run->breaker, sizeof run->breaker,
             "circuit breaker: every request to %s failed for %.1f s (limits.endpoint_dead_after "
             "%g s); the last: %s%s%.300s",
             run->cfg.target.endpoints[rec->endpoint], (double)(now - *since) / 1e9,
             (double)after / 1e9, error_class_name(rec->error), rec->error_message[0] ? ": " : "",
             rec->error_message);
    return true;
}

bool breaker_check(measurement_t *run) {
    double max = run->cfg.limits.max_error_pct;
    if (!(max > 0) || run->breaker[0] || run->stopping || run->phase != PHASE_RUN)
        return false;
    uint64_t failed = run->requests_failed, done = run->requests_ok + run->requests_failed;
    if (done < CONFIG_BREAKER_MIN_REQUESTS || (double)failed * 100 <= max * (double)done)
        return false;
    snprintf(run->breaker, sizeof run->breaker,
             "circuit breaker: %" PRIu64 " of %" PRIu64
             " requests failed (%.1f %% > max_error_pct %g %%)",
             failed, done, 100.0 * (double)failed / (double)done, max);
    return true;
}
