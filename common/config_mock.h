/* The `mock:` section of a workload file: options of the embedded `stampede mock` that
 * `stampede run` starts when no target is given. Internal to common/config*.c; the public side
 * (config_mock_t, config_mock_args) is in config.h. */
#ifndef STAMPEDE_CONFIG_MOCK_H
#define STAMPEDE_CONFIG_MOCK_H

#include "config.h"
#include "config_yaml.h"

/* Reads and checks the section (node may be NULL: no options) into *self. 0 ok; -1 with r->err
 * filled at the offending key. */
int config_mock_parse(config_yaml_t *r, yaml_node_t *node, config_mock_t *self);
/* Deep copy of src into dst; 0 ok, -1 on allocation failure (dst then holds what was copied). */
int config_mock_copy(config_mock_t *dst, const config_mock_t *src);
/* Frees the options and empties *self. */
void config_mock_free(config_mock_t *self);

#endif
