/* The controller: a fleet of workers (controller/fleet.h) that runs one or more workload files,
 * each a plain run or a sweep of runs (controller/sweep_run.h). A run waits for the expected
 * workers, measures each one's clock offset, partitions the load (common/plan), assigns it, starts
 * every worker at the same controller instant, ingests and merges their event batches, and writes
 * the results: the table on stdout, OUT/results.json, OUT/config.yaml and, with --trace,
 * OUT/requests.jsonl. The protocol is described in docs/protocol.md. */
#ifndef STAMPEDE_CONTROLLER_H
#define STAMPEDE_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet.h"
#include "live_http.h"
#include "transport.h"

typedef struct controller controller_t;
struct sweep_source;

/* Called on every loop turn; returns non-zero with a message in why to abort the run (used by
 * `stampede run` to notice a local worker that died). */
typedef fleet_hook_fn controller_hook_fn;

typedef struct controller_options {
    const char *config_path;         /* the workload file, when config_paths is empty */
    const char *const *config_paths; /* several: run one after another over one fleet */
    size_t n_configs;
    const char *const *targets; /* --target URLs (override the file's endpoints) */
    size_t n_targets;
    const char *bind;   /* control endpoint, e.g. "tcp://0.0.0.0:5555"; port "*" picks a free one */
    uint32_t data_port; /* 0: control port + 1, or a free one when the control port is "*" */
    uint32_t expect_workers; /* logical workers (a worker with --threads T counts T) */
    const char *out_dir;     /* NULL: the file's output.dir; with several files, run-N under it */
    bool trace;              /* also when the file says output.trace */
    bool http_phases;        /* the end table shows the HTTP phases (--http-phases) */
    bool allow_invalid;      /* an invalid run exits 0, not 3 (controller/validity.h) */
    bool no_preflight;       /* --no-preflight: target.preflight false (worker/preflight.h) */
    int64_t register_timeout_ns; /* waiting for workers; default 60 s */
    const char *name;            /* prefix of messages: "controller" or "run" */
    controller_hook_fn hook;
    void *hook_arg;
    /* The levels to run for each file (controller/sweep.h: how a source is written); NULL: the
     * file's `sweep:` section, or one plain run when it has none. */
    const struct sweep_source *source;
    transport_security_t security;     /* --key, --authorized-keys, --insecure (docs/security.md) */
    const char *metrics_listen;        /* --metrics-listen HOST:PORT: live Prometheus; NULL none */
    const char *metrics_prefix;        /* --metrics-prefix (NULL: "stampede_") */
    const char *metrics_compat;        /* --metrics-compat loadgen: also the reference names */
    live_http_access_t metrics_access; /* --metrics-token-file, --metrics-insecure */
    /* --grace DURATION: on SIGINT/SIGTERM, how long the requests in flight may finish before they
     * are cancelled (NULL: CONTROLLER_DEFAULT_GRACE_NS); parsed by controller_new */
    const char *grace;
    int64_t grace_ns;
    /* --progress-interval DURATION (else $STAMPEDE_PROGRESS_INTERVAL): how often the live line is
     * written when stderr is not a terminal (a terminal's is redrawn every second); parsed by
     * controller_new into progress_ns (default CONTROLLER_DEFAULT_PROGRESS_NS) */
    const char *progress_interval;
    int64_t progress_ns;
    int64_t linger_ns; /* --linger: serve the results over HTTP this long after */
    bool print_report; /* --print-report: report.md to stdout after each report */
    /* Non-NULL: the embedded mock serves the run (no target was given), with this engine
     * profile; results.json's served_by and every report say so. */
    const char *simulated_profile;
} controller_options_t;

#define CONTROLLER_DEFAULT_GRACE_NS 5000000000LL
#define CONTROLLER_DEFAULT_PROGRESS_NS 10000000000LL /* a log's live line: one per 10 s */

/* Checks every config file and binds both sockets. NULL after printing why on stderr. */
controller_t *controller_new(const controller_options_t *options);
/* The bound control endpoint with the real port, e.g. "tcp://127.0.0.1:40123". */
const char *controller_endpoint(const controller_t *self);
/* Runs each config file in turn over the same registered workers (clocks probed again before
 * each), each with its own run id and results. Returns the first non-zero exit status of a run:
 * 1 when a run could not start or every request failed (the reason is printed), 3 when a run is
 * invalid and options.allow_invalid is not set, 130 when interrupted (partial results are
 * written; the runs after it are not started), else 0. */
int controller_run(controller_t *self);
/* --linger: closes the ZeroMQ sockets (the workers see the controller gone) and serves the
 * results directory read-only under /results/ on the --metrics-listen port for options.linger_ns,
 * or until SIGINT/SIGTERM. Returns at once without a metrics server or a linger. */
void controller_linger(controller_t *self);
/* Closes the sockets (bounded linger) and frees. */
void controller_destroy(controller_t **self_p);

#endif
