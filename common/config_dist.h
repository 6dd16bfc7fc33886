/* Distributions in a workload file: a plain number (fixed) or {dist: KIND, parameters...}, read
 * from a libyaml node into a prepared dist_t, with errors that point at the offending key.
 * Internal to common/config*.c; the grammar is documented in docs/config.md. */
#ifndef STAMPEDE_CONFIG_DIST_H
#define STAMPEDE_CONFIG_DIST_H

#include <stdbool.h>

#include "config_yaml.h"
#include "dist.h"

/* Reads node into *out (replaced only on success, prepared). Time-valued distributions take
 * durations and store seconds. Every value the distribution can be pinned to (a fixed value, max,
 * an empirical value) must be >= lowest. 0 ok; -1 with r->err filled. */
int config_dist_read(config_yaml_t *r, yaml_node_t *node, const char *path, bool time_valued,
                     double lowest, dist_t *out);
/* True for parameters measured in the quantity's own unit (value, min, max, mean, median,
 * stddev, shape, scale): seconds for a time-valued distribution. */
bool config_dist_param_has_unit(dist_param_t param);

#endif
