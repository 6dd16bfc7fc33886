/* The worker: a long-lived agent (`stampede worker`, cli/worker_cli.c). Each of its --threads loops
 * registers with the controller as a logical worker of its own (own sockets, engine, executor and
 * event batches; nothing shared on the hot path), runs what it is assigned, returns to idle and
 * serves the next run; --once exits after one run. A loop that hears nothing from its controller
 * for 3 s stops its load at once (a shared server is never left under orphaned load) and registers
 * again.
 *
 * Test hooks (documented in docs/protocol.md as test-only): STAMPEDE_TEST_LOOKUP_DELAY_MS slows
 * every host name lookup by that many ms; STAMPEDE_TEST_CLOCK_OFFSET_NS adds
 * that many ns to every clock reading the worker reports; STAMPEDE_TEST_PROTO_VERSION makes it
 * announce another protocol version. */
#ifndef STAMPEDE_WORKER_H
#define STAMPEDE_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "keys.h"

/* What a worker serves with: the flags of `stampede worker` (cli/worker_cli.c), checked, keys
 * read, defaults filled in. */
typedef struct worker_options {
    const char *endpoint;
    const char *name;
    uint32_t threads;
    bool once;
    uint32_t proto_version;
    int64_t clock_shift_ns;
    bool insecure;               /* --insecure: plain TCP to a non-loopback controller */
    const char *key_file;        /* --key: this worker's CURVE secret key */
    const char *server_key_file; /* --server-key: the controller's public key */
    char public_key[KEYS_Z85_LEN + 1];
    char secret_key[KEYS_Z85_LEN + 1];
    char server_key[KEYS_Z85_LEN + 1];
    int64_t max_control_bytes; /* --max-message-size */
    const char *spool_dir;     /* --spool: where unacknowledged batches go when the controller is
                                  lost (default $TMPDIR, else /tmp) */
    bool has_job_index;        /* --index, or JOB_COMPLETION_INDEX from the environment */
    uint32_t job_index;
    int64_t idle_exit_ns; /* --idle-exit: idle with the controller gone this long: exit 0 */
} worker_options_t;

/* Serves runs until the controller is done with it (--once: one run; --idle-exit), or a signal
 * makes it leave: one loop thread per options->threads, each registering as a worker of its own.
 * Returns the exit status: 0 when it stopped as asked, 1 on a set-up error, 3 when the controller
 * refused it. */
int worker_serve(const worker_options_t *options);

#endif
