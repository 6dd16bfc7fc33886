/* workload.compaction of a workload file: read and checked here, written back by config_write.c.
 * Internal to common/config*.c; the keys are documented in docs/workloads.md. */
#ifndef STAMPEDE_CONFIG_COMPACTION_H
#define STAMPEDE_CONFIG_COMPACTION_H

#include <stdio.h>

#include "config.h"
#include "config_yaml.h"

/* Reads workload.compaction from the workload mapping (absent: off) once the graph's roles are
 * known, and names its role: a role of its own, which no node may have (a workload without roles
 * names its requests' role 0 "default" first). 0 ok; -1 with r->err filled at the offending key. */
int config_compaction_read(config_yaml_t *r, yaml_node_t *workload, config_t *c);
/* Writes the section back (nothing when compaction is off), indented under workload:. */
void config_compaction_write(FILE *out, const config_workload_t *w);

#endif
