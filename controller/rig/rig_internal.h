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
#include "transport.h"

#define RIG_USER_MAX 64
#define RIG_PEER_MAX 256
/* The end table of a run, in its directory (what `stampede controller` prints on stdout). */
#define RIG_TABLE_FILE "table.txt"
/* The workload as submitted, its secrets redacted, in its directory (results.json's run.config). */
#define RIG_WORKLOAD_FILE "workload.yaml"

/* The most runs the rig holds at once (one a group; the fleet's own bound). */
#define RIG_MAX_RUNS 16

/* A run in progress on its group, from its start to its row in the archive. */
typedef struct rig_active {
    int64_t id; /* 0: the entry is free */
    measurement_t *run;
    char group[RIG_USER_MAX], user[RIG_USER_MAX];
    char workload[4096]; /* its queued file */
    char kept[4200];     /* its file kept in its directory (run.config) */
    char dir[4096];
    uint32_t workers;                /* its share of the fleet */
    char cancelled_by[RIG_USER_MAX]; /* set: stopped at the next turn */
    bool cancel_told;
    int64_t next_live_ns;
} rig_active_t;

/* A user following a run: the peer's routing id and the run. */
typedef struct rig_follower {
    uint8_t id[RIG_PEER_MAX];
    size_t id_len;
    int64_t run;
} rig_follower_t;

struct rig {
    rig_options_t options;
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
    rig_page_live_t *page_live;        /* the run in progress the page shows (the oldest) */
    rig_follower_t *followers;
    size_t n_followers, cap_followers;
};

/* The run in progress with this id, or on this group; NULL when none (rig_ops.c). */
rig_active_t *rig_active(rig_t *self, int64_t id);
rig_active_t *rig_active_on(rig_t *self, const char *group);
/* The oldest run in progress (0: none). */
int64_t rig_running(const rig_t *self);
/* Sends msg (a reference taken) to peer id, then n_frames more frames (a fetch's files). 0 sent,
 * -1 not (the peer is gone). */
int rig_send(rig_t *self, const uint8_t *id, size_t id_len, json_t *msg, const char *const *frames,
             const size_t *frame_lens, size_t n_frames);
/* Takes every waiting request off the users' socket and answers it. */
void rig_ops_serve(rig_t *self);
/* peer id follows run. */
void rig_follow(rig_t *self, const uint8_t *id, size_t id_len, int64_t run);
/* Sends event (a reference taken) to everyone following run; a peer gone stops following. */
void rig_tell_followers(rig_t *self, int64_t run, json_t *event);
/* The end event of a finished run: its row and its end table. */
json_t *rig_end_event(rig_t *self, int64_t run);

#endif
