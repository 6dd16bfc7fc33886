/* What the files of the controller share: the controller itself (a fleet and its current run),
 * its phases, the timing they agree on, and the few helpers every step uses. Internal to
 * controller/; the public entry points are in controller.h. A run walks through the files in
 * order: measurement (config, run id, merge), registry (Hello, Welcome), clock_probe, launch
 * (Assign, Ready, Start), collect (batches, Done, release), results; transport carries every
 * message, console prints, and controller.c runs the loop, the phases and the list of runs. */
#ifndef STAMPEDE_CONTROLLER_INTERNAL_H
#define STAMPEDE_CONTROLLER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "controller.h"
#include "envelope.h"
#include "ingest.h"
#include "merge.h"
#include "registry.h"
#include "report.h"
#include "stampede.pb-c.h"
#include "transport.h"

#define CONTROLLER_HEARTBEAT_NS 1000000000LL      /* both ways, on the control socket */
#define CONTROLLER_READY_TIMEOUT_NS 30000000000LL /* for the clock probes, then for Ready */

typedef enum {
    PHASE_REGISTER, /* waiting for --expect-workers workers */
    PHASE_PROBE,    /* measuring their clocks */
    PHASE_ASSIGN,   /* shares sent, waiting for every Ready */
    PHASE_RUN,      /* started; batches and Done arrive */
    PHASE_OVER      /* every worker released or lost, or the run aborted */
} controller_phase_t;

/* The controller is a fleet that runs a list of runs, one after another. The fleet's part lives
 * as long as the process (the transport, the registry of workers, the heartbeat timer); the
 * run's part (an anonymous struct, so each step reads self->merge, self->cfg as before) is set up
 * by measurement_begin for each run and torn down by measurement_end. */
struct controller {
    /* The fleet. */
    controller_options_t options;
    const char *name; /* prefix of every message */
    transport_t *transport;
    envelope_arena_t *arena;    /* every received envelope is unpacked into it */
    registry_worker_t *workers; /* every worker known, in the order they said Hello */
    size_t n_workers;
    size_t cap_workers;
    int64_t next_heartbeat_ns;
    bool tty;        /* stderr is a terminal: the live line is redrawn in place */
    bool live_shown; /* the live line is on screen, without a newline */

    /* The run in progress; the last member (measurement_end clears from config_path on). */
    struct {
        const char *config_path; /* the workload file of this run */
        config_t cfg;
        bool cfg_loaded;
        char *config_yaml; /* unredacted: what the workers are sent */
        char *out_dir;
        bool trace;
        uint32_t in_run; /* workers taken into the run (indexes 0 … in_run-1) */

        controller_phase_t phase;
        int64_t deadline_ns; /* of the current phase (registration, probes, Ready, the drain) */
        bool stopping;       /* Stop sent to the run's workers (interrupt, a local child died) */
        uint64_t run_id;
        int64_t start_ns; /* the start instant on the controller's clock */
        int64_t start_unix_ns;
        merge_t *merge;
        ingest_t *ingest;
        int64_t next_live_ns;
        char abort_reason[1024];

        /* What every merged record also feeds (results.c). */
        report_trace_t *trace_out;
        uint64_t trace_dropped_said; /* the drops console_live already reported */
        uint64_t requests_ok;        /* warm-up included */
        uint64_t requests_failed;    /* warm-up included; cancelled requests are neither */
        uint64_t sessions_ended;     /* warm-up included, any outcome */
        bool have_first_error;
        char first_error[200];
        uint32_t first_error_endpoint;
    };
};

/* The controller's clock: CLOCK_MONOTONIC in ns. Probes, deadlines and the start are on it. */
int64_t controller_now_ns(void);
/* Ends the run before it starts (or aborts it) with the reason printed at the end; the first
 * reason given wins. */
void controller_abort(controller_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sends env to worker w on the control socket. 0 sent, -1 not. */
int controller_send(controller_t *self, registry_worker_t *w, Stampede__Envelope *env);
/* Sends w a Stop for this run: cancel also cancels its requests in flight, abandon voids the run
 * for it (drop everything, go idle). 0 sent, -1 not. */
int controller_send_stop(controller_t *self, registry_worker_t *w, const char *reason, bool cancel,
                         bool abandon);

#endif
