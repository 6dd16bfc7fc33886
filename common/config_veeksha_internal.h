/* Shared by the readers of a Veeksha file (config_veeksha.c: the file's kind, client, runtime,
 * evaluators and capacity search; config_veeksha_session.c: session_generator and
 * traffic_scheduler). Internal to common/config_veeksha*.c. */
#ifndef STAMPEDE_CONFIG_VEEKSHA_INTERNAL_H
#define STAMPEDE_CONFIG_VEEKSHA_INTERNAL_H

#include <stdbool.h>

#include "config.h"
#include "config_yaml.h"

/* The most !expand lists a file may hold. */
#define VEEKSHA_MAX_EXPANDS 16

/* One Veeksha benchmark being read into c. */
typedef struct veeksha {
    config_yaml_t *r;
    config_t *c;
    bool capacity; /* a capacity search: the scheduler's knob is searched, not read */
    int run;       /* which combination of the !expand lists other than the knob's (0..) */
    int expands[VEEKSHA_MAX_EXPANDS]; /* those lists (node indices, document order) */
    int n_expands;
    yaml_node_t *knob_expand; /* the !expand list of the scheduler's knob: the sweep levels */
} veeksha_t;

/* The value of key in map, or NULL; an !expand list (but the knob's) gives this run's item. */
yaml_node_t *veeksha_get(veeksha_t *v, yaml_node_t *map, const char *key);
/* Adds a line "file:line:column: key: message" to c->notes (what was accepted but not acted
 * on); 0, or -1 with r->err filled on no memory. */
int veeksha_note(veeksha_t *v, const yaml_node_t *at, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether node is an !expand list. */
bool veeksha_is_expand(const yaml_node_t *node);

/* session_generator (node may be NULL: Veeksha's default, a synthetic linear workload). */
int veeksha_session_generator(veeksha_t *v, yaml_node_t *node);
/* traffic_scheduler (NULL: Veeksha's default, poisson arrivals at 1 session/s). */
int veeksha_traffic_scheduler(veeksha_t *v, yaml_node_t *node);

#endif
