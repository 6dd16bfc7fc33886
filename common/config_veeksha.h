/* A Veeksha synthetic-workload file (keys session_generator, traffic_scheduler, runtime, seed),
 * read as it is into stampede's config: each key maps onto one of stampede's (docs/workloads.md,
 * "Veeksha workload files"). Unknown keys are refused naming the file, line and key. Internal to
 * common/config*.c. */
#ifndef STAMPEDE_CONFIG_VEEKSHA_H
#define STAMPEDE_CONFIG_VEEKSHA_H

#include <stdbool.h>

#include "config.h"
#include "config_yaml.h"

/* Whether the document's root is a Veeksha file (it has session_generator). */
bool config_veeksha_is(config_yaml_t *r, yaml_node_t *root);
/* Reads the Veeksha keys of root into c (initialised): seed, session_generator,
 * traffic_scheduler, runtime. The keys stampede adds (target, output, mock) are accepted at the
 * root and left to the caller. 0 ok; -1 with r->err filled. */
int config_veeksha_parse(config_yaml_t *r, yaml_node_t *root, config_t *c);

#endif
