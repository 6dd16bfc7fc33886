/* The telemetry keys of a workload file: `server_metrics: auto | [URL...]`, `gpu_metrics:
 * [URL...]` and `scrape_interval`. Internal to common/config*.c; the public side
 * (config_telemetry_t) is in config.h. */
#ifndef STAMPEDE_CONFIG_TELEMETRY_H
#define STAMPEDE_CONFIG_TELEMETRY_H

#include <stdio.h>

#include "config.h"
#include "config_yaml.h"

/* Reads the three keys of the root mapping (root may be NULL) into *self (defaults first). 0 ok;
 * -1 with r->err filled at the offending key. */
int config_telemetry_parse(config_yaml_t *r, yaml_node_t *root, config_telemetry_t *self);
/* Deep copy of src into dst; 0 ok, -1 on allocation failure (dst then holds what was copied). */
int config_telemetry_copy(config_telemetry_t *dst, const config_telemetry_t *src);
/* Frees the URL lists and empties *self. */
void config_telemetry_free(config_telemetry_t *self);
/* The three keys as config.yaml writes them back (config_telemetry_parse reads them again). */
void config_telemetry_write(FILE *out, const config_telemetry_t *self);

#endif
