/* The `deployment:` section of a workload file: a free-form mapping that describes the system
 * under test (model, GPUs, backend, flags). stampede does not interpret it: it is kept verbatim,
 * written back to config.yaml and into results.json `run.deployment`, and shown as the report's
 * Deployment Details (docs/reports.md). Internal to common/config*.c. */
#ifndef STAMPEDE_CONFIG_DEPLOYMENT_H
#define STAMPEDE_CONFIG_DEPLOYMENT_H

#include <stdio.h>

#include "config_yaml.h"

/* Reads node (NULL: no section) into *out as compact JSON text (scalars as the strings written,
 * mappings as objects in file order, sequences as arrays), malloc'd; *out stays NULL without a
 * section. 0 ok; -1 with r->err filled (not a mapping, a key given twice, no memory). */
int config_deployment_parse(config_yaml_t *r, yaml_node_t *node, char **out);
/* Writes `deployment: {...}` (JSON flow, which YAML reads back to the same map); nothing for
 * NULL. */
void config_deployment_write(FILE *out, const char *deployment);

#endif
