#include "launch.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "journal.h"
#include "loop.h"
#include "plan.h"
#include "results.h"
#include "telemetry_run.h"
#include "trace_wire.h"

#define START_LEAD_NS 750000000LL

/* Sends w its Assign (join: a worker joining the run in progress, with no load of its own); part
 * is scratch for a trace part. 0 sent, -1 out of memory (the run is aborted). */
static int assign_one(measurement_t *run, run_worker_t *w, buffer_t *part, bool join) {
    {
        plan_share_t share;
        plan_share_for(&run->cfg, run->in_run, (uint32_t)w->index, &share);
        w->concurrency = join                            ? 0
                         : share.kind == PLAN_CONCURRENT ? share.slot_count
                                                         : share.rate_cap;
        Stampede__Assign a = STAMPEDE__ASSIGN__INIT;
        a.config_yaml = run->config_yaml;
        a.worker_index = (uint32_t)w->index;
        a.worker_count = run->in_run;
        a.concurrency = w->concurrency;
        a.offset_ns = w->offset_ns;
        a.rtt_ns = w->rtt_ns;
        a.trace = run->cfg.output.trace;
        a.heartbeat_ms = (uint32_t)(measurement_heartbeat_ns(run) / 1000000);
        a.liveness = run->cfg.fleet.liveness;
        a.join = join;
        buffer_reset(part);
        if (config_replays(&run->cfg)) {
            if (trace_wire_encode(&run->cfg, &share, part) != 0) {
                measurement_abort(run, "out of memory encoding worker %s's part of the trace",
                                  w->name);
                return -1;
            }
            a.trace_part.data = (uint8_t *)part->data;
            a.trace_part.len = part->len;
        }
        Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
        env.body_case = STAMPEDE__ENVELOPE__BODY_ASSIGN;
        env.assign = &a;
        env.run_id = run->id;
        /* libzmq would drop it at the worker, which would then look silent: say why instead. */
        size_t size = stampede__envelope__get_packed_size(&env);
        if (size > w->max_message_bytes && join) { /* the run goes on without it */
            measurement_say(run,
                            "worker %s cannot join: the Assign is %zu bytes, above the %" PRIu64
                            " it takes (its --max-message-size)",
                            w->name, size, w->max_message_bytes);
            w->state = RUN_WORKER_LOST;
            w->taken_over = true; /* it held nothing */
            measurement_send_stop(run, w, "the Assign is above this worker's --max-message-size",
                                  true, true);
            return 0;
        }
        if (size > w->max_message_bytes) {
            measurement_abort(run,
                              "the Assign for worker %s is %zu bytes (the config %zu, the trace "
                              "part %zu), above the %" PRIu64 " that worker takes (its "
                              "--max-message-size): raise it, or make the workload smaller",
                              w->name, size, strlen(run->config_yaml), part->len,
                              w->max_message_bytes);
            return -1;
        }
        w->state = RUN_WORKER_ASSIGNED;
        measurement_send(run, w, &env);
        measurement_say(run,
                        "worker %u = %s: concurrency %u%s, clock offset %+.3f ms (rtt %.3f ms)",
                        w->index, w->name, w->concurrency, join ? " (joining the run)" : "",
                        w->offset_ns / 1e6, w->rtt_ns / 1e6);
    }
    return 0;
}

void launch_assign(measurement_t *run) {
    run->phase = PHASE_ASSIGN;
    run->deadline_ns = loop_now_ns() + MEASUREMENT_READY_TIMEOUT_NS;
    buffer_t part; /* kind trace: the worker's own sessions */
    buffer_init(&part);
    for (size_t i = 0; i < run->n_workers; i++)
        if (run_worker_in_run(run->workers[i]) &&
            assign_one(run, run->workers[i], &part, false) != 0)
            break;
    buffer_clear(&part);
}

void launch_assign_join(measurement_t *run, run_worker_t *w) {
    buffer_t part;
    buffer_init(&part);
    assign_one(run, w, &part, true);
    buffer_clear(&part);
}

void launch_ready(measurement_t *run, run_worker_t *w, const Stampede__Ready *ready) {
    if (w->state != RUN_WORKER_ASSIGNED)
        return;
    if (!ready->ok)
        measurement_abort(run, "worker %s could not prepare the run: %s", w->name,
                          ready->error && *ready->error ? ready->error : "no reason");
    else if (ready->concurrency != w->concurrency)
        /* Both sides partition the same YAML; a difference means they disagree on it. */
        measurement_abort(run,
                          "worker %s computed a concurrency share of %u, the controller %u: the "
                          "config reads differently on the two sides (different stampede "
                          "versions?)",
                          w->name, ready->concurrency, w->concurrency);
    else
        w->state = RUN_WORKER_READY;
    if (ready->ok && ready->server_said && *ready->server_said && !run->server_said)
        run->server_said = strdup(ready->server_said); /* for served_by.reported */
}

void launch_send_start(measurement_t *run, run_worker_t *w) {
    Stampede__Start start = STAMPEDE__START__INIT;
    start.start_ns = run->start_ns;
    start.offset_ns = w->offset_ns;
    start.session_limit = run->session_limit;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_START;
    env.start = &start;
    env.run_id = run->id;
    w->state = RUN_WORKER_RUNNING;
    measurement_send(run, w, &env);
}

void launch_begin(measurement_t *run) {
    int64_t max_rtt = 0;
    for (size_t i = 0; i < run->n_workers; i++)
        if (run_worker_in_run(run->workers[i]) && run->workers[i]->rtt_ns > max_rtt)
            max_rtt = run->workers[i]->rtt_ns;
    run->start_ns = loop_now_ns() + START_LEAD_NS + 2 * max_rtt;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    run->start_unix_ns =
        (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec + (run->start_ns - loop_now_ns());
    run->phase = PHASE_RUN;
    run->started_with = run->in_run;
    telemetry_run_open(run); /* first: a sweep marks its snapshots on the run's telemetry */
    results_open_trace(run);
    journal_open(run);
}

void launch_send_starts(measurement_t *run) {
    int64_t max_rtt = 0;
    for (size_t i = 0; i < run->n_workers; i++)
        if (run_worker_in_run(run->workers[i]) && run->workers[i]->rtt_ns > max_rtt)
            max_rtt = run->workers[i]->rtt_ns;
    for (size_t i = 0; i < run->n_workers; i++)
        if (run_worker_in_run(run->workers[i]))
            launch_send_start(run, run->workers[i]);
    measurement_say(run, "all workers ready; start in %.0f ms (max clock-probe error ±%.3f ms)",
                    (run->start_ns - loop_now_ns()) / 1e6, max_rtt / 2e6);
    run->next_live_ns = run->start_ns + 1000000000LL;
}
