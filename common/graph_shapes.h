/* Session graphs of `workload.kind: graph`: linear, diamond, fanout, branching and template shapes
 * (common/config.h, config_graph_t), each a pure function of (seed, session index). The structure
 * of session i is drawn from rng_init(seed, RNG_STREAM_WORKLOAD, i, 0, RNG_FIELD_SHAPE) in a fixed
 * order; node j's lengths and wait from its own (i, j, field) generators as in workload.h. Every
 * node continues its history parent's conversation (WORKLOAD_HISTORY_CHAIN). */
#ifndef STAMPEDE_GRAPH_SHAPES_H
#define STAMPEDE_GRAPH_SHAPES_H

#include <stdint.h>

#include "config.h"
#include "workload_session.h"

/* Generates session `index` into *out (as workload_session_generate). 0 ok, -1 on no memory. */
int graph_session_generate(const config_t *cfg, uint64_t index, workload_session_t *out);
/* Its node count, without building it. */
uint32_t graph_session_size(const config_t *cfg, uint64_t index);
/* Every session's size when the shape fixes it (diamond, template), else 0. */
uint32_t graph_constant_size(const config_t *cfg);

/* A bound on how many nodes of one session can be ready at once (the widest fan). */
uint32_t graph_max_parallel(const config_t *cfg);

#endif
