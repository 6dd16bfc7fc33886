/* `stampede serve`: a shared benchmark rig (docs/rig.md). A long-lived fleet (controller/fleet.h)
 * that workers attach to as they attach to a controller, a ROUTER of its own for users (CURVE; a
 * user is a key of --authorized-keys, named after its file), the target groups of the rig's
 * config, and an archive (controller/archive.h) that holds the queue and every result. Queued runs
 * (plain runs or sweeps) start highest priority then oldest, one at a time a group and groups at
 * once on shares of the workers; each holds its group (the lease) until it ends; a run found
 * "running" at the start (serve died during it) is marked interrupted and rebuilt from its
 * journal (a sweep keeps the levels it finished). */
#ifndef STAMPEDE_RIG_H
#define STAMPEDE_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "live_http.h"

typedef struct rig rig_t;

typedef struct rig_options {
    const char *name;               /* prefix of messages: "serve" */
    const char *bind;               /* users: tcp://HOST:PORT (PORT may be *) */
    const char *worker_bind;        /* workers' control socket; NULL: HOST:PORT+1 (data next) */
    const char *key_file;           /* --key: the rig's secret key */
    const char *authorized_keys;    /* --authorized-keys DIR: the users' NAME.pub */
    const char *worker_keys;        /* --worker-keys DIR: the workers' (NULL: authorized_keys) */
    const char *archive;            /* --archive DIR */
    const char *config_path;        /* --config rig.yaml: groups, admins, retention */
    uint32_t expect_workers;        /* workers a run uses (the first waits for them) */
    int64_t register_timeout_ns;    /* how long a run waits for them before it fails */
    const char *page;               /* --page HOST:PORT: the read-only page, or NULL */
    live_http_access_t page_access; /* --page-token-file, --page-insecure */
} rig_options_t;

/* Loads the config, opens the archive (recovering runs serve died during), binds the users'
 * socket and the fleet's. NULL after printing why on stderr. */
rig_t *rig_new(const rig_options_t *options);
/* Serves until SIGINT/SIGTERM (a run in progress is drained and marked interrupted). 0, or 1
 * when the rig could not go on. */
int rig_serve(rig_t *self);
/* Closes the sockets and the archive, frees; sets *self_p to NULL (NULL is fine). */
void rig_destroy(rig_t **self_p);

#endif
