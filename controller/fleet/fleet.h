/* A fleet: the workers a controller process serves runs with, for the life of the process. It
 * binds the control and data sockets (controller/transport.h), registers workers
 * (controller/registry.h), keeps them alive with heartbeats, prints (controller/console.h), and
 * runs one measured run at a time (controller/measurement.h) on its event loop: the control socket
 * drained first on every turn, then a bounded burst of data, so batches never starve heartbeats
 * or stops. The run asks the fleet for what it needs through the run_link_t the fleet gives it;
 * whoever drives the runs (a sweep) hears of the loop through fleet_hooks_t. */
#ifndef STAMPEDE_FLEET_H
#define STAMPEDE_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live_metrics.h"
#include "measurement.h"
#include "merge.h"
#include "transport.h"

typedef struct fleet fleet_t;

/* Called on every loop turn; returns non-zero with a message in why to abort the run (used by
 * `stampede run` to notice a local worker that died). */
typedef int (*fleet_hook_fn)(void *arg, char *why, size_t len);

typedef struct fleet_options {
    const char *name;   /* prefix of messages: "controller" or "run" */
    const char *bind;   /* control endpoint, e.g. "tcp://0.0.0.0:5555"; port "*" picks a free one */
    uint32_t data_port; /* 0: control port + 1, or a free one when the control port is "*" */
    const transport_security_t *security; /* --key, --authorized-keys, --insecure */
    uint32_t expect_workers;              /* logical workers (a worker with --threads T counts T) */
    int64_t register_timeout_ns;          /* waiting for workers */
    int64_t grace_ns;    /* an interrupt's drain before what is in flight is cancelled */
    int64_t progress_ns; /* a log's live line: one per progress_ns */
    fleet_hook_fn hook;
    void *hook_arg;
    live_metrics_t *live_metrics; /* --metrics-listen's gauges and polling, or NULL (not owned) */
} fleet_options_t;

/* What the fleet's loop tells whoever drives its runs (a sweep); every member may be NULL. */
typedef struct fleet_hooks {
    /* Every turn of a started run, at now. */
    void (*step)(void *arg, int64_t now);
    /* An interrupt stopped the run at now. */
    void (*stopped)(void *arg, int64_t now);
    /* The live line at now from the merge's live figures (NULL: report_live_line's). */
    void (*live_line)(void *arg, int64_t now, const live_t *live, char *buf, size_t len);
    /* The level being run, for the live gauges (NAN: none). */
    double (*level)(void *arg);
    void *arg;
} fleet_hooks_t;

/* Binds both sockets. NULL after printing why on stderr. */
fleet_t *fleet_new(const fleet_options_t *options);
/* Closes the sockets (bounded linger) and frees; sets *self_p to NULL. NULL-safe. */
void fleet_destroy(fleet_t **self_p);
/* The bound control endpoint with the real port, e.g. "tcp://127.0.0.1:40123". */
const char *fleet_endpoint(const fleet_t *self);
/* Closes the sockets early (the workers see the controller gone); the fleet can run no more. */
void fleet_close(fleet_t *self);
/* Sets (NULL: clears) what the loop tells its driver. */
void fleet_set_hooks(fleet_t *self, const fleet_hooks_t *hooks);
/* Runs a prepared run (PHASE_REGISTER) from registration to its results, handing it the fleet's
 * link and workers for that long (the caller still owns and destroys it). Its exit status (as
 * results_finish; 1 when it could not start, 130 when interrupted); *started says whether it got
 * past its start. */
int fleet_run(fleet_t *self, measurement_t *run, bool *started);
/* Between runs: serves the workers (registrations, heartbeats both ways, goodbyes, silence) for
 * up to timeout_ms, woken early by one of the n_fds descriptors (as transport_wait_fds), so a
 * long-lived fleet keeps its workers while it has nothing to run. */
void fleet_idle(fleet_t *self, long timeout_ms, const int *fds, size_t n_fds);
/* Workers registered and not lost (as --expect-workers counts them). */
uint32_t fleet_workers_connected(const fleet_t *self);
/* The run in progress (NULL between runs). */
measurement_t *fleet_current(const fleet_t *self);
/* The link a run of this fleet asks through (for work outside a run, e.g. a sweep's reports). */
const run_link_t *fleet_link(const fleet_t *self);
/* Prints "NAME: message", erasing the live line first. */
void fleet_say(fleet_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Erases the live line (before a table). */
void fleet_clear_line(fleet_t *self);
/* SIGINT/SIGTERM are counted from here (fleet_catch_signals) until fleet_release_signals. */
void fleet_catch_signals(void);
void fleet_release_signals(void);
/* How many SIGINT/SIGTERM arrived since fleet_catch_signals. */
int fleet_signals(void);

#endif
