#include "config_dist.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_workload.h"
#include "units.h"

bool config_dist_param_has_unit(dist_param_t p) {
    return p != DIST_P_SIGMA && p != DIST_P_CV && p != DIST_P_ALPHA && p != DIST_P_N &&
           p != DIST_P_EXPONENT;
}

/* A number, or for time-valued quantities also a duration (stored in seconds). */
static int dist_number(config_yaml_t *r, yaml_node_t *node, const char *path, bool time_valued,
                       const char *what, double *out) {
    const char *s = config_yaml_scalar(r, node, path, what);
    int64_t ns;
    if (s == NULL)
        return -1;
    if (config_yaml_parse_number(s, out))
        return 0;
    if (time_valued && units_parse_duration(s, &ns) == 0) {
        *out = (double)ns / 1e9;
        return 0;
    }
    return config_yaml_fail(r, node, path, "expected %s, got '%s'", what, s);
}

static int check_lowest(config_yaml_t *r, yaml_node_t *node, const char *path, double v,
                        double lowest) {
    if (v >= lowest)
        return 0;
    return config_yaml_fail(r, node, path, "expected a value >= %g, got '%s'", lowest,
                            config_yaml_text(node));
}

/* The keys a kind takes, NULL-terminated in keys[], their text in storage. */
static void kind_keys(dist_kind_t kind, char *storage, size_t cap, const char **keys, size_t max) {
    static const char *const empirical_keys[] = {"values", "weights", "file", NULL};
    size_t n = 0;
    keys[n++] = "dist";
    snprintf(storage, cap, "%s", dist_kind_params(kind));
    char *save = NULL;
    for (char *t = strtok_r(storage, " ,", &save); t != NULL && n + 4 < max;
         t = strtok_r(NULL, " ,", &save)) {
        keys[n++] = t;
    }
    keys[n] = NULL;
    for (size_t i = 0; kind == DIST_EMPIRICAL && empirical_keys[i] != NULL; i++) {
        if (!config_yaml_in_list(empirical_keys[i], keys)) {
            keys[n++] = empirical_keys[i];
            keys[n] = NULL;
        }
    }
}

static int read_list(config_yaml_t *r, yaml_node_t *seq, const char *path, bool time_valued,
                     double lowest, double **out, size_t *n_out) {
    char got[64];
    const char *what = time_valued ? "a duration or a number of seconds" : "a number";
    if (seq->type != YAML_SEQUENCE_NODE) {
        config_yaml_describe(seq, got, sizeof got);
        return config_yaml_fail(r, seq, path, "expected a sequence of numbers, got %s", got);
    }
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return config_yaml_fail(r, seq, path, "expected at least one value");
    double *values = calloc(n, sizeof *values);
    if (values == NULL)
        return config_yaml_fail(r, seq, path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char item_path[CONFIG_YAML_KEY_MAX];
        yaml_node_t *item = config_yaml_node(r, seq->data.sequence.items.start[i]);
        snprintf(item_path, sizeof item_path, "%s[%zu]", path, i);
        if (dist_number(r, item, item_path, time_valued, what, &values[i]) < 0 ||
            check_lowest(r, item, item_path, values[i], lowest) < 0) {
            free(values);
            return -1;
        }
    }
    free(*out);
    *out = values;
    *n_out = n;
    return 0;
}

/* The given parameter whose name appears first (as a word) in dist_prepare's message, so the
 * error points at the offending key rather than the whole mapping. */
static yaml_node_pair_t *param_named_in(config_yaml_t *r, yaml_node_t *map, const char *msg) {
    yaml_node_pair_t *best = NULL;
    const char *best_at = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *name = config_yaml_text(config_yaml_node(r, p->key));
        size_t len = strlen(name);
        if (strcmp(name, "dist") == 0 || len == 0)
            continue;
        for (const char *at = strstr(msg, name); at != NULL; at = strstr(at + 1, name)) {
            bool starts = at == msg || !(isalnum((unsigned char)at[-1]) || at[-1] == '_');
            bool ends = !(isalnum((unsigned char)at[len]) || at[len] == '_');
            if (starts && ends) {
                if (best_at == NULL || at < best_at) {
                    best = p;
                    best_at = at;
                }
                break;
            }
        }
    }
    return best;
}

/* What a mapping gathered beyond plain parameters; freed by dist_mapping_clear. */
typedef struct dist_mapping {
    double *values, *weights;
    size_t n_values, n_weights;
    yaml_node_t *values_node, *weights_node, *file_node, *components_node;
} dist_mapping_t;

/* A mapping without 'dist' but with a key one typo away from it ("dsit"). */
static int misspelt_dist(config_yaml_t *r, yaml_node_t *map, const char *path) {
    static const char *const dist_key[] = {"dist", NULL};
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = config_yaml_node(r, p->key);
        if (config_yaml_closest(config_yaml_text(k), dist_key) != NULL) {
            char key[CONFIG_YAML_KEY_MAX];
            config_yaml_path(key, sizeof key, path, config_yaml_text(k));
            return config_yaml_fail(r, k, key, "unknown key '%s'; did you mean 'dist'?",
                                    config_yaml_text(k));
        }
    }
    return 0;
}

static int read_kind(config_yaml_t *r, yaml_node_t *map, const char *path, dist_kind_t *kind) {
    const char *names[DIST__COUNT + 1];
    char list[256], key[CONFIG_YAML_KEY_MAX];
    for (int k = 0; k < DIST__COUNT; k++)
        names[k] = dist_kind_name((dist_kind_t)k);
    names[DIST__COUNT] = NULL;
    config_yaml_join(names, list, sizeof list);
    yaml_node_t *node = config_yaml_get(r, map, "dist", NULL);
    if (node == NULL && misspelt_dist(r, map, path) < 0)
        return -1;
    if (node == NULL)
        return config_yaml_fail(r, map, path,
                                "a distribution mapping needs 'dist: KIND' (KIND one of %s)", list);
    config_yaml_path(key, sizeof key, path, "dist");
    int index;
    if (config_yaml_enum(r, node, key, names, &index) < 0)
        return -1;
    *kind = (dist_kind_t)index;
    return 0;
}

static int unknown_dist_key(config_yaml_t *r, yaml_node_t *k, const char *key, dist_kind_t kind,
                            const char *const *keys) {
    static const char *const empirical_keys[] = {"values", "weights", "file", NULL};
    const char *name = config_yaml_text(k);
    char valid[256];
    dist_param_t p;
    config_yaml_join(keys + 1, valid, sizeof valid);
    if (dist_param_from_name(name, &p) == 0 || config_yaml_in_list(name, empirical_keys))
        return config_yaml_fail(r, k, key, "%s does not take '%s'; it takes: %s",
                                dist_kind_name(kind), name, valid);
    const char *close = config_yaml_closest(name, keys);
    if (close != NULL)
        return config_yaml_fail(r, k, key, "unknown key '%s'; did you mean '%s'?", name, close);
    return config_yaml_fail(r, k, key, "unknown key '%s'; %s takes: dist, %s", name,
                            dist_kind_name(kind), valid);
}

/* One key of a distribution mapping: a parameter, or values / weights / file. */
static int read_dist_key(config_yaml_t *r, yaml_node_pair_t *pair, const char *path,
                         bool time_valued, double lowest, dist_t *d, dist_mapping_t *m) {
    yaml_node_t *k = config_yaml_node(r, pair->key), *v = config_yaml_node(r, pair->value);
    const char *name = config_yaml_text(k);
    char key[CONFIG_YAML_KEY_MAX], msg[256];
    config_yaml_path(key, sizeof key, path, name);
    if (strcmp(name, "values") == 0) {
        m->values_node = v;
        return read_list(r, v, key, time_valued, lowest, &m->values, &m->n_values);
    }
    if (strcmp(name, "weights") == 0) {
        m->weights_node = v;
        return read_list(r, v, key, false, 0, &m->weights, &m->n_weights);
    }
    if (strcmp(name, "file") == 0) {
        m->file_node = v;
        return config_yaml_scalar(r, v, key, "a file path") == NULL ? -1 : 0;
    }
    dist_param_t p;
    double value;
    if (dist_param_from_name(name, &p) < 0)
        return config_yaml_fail(r, k, key, "unknown parameter '%s'", name);
    bool with_unit = time_valued && config_dist_param_has_unit(p);
    if (dist_number(r, v, key, with_unit,
                    with_unit ? "a duration or a number of seconds" : "a number", &value) < 0)
        return -1;
    if ((p == DIST_P_VALUE || p == DIST_P_MAX) && check_lowest(r, v, key, value, lowest) < 0)
        return -1;
    if (dist_set(d, p, value, msg, sizeof msg) < 0)
        return config_yaml_fail(r, v, key, "%s", msg);
    return 0;
}

/* Values, weights or a file, for empirical distributions. */
static int apply_empirical(config_yaml_t *r, yaml_node_t *map, const char *path, double lowest,
                           dist_t *d, dist_mapping_t *m) {
    char key[CONFIG_YAML_KEY_MAX], msg[256];
    if (d->kind != DIST_EMPIRICAL)
        return 0;
    if (m->values_node != NULL && m->file_node != NULL) {
        config_yaml_path(key, sizeof key, path, "file");
        return config_yaml_fail(r, m->file_node, key, "give either values or file, not both");
    }
    if (m->values_node == NULL && m->file_node == NULL)
        return config_yaml_fail(r, map, path, "empirical needs values: [...] or file: PATH");
    if (m->weights_node != NULL && m->values_node == NULL) {
        config_yaml_path(key, sizeof key, path, "weights");
        return config_yaml_fail(r, m->weights_node, key,
                                "weights go with values (a file carries its own weights)");
    }
    if (m->values_node != NULL) {
        config_yaml_path(key, sizeof key, path, m->weights_node ? "weights" : "values");
        if (m->weights_node != NULL && m->n_weights != m->n_values)
            return config_yaml_fail(r, m->weights_node, key,
                                    "expected %zu weights (one per value), got %zu", m->n_values,
                                    m->n_weights);
        if (dist_set_values(d, m->values, m->weights, m->n_values, msg, sizeof msg) < 0)
            return config_yaml_fail(r, m->weights_node ? m->weights_node : m->values_node, key,
                                    "%s", msg);
        return 0;
    }
    config_yaml_path(key, sizeof key, path, "file");
    char *file = config_yaml_resolve_path(r, config_yaml_text(m->file_node));
    if (file == NULL)
        return config_yaml_fail(r, m->file_node, key, "out of memory");
    int rc = dist_load_file(d, file, msg, sizeof msg);
    free(file);
    if (rc < 0)
        return config_yaml_fail(r, m->file_node, key, "%s", msg);
    for (size_t i = 0; i < d->n_values; i++)
        if (d->values[i] < lowest)
            return config_yaml_fail(r, m->file_node, key,
                                    "value %g (entry %zu of the file) is below the minimum %g",
                                    d->values[i], i + 1, lowest);
    return 0;
}

static int dist_mapping(config_yaml_t *r, yaml_node_t *map, const char *path, bool time_valued,
                        double lowest, dist_t *d, double *weight);

/* A mixture's components: a non-empty sequence of distribution mappings, each with an optional
 * weight (default 1). */
static int apply_components(config_yaml_t *r, yaml_node_t *map, const char *path, bool time_valued,
                            double lowest, dist_t *d, dist_mapping_t *m) {
    char key[CONFIG_YAML_KEY_MAX], msg[256];
    if (d->kind != DIST_MIXTURE)
        return 0;
    if (m->components_node == NULL)
        return config_yaml_fail(r, map, path,
                                "mixture needs components: [{weight: W, dist: KIND, ...}, ...]");
    yaml_node_t *seq = m->components_node;
    config_yaml_path(key, sizeof key, path, "components");
    size_t n = seq->type == YAML_SEQUENCE_NODE
                   ? (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start)
                   : 0;
    if (n == 0)
        return config_yaml_fail(r, seq, key,
                                "expected a non-empty sequence of distribution mappings, each "
                                "with a weight");
    dist_t *components = calloc(n, sizeof *components);
    double *weights = calloc(n, sizeof *weights);
    int rc = components && weights ? 0 : config_yaml_fail(r, seq, key, "out of memory");
    size_t read = 0;
    for (; rc == 0 && read < n; read++) {
        char item_path[CONFIG_YAML_KEY_MAX + 24];
        yaml_node_t *item = config_yaml_node(r, seq->data.sequence.items.start[read]);
        snprintf(item_path, sizeof item_path, "%s[%zu]", key, read);
        weights[read] = 1.0;
        if (item->type != YAML_MAPPING_NODE)
            rc = config_yaml_fail(r, item, item_path,
                                  "expected a distribution mapping such as {weight: 0.8, dist: "
                                  "uniform, min: 1ms, max: 20ms}");
        else
            rc = dist_mapping(r, item, item_path, time_valued, lowest, &components[read],
                              &weights[read]);
    }
    if (rc == 0 && dist_set_mixture(d, components, weights, n, msg, sizeof msg) < 0)
        rc = config_yaml_fail(r, seq, key, "%s", msg);
    for (size_t i = 0; components && i < read; i++)
        dist_clear(&components[i]); /* moved-out ones are already empty */
    free(components);
    free(weights);
    return rc;
}

static int dist_mapping(config_yaml_t *r, yaml_node_t *map, const char *path, bool time_valued,
                        double lowest, dist_t *d, double *weight) {
    const char *keys[DIST_P__COUNT + 8];
    char storage[256], msg[256], key[CONFIG_YAML_KEY_MAX];
    dist_mapping_t m = {0};
    dist_kind_t kind = DIST_FIXED;
    int rc = -1;
    if (config_yaml_check_mapping(r, map, path, false) < 0 || read_kind(r, map, path, &kind) < 0)
        return -1;
    dist_init(d);
    d->kind = kind;
    kind_keys(kind, storage, sizeof storage, keys, sizeof keys / sizeof keys[0]);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = config_yaml_node(r, p->key);
        if (strcmp(config_yaml_text(k), "dist") == 0)
            continue;
        config_yaml_path(key, sizeof key, path, config_yaml_text(k));
        if (weight != NULL && strcmp(config_yaml_text(k), "weight") == 0) {
            yaml_node_t *v = config_yaml_node(r, p->value);
            if (dist_number(r, v, key, false, "a number", weight) < 0)
                goto done;
            if (!(*weight > 0.0)) {
                config_yaml_fail(r, v, key, "expected a weight > 0, got '%s'", config_yaml_text(v));
                goto done;
            }
            continue;
        }
        if (kind == DIST_MIXTURE && strcmp(config_yaml_text(k), "components") == 0) {
            m.components_node = config_yaml_node(r, p->value);
            continue;
        }
        if (!config_yaml_in_list(config_yaml_text(k), keys)) {
            unknown_dist_key(r, k, key, kind, keys);
            goto done;
        }
        if (read_dist_key(r, p, path, time_valued, lowest, d, &m) < 0)
            goto done;
    }
    if (apply_empirical(r, map, path, lowest, d, &m) < 0 ||
        apply_components(r, map, path, time_valued, lowest, d, &m) < 0)
        goto done;
    if (dist_prepare(d, msg, sizeof msg) < 0) {
        yaml_node_pair_t *named = param_named_in(r, map, msg);
        if (named == NULL) {
            config_yaml_fail(r, map, path, "%s", msg);
            goto done;
        }
        config_yaml_path(key, sizeof key, path, config_yaml_text(config_yaml_node(r, named->key)));
        config_yaml_fail(r, config_yaml_node(r, named->value), key, "%s", msg);
        goto done;
    }
    rc = 0;
done:
    free(m.values);
    free(m.weights);
    if (rc < 0)
        dist_clear(d);
    return rc;
}

int config_dist_read(config_yaml_t *r, yaml_node_t *node, const char *path, bool time_valued,
                     double lowest, dist_t *out) {
    const char *what = time_valued ? "a duration, a number of seconds or a distribution mapping "
                                     "such as {dist: exponential, mean: 2s}"
                                   : "a number or a distribution mapping such as "
                                     "{dist: uniform, min: 10, max: 20}";
    dist_t d;
    if (node->type == YAML_MAPPING_NODE) {
        if (dist_mapping(r, node, path, time_valued, lowest, &d, NULL) < 0)
            return -1;
    } else {
        double value;
        if (dist_number(r, node, path, time_valued, what, &value) < 0 ||
            check_lowest(r, node, path, value, lowest) < 0)
            return -1;
        dist_fixed(&d, value);
    }
    dist_clear(out);
    *out = d;
    return 0;
}

/* The largest value d is given in its own unit (its fixed value, min, max, mean, median, scale,
 * n, an empirical value, a component's); 0 when none. */
static double dist_given_top(const dist_t *d) {
    static const dist_param_t in_unit[] = {DIST_P_VALUE,  DIST_P_MIN,   DIST_P_MAX, DIST_P_MEAN,
                                           DIST_P_MEDIAN, DIST_P_SCALE, DIST_P_N};
    double top = 0;
    for (size_t i = 0; i < sizeof in_unit / sizeof in_unit[0]; i++)
        if ((d->given & (1u << in_unit[i]) || (d->kind == DIST_FIXED && i == 0)) &&
            d->param[in_unit[i]] > top)
            top = d->param[in_unit[i]];
    for (size_t i = 0; d->kind == DIST_EMPIRICAL && i < d->n_values; i++)
        if (d->values[i] > top)
            top = d->values[i];
    for (size_t i = 0; d->kind == DIST_MIXTURE && d->components && i < d->n_values; i++) {
        double c = dist_given_top(&d->components[i]);
        if (c > top)
            top = c;
    }
    return top;
}

int config_dist_read_tokens(config_yaml_t *r, yaml_node_t *node, const char *path, dist_t *out) {
    dist_t d;
    dist_init(&d);
    if (config_dist_read(r, node, path, false, 1, &d) < 0)
        return -1;
    double top = dist_given_top(&d);
    if (top > WORKLOAD_MAX_TOKENS) {
        dist_clear(&d);
        return config_yaml_fail(r, node, path,
                                "%.0f tokens is above the ceiling of %u, the largest context "
                                "window of any model (docs/config.md)",
                                top, WORKLOAD_MAX_TOKENS);
    }
    dist_clear(out);
    *out = d;
    return 0;
}
