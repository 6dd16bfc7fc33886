/* The rig's own struct and what its files share (rig.c: the sockets, the loop and the runs;
 * rig_ops.c: what users ask). Private to the rig. */
#ifndef STAMPEDE_RIG_INTERNAL_H
#define STAMPEDE_RIG_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "archive.h"
#include "fleet.h"
#include "gate.h"
#include "keys.h"
#include "measurement.h"
#include "rig.h"
#include "rig_config.h"
#include "rig_page.h"
#include "sweep_run.h"
#include "transport.h"

#define RIG_USER_MAX 64
#define RIG_PEER_MAX 256
/* The end table of a run, in its directory (what `stampede controller` prints on stdout). */
#define RIG_TABLE_FILE "table.txt"
/* The workload as submitted, its secrets redacted, in its directory (results.json's run.config). */
#define RIG_WORKLOAD_FILE "workload.yaml"

/* The most runs the rig holds at once (one a group; the fleet's own bound). */
#define RIG_MAX_RUNS 16

/* A run in progress on its group, from its start to its row in the archive: a plain run, or a
 * sweep (its levels and repetitions, one fleet run each, holding the group throughout). */
typedef struct rig_active {
    int64_t id;                /* 0: the entry is free */
    char label[32];            /* "run 7": its lines in serve's log */
    measurement_t *run;        /* the run, or the sweep's repetition in progress */
    sweep_run_t *sweep;        /* a sweep's levels (NULL: a plain run) */
    const rig_group_t *target; /* its group in the rig's config */
    uint32_t rep;              /* the repetition of the sweep's level in progress (1-based) */
    int status;                /* a sweep's: the first non-zero status of a repetition */
    bool started;              /* a run (a repetition) of it got past its start */
    bool start_kept;           /* its start instant is in the archive */
    char note[1200];           /* why it ended as it did (a repetition's abort), or "" */
    char group[RIG_USER_MAX], user[RIG_USER_MAX];
    char workload[4096]; /* its queued file */
    char kept[4200];     /* its file kept in its directory (run.config); "" when it could not be */
    char dir[4096];
    uint32_t workers;                /* its share of the fleet (the level's, for a sweep) */
    char cancelled_by[RIG_USER_MAX]; /* set: stopped at the next turn */
    bool cancel_told;
    int64_t since_ns; /* its start on the rig (the page's elapsed) */
    int64_t next_live_ns;
    rig_page_live_t page; /* what the page shows of it */
} rig_active_t;

/* A run serve died during, and a worker's hand-over of its batches (rig_recover.c). */
typedef struct rig_held rig_held_t;
typedef struct rig_handover rig_handover_t;

/* A user following a run: the peer's routing id and the run. */
typedef struct rig_follower {
    uint8_t id[RIG_PEER_MAX];
    size_t id_len;
    int64_t run;
} rig_follower_t;

struct rig {
    rig_options_t options;
    bool quorum; /* --expect-workers were registered once: later runs start on the workers left */
    rig_config_t config;
    archive_t *archive;
    fleet_t *fleet;
    transport_security_t worker_security;
    char worker_bind[300];
    /* the users' socket, in a context of its own with its own ZAP handler */
    void *ctx;
    void *users;
    int users_fd;
    keys_ring_t *ring;
    gate_t *gate;
    char endpoint[256];
    rig_active_t active[RIG_MAX_RUNS]; /* the runs in progress, at most one a group */
    live_http_t *page;                 /* --page, or NULL */
    rig_follower_t *followers;
    size_t n_followers, cap_followers;
    rig_held_t **held; /* the runs serve died during, whose workers may hand batches over */
    size_t n_held, cap_held;
    rig_handover_t **handovers; /* in progress */
    size_t n_handovers, cap_handovers;
};

/* The run in progress with this id, or on this group; NULL when none (rig_ops.c). */
rig_active_t *rig_active(rig_t *self, int64_t id);
rig_active_t *rig_active_on(rig_t *self, const char *group);
/* The oldest run in progress (0: none). */
int64_t rig_running(const rig_t *self);
/* The ids of every run in progress, oldest first, as a JSON array. */
json_t *rig_running_json(const rig_t *self);
/* The workers a run on group takes now (docs/rig.md, "Shares"), and whether they are free. */
uint32_t rig_run_share(rig_t *self, const rig_group_t *group);
bool rig_run_can_start(rig_t *self, const rig_group_t *group);
/* Starts queued run id in the free entry a (rig_run.c): a plain run, or a sweep's first level. */
void rig_run_start(rig_t *self, rig_active_t *a, int64_t id);
/* After every turn of the fleet: a's followers and page told, a cancel acted on, and a run over
 * ended (a sweep's next repetition or level started, or the sweep ended): its row written. */
void rig_run_turn(rig_t *self, rig_active_t *a);
/* Sends msg (a reference taken) to peer id, then n_frames more frames (a fetch's files). 0 sent,
 * -1 not (the peer is gone). */
int rig_send(rig_t *self, const uint8_t *id, size_t id_len, json_t *msg, const char *const *frames,
             const size_t *frame_lens, size_t n_frames);
/* At the start: every run found "running" (serve died during it) rebuilt from its journal and
 * marked interrupted, and kept for its workers' hand-overs (rig_recover.c). */
void rig_recover(rig_t *self);
/* Once the fleet is up: it hands the held batches of those runs' workers to the rig, which
 * rebuilds the run again after each worker's. */
void rig_recover_attach(rig_t *self);
/* Frees what rig_recover kept (at rig_destroy). */
void rig_recover_free(rig_t *self);
/* Takes every waiting request off the users' socket and answers it. */
void rig_ops_serve(rig_t *self);
/* peer id follows run. */
void rig_follow(rig_t *self, const uint8_t *id, size_t id_len, int64_t run);
/* Sends event (a reference taken) to everyone following run; a peer gone stops following. */
void rig_tell_followers(rig_t *self, int64_t run, json_t *event);
/* The end event of a finished run: its row and its end table. */
json_t *rig_end_event(rig_t *self, int64_t run);

#endif
