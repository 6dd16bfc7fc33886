/* The `slo:` and `capacity:` sections of a workload file (docs/slo.md): service-level objectives
 * on any latency metric's percentile, mean or max and on the error rate, and how `stampede
 * capacity` searches for the highest level that meets them. Internal to common/config*.c; the
 * types (config_slo_t, config_capacity_t) are in config.h. */
#ifndef STAMPEDE_CONFIG_SLO_H
#define STAMPEDE_CONFIG_SLO_H

#include <stdio.h>

#include "config.h"
#include "config_yaml.h"

/* Reads and checks the slo section (node may be NULL: no SLOs) into *self. 0 ok; -1 with r->err
 * filled at the offending key. */
int config_slo_parse(config_yaml_t *r, yaml_node_t *node, config_slo_t *self);
/* Reads and checks the capacity section (node may be NULL: defaults, given false) into *self;
 * c's workload must be read already (axis rho takes the requests per session from it). 0 ok; -1
 * with r->err filled. */
int config_capacity_parse(config_yaml_t *r, yaml_node_t *node, const config_t *c,
                          config_capacity_t *self);
/* Writes both sections as YAML that reads back to equal values; nothing when the file had
 * neither. */
void config_slo_write(FILE *out, const config_slo_t *slo, const config_capacity_t *capacity);

#endif
