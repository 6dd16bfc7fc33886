/* workload.dataset of a workload file: read and checked here, written back by config_write.c, the
 * file itself loaded by common/dataset.c. Internal to common/config*.c; the keys are documented in
 * docs/workloads.md ("Datasets"). */
#ifndef STAMPEDE_CONFIG_DATASET_H
#define STAMPEDE_CONFIG_DATASET_H

#include <stdio.h>

#include "config.h"
#include "config_yaml.h"

/* The defaults: no path, format sharegpt, min_input_tokens 1, the replies' lengths. */
void config_dataset_init(config_dataset_t *d);
void config_dataset_free(config_dataset_t *d);
/* Deep copy of src's settings into dst (initialised here); 0 or -1 on no memory. */
int config_dataset_copy(config_dataset_t *dst, const config_dataset_t *src);
/* Reads workload.dataset once kind and the graph's roles are read; refuses one with kind trace,
 * and roles with another kind. The path resolves against the file's directory. 0 ok; -1 with
 * r->err filled at the offending key. */
int config_dataset_read(config_yaml_t *r, yaml_node_t *workload, config_t *c);

#endif
