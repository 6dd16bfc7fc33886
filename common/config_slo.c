/* The slo and capacity sections: each SLO is a metric (any latency metric of common/metrics.h, or
 * errors) with one or more statistics and their bounds, checked at load so a mistake is named by
 * file, line and key before any level runs. */
#include "config_slo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_graph.h"
#include "config_yaml.h"
#include "metrics.h"
#include "units.h"

static const char *const config_slo_stat_help =
    "expected a percentile (p50, p95, p99.9), mean or max";
static const char *const config_slo_error_keys[] = {"max_pct", NULL};
static const char *const config_capacity_keys[] = {"axis",
                                                   "start",
                                                   "precision",
                                                   "max",
                                                   "repeat_near_boundary",
                                                   "expansion",
                                                   "max_trials",
                                                   "requests_per_session",
                                                   "fresh_text",
                                                   "target",
                                                   NULL};
static const char *const config_axis_names[] = {"rate", "concurrency", "rho", NULL};

const char *config_axis_name(config_axis_t axis) {
    return (unsigned)axis < 3 ? config_axis_names[axis] : "?";
}

/* The shortest text that reads back as v. */
static void config_slo_format_number(double v, char *buf, size_t len) {
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, len, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void config_slo_key(const config_slo_item_t *item, char *buf, size_t len) {
    char p[40];
    switch (item->stat) {
    case CONFIG_SLO_PERCENTILE:
        config_slo_format_number(item->percentile, p, sizeof p);
        snprintf(buf, len, "p%s", p);
        break;
    case CONFIG_SLO_MEAN:
        snprintf(buf, len, "mean");
        break;
    case CONFIG_SLO_MAX:
        snprintf(buf, len, "max");
        break;
    case CONFIG_SLO_ERROR_PCT:
        snprintf(buf, len, "max_pct");
        break;
    }
}

const char *config_slo_metric_name(const config_slo_item_t *item) {
    return item->stat == CONFIG_SLO_ERROR_PCT ? "errors" : metrics_name(item->metric);
}

/* "p95" -> 95; false for anything else than p followed by a number strictly between 0 and 100. */
static bool config_slo_percentile(const char *key, double *out) {
    return key[0] == 'p' && config_yaml_parse_number(key + 1, out) && key[1] != '-' &&
           key[1] != '+' && *out > 0 && *out < 100;
}

static config_slo_item_t *config_slo_add(config_yaml_t *r, yaml_node_t *at, const char *path,
                                         config_slo_t *self) {
    if (self->n < CONFIG_MAX_SLOS)
        return &self->items[self->n++];
    config_yaml_fail(r, at, path, "at most %d SLOs", CONFIG_MAX_SLOS);
    return NULL;
}

/* errors: {max_pct: 2} */
static int config_slo_errors(config_yaml_t *r, yaml_node_t *map, config_slo_t *self) {
    if (config_yaml_check_keys(r, map, "slo.errors", config_slo_error_keys) < 0)
        return -1;
    yaml_node_t *key, *v = config_yaml_get(r, map, "max_pct", &key);
    if (!v)
        return config_yaml_fail(r, map, "slo.errors", "expected {max_pct: PERCENT}");
    double pct;
    if (config_yaml_number(r, v, "slo.errors.max_pct", &pct) < 0)
        return -1;
    if (pct < 0 || pct > 100)
        return config_yaml_fail(r, v, "slo.errors.max_pct",
                                "expected a percentage from 0 to 100, got '%s'",
                                config_yaml_text(v));
    config_slo_item_t *item = config_slo_add(r, key, "slo.errors.max_pct", self);
    if (!item)
        return -1;
    *item = (config_slo_item_t){.stat = CONFIG_SLO_ERROR_PCT, .max_pct = pct};
    return 0;
}

/* One statistic of a latency metric: "p95: 750ms". */
static int config_slo_stat(config_yaml_t *r, yaml_node_pair_t *pair, uint32_t metric,
                           const char *parent, config_slo_t *self) {
    yaml_node_t *k = yaml_document_get_node(&r->doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&r->doc, pair->value);
    const char *name = config_yaml_text(k);
    char path[CONFIG_YAML_KEY_MAX];
    config_yaml_path(path, sizeof path, parent, name);
    config_slo_item_t item = {.metric = metric};
    if (!strcmp(name, "mean"))
        item.stat = CONFIG_SLO_MEAN;
    else if (!strcmp(name, "max"))
        item.stat = CONFIG_SLO_MAX;
    else if (config_slo_percentile(name, &item.percentile))
        item.stat = CONFIG_SLO_PERCENTILE;
    else
        return config_yaml_fail(r, k, path, "%s, got '%s'", config_slo_stat_help, name);
    if (config_yaml_duration(r, v, path, true, &item.bound_ns) < 0)
        return -1;
    config_slo_item_t *slot = config_slo_add(r, k, path, self);
    if (!slot)
        return -1;
    *slot = item;
    return 0;
}

/* ttfc: {p95: 750ms, p99: 2s} */
static int config_slo_metric(config_yaml_t *r, yaml_node_t *k, yaml_node_t *v, uint32_t metric,
                             config_slo_t *self) {
    char path[CONFIG_YAML_KEY_MAX];
    config_yaml_path(path, sizeof path, "slo", config_yaml_text(k));
    if (!v || v->type != YAML_MAPPING_NODE ||
        v->data.mapping.pairs.top == v->data.mapping.pairs.start) {
        char got[64];
        config_yaml_describe(v, got, sizeof got);
        return config_yaml_fail(r, v ? v : k, path,
                                "expected a mapping of statistics to bounds such as {p95: 750ms}, "
                                "got %s",
                                got);
    }
    if (config_yaml_check_mapping(r, v, path, false) < 0)
        return -1;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++)
        if (config_slo_stat(r, p, metric, path, self) < 0)
            return -1;
    return 0;
}

int config_slo_parse(config_yaml_t *r, yaml_node_t *node, config_slo_t *self) {
    memset(self, 0, sizeof *self);
    if (node == NULL)
        return 0;
    const char *keys[METRIC__COUNT + 2];
    for (int m = 0; m < METRIC__COUNT; m++)
        keys[m] = metrics_name(m);
    keys[METRIC__COUNT] = "errors";
    keys[METRIC__COUNT + 1] = NULL;
    if (config_yaml_check_keys(r, node, "slo", keys) < 0)
        return -1;
    if (node->type != YAML_MAPPING_NODE)
        return 0; /* a null section: no SLOs */
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *name = config_yaml_text(k);
        if (!strcmp(name, "errors")) {
            if (config_slo_errors(r, v, self) < 0)
                return -1;
            continue;
        }
        for (uint32_t m = 0; m < METRIC__COUNT; m++)
            if (!strcmp(name, metrics_name(m)) && config_slo_metric(r, k, v, m, self) < 0)
                return -1;
    }
    return 0;
}

/* Requests one session of c's workload makes on average, or 0 when its shape has no simple
 * count (a fanout or branching graph: the file must say requests_per_session). */
static double config_capacity_session_requests(const config_workload_t *w) {
    switch (w->kind) {
    case WORKLOAD_REQUESTS:
        return 1;
    case WORKLOAD_CHAT:
        return dist_mean(&w->turns);
    case WORKLOAD_GRAPH:
        break;
    default: /* a trace: its sessions are as long as the trace says */
        return 0;
    }
    switch (w->graph.shape) {
    case GRAPH_TEMPLATE:
        return (double)w->graph.n_nodes;
    case GRAPH_LINEAR:
        return dist_mean(&w->graph.length);
    case GRAPH_DIAMOND:
        return (double)w->graph.executor_count + 2;
    default:
        return 0;
    }
}

/* "5%" -> 0.05 relative; "0.01" absolute; > 0 either way. */
static int config_capacity_precision(config_yaml_t *r, yaml_node_t *v, config_capacity_t *self) {
    const char *s = config_yaml_scalar(r, v, "capacity.precision", "a number or a percentage");
    if (!s)
        return -1;
    char buf[64];
    size_t len = strlen(s);
    bool pct = len > 1 && len < sizeof buf && s[len - 1] == '%';
    snprintf(buf, sizeof buf, "%.*s", (int)(pct ? len - 1 : len), s);
    double x;
    if (!config_yaml_parse_number(buf, &x) || x <= 0 || (pct && x >= 100))
        return config_yaml_fail(r, v, "capacity.precision",
                                "expected a number > 0 (in the axis' unit) or a percentage of "
                                "the frontier such as 5%%, got '%s'",
                                s);
    self->precision = x;
    self->precision_relative = pct;
    return 0;
}

static int config_capacity_positive(config_yaml_t *r, yaml_node_t *v, const char *path,
                                    double *out) {
    if (config_yaml_number(r, v, path, out) < 0)
        return -1;
    if (*out <= 0)
        return config_yaml_fail(r, v, path, "expected a number > 0, got '%s'", config_yaml_text(v));
    return 0;
}

/* The load to carry: > 0, whole on the concurrency axis, and within max (the search never runs a
 * level above max, so a frontier could never show a target over it). */
static int config_capacity_target(config_yaml_t *r, yaml_node_t *node, config_capacity_t *self) {
    yaml_node_t *v = config_yaml_get(r, node, "target", NULL);
    if (!v)
        return 0;
    if (config_capacity_positive(r, v, "capacity.target", &self->target) < 0)
        return -1;
    if (self->axis == CAPACITY_AXIS_CONCURRENCY && self->target != floor(self->target))
        return config_yaml_fail(r, v, "capacity.target",
                                "axis concurrency wants a whole number of sessions, got '%s'",
                                config_yaml_text(v));
    if (self->target > self->max)
        return config_yaml_fail(r, v, "capacity.target",
                                "target %g is above max %g: the search runs no level above max, "
                                "so it could never show the target carried",
                                self->target, self->max);
    return 0;
}

static int config_capacity_check(config_yaml_t *r, yaml_node_t *node, const config_workload_t *w,
                                 config_capacity_t *self) {
    yaml_node_t *max_key = NULL;
    config_yaml_get(r, node, "max", &max_key);
    if (self->max < self->start)
        return config_yaml_fail(r, max_key ? max_key : node, "capacity.max",
                                "max %g is below start %g", self->max, self->start);
    if (config_capacity_target(r, node, self) < 0)
        return -1;
    if (self->axis == CAPACITY_AXIS_CONCURRENCY &&
        (self->start != floor(self->start) || self->max != floor(self->max)))
        return config_yaml_fail(r, node, "capacity",
                                "axis concurrency wants whole numbers for start and max");
    if (self->axis == CAPACITY_AXIS_RHO && self->requests_per_session == 0) {
        self->requests_per_session = config_capacity_session_requests(w);
        if (self->requests_per_session <= 0) {
            char shape[64];
            if (w->kind == WORKLOAD_GRAPH)
                snprintf(shape, sizeof shape, "a %s graph",
                         config_graph_shape_name(w->graph.shape));
            else
                snprintf(shape, sizeof shape, "a %s workload", config_workload_kind_name(w->kind));
            return config_yaml_fail(r, node, "capacity.requests_per_session",
                                    "axis rho needs the requests one session makes, which %s "
                                    "does not fix: give capacity.requests_per_session",
                                    shape);
        }
    }
    return 0;
}

int config_capacity_parse(config_yaml_t *r, yaml_node_t *node, const config_workload_t *w,
                          config_capacity_t *self) {
    *self = (config_capacity_t){.axis = CAPACITY_AXIS_RATE,
                                .start = 1,
                                .precision = 5,
                                .precision_relative = true,
                                .max = 1000,
                                .repeat_near_boundary = 1,
                                .fresh_text = true,
                                .expansion = 2,
                                .max_trials = CONFIG_CAPACITY_MAX_TRIALS};
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "capacity", config_capacity_keys) < 0)
        return -1;
    self->given = true;
    yaml_node_t *v;
    int axis;
    uint64_t repeat;
    if ((v = config_yaml_get(r, node, "axis", NULL))) {
        if (config_yaml_enum(r, v, "capacity.axis", config_axis_names, &axis) < 0)
            return -1;
        self->axis = (config_axis_t)axis;
    }
    if ((v = config_yaml_get(r, node, "start", NULL)) &&
        config_capacity_positive(r, v, "capacity.start", &self->start) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max", NULL)) &&
        config_capacity_positive(r, v, "capacity.max", &self->max) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "precision", NULL)) &&
        config_capacity_precision(r, v, self) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "repeat_near_boundary", NULL))) {
        if (config_yaml_uint(r, v, "capacity.repeat_near_boundary", 20, &repeat) < 0)
            return -1;
        self->repeat_near_boundary = (uint32_t)repeat;
    }
    if ((v = config_yaml_get(r, node, "expansion", NULL))) {
        if (config_yaml_number(r, v, "capacity.expansion", &self->expansion) < 0)
            return -1;
        if (!(self->expansion > 1 && self->expansion <= 1000))
            return config_yaml_fail(r, v, "capacity.expansion",
                                    "expected a factor above 1 (at most 1000), got '%s'",
                                    config_yaml_text(v));
    }
    if ((v = config_yaml_get(r, node, "max_trials", NULL))) {
        if (config_yaml_uint(r, v, "capacity.max_trials", CONFIG_CAPACITY_MAX_TRIALS, &repeat) < 0)
            return -1;
        if (repeat == 0)
            return config_yaml_fail(r, v, "capacity.max_trials", "expected at least 1 run");
        self->max_trials = (uint32_t)repeat;
    }
    if ((v = config_yaml_get(r, node, "requests_per_session", NULL)) &&
        config_capacity_positive(r, v, "capacity.requests_per_session",
                                 &self->requests_per_session) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "fresh_text", NULL)) &&
        config_yaml_bool(r, v, "capacity.fresh_text", &self->fresh_text) < 0)
        return -1;
    return config_capacity_check(r, node, w, self);
}

static void config_slo_write_items(FILE *out, const config_slo_t *slo) {
    fputs("slo:\n", out);
    for (size_t i = 0; i < slo->n; i++) {
        const config_slo_item_t *item = &slo->items[i];
        bool first = i == 0 || item->stat == CONFIG_SLO_ERROR_PCT ||
                     slo->items[i - 1].stat == CONFIG_SLO_ERROR_PCT ||
                     slo->items[i - 1].metric != item->metric;
        bool last = i + 1 == slo->n || item->stat == CONFIG_SLO_ERROR_PCT ||
                    slo->items[i + 1].stat == CONFIG_SLO_ERROR_PCT ||
                    slo->items[i + 1].metric != item->metric;
        char key[48], value[40];
        config_slo_key(item, key, sizeof key);
        if (item->stat == CONFIG_SLO_ERROR_PCT)
            config_slo_format_number(item->max_pct, value, sizeof value);
        else
            units_format_duration(item->bound_ns, value, sizeof value);
        if (first)
            fprintf(out, "  %s: {", config_slo_metric_name(item));
        fprintf(out, "%s%s: %s%s", first ? "" : ", ", key, value, last ? "}\n" : "");
    }
}

void config_slo_write(FILE *out, const config_slo_t *slo, const config_capacity_t *capacity) {
    if (slo->n > 0)
        config_slo_write_items(out, slo);
    if (!capacity->given)
        return;
    char start[40], max[40], precision[40], per_session[40], expansion[40], target[40];
    config_slo_format_number(capacity->start, start, sizeof start);
    config_slo_format_number(capacity->max, max, sizeof max);
    config_slo_format_number(capacity->precision, precision, sizeof precision);
    config_slo_format_number(capacity->requests_per_session, per_session, sizeof per_session);
    config_slo_format_number(capacity->expansion, expansion, sizeof expansion);
    fprintf(out,
            "capacity:\n  axis: %s\n  start: %s\n  precision: %s%s\n  max: %s\n"
            "  repeat_near_boundary: %u\n  expansion: %s\n  max_trials: %u\n",
            config_axis_name(capacity->axis), start, precision,
            capacity->precision_relative ? "%" : "", max, capacity->repeat_near_boundary, expansion,
            capacity->max_trials);
    if (capacity->requests_per_session > 0)
        fprintf(out, "  requests_per_session: %s\n", per_session);
    if (!capacity->fresh_text)
        fputs("  fresh_text: false\n", out);
    config_slo_format_number(capacity->target, target, sizeof target);
    if (capacity->target > 0)
        fprintf(out, "  target: %s\n", target);
}
