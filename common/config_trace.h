/* workload.trace of a workload file (kind: trace): read by config_trace.c, written back by
 * config_write.c. Internal to common/config*.c; the keys are documented in docs/workloads.md. */
#ifndef STAMPEDE_CONFIG_TRACE_H
#define STAMPEDE_CONFIG_TRACE_H

#include "config_workload.h"
#include "config_yaml.h"

/* "session", "mooncake", "azure" or "veeksha". */
const char *config_trace_format_name(config_trace_format_t format);
/* The defaults: format session, block_size 512, time_scale 1, no wrap, no path. */
void config_trace_init(config_trace_t *t);
/* Frees the path and drops the loaded trace. */
void config_trace_free(config_workload_t *w);
/* Copies src's settings into dst (a shallow copy of src) and shares its loaded trace; 0 or -1. */
int config_trace_copy(config_workload_t *dst, const config_workload_t *src);
/* Reads workload.trace once kind is read; refuses a trace with another kind and kind: trace
 * without a path. The path resolves against the file's directory. 0 ok; -1 with r->err filled. */
int config_trace_read(config_yaml_t *r, yaml_node_t *node, config_workload_t *workload);

#endif
