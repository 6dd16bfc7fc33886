/* Shared by the readers of a Veeksha file (config_veeksha.c: the file's kind, client, runtime,
 * evaluators and capacity search; config_veeksha_session.c: session_generator and
 * traffic_scheduler), defined in config_veeksha_internal.c. Internal to common/config_veeksha*.c.
 */
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

/* The index of node in the document's node table. */
int veeksha_index(config_yaml_t *r, const yaml_node_t *node);
/* The value of key in map, or NULL; an !expand list (but the knob's) gives this run's item. */
yaml_node_t *veeksha_get(veeksha_t *v, yaml_node_t *map, const char *key);
/* Adds a line "file:line:column: key: message" to c->notes (what was accepted but not acted
 * on); 0, or -1 with r->err filled on no memory. */
int veeksha_note(veeksha_t *v, const yaml_node_t *at, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A scalar's text; "" for anything else (a mapping where a name was expected is then refused as
 * an unknown name, never read as text). */
const char *veeksha_name(const yaml_node_t *node);
/* Whether node is an !expand list. */
bool veeksha_is_expand(const yaml_node_t *node);

/* Veeksha's interval generator types: poisson, gamma, fixed. */
extern const char *const veeksha_interval_types[];
/* A number under map's key, >= min (absent: *out keeps its default); path names map. */
int veeksha_number(veeksha_t *v, yaml_node_t *map, const char *path, const char *key, double min,
                   double *out);
/* A boolean under map's key (absent: *out unchanged). */
int veeksha_bool(veeksha_t *v, yaml_node_t *map, const char *path, const char *key, bool *out);
/* Prepares d (then moved into *out, the old one cleared) or fails at `at` saying why. */
int veeksha_prepare(veeksha_t *v, yaml_node_t *at, const char *path, dist_t *d, dist_t *out);
/* d = uniform(min, max), not yet prepared. */
void veeksha_uniform(dist_t *d, double min, double max);
/* A length generator (tokens or requests) at node, or a copy of def when node is NULL. */
int veeksha_length(veeksha_t *v, yaml_node_t *node, const char *path, const dist_t *def,
                   dist_t *out);
/* An interval generator as waits in seconds (NULL: Veeksha's default, poisson at 1/s). */
int veeksha_wait(veeksha_t *v, yaml_node_t *node, const char *path, dist_t *out);

/* session_generator (node may be NULL: Veeksha's default, a synthetic linear workload). */
int veeksha_session_generator(veeksha_t *v, yaml_node_t *node);
/* traffic_scheduler (NULL: Veeksha's default, poisson arrivals at 1 session/s). */
int veeksha_traffic_scheduler(veeksha_t *v, yaml_node_t *node);

/* "WHAT: audio (...) is out of scope: ..." at key; -1. */
int veeksha_audio(config_yaml_t *r, yaml_node_t *at, const char *key, const char *what);

/* client (NULL: Veeksha's defaults) onto c->target. */
int veeksha_client(veeksha_t *v, yaml_node_t *client);
/* runtime (NULL: max_sessions 25, benchmark_timeout 300 s) onto c->limits. */
int veeksha_runtime(veeksha_t *v, yaml_node_t *node);
/* evaluators (NULL: one performance evaluator with Veeksha's default SLOs) onto c->slo. */
int veeksha_evaluators(veeksha_t *v, yaml_node_t *list);
/* trace_recorder and output_dir of root onto c->output (default_dir when no output_dir). */
int veeksha_outputs(veeksha_t *v, yaml_node_t *root, const char *default_dir);
/* wandb (noted) and server (c->managed_server) of root. */
int veeksha_extras(veeksha_t *v, yaml_node_t *root);

#endif
