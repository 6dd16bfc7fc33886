#include "validity.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void validity_add(validity_t *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void validity_add(validity_t *out, const char *fmt, ...) {
    out->valid = false;
    if (out->n_reasons == VALIDITY_MAX_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reasons[out->n_reasons++], VALIDITY_REASON_LEN, fmt, ap);
    va_end(ap);
}

double validity_events_per_read(const validity_worker_t *w) {
    return w->write_callbacks ? (double)w->sse_events / (double)w->write_callbacks : 0;
}

double validity_token_events_per_read(const validity_worker_t *w) {
    return w->write_callbacks ? (double)w->token_events / (double)w->write_callbacks : 0;
}

double validity_loop_cpu_share(const validity_worker_t *w) {
    return w->loop_wall_ns > 0 ? (double)w->loop_cpu_ns / (double)w->loop_wall_ns : 0;
}

double validity_loop_busy_share(const validity_worker_t *w) {
    if (w->loop_wall_ns <= 0)
        return 0;
    int64_t wait = w->loop_wait_ns > 0 ? w->loop_wait_ns : 0;
    return (double)(w->loop_cpu_ns + wait) / (double)w->loop_wall_ns;
}

bool validity_exact_lengths(const config_t *cfg) {
    return cfg->target.ignore_eos || cfg->target.min_tokens;
}

/* The client, not the server, set the pace: a loop near a full core, or a busy loop whose reads
 * found several tokens waiting. */
static void validity_judge_saturation(const validity_input_t *in, validity_t *out) {
    for (size_t i = 0; i < in->n_workers; i++) {
        const validity_worker_t *w = &in->workers[i];
        if (!w->has_stats || w->loop_wall_ns < VALIDITY_LOOP_MIN_WALL_NS)
            continue;
        double cpu = validity_loop_cpu_share(w), per_read = validity_token_events_per_read(w);
        double busy = validity_loop_busy_share(w);
        if (cpu > VALIDITY_LOOP_CPU_MAX)
            validity_add(
                out, "client saturated: worker %s's loop used %.0f %% of a core (above %.0f %%)",
                w->name, cpu * 100, VALIDITY_LOOP_CPU_MAX * 100);
        if (per_read > VALIDITY_TOKEN_EVENTS_PER_READ_MAX && busy > VALIDITY_LOOP_BUSY_FOR_READS)
            validity_add(out,
                         "client saturated: worker %s read %.2f token events per read (above %.1f) "
                         "with its loop busy %.0f %% of the run (on a CPU or waiting for one): "
                         "tokens waited in the socket for the client",
                         w->name, per_read, VALIDITY_TOKEN_EVENTS_PER_READ_MAX, busy * 100);
    }
}

/* Rate mode: the arrivals went out late because the client could not keep the schedule. Arrivals
 * the concurrency cap held back are late by the user's choice, and the rate warning names them. */
static void validity_judge_schedule(const validity_input_t *in, validity_t *out) {
    if (!in->rate_mode || in->schedule_lag_p99_ms <= in->lag_threshold_ms)
        return;
    uint64_t cap_waits = 0;
    for (size_t i = 0; i < in->n_workers; i++)
        cap_waits += in->workers[i].cap_waits;
    if (cap_waits > 0)
        return;
    if (in->retried_requests > 0) /* the server asked for the wait: not the client's lag */
        validity_add(out,
                     "schedule lag p99 %.3f ms is above %g ms: %" PRIu64 " requests waited out "
                     "the server's HTTP 429 Retry-After (%.1f s in all) before their sends "
                     "(target.retry_on_429: honour)",
                     in->schedule_lag_p99_ms, in->lag_threshold_ms, in->retried_requests,
                     in->retry_wait_s);
    else
        validity_add(out,
                     "schedule lag p99 %.3f ms is above %g ms: the client could not keep the "
                     "schedule",
                     in->schedule_lag_p99_ms, in->lag_threshold_ms);
}

static void validity_judge_lost(const validity_input_t *in, validity_t *out) {
    for (size_t i = 0; i < in->n_workers; i++)
        if (in->workers[i].lost)
            validity_add(out, "worker %s was lost and its share of the load was not taken over",
                         in->workers[i].name);
}

/* A worker that reported numbers no honest worker can: its other numbers are not to be trusted
 * either, so the run is not a measurement. */
static void validity_judge_refused(const validity_input_t *in, validity_t *out) {
    for (size_t i = 0; i < in->n_workers; i++)
        if (in->workers[i].refused)
            validity_add(out,
                         "worker %s reported %" PRIu64 " number%s outside what the plan allows, "
                         "refused (the first: %s)",
                         in->workers[i].name, in->workers[i].refused,
                         in->workers[i].refused == 1 ? "" : "s",
                         in->workers[i].refused_first ? in->workers[i].refused_first : "?");
}

static void validity_judge_outcomes(const validity_input_t *in, validity_t *out) {
    if (in->breaker)
        validity_add(out, "stopped by the %s", in->breaker);
    if (in->requests_ok == 0 && in->requests_failed > 0)
        validity_add(out, "every request failed (%" PRIu64 ")", in->requests_failed);
    if (in->client_fd_limit > 0)
        validity_add(out,
                     "%" PRIu64 " requests could not open a socket: a worker ran out of file "
                     "descriptors (raise its open-file limit, ulimit -n, or add workers); the "
                     "server never saw them",
                     in->client_fd_limit);
    if (!in->exact_lengths || in->requested_checked == 0)
        return;
    double share = (double)in->output_mismatched / (double)in->requested_checked;
    char stops[160] = "";
    if (in->stopped_early)
        snprintf(stops, sizeof stops,
                 "; %" PRIu64 " ended with finish_reason `stop` before it: the server did not "
                 "honour ignore_eos/min_tokens",
                 in->stopped_early);
    if (share > VALIDITY_OUTPUT_MISMATCH_MAX)
        validity_add(out,
                     "%.1f %% of the requests (%" PRIu64 " of %" PRIu64 ") received another output "
                     "length than the exact one asked for (above %.0f %%)%s",
                     share * 100, in->output_mismatched, in->requested_checked,
                     VALIDITY_OUTPUT_MISMATCH_MAX * 100, stops);
}

void validity_judge(const validity_input_t *in, validity_t *out) {
    assert(in && out);
    memset(out, 0, sizeof *out);
    out->valid = true;
    validity_judge_saturation(in, out);
    validity_judge_schedule(in, out);
    validity_judge_lost(in, out);
    validity_judge_refused(in, out);
    validity_judge_outcomes(in, out);
}

/* Whether starts falling short of expected is within what the arrival draw itself explains:
 * never for constant arrivals; for Poisson and gamma, within three standard deviations of the
 * count of a renewal process (sqrt(expected) times the gaps' coefficient of variation). */
static bool validity_rate_drawn_short(const config_scheduler_t *sched, double expected,
                                      uint64_t starts) {
    if (sched->arrival == ARRIVAL_CONSTANT || expected <= 0)
        return false;
    double cv = sched->arrival == ARRIVAL_GAMMA ? sched->arrival_cv : 1.0;
    return expected - (double)starts <= 3 * cv * sqrt(expected);
}

validity_rate_cause_t validity_rate_cause(const validity_rate_input_t *in) {
    assert(in && in->scheduler);
    if (in->cap_waits > 0)
        return VALIDITY_RATE_CAP;
    if (in->schedule_lag_p99_ms > in->lag_threshold_ms)
        return in->retried_requests > 0 ? VALIDITY_RATE_RETRY_AFTER : VALIDITY_RATE_CLIENT;
    if (validity_rate_drawn_short(in->scheduler, in->expected_starts, in->starts))
        return VALIDITY_RATE_DRAW;
    return VALIDITY_RATE_UNEXPLAINED;
}

void validity_judge_server(const validity_server_t *in, validity_t *out) {
    if (in->shared)
        validity_add(out, "%s", in->shared_why);
    if (in->restarted)
        validity_add(out, "%s", in->restarted_why);
}
