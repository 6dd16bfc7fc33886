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
/* config_dist_read for a count of tokens: at least 1, and no value it is given (a fixed value,
 * min, max, mean, median, scale, n, an empirical value, a component's) above
 * WORKLOAD_MAX_TOKENS, the largest context window of any model ("workload.input_tokens:
 * 4294967296000 tokens is above the ceiling of 10000000 ..."). */
int config_dist_read_tokens(config_yaml_t *r, yaml_node_t *node, const char *path, dist_t *out);
/* True for parameters measured in the quantity's own unit (value, min, max, mean, median,
 * stddev, shape, scale): seconds for a time-valued distribution. */
bool config_dist_param_has_unit(dist_param_t param);

#endif
