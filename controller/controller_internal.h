/* What the files of the controller share: the controller itself (a fleet and its current run),
 * the timing they agree on, and the few helpers every step uses. Internal to
 * controller/; the public entry points are in controller.h. A run walks through the files in
 * order: measurement (the run itself: config, run id, merge), registry (Hello, Welcome),
 * clock_probe, launch (Assign, Ready, Start), collect (batches, Done, release), results; transport
 * carries every message, console prints, and controller.c runs the loop, the phases and the list of
 * runs. */
#ifndef STAMPEDE_CONTROLLER_INTERNAL_H
#define STAMPEDE_CONTROLLER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "controller.h"
#include "envelope.h"
#include "measurement.h"
#include "registry.h"
#include "stampede.pb-c.h"
#include "transport.h"

#define CONTROLLER_HEARTBEAT_NS 1000000000LL      /* default fleet.heartbeat, both ways */
#define CONTROLLER_LIVENESS 3                     /* default fleet.liveness */
#define CONTROLLER_READY_TIMEOUT_NS 30000000000LL /* for the clock probes, then for Ready */

/* The controller is a fleet that runs a list of runs, one after another. The fleet lives as long
 * as the process (the transport, the registry of workers, the heartbeat timer, the console); the
 * run in progress is a measurement_t it holds from registration to the results (NULL between
 * runs, when nothing is polled), so each step reads self->run->merge, self->run->cfg. */
struct controller {
    controller_options_t options;
    const char *name; /* prefix of every message */
    transport_t *transport;
    envelope_arena_t *arena;    /* every received envelope is unpacked into it */
    registry_worker_t *workers; /* every worker known, in the order they said Hello */
    size_t n_workers;
    size_t cap_workers;
    int64_t next_heartbeat_ns;
    /* messages from unregistered peers that did not unpack (collect_undecodable) */
    uint64_t undecodable_strangers;
    bool tty;        /* stderr is a terminal: the live line is redrawn in place */
    bool live_shown; /* the live line is on screen, without a newline */
    measurement_t *run;
    /* A run of this fleet has started: --expect-workers was met once, and later runs (levels,
     * files) start with the workers still registered (docs/protocol.md "After a loss"). */
    bool started_once;
    struct sweep_run *sweep; /* the sweep in progress (controller/sweep_run.h); NULL: plain run */
    struct live_metrics *live_metrics; /* --metrics-listen (controller/live_metrics.h); or NULL */
    char results_root[4096]; /* --out DIR or the first run's directory: what --linger serves */
};

/* The heartbeat interval and the silence that means a peer is lost: the run's fleet.heartbeat and
 * fleet.heartbeat x fleet.liveness, the defaults between runs. */
int64_t controller_heartbeat_ns(const controller_t *self);
int64_t controller_silence_ns(const controller_t *self);
/* Ends the run in progress before it starts (or aborts it) with the reason printed at the end; the
 * first reason given wins. */
void controller_abort(controller_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sends env to worker w on the control socket. 0 sent, -1 not. */
int controller_send(controller_t *self, registry_worker_t *w, Stampede__Envelope *env);
/* Sends w a Stop for this run: cancel also cancels its requests in flight, abandon voids the run
 * for it (drop everything, go idle). 0 sent, -1 not. */
int controller_send_stop(controller_t *self, registry_worker_t *w, const char *reason, bool cancel,
                         bool abandon);

#endif
