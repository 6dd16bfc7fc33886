/* The `sweep:` section of a workload file: the levels a fleet runs one after another, and the
 * warm-up, snapshots, drain and repetitions of each. Documented in docs/sweeps.md. */
#ifndef STAMPEDE_CONFIG_SWEEP_H
#define STAMPEDE_CONFIG_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config_scheduler.h"

/* What a sweep varies from level to level (the `sweep:` section; docs/sweeps.md). */
typedef enum { SWEEP_AXIS_NONE, SWEEP_AXIS_CONCURRENCY, SWEEP_AXIS_RATE } config_sweep_axis_t;

/* The `sweep:` section: the levels, and the warm-up, measurement window (snapshots), drain and
 * repetitions each level gets. axis NONE: no sweep, the file is one run. */
typedef struct config_sweep {
    config_sweep_axis_t axis;
    double *levels; /* concurrency (whole numbers) or sessions per second, in run order */
    size_t n_levels;
    int64_t warmup_ns;        /* per level, discarded; default 0 */
    uint32_t snapshots;       /* snapshots per measurement window; default 1 */
    int64_t snapshot_ns;      /* length of each; required */
    int64_t drain_ns;         /* the most a level waits for its requests after the window */
    uint32_t repeat;          /* repetitions of every level; default 1 */
    double exclude_error_pct; /* a repetition with more errors is excluded; default 5 */
    double rate_cap;          /* concurrency levels: session starts per second at most; 0 none */
    bool fresh_text; /* each level and repetition its own prompt text (text_seed); default true */
} config_sweep_t;

/* The reader's types (common/config_yaml.h), named here without pulling libyaml into config.h. */
struct config_yaml;
struct yaml_node_s;

/* What a sweep is checked against: the rest of the file, read before it. */
typedef struct config_sweep_context {
    config_scheduler_kind_t scheduler; /* scheduler.kind */
    int64_t duration_ns;               /* limits.duration */
    int64_t warmup_ns;                 /* warmup */
} config_sweep_context_t;

/* Reads and checks the section (node may be NULL: no sweep) into *self, against the rest of the
 * file (scheduler kind, limits.duration, warmup). 0 ok; -1 with r->err filled at the offending
 * key. */
int config_sweep_parse(struct config_yaml *r, struct yaml_node_s *root,
                       const config_sweep_context_t *context, config_sweep_t *self);
/* Deep copy of src into dst; 0 ok, -1 on allocation failure (dst then has no levels). */
int config_sweep_copy(config_sweep_t *dst, const config_sweep_t *src);
/* Writes the section as the file would have it (nothing without a sweep). */
void config_sweep_write(FILE *out, const config_sweep_t *self);
/* Frees the sweep's levels and empties it (axis NONE: a plain run, as each level's config is). */
void config_sweep_free(config_sweep_t *self);
/* "concurrency" or "rate" ("none" without a sweep). */
const char *config_sweep_axis_name(config_sweep_axis_t axis);

#endif
