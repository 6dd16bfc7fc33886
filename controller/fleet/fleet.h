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

/* What the fleet asks of a driver that keeps runs of its earlier life (serve, restarted after it
 * died during one): a new worker whose Hello holds unacknowledged batches of such a run hands them
 * over (docs/protocol.md "Hand-over"). Called on the fleet's loop; the held runs are the worker's
 * Hello's, updated as the hand-over goes. */
typedef struct fleet_handover_hooks {
    /* Whether the driver takes the batches of held->run_id from worker. */
    bool (*offer)(void *arg, const char *worker, const Stampede__HeldRun *held);
    /* One of them, the EventBatch envelope as it travelled: 0 kept (it is then acknowledged), -1
     * not (the hand-over ends). */
    int (*batch)(void *arg, const char *worker, const Stampede__HeldRun *held, const uint8_t *data,
                 size_t len);
    /* The hand-over ended: why NULL when every batch up to the worker's Done's last came
     * (held->last_seq, held->records), else why not; held->acked_seq is the last batch taken. */
    void (*end)(void *arg, const char *worker, const Stampede__HeldRun *held, const char *why);
    void *arg;
} fleet_handover_hooks_t;

/* Binds both sockets. NULL after printing why on stderr. */
fleet_t *fleet_new(const fleet_options_t *options);
/* Closes the sockets (bounded linger) and frees; sets *self_p to NULL. NULL-safe. */
void fleet_destroy(fleet_t **self_p);
/* The bound control endpoint with the real port, e.g. "tcp://127.0.0.1:40123". */
const char *fleet_endpoint(const fleet_t *self);
/* Closes the sockets early (the workers see the controller gone); the fleet can run no more. */
void fleet_close(fleet_t *self);
/* Sets (NULL: clears, as at first: no worker hands anything over) what the fleet asks of a driver
 * that takes held batches over. */
void fleet_set_handover(fleet_t *self, const fleet_handover_hooks_t *hooks);
/* Sets (NULL: clears) what the loop tells its driver. */
void fleet_set_hooks(fleet_t *self, const fleet_hooks_t *hooks);
/* What the loop tells the driver of run (fleet_start's) alone, instead of the fleet's hooks (NULL:
 * the fleet's again), and the label its lines carry (NULL: none): with "run 7", its live line and
 * what it says read "NAME: run 7: ...", so runs going on at once are told apart in one log. */
void fleet_set_run_hooks(fleet_t *self, const measurement_t *run, const fleet_hooks_t *hooks,
                         const char *label);
/* Runs a prepared run (PHASE_REGISTER) from registration to its results, handing it the fleet's
 * link and every worker for that long (the caller still owns and destroys it): fleet_start with
 * expect 0, fleet_step until fleet_over, fleet_finish. Its exit status (as results_finish; 1 when
 * it could not start, 130 when interrupted); *started says whether it got past its start. */
int fleet_run(fleet_t *self, measurement_t *run, bool *started);
/* Takes a prepared run (PHASE_REGISTER) beside the others the fleet holds (at most 16). With
 * expect 0 it is a controller's run: every worker is its (--expect-workers of them registered, the
 * rest waiting or joining). Otherwise it takes expect of the free workers (registered, in no
 * run), then new ones while it registers, and gives them back at fleet_finish: runs on different
 * targets share the fleet. The run's messages are routed by worker (a worker is in one run at a
 * time) and its run id. 0, or -1 when the fleet holds as many runs as it can. */
int fleet_start(fleet_t *self, measurement_t *run, uint32_t expect);
/* One turn of the loop over every run and the free workers (registrations, heartbeats both ways,
 * goodbyes, silence, each run's phases; with no run, it keeps a long-lived fleet's workers): waits
 * up to timeout_ms, woken early by a message or one of the n_fds descriptors (at most 8; as
 * transport_wait_fds). */
void fleet_step(fleet_t *self, long timeout_ms, const int *fds, size_t n_fds);
/* Whether run (fleet_start's) is over: its results can be written by fleet_finish. */
bool fleet_over(fleet_t *self, const measurement_t *run);
/* Writes an over run's results (its table on stdout, as a controller's) and frees its workers.
 * Its exit status and *started as fleet_run's. */
int fleet_finish(fleet_t *self, measurement_t *run, bool *started);
/* Stops run (said, its results partial, its workers drained), or aborts it before its start. */
void fleet_stop(fleet_t *self, measurement_t *run, const char *why);
/* Workers registered and not lost (as --expect-workers counts them), nor handing over. */
uint32_t fleet_workers_connected(const fleet_t *self);
/* Workers registered and in no run (what fleet_start can take). */
uint32_t fleet_workers_free(const fleet_t *self);
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
