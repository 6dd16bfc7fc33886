/* The `slo:` and `capacity:` sections of a workload file (docs/slo.md): service-level objectives
 * on any latency metric's percentile, mean or max and on the error rate, and how `stampede
 * capacity` searches for the highest level that meets them. */
#ifndef STAMPEDE_CONFIG_SLO_H
#define STAMPEDE_CONFIG_SLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config_workload.h"

/* One service-level objective of the `slo:` section (docs/slo.md): a statistic of a latency metric
 * at or below a bound, or the error rate at or below a percentage. */
typedef enum {
    CONFIG_SLO_PERCENTILE, /* the metric's percentile (p95) */
    CONFIG_SLO_MEAN,
    CONFIG_SLO_MAX,
    CONFIG_SLO_ERROR_PCT /* failed / (ok + failed) in percent */
} config_slo_stat_t;

/* SLOs a file may give. */
#define CONFIG_MAX_SLOS 16

typedef struct config_slo_item {
    uint32_t metric; /* a metrics_kind_t (common/metrics.h); unused for CONFIG_SLO_ERROR_PCT */
    config_slo_stat_t stat;
    double percentile; /* CONFIG_SLO_PERCENTILE: 0 < p < 100 */
    int64_t bound_ns;  /* latency statistics: the largest value that meets the SLO */
    double max_pct;    /* CONFIG_SLO_ERROR_PCT: the largest error rate that meets it */
} config_slo_item_t;

/* The `slo:` section, in file order (a metric's statistics stay together). */
typedef struct config_slo {
    config_slo_item_t items[CONFIG_MAX_SLOS];
    size_t n;
} config_slo_t;

typedef enum { CAPACITY_AXIS_RATE, CAPACITY_AXIS_CONCURRENCY, CAPACITY_AXIS_RHO } config_axis_t;

/* The most levels a capacity search runs. */
#define CONFIG_CAPACITY_MAX_TRIALS 48

/* The `capacity:` section: how `stampede capacity` searches (docs/slo.md). */
typedef struct config_capacity {
    bool given;                    /* the file has the section */
    config_axis_t axis;            /* default rate */
    double start;                  /* first level probed; default 1 */
    double precision;              /* bisection stops when the bracket is this narrow ... */
    bool precision_relative;       /* ... in percent of the frontier ("5%"), else in the unit */
    double max;                    /* highest level probed */
    uint32_t repeat_near_boundary; /* extra runs of the frontier and first failing level */
    double expansion;              /* probing multiplies the level by this; default 2 */
    uint32_t max_trials;           /* runs at most (<= CONFIG_CAPACITY_MAX_TRIALS, the default) */
    double requests_per_session;   /* rho: requests one session makes (0: from the workload) */
    bool fresh_text;               /* each trial its own prompt text (text_seed); default true */
    double target; /* the load to carry, in the axis' unit (0: none); simulate --find-replicas */
} config_capacity_t;

/* The reader's types (common/config_yaml.h), named here without pulling libyaml into config.h. */
struct config_yaml;
struct yaml_node_s;

/* Reads and checks the slo section (node may be NULL: no SLOs) into *self. 0 ok; -1 with r->err
 * filled at the offending key. */
int config_slo_parse(struct config_yaml *r, struct yaml_node_s *node, config_slo_t *self);
/* Reads and checks the capacity section (node may be NULL: defaults, given false) into *self;
 * the workload must be read already (axis rho takes the requests per session from it). 0 ok; -1
 * with r->err filled. */
int config_capacity_parse(struct config_yaml *r, struct yaml_node_s *node,
                          const config_workload_t *workload, config_capacity_t *self);
/* Writes both sections as YAML that reads back to equal values; nothing when the file had
 * neither. */
void config_slo_write(FILE *out, const config_slo_t *slo, const config_capacity_t *capacity);
/* An SLO's statistic as the file writes it: "p95", "p99.9", "mean", "max", "max_pct". */
void config_slo_key(const config_slo_item_t *item, char *buf, size_t len);
/* The SLO's metric as the file writes it: "ttfc", "itl", ..., or "errors". */
const char *config_slo_metric_name(const config_slo_item_t *item);
/* "rate", "concurrency", "rho". */
const char *config_axis_name(config_axis_t axis);

#endif
