/* The fleet's own struct and what its two files share (fleet.c: the loop and the run;
 * fleet_workers.c: what the workers say and what they are told). Private to the fleet. */
#ifndef STAMPEDE_FLEET_INTERNAL_H
#define STAMPEDE_FLEET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "console.h"
#include "envelope.h"
#include "fleet.h"
#include "registry.h"

/* The most runs a fleet holds at once (the rig's groups running together). */
#define FLEET_MAX_RUNS 16
/* The most descriptors a driver hands fleet_step besides the fleet's own. */
#define FLEET_MAX_FDS 8

/* A run the fleet holds, from fleet_start to fleet_finish, and the workers it took. */
typedef struct fleet_slot {
    measurement_t *run; /* NULL: the slot is free */
    fleet_t *fleet;
    run_link_t link; /* the run's (arg: this slot) */
    uint32_t expect; /* workers it takes before it starts */
    /* fleet_run's: every worker the fleet knows is the run's (beyond expect, waiting or joining),
     * as a controller's one run at a time. Otherwise (fleet_start) it takes expect free workers
     * and new ones while it registers, and gives them back at its end. */
    bool takes_all;
    run_worker_t **workers; /* its workers' run parts, in the order they said Hello */
    size_t n_workers, cap_workers;
    int64_t release_end_ns; /* once over: releases are awaited until then (0: not over yet) */
    fleet_hooks_t hooks;    /* its driver's (fleet_set_run_hooks); none set: the fleet's */
    char label[64];         /* its lines' prefix ("run 7"), or "" */
} fleet_slot_t;

struct fleet {
    fleet_options_t options;
    transport_security_t security;
    console_t console;
    transport_t *transport;
    envelope_arena_t *arena; /* every received envelope is unpacked into it */
    registry_t *registry;
    run_link_t link;
    fleet_hooks_t hooks;
    int64_t next_heartbeat_ns;
    int64_t next_silence_ns;        /* no worker can be silent before it (registry_next_silence) */
    uint64_t undecodable_strangers; /* messages from unregistered peers that did not unpack */
    /* The runs in progress, each from fleet_start to fleet_finish. */
    fleet_slot_t slots[FLEET_MAX_RUNS];
    int signals_handled; /* SIGINT/SIGTERM already acted on */
    int64_t last_turn_ns;
    /* A run of this fleet has started: --expect-workers was met once, and later runs (levels,
     * files) start with the workers still registered (docs/protocol.md "After a loss"). */
    bool started_once;
    fleet_handover_hooks_t handover; /* fleet_set_handover's (offer NULL: none) */
};

/* The slot of a worker's run (NULL: free, in no run) and of a run (NULL: not the fleet's). */
fleet_slot_t *fleet_slot_of(fleet_t *self, const registry_worker_t *w);
fleet_slot_t *fleet_slot_of_run(fleet_t *self, const measurement_t *run);
/* The heartbeat interval: the shortest of the runs', else the default. The silence that means w
 * is lost: its run's, else the default; fleet_silence_ns: the shortest. */
int64_t fleet_heartbeat_ns(const fleet_t *self);
int64_t fleet_silence_ns(const fleet_t *self);
int64_t fleet_worker_silence_ns(fleet_t *self, const registry_worker_t *w);
/* Each run is handed its workers again (after one was added, removed or moved). */
void fleet_workers_changed(fleet_t *self);
/* How many of slot's workers are in state. */
uint32_t fleet_slot_count(const fleet_slot_t *slot, run_worker_state_t state);
/* A message from the control socket / the data socket (transport_message_fn; arg is the fleet). */
void fleet_workers_control(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
                           size_t len, int64_t rx_ns);
void fleet_workers_data(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
                        size_t len, int64_t rx_ns);
/* Sends a heartbeat to every worker not lost. */
void fleet_workers_heartbeats(fleet_t *self, int64_t now);
/* Workers silent for fleet.heartbeat x fleet.liveness: forgotten outside the run, lost during it,
 * and before the start the run is aborted (or prepared again, after the fleet's first). */
void fleet_workers_check_silence(fleet_t *self, int64_t now);
/* Marks w lost (its delivered records count; the results become partial unless its share is
 * taken over). abandon also tells it to drop the run. */
void fleet_workers_lost(fleet_t *self, registry_worker_t *w, const char *why, bool abandon);
/* Before slot's run: the free workers still heard from are made ready for it (registered, up to
 * its expect; the rest stay free, or wait in it when it takes all), with nothing left of their
 * last run; a lost one silent since is forgotten. */
void fleet_workers_next_run(fleet_t *self, fleet_slot_t *slot);
/* After slot's run: its workers are free again (registered, in no run). */
void fleet_workers_release(fleet_t *self, fleet_slot_t *slot);
/* The hand-over of held batches (fleet_handover.c). Whether the driver takes the batches a new
 * worker's Hello h holds; then, once it is added, its hand-over begins (kept out of runs, welcomed
 * into the held run) and, after the Welcome, a worker still loading is stopped. */
bool fleet_handover_offered(fleet_t *self, const Stampede__Hello *h);
void fleet_handover_begin(fleet_t *self, registry_worker_t *w, const Stampede__HeldRun *held);
void fleet_handover_stop_load(fleet_t *self, registry_worker_t *w);
/* A control / data message of w while it hands over (its handover.held.run_id set). */
void fleet_handover_control(fleet_t *self, registry_worker_t *w, const Stampede__Envelope *env);
void fleet_handover_data(fleet_t *self, registry_worker_t *w, const uint8_t *data, size_t len);
/* Ends w's hand-over (why NULL: complete) and frees it for runs; said, the driver told. */
void fleet_handover_end(fleet_t *self, registry_worker_t *w, const char *why);
/* Ends the hand-overs past their deadline. */
void fleet_handover_check(fleet_t *self, int64_t now);

#endif
