/* Reading a replay trace file (docs/workloads.md, "Trace replay"): the session-trace JSONL format
 * (one line per request: session, node, parents, history parent, role, lengths, wait, arrival,
 * hash_ids) or Mooncake's (one line per one-request session: timestamp ms, input_length,
 * output_length, hash_ids). Unknown keys are ignored, so stampede's own requests.jsonl replays. */
#ifndef STAMPEDE_TRACE_LOAD_H
#define STAMPEDE_TRACE_LOAD_H

#include "config.h"
#include "trace.h"

/* Reads cfg->workload.trace.path in its format into a new trace (*out, one reference). Role names
 * are added to cfg's roles. 0 ok; -1 with *err naming the file, the line (0: the whole file), the
 * key and the reason: a missing key, an unknown parent, a cycle, a history parent that is not an
 * ancestor, a node given twice, a timed replay without arrivals, an empty trace. */
int trace_load(config_t *cfg, trace_t **out, config_error_t *err);

#endif
