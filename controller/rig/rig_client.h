/* The user's side of the rig's wire (controller/rig_wire.h): a DEALER with the user's CURVE key
 * that asks `stampede serve` and waits for its answer, says plainly when the rig refuses the key,
 * follows a run's events and brings a run's files home. `stampede submit` and `stampede runs`
 * (cli/) are thin users of it. */
#ifndef STAMPEDE_RIG_CLIENT_H
#define STAMPEDE_RIG_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define RIG_CLIENT_RECONNECT_MS 100
#define RIG_CLIENT_RECONNECT_MAX_MS 5000

typedef struct rig_client rig_client_t;

typedef struct rig_client_options {
    const char *name;            /* prefix of messages: "submit", "runs" */
    const char *to;              /* the rig's users' endpoint, tcp://HOST:PORT */
    const char *key_file;        /* --key: the user's secret key (stampede keygen) */
    const char *server_key_file; /* --server-key: the rig's public key */
    int64_t timeout_ns;          /* how long an answer may take */
} rig_client_options_t;

/* Connects (ZeroMQ connects lazily: a refusal shows at the first call). NULL after printing why. */
rig_client_t *rig_client_new(const rig_client_options_t *options);
/* Sends req (a reference taken) and returns the reply (ok or not), or NULL after printing why
 * (no answer within the timeout, the key refused). */
json_t *rig_client_call(rig_client_t *self, json_t *req);
/* The next message the rig sends (a followed run's event), waiting up to timeout_ms: NULL on
 * timeout or when *failed (set to 1 after printing why). */
json_t *rig_client_next(rig_client_t *self, long timeout_ms, int *failed);
/* Whether the connection to the rig dropped and was made again (a restarted serve) since the
 * last call: the rig knows nothing of what this client followed before. Losing it and getting it
 * back are said on stderr; ZeroMQ retries every RIG_CLIENT_RECONNECT_MS, doubling up to
 * RIG_CLIENT_RECONNECT_MAX_MS. */
bool rig_client_reconnected(rig_client_t *self);
/* Fetches run id's files into dir (created). 0 ok, -1 after printing why. */
int rig_client_fetch(rig_client_t *self, int64_t id, const char *dir);
/* Closes and frees; sets *self_p to NULL (NULL is fine). */
void rig_client_destroy(rig_client_t **self_p);

#endif
