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
    /* The run in progress, from registration to its results (NULL between runs). */
    measurement_t *run;
    /* A run of this fleet has started: --expect-workers was met once, and later runs (levels,
     * files) start with the workers still registered (docs/protocol.md "After a loss"). */
    bool started_once;
    /* fleet_idle made the workers ready for the next run since the last run ended. */
    bool idle_reset;
};

/* The heartbeat interval and the silence that means a worker is lost: the run's, else the
 * defaults. */
int64_t fleet_heartbeat_ns(const fleet_t *self);
int64_t fleet_silence_ns(const fleet_t *self);
/* The run is handed the fleet's workers again (after one was added or removed). */
void fleet_workers_changed(fleet_t *self);
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
/* Between runs: every worker still heard from is made ready for the next run (registered, up
 * to --expect-workers; waiting beyond), with nothing left of the last run; a worker lost in it
 * and silent since is forgotten. */
void fleet_workers_next_run(fleet_t *self);

#endif
