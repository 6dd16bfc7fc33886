/* How `stampede submit` and `stampede runs` talk to `stampede serve` (docs/rig.md, "The wire"):
 * JSON objects, one a ZeroMQ frame, over a DEALER (the user) and a ROUTER (the rig) with CURVE;
 * the rig knows the user by the key its ZAP handler admitted. A request is {"op": ..., ...}; a
 * reply {"ok": true, ...} or {"ok": false, "error": "..."}; a followed run sends events
 * {"event": "queued"|"started"|"live"|"end", ...}; a fetch's reply is followed in the same message
 * by one frame per file it lists. */
#ifndef STAMPEDE_RIG_WIRE_H
#define STAMPEDE_RIG_WIRE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The largest request the rig takes (ZMQ_MAXMSGSIZE on its socket): a workload file and its
 * envelope. */
#define RIG_WIRE_MAX_REQUEST_BYTES (8LL << 20)

/* Sends msg as one frame of compact JSON (more: another frame of the same message follows),
 * never blocking. 0 sent, -1 not (errno from libzmq). */
int rig_wire_send(void *sock, const json_t *msg, bool more);
/* The JSON object in a frame, or NULL with why in err. */
json_t *rig_wire_parse(const void *data, size_t len, char *err, size_t errlen);
/* {"ok": false, "error": text} (new reference). */
json_t *rig_wire_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
