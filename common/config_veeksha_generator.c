/* Veeksha's value generators: lengths (fixed, uniform, normal, inverse_gaussian, fixed_stair) and
 * intervals (poisson, gamma, fixed), as stampede's distributions (docs/workloads.md, "Veeksha
 * files"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_veeksha_internal.h"

static const char *const length_types[] = {
    "fixed", "uniform", "normal", "fixed_stair", "inverse_gaussian", "zipf", "stair", NULL};
const char *const veeksha_interval_types[] = {"poisson", "gamma", "fixed", NULL};

/* A number of map's key >= min (absent: *out keeps its default). */
int veeksha_number(veeksha_t *v, yaml_node_t *map, const char *path, const char *key, double min,
                   double *out) {
    char full[CONFIG_YAML_KEY_MAX];
    config_yaml_path(full, sizeof full, path, key);
    yaml_node_t *n = veeksha_get(v, map, key);
    if (n == NULL)
        return 0;
    if (config_yaml_number(v->r, n, full, out) < 0)
        return -1;
    if (!(*out >= min))
        return config_yaml_fail(v->r, n, full, "expected a number >= %g, got '%s'", min,
                                config_yaml_text(n));
    return 0;
}

int veeksha_bool(veeksha_t *v, yaml_node_t *map, const char *path, const char *key, bool *out) {
    char full[CONFIG_YAML_KEY_MAX];
    config_yaml_path(full, sizeof full, path, key);
    yaml_node_t *n = veeksha_get(v, map, key);
    return n ? config_yaml_bool(v->r, n, full, out) : 0;
}

int veeksha_prepare(veeksha_t *v, yaml_node_t *at, const char *path, dist_t *d, dist_t *out) {
    char why[256] = "";
    if (dist_prepare(d, why, sizeof why) != 0) {
        dist_clear(d);
        return config_yaml_fail(v->r, at, path, "%s", why);
    }
    dist_clear(out);
    *out = *d;
    return 0;
}

void veeksha_uniform(dist_t *d, double min, double max) {
    dist_init(d);
    d->kind = DIST_UNIFORM;
    dist_set(d, DIST_P_MIN, min, NULL, 0);
    dist_set(d, DIST_P_MAX, max, NULL, 0);
}

/* fixed_stair {values, repeat_each, wrap}: Veeksha emits the values in order; stampede draws
 * them with equal weight (the same mix over a whole number of steps, in random order). */
static int veeksha_stair(veeksha_t *v, yaml_node_t *node, const char *path, dist_t *d) {
    char key[CONFIG_YAML_KEY_MAX];
    config_yaml_path(key, sizeof key, path, "values");
    yaml_node_t *values = veeksha_get(v, node, "values");
    if (values == NULL || values->type != YAML_SEQUENCE_NODE ||
        values->data.sequence.items.top == values->data.sequence.items.start)
        return config_yaml_fail(v->r, values ? values : node, key,
                                "expected a list of lengths, e.g. values: [8, 16, 32]");
    size_t n = (size_t)(values->data.sequence.items.top - values->data.sequence.items.start);
    double *x = calloc(n, sizeof *x);
    if (!x)
        return config_yaml_fail(v->r, node, key, "out of memory");
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = config_yaml_node(v->r, values->data.sequence.items.start[i]);
        char sub[CONFIG_YAML_KEY_MAX + 24];
        snprintf(sub, sizeof sub, "%s[%zu]", key, i);
        int rc = config_yaml_number(v->r, item, sub, &x[i]);
        if (rc == 0 && !(x[i] >= 1))
            rc = config_yaml_fail(v->r, item, sub, "expected a length >= 1");
        if (rc < 0) {
            free(x);
            return -1;
        }
    }
    double repeat = 1;
    bool wrap = true;
    dist_init(d);
    d->kind = DIST_EMPIRICAL;
    int rc = veeksha_number(v, node, path, "repeat_each", 1, &repeat) < 0 ||
                     veeksha_bool(v, node, path, "wrap", &wrap) < 0 ||
                     dist_set_values(d, x, NULL, n, NULL, 0) != 0
                 ? -1
                 : 0;
    free(x);
    if (rc == 0)
        rc = veeksha_note(v, node, path,
                          "fixed_stair: stampede draws its values with equal weight in random "
                          "order, not in steps");
    return rc;
}

/* A length of kind with its mean and a second parameter, at least 1 token. */
static void veeksha_length_of(dist_t *d, dist_kind_t kind, double mean, dist_param_t second,
                              double value) {
    dist_init(d);
    d->kind = kind;
    dist_set(d, DIST_P_MEAN, mean, NULL, 0);
    dist_set(d, second, value, NULL, 0);
    dist_set(d, DIST_P_MIN, 1, NULL, 0);
}

/* A Veeksha length generator (counts of tokens or requests), or def when node is NULL. */
int veeksha_length(veeksha_t *v, yaml_node_t *node, const char *path, const dist_t *def,
                   dist_t *out) {
    char key[CONFIG_YAML_KEY_MAX];
    dist_t d;
    dist_init(&d); /* cleared on every failure below */
    if (node == NULL) {
        if (dist_copy(&d, def) < 0)
            return config_yaml_fail(v->r, NULL, path, "out of memory");
        return veeksha_prepare(v, NULL, path, &d, out);
    }
    if (node->type != YAML_MAPPING_NODE)
        return config_yaml_fail(v->r, node, path,
                                "expected a generator: {type: fixed | uniform | fixed_stair | "
                                "inverse_gaussian, ...}");
    config_yaml_path(key, sizeof key, path, "type");
    yaml_node_t *t = veeksha_get(v, node, "type");
    int type;
    if (t == NULL)
        return config_yaml_fail(v->r, node, key, "missing key 'type'");
    if (config_yaml_enum(v->r, t, key, length_types, &type) < 0)
        return -1;
    static const char *const keys[][6] = {{"type", "value", NULL},
                                          {"type", "min", "max", NULL},
                                          {"type", "mean", "std", "min", "max", NULL},
                                          {"type", "values", "repeat_each", "wrap", NULL},
                                          {"type", "mean", "shape", NULL}};
    if (type >= 5)
        return config_yaml_fail(v->r, t, key,
                                "a %s length generator is not mapped: stampede's zipf draws ranks "
                                "1..n; use fixed, uniform, fixed_stair or inverse_gaussian",
                                config_yaml_text(t));
    if (config_yaml_check_keys(v->r, node, path, keys[type]) < 0)
        return -1;
    double a = 8, b = 0;
    if (type == 0) {
        if (veeksha_number(v, node, path, "value", 1, &a) < 0)
            return -1;
        dist_fixed(&d, a);
    } else if (type == 1) {
        a = 6, b = 12;
        if (veeksha_number(v, node, path, "min", 1, &a) < 0 ||
            veeksha_number(v, node, path, "max", a, &b) < 0)
            return -1;
        veeksha_uniform(&d, a, b);
    } else if (type == 2) {
        double clamp;
        if (veeksha_number(v, node, path, "mean", 1, &a) < 0 ||
            veeksha_number(v, node, path, "std", 0, &b) < 0)
            return -1;
        veeksha_length_of(&d, DIST_NORMAL, a, DIST_P_STDDEV, b);
        if (veeksha_get(v, node, "min")) {
            if (veeksha_number(v, node, path, "min", 1, &clamp) < 0)
                return -1;
            dist_set(&d, DIST_P_MIN, clamp, NULL, 0);
        }
        if (veeksha_get(v, node, "max")) {
            if (veeksha_number(v, node, path, "max", 1, &clamp) < 0)
                return -1;
            dist_set(&d, DIST_P_MAX, clamp, NULL, 0);
        }
    } else if (type == 3) {
        if (veeksha_stair(v, node, path, &d) < 0) {
            dist_clear(&d);
            return -1;
        }
    } else {
        a = 500, b = 300;
        if (veeksha_number(v, node, path, "mean", 0, &a) < 0 ||
            veeksha_number(v, node, path, "shape", 0, &b) < 0)
            return -1;
        veeksha_length_of(&d, DIST_INVERSE_GAUSSIAN, a, DIST_P_SHAPE, b);
    }
    return veeksha_prepare(v, node, path, &d, out);
}

/* A Veeksha interval generator as waits in seconds: poisson {arrival_rate} (exponential gaps of
 * mean 1 / arrival_rate), gamma {arrival_rate, cv}, fixed {interval}; Veeksha's default (node
 * NULL) is poisson at 1/s. */
int veeksha_wait(veeksha_t *v, yaml_node_t *node, const char *path, dist_t *out) {
    char key[CONFIG_YAML_KEY_MAX];
    int type = 0;
    double rate = 1, cv = 0.5, interval = 1;
    config_yaml_path(key, sizeof key, path, "type");
    if (node != NULL) {
        if (node->type != YAML_MAPPING_NODE)
            return config_yaml_fail(v->r, node, path,
                                    "expected a generator: {type: poisson | gamma | fixed, ...}");
        yaml_node_t *t = veeksha_get(v, node, "type");
        if (t == NULL)
            return config_yaml_fail(v->r, node, key, "missing key 'type'");
        if (config_yaml_enum(v->r, t, key, veeksha_interval_types, &type) < 0)
            return -1;
        static const char *const keys[][4] = {{"type", "arrival_rate", NULL},
                                              {"type", "arrival_rate", "cv", NULL},
                                              {"type", "interval", NULL}};
        if (config_yaml_check_keys(v->r, node, path, keys[type]) < 0 ||
            veeksha_number(v, node, path, "arrival_rate", 0, &rate) < 0 ||
            veeksha_number(v, node, path, "cv", 0, &cv) < 0 ||
            veeksha_number(v, node, path, "interval", 0, &interval) < 0)
            return -1;
        if (type < 2 && !(rate > 0))
            return config_yaml_fail(v->r, veeksha_get(v, node, "arrival_rate"), path,
                                    "arrival_rate must be greater than 0");
    }
    dist_t d;
    dist_init(&d);
    if (type == 2) {
        dist_fixed(&d, interval);
    } else {
        d.kind = type == 0 || cv == 0 ? DIST_EXPONENTIAL : DIST_GAMMA;
        if (type == 1 && cv == 0)
            dist_fixed(&d, 1 / rate);
        dist_set(&d, DIST_P_MEAN, 1 / rate, NULL, 0);
        if (d.kind == DIST_GAMMA)
            dist_set(&d, DIST_P_CV, cv, NULL, 0);
    }
    return veeksha_prepare(v, node, path, &d, out);
}
