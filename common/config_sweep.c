#include "config_sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_yaml.h"
#include "units.h"

#define SWEEP_MAX_LEVELS 1000
#define SWEEP_DEFAULT_DRAIN_NS 30000000000LL
#define SWEEP_DEFAULT_EXCLUDE_PCT 5.0

static const char *const sweep_keys[] = {
    "concurrency",       "rate",     "warmup",     "snapshots", "drain", "repeat",
    "exclude_error_pct", "rate_cap", "fresh_text", NULL};
static const char *const sweep_range_keys[] = {"from", "to", "step", NULL};
static const char *const sweep_snapshot_keys[] = {"count", "duration", NULL};

const char *config_sweep_axis_name(config_sweep_axis_t axis) {
    return axis == SWEEP_AXIS_CONCURRENCY ? "concurrency"
           : axis == SWEEP_AXIS_RATE      ? "rate"
                                          : "none";
}

/* One level value at node: a whole number >= 1 for concurrency, a rate > 0 for rate. */
static int config_sweep_value(config_yaml_t *r, yaml_node_t *node, const char *path,
                              config_sweep_axis_t axis, double *out) {
    if (axis == SWEEP_AXIS_CONCURRENCY) {
        uint64_t u;
        if (config_yaml_uint(r, node, path, UINT32_MAX, &u) < 0)
            return -1;
        if (u == 0)
            return config_yaml_fail(r, node, path, "expected a concurrency of at least 1, got '0'");
        *out = (double)u;
        return 0;
    }
    if (config_yaml_rate(r, node, path, out) < 0)
        return -1;
    if (*out <= 0)
        return config_yaml_fail(r, node, path, "expected a rate greater than 0, got '%s'",
                                config_yaml_text(node));
    return 0;
}

static int config_sweep_push(config_yaml_t *r, yaml_node_t *node, const char *path,
                             config_sweep_t *s, double value) {
    if (s->n_levels >= SWEEP_MAX_LEVELS)
        return config_yaml_fail(r, node, path, "at most %d levels, this gives more",
                                SWEEP_MAX_LEVELS);
    double *grown = realloc(s->levels, (s->n_levels + 1) * sizeof *grown);
    if (!grown)
        return config_yaml_fail(r, node, path, "out of memory");
    s->levels = grown;
    s->levels[s->n_levels++] = value;
    return 0;
}

/* `from/to/step`: from, from + step, ... up to to (included when a step lands on it). */
static int config_sweep_range(config_yaml_t *r, yaml_node_t *node, const char *path,
                              config_sweep_t *s) {
    if (config_yaml_check_keys(r, node, path, sweep_range_keys) < 0)
        return -1;
    double v[3];
    const char *names[3] = {"from", "to", "step"};
    char sub[CONFIG_YAML_KEY_MAX];
    yaml_node_t *nodes[3];
    for (int i = 0; i < 3; i++) {
        config_yaml_path(sub, sizeof sub, path, names[i]);
        nodes[i] = config_yaml_get(r, node, names[i], NULL);
        if (!nodes[i])
            return config_yaml_fail(r, node, sub, "a range needs from, to and step");
        if (config_sweep_value(r, nodes[i], sub, s->axis, &v[i]) < 0)
            return -1;
    }
    if (v[1] < v[0]) {
        config_yaml_path(sub, sizeof sub, path, "to");
        return config_yaml_fail(r, nodes[1], sub, "to (%g) is below from (%g)", v[1], v[0]);
    }
    double n = floor((v[1] - v[0]) / v[2] + 1e-9) + 1;
    if (n > SWEEP_MAX_LEVELS)
        return config_yaml_fail(r, nodes[2], path, "at most %d levels, this range gives %.0f",
                                SWEEP_MAX_LEVELS, n);
    for (double k = 0; k < n; k++)
        if (config_sweep_push(r, node, path, s, v[0] + k * v[2]) < 0)
            return -1;
    return 0;
}

/* The levels: a list of values, or a from/to/step mapping. */
static int config_sweep_levels(config_yaml_t *r, yaml_node_t *node, const char *path,
                               config_sweep_t *s) {
    if (node->type == YAML_MAPPING_NODE)
        return config_sweep_range(r, node, path, s);
    if (node->type != YAML_SEQUENCE_NODE ||
        node->data.sequence.items.top == node->data.sequence.items.start) {
        char got[80];
        config_yaml_describe(node, got, sizeof got);
        return config_yaml_fail(r, node, path,
                                "expected a list of levels ([50, 60, 70]) or a range "
                                "({from: 50, to: 160, step: 10}), got %s",
                                got);
    }
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    for (size_t i = 0; i < n; i++) {
        char sub[CONFIG_YAML_KEY_MAX];
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        yaml_node_t *item = config_yaml_node(r, node->data.sequence.items.start[i]);
        double value;
        if (config_sweep_value(r, item, sub, s->axis, &value) < 0 ||
            config_sweep_push(r, item, sub, s, value) < 0)
            return -1;
    }
    return 0;
}

static int config_sweep_snapshots(config_yaml_t *r, yaml_node_t *sweep, config_sweep_t *s) {
    yaml_node_t *node = config_yaml_get(r, sweep, "snapshots", NULL);
    if (!node)
        return config_yaml_fail(r, sweep, "sweep.snapshots",
                                "a sweep needs its measurement window: snapshots: {count: 3, "
                                "duration: 100s}");
    if (config_yaml_check_keys(r, node, "sweep.snapshots", sweep_snapshot_keys) < 0)
        return -1;
    yaml_node_t *v;
    uint64_t u;
    if ((v = config_yaml_get(r, node, "count", NULL))) {
        if (config_yaml_uint(r, v, "sweep.snapshots.count", 1000, &u) < 0)
            return -1;
        if (u == 0)
            return config_yaml_fail(r, v, "sweep.snapshots.count",
                                    "expected at least 1 snapshot, got '0'");
        s->snapshots = (uint32_t)u;
    }
    if (!(v = config_yaml_get(r, node, "duration", NULL)))
        return config_yaml_fail(r, node, "sweep.snapshots.duration",
                                "each snapshot needs a duration, e.g. duration: 100s");
    return config_yaml_duration(r, v, "sweep.snapshots.duration", true, &s->snapshot_ns);
}

/* What a sweep cannot be combined with: it sets each level's warm-up and duration itself. */
static int config_sweep_check(config_yaml_t *r, yaml_node_t *root, yaml_node_t *node,
                              const config_sweep_context_t *c, const config_sweep_t *s) {
    yaml_node_t *limits = config_yaml_get(r, root, "limits", NULL);
    yaml_node_t *v;
    if (c->duration_ns > 0 && (v = config_yaml_get(r, limits, "duration", NULL)))
        return config_yaml_fail(r, v, "limits.duration",
                                "a sweep sets each level's duration (sweep.warmup + "
                                "sweep.snapshots count x duration); drop limits.duration");
    if (c->warmup_ns > 0 && (v = config_yaml_get(r, root, "warmup", NULL)))
        return config_yaml_fail(r, v, "warmup",
                                "a sweep has its own warm-up per level; use sweep.warmup");
    if (s->axis == SWEEP_AXIS_CONCURRENCY && c->scheduler == SCHEDULER_SEQUENTIAL)
        return config_yaml_fail(r, config_yaml_get(r, node, "concurrency", NULL),
                                "sweep.concurrency",
                                "a sequential scheduler runs one session at a time; use "
                                "scheduler.kind concurrent (or rate) to sweep concurrency");
    if (s->rate_cap > 0 && s->axis != SWEEP_AXIS_CONCURRENCY)
        return config_yaml_fail(r, config_yaml_get(r, node, "rate_cap", NULL), "sweep.rate_cap",
                                "a rate cap applies to concurrency levels; a rate sweep sets "
                                "the rate itself");
    return 0;
}

int config_sweep_parse(config_yaml_t *r, yaml_node_t *root, const config_sweep_context_t *context,
                       config_sweep_t *s) {
    yaml_node_t *node = root ? config_yaml_get(r, root, "sweep", NULL) : NULL;
    if (!node)
        return 0;
    if (config_yaml_check_keys(r, node, "sweep", sweep_keys) < 0)
        return -1;
    s->snapshots = 1;
    s->repeat = 1;
    s->drain_ns = SWEEP_DEFAULT_DRAIN_NS;
    s->exclude_error_pct = SWEEP_DEFAULT_EXCLUDE_PCT;
    s->fresh_text = true;
    yaml_node_t *conc = config_yaml_get(r, node, "concurrency", NULL);
    yaml_node_t *rate = config_yaml_get(r, node, "rate", NULL);
    if (conc && rate)
        return config_yaml_fail(r, rate, "sweep.rate",
                                "a sweep varies one thing: concurrency or rate, not both");
    if (!conc && !rate)
        return config_yaml_fail(r, node, "sweep",
                                "a sweep needs its levels: concurrency: [...] or rate: [...] "
                                "(a list or {from, to, step})");
    s->axis = conc ? SWEEP_AXIS_CONCURRENCY : SWEEP_AXIS_RATE;
    if (config_sweep_levels(r, conc ? conc : rate, conc ? "sweep.concurrency" : "sweep.rate", s) <
        0)
        return -1;
    yaml_node_t *v;
    uint64_t u;
    if ((v = config_yaml_get(r, node, "warmup", NULL)) &&
        config_yaml_duration(r, v, "sweep.warmup", false, &s->warmup_ns) < 0)
        return -1;
    if (config_sweep_snapshots(r, node, s) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "drain", NULL)) &&
        config_yaml_duration(r, v, "sweep.drain", false, &s->drain_ns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "repeat", NULL))) {
        if (config_yaml_uint(r, v, "sweep.repeat", 100, &u) < 0)
            return -1;
        if (u == 0)
            return config_yaml_fail(r, v, "sweep.repeat", "expected at least 1, got '0'");
        s->repeat = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "exclude_error_pct", NULL))) {
        if (config_yaml_number(r, v, "sweep.exclude_error_pct", &s->exclude_error_pct) < 0)
            return -1;
        if (s->exclude_error_pct < 0 || s->exclude_error_pct > 100)
            return config_yaml_fail(r, v, "sweep.exclude_error_pct",
                                    "expected a percentage from 0 to 100, got '%s'",
                                    config_yaml_text(v));
    }
    if ((v = config_yaml_get(r, node, "rate_cap", NULL))) {
        if (config_yaml_rate(r, v, "sweep.rate_cap", &s->rate_cap) < 0)
            return -1;
        if (s->rate_cap <= 0)
            return config_yaml_fail(r, v, "sweep.rate_cap",
                                    "expected a rate greater than 0, got '%s'",
                                    config_yaml_text(v));
    }
    if ((v = config_yaml_get(r, node, "fresh_text", NULL)) &&
        config_yaml_bool(r, v, "sweep.fresh_text", &s->fresh_text) < 0)
        return -1;
    return config_sweep_check(r, root, node, context, s);
}

int config_sweep_copy(config_sweep_t *dst, const config_sweep_t *src) {
    *dst = *src;
    dst->levels = NULL;
    if (!src->n_levels)
        return 0;
    dst->levels = malloc(src->n_levels * sizeof *dst->levels);
    if (!dst->levels) {
        dst->n_levels = 0;
        dst->axis = SWEEP_AXIS_NONE;
        return -1;
    }
    memcpy(dst->levels, src->levels, src->n_levels * sizeof *dst->levels);
    return 0;
}

void config_sweep_free(config_sweep_t *self) {
    free(self->levels);
    memset(self, 0, sizeof *self);
}

/* The shortest text that reads back as v. */
static void config_sweep_number(double v, char *buf, size_t len) {
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, len, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void config_sweep_write(FILE *out, const config_sweep_t *self) {
    if (self->axis == SWEEP_AXIS_NONE)
        return;
    char buf[64];
    bool rate = self->axis == SWEEP_AXIS_RATE;
    fprintf(out, "sweep:\n  %s: [", config_sweep_axis_name(self->axis));
    for (size_t i = 0; i < self->n_levels; i++) {
        config_sweep_number(self->levels[i], buf, sizeof buf);
        fprintf(out, "%s%s%s", i ? ", " : "", buf, rate ? "/s" : "");
    }
    units_format_duration(self->warmup_ns, buf, sizeof buf);
    fprintf(out, "]\n  warmup: %s\n", buf);
    units_format_duration(self->snapshot_ns, buf, sizeof buf);
    fprintf(out, "  snapshots: {count: %u, duration: %s}\n", (unsigned)self->snapshots, buf);
    units_format_duration(self->drain_ns, buf, sizeof buf);
    fprintf(out, "  drain: %s\n  repeat: %u\n", buf, (unsigned)self->repeat);
    config_sweep_number(self->exclude_error_pct, buf, sizeof buf);
    fprintf(out, "  exclude_error_pct: %s\n", buf);
    if (self->rate_cap > 0) {
        config_sweep_number(self->rate_cap, buf, sizeof buf);
        fprintf(out, "  rate_cap: %s/s\n", buf);
    }
    if (!self->fresh_text)
        fputs("  fresh_text: false\n", out);
}
