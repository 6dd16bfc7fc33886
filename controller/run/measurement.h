/* One measured run: its config (loaded, --target applied, checked), its output directory, its run
 * id, its phase and deadlines, its merge, ingest and trace, and what every merged record counts.
 * The fleet (controller/fleet.h) holds one from registration to the results and destroys it before
 * the next; the steps in between (clock_probe, launch, collect, results) read and write it.
 *
 * Its doors: a run knows no socket and no fleet. It asks its fleet for what it needs through
 * run_link_t (send a message to a worker, say a line, how much is in flight), hands every merged
 * record to the run_sink_t list (live metrics, a sweep's window), and stops or ends as the
 * run_policy_t its owner installed says (a sweep's repetition, or a plain run). */
#ifndef STAMPEDE_MEASUREMENT_H
#define STAMPEDE_MEASUREMENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_series.h"
#include "config.h"
#include "ingest.h"
#include "merge.h"
#include "report.h"
#include "run_worker.h"
#include "slo.h"
#include "stampede.pb-c.h"
#include "telemetry.h"
#include "validity.h"

typedef enum {
    PHASE_REGISTER, /* waiting for --expect-workers workers */
    PHASE_PROBE,    /* measuring their clocks */
    PHASE_ASSIGN,   /* shares sent, waiting for every Ready */
    PHASE_RUN,      /* started; batches and Done arrive */
    PHASE_OVER      /* every worker released or lost, or the run aborted */
} controller_phase_t;

typedef struct measurement measurement_t;

typedef struct run_loss {
    char worker[128];
    uint32_t index;
    int64_t from_ns;     /* the last word from it: its load is missing from here */
    int64_t declared_ns; /* declared lost */
    int64_t to_ns;       /* its share taken over (0: never, the load stayed short to the end) */
    double share;        /* of the run's load, 0..1 */
    uint64_t lost_sessions;
    bool taken_over;
} run_loss_t;

/* What a run is given by whoever starts it (`stampede run`, `stampede controller`, capacity). */
typedef struct run_options {
    const char *name;           /* prefix of every message: "controller" or "run" */
    const char *const *targets; /* --target URLs (override the file's endpoints) */
    size_t n_targets;
    const char *out_dir;                   /* NULL: the file's output.dir */
    bool trace;                            /* also when the file says output.trace */
    bool no_preflight;                     /* target.preflight false */
    bool http_phases;                      /* the end table shows the HTTP phases */
    bool allow_invalid;                    /* an invalid run exits 0, not 3 */
    bool print_report;                     /* report.md to stdout after each report */
    uint32_t expect_workers;               /* what results.json's workers says expected */
    int64_t register_timeout_ns;           /* waiting for workers */
    const char *simulated_profile;         /* the embedded mock's profile, or NULL */
    const report_simulation_t *simulation; /* `stampede simulate` runs it (sim/); NULL: measured */
} run_options_t;

/* What a run may ask of its fleet; arg is the fleet's. */
typedef struct run_link {
    /* Sends env to w on its control socket (data: its data socket). 0 sent, -1 not. */
    int (*send)(void *arg, run_worker_t *w, Stampede__Envelope *env, bool data);
    /* Prints msg as the fleet prints its messages ("NAME: msg"). */
    void (*say)(void *arg, const char *msg);
    /* Requests in flight on the run's workers as their heartbeats said (silent ones left out). */
    uint32_t (*inflight)(void *arg);
    void *arg;
} run_link_t;

/* Whoever wants each merged record of a run. */
typedef struct run_sink {
    /* The start instant is set (run->start_ns), before any record. May be NULL. */
    void (*open)(void *arg, const measurement_t *run);
    /* One merged record and its metrics. */
    void (*record)(void *arg, const measurement_t *run, const request_record_t *rec,
                   const metrics_t *m);
    void *arg;
} run_sink_t;

#define RUN_MAX_SINKS 4

/* How a run stops and ends, installed by its owner (a sweep's repetition); NULL members: a plain
 * run's (said, the results partial, the workers cancelled and drained; the table printed). */
typedef struct run_policy {
    /* A limit of the run (the circuit breaker) says it must stop, for why. */
    void (*stop)(void *arg, measurement_t *run, const char *why);
    /* The run's verdict is known: the owner takes the run's figures instead of the table.
     * server (may be NULL; not taken) holds the run's "server" and "gap" blocks. */
    void (*end)(void *arg, const measurement_t *run, const validity_t *validity,
                const char *stop_reason, bool interrupted, json_t *server);
    void *arg;
} run_policy_t;

struct measurement {
    run_options_t options;
    run_link_t link;
    run_policy_t policy;
    run_sink_t sinks[RUN_MAX_SINKS];
    size_t n_sinks;
    /* Every worker the fleet knows, the run's and the others (index -1), kept by the fleet. */
    run_worker_t **workers;
    size_t n_workers;
    bool after_first;        /* a run of a fleet that started one before (controller/fleet.h) */
    const char *config_path; /* the workload file of this run (the caller's string) */
    config_t cfg; /* output.dir is this run's directory, output.trace also says --trace */
    bool cfg_loaded;
    char *config_yaml;       /* unredacted: what the workers are sent */
    uint64_t id;             /* the run id every message of the run carries */
    uint32_t in_run;         /* workers taken into the run (indexes 0 … in_run-1) */
    uint32_t started_with;   /* in_run at the start (the rest joined during the run) */
    uint64_t *window_starts; /* by worker index: sessions it started inside the measured window */
    /* rate mode: when the limits end the arrivals (ns after start; -1 never, 0 not yet known:
     * results.c works it out at the first start) and the window's starts sent by then */
    int64_t schedule_end_ns;
    uint64_t schedule_starts;

    controller_phase_t phase;
    int64_t deadline_ns;  /* of the current phase (registration, probes, Ready, the drain) */
    bool stopping;        /* Stop sent to the run's workers (interrupt, a local child died) */
    int64_t cancel_at_ns; /* an interrupt's drain: when what is in flight is cancelled (0: not) */
    int64_t start_ns;     /* the start instant on the controller's clock (loop_now_ns) */
    int64_t start_unix_ns;
    int64_t next_live_ns;
    char abort_reason[1024]; /* why the run ended before it started, or aborted; first wins */

    merge_t *merge;
    ingest_t *ingest;
    /* What every merged record also feeds (results.c). */
    report_trace_t *trace_out;
    uint64_t trace_dropped_said; /* the drops console_live already reported */
    uint64_t requests_ok;        /* warm-up included */
    uint64_t requests_failed;    /* warm-up included; cancelled requests are neither */
    uint64_t sessions_ended;     /* warm-up included, any outcome */
    bool have_first_error;
    char first_error[200];
    char *server_said; /* what the endpoints said about themselves at the preflight (worker 0's
                          Ready: a JSON array), or NULL */
    char breaker[600]; /* "circuit breaker: ..." once limits.max_error_pct or
                          limits.endpoint_dead_after stopped it; "" before */
    int64_t *failing_since_ns; /* by endpoint: the first failure after its last success (0: none) */
    uint32_t first_error_endpoint;
    telemetry_t
        *telemetry; /* server and GPU /metrics (NULL when off); controller/telemetry_run.c */
    telemetry_mark_t window_opens, window_closes; /* its marks at the measured window's edges */
    json_t *server_figures; /* the level's "server" block from its owner when no scrape made one
                               (a simulation's engine: sim/sim_figures.h); owned, or NULL */
    slo_goodput_t goodput;  /* the requests that met every per-request SLO (controller/slo.h) */
    client_series_t *client_series; /* the live line's per-second samples (results.json) */
    struct spool_writer *journal;   /* OUT/journal.spool (controller/journal.h); NULL: none */
    uint64_t journal_batches;
    int64_t journal_ns;      /* spent appending and flushing batches */
    const char *stop_reason; /* what ended the run when neither a limit nor an interrupt did
                                (`stampede merge`: the controller was lost); NULL otherwise */
    /* Worker loss and rebalancing (controller/rebalance.h). */
    uint64_t session_limit;    /* the grant: no worker starts a session index at or past it */
    uint64_t session_headroom; /* how far the grant runs ahead of the highest frontier */
    uint64_t frontier_at_tick; /* the highest frontier at the last heartbeat tick */
    uint64_t class_stride;     /* slots, or arrival workers, at the start */
    struct run_loss *losses;   /* every worker lost during the run, in order */
    size_t n_losses, cap_losses;
    double lost_share;    /* share of the run's load lost (taken over or not), 0..1 */
    char loss_abort[512]; /* fleet.abort_on_worker_loss_pct ended the run: why */
};

/* Loads config_path as a run would (the --target URLs of options applied) and frees it: 0 when
 * it would run, -1 after printing why on stderr (prefixed with name; file, line, key). */
int measurement_check(const run_options_t *options, const char *config_path);
/* Run number (1-based) of n_runs from config_path, in PHASE_REGISTER with the registration
 * deadline set: results go to the output directory (--out, else the file's output.dir, else
 * "results"), in run-N under it when n_runs > 1; a new run id. NULL after printing why. The
 * caller destroys it; config_path must outlive it. */
measurement_t *measurement_new(const run_options_t *options, const char *config_path, size_t number,
                               size_t n_runs);
/* A run rebuilt from its redacted config (yaml; source names where it came from, and must outlive
 * the run) for `stampede merge`: results go to out_dir; the run id is run_id; in PHASE_RUN, the
 * start and workers left to the caller. NULL after printing why. */
measurement_t *measurement_restore(const char *name, const char *source, const char *yaml,
                                   const char *out_dir, uint64_t run_id);
/* Adds a sink (at most RUN_MAX_SINKS). 0 ok, -1 full. */
int measurement_add_sink(measurement_t *self, run_sink_t sink);
/* Ends the run before it starts (or aborts it) with the reason printed at the end; the first
 * reason given wins. */
void measurement_abort(measurement_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Says a line through the link (stderr with the run's name when it has none). */
void measurement_say(measurement_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* As measurement_say, through link (stderr prefixed with name when link or its say is NULL). */
void measurement_link_say(const run_link_t *link, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends env to w on the control socket. 0 sent, -1 not. */
int measurement_send(measurement_t *self, run_worker_t *w, Stampede__Envelope *env);
/* Sends w a Stop for this run: cancel also cancels its requests in flight, abandon voids the run
 * for it (drop everything, go idle). 0 sent, -1 not. */
int measurement_send_stop(measurement_t *self, run_worker_t *w, const char *reason, bool cancel,
                          bool abandon);
/* Requests in flight, as the link says (0 without one). */
uint32_t measurement_inflight(const measurement_t *self);
/* The heartbeat interval of the run (fleet.heartbeat), and the silence that loses a worker. */
int64_t measurement_heartbeat_ns(const measurement_t *self);
int64_t measurement_silence_ns(const measurement_t *self);
/* The fleet's defaults when the run's file does not say. */
#define MEASUREMENT_HEARTBEAT_NS 1000000000LL      /* fleet.heartbeat, both ways */
#define MEASUREMENT_LIVENESS 3                     /* fleet.liveness */
#define MEASUREMENT_READY_TIMEOUT_NS 30000000000LL /* for the clock probes, then for Ready */
/* Messages of one kind logged one by one before only every 1000th is. */
#define MEASUREMENT_LOGGED_FIRST 10
/* Whether the failures-th refused message of a kind is logged (the first few, then every 1000th),
 * so a peer that floods the controller with garbage cannot flood its console. */
bool measurement_logged(uint64_t failures);
/* w reported a number outside the plan's bounds (bounds.h): refused (the caller does not use it),
 * counted on w, its first reason kept for the run's verdict, and logged within
 * measurement_logged. what names it ("a record", "a heartbeat"). */
void measurement_refuse_number(measurement_t *self, run_worker_t *w, const char *what,
                               const char *why);
/* Gives the run a new run id: what was sent under the old one (an Assign) is void. */
void measurement_renew_id(measurement_t *self);
/* Closes the trace, frees the merge, ingest, config and buffers, then the run; sets *self_p to
 * NULL. NULL-safe. */
void measurement_destroy(measurement_t **self_p);

#endif
