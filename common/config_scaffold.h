/* workload.scaffold of a workload file: read and checked here, written back by config_write.c.
 * Internal to common/config*.c; the keys are documented in docs/workloads.md. */
#ifndef STAMPEDE_CONFIG_SCAFFOLD_H
#define STAMPEDE_CONFIG_SCAFFOLD_H

#include <stdio.h>

#include "config.h"
#include "config_yaml.h"

/* Reads workload.scaffold from the workload mapping (absent: no section); system_tokens sets
 * workload.system_prompt_tokens, which the file must then not give too. 0 ok; -1 with r->err
 * filled at the offending key. */
int config_scaffold_read(config_yaml_t *r, yaml_node_t *workload, config_t *c);
/* Writes the section back (nothing when the file had none), indented under workload:. */
void config_scaffold_write(FILE *out, const config_workload_t *w);

#endif
