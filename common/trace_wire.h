/* A worker's part of a replay trace, in a compact binary form for Assign.trace: the size of every
 * session (global request ordinals need them) and, for only the sessions the worker may run, their
 * arrival and nodes. A worker never reads the trace file, which may exist on the controller's host
 * alone. Varints throughout (common/varint.h); a version byte leads. */
#ifndef STAMPEDE_TRACE_WIRE_H
#define STAMPEDE_TRACE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "plan.h"
#include "trace.h"

/* Whether the worker of share may run trace session t: it owns t, or, with wrap, some session
 * index t + k x n_sessions. */
bool trace_wire_needed(const config_t *cfg, const plan_share_t *share, uint64_t t);
/* Appends the part of cfg's loaded trace for share to out. 0 ok, -1 on no memory. */
int trace_wire_encode(const config_t *cfg, const plan_share_t *share, buffer_t *out);
/* A new trace (one reference) from an encoded part; NULL when the bytes are not one (or no
 * memory). */
trace_t *trace_wire_decode(const uint8_t *data, size_t len);

#endif
