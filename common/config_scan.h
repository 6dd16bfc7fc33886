/* A pass over a workload file's YAML events before the document is built, for what the typed
 * readers cannot see: aliases and the depth of nesting. Internal to common/config*.c. */
#ifndef STAMPEDE_CONFIG_SCAN_H
#define STAMPEDE_CONFIG_SCAN_H

#include "config_yaml.h"

/* Containers nested deeper than this are refused: no workload file needs more than a handful,
 * and the readers recurse (a mixture's components are distributions). */
#define CONFIG_SCAN_MAX_DEPTH 64

/* Refuses aliases (*name) and nesting past CONFIG_SCAN_MAX_DEPTH in r->text, with the position and
 * dotted key in r->err: an alias can refer to a node that contains it (the readers would recurse
 * for ever) or fan out exponentially (a "billion laughs"), and the config is YAML a worker takes
 * from the wire. 0 ok (syntax errors are left to the loader, which reports them in more detail),
 * -1. */
int config_scan_check(config_yaml_t *r);

#endif
