/* workload.graph of a workload file (kind: graph): read and checked by config_graph.c, written
 * back by config_write.c. Internal to common/config*.c; the keys are documented in
 * docs/workloads.md. */
#ifndef STAMPEDE_CONFIG_GRAPH_H
#define STAMPEDE_CONFIG_GRAPH_H

#include <stdbool.h>

#include "config_workload.h"
#include "config_yaml.h"

/* The defaults: a linear shape of 100..150 turns, 3 executors, 3 children, and so on. */
void config_graph_init(config_graph_t *g);
/* Frees what *g owns and zeroes it. */
void config_graph_free(config_graph_t *g);
/* Deep copy into dst (not initialised before); 0 or -1 (dst empty) on no memory. */
int config_graph_copy(config_graph_t *dst, const config_graph_t *src);
/* Reads workload.graph from the workload mapping once kind, roles and the workload's distributions
 * are read; refuses a graph with another kind, an empty or cyclic template, an unknown parent and a
 * history parent that is not an ancestor. 0 ok; -1 with r->err filled. */
int config_graph_read(config_yaml_t *r, yaml_node_t *node, config_workload_t *workload);
/* "linear", "diamond", "fanout", "branching" or "template". */
const char *config_graph_shape_name(config_graph_shape_t shape);
/* "parallel" or "sequential". */
const char *config_graph_executors_name(bool sequential);

#endif
