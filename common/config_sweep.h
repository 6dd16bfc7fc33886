/* The `sweep:` section of a workload file: the levels a fleet runs one after another, and the
 * warm-up, snapshots, drain and repetitions of each. Internal to common/config*.c; the public side
 * (config_sweep_t, config_sweep_free) is in config.h. Documented in docs/sweeps.md. */
#ifndef STAMPEDE_CONFIG_SWEEP_H
#define STAMPEDE_CONFIG_SWEEP_H

#include <stdio.h>

#include "config.h"
#include "config_yaml.h"

/* Reads and checks the section (node may be NULL: no sweep) into c->sweep, against the rest of c
 * (scheduler kind, limits.duration, warmup). 0 ok; -1 with r->err filled at the offending key. */
int config_sweep_parse(config_yaml_t *r, yaml_node_t *root, config_t *c);
/* Deep copy of src into dst; 0 ok, -1 on allocation failure (dst then has no levels). */
int config_sweep_copy(config_sweep_t *dst, const config_sweep_t *src);
/* Writes the section as the file would have it (nothing without a sweep). */
void config_sweep_write(FILE *out, const config_sweep_t *self);

#endif
