#include "config_yaml.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

static const char *text_of(const yaml_node_t *node) {
    return (const char *)node->data.scalar.value;
}

static yaml_node_t *node_at(config_yaml_t *r, int index) {
    return yaml_document_get_node(&r->doc, index);
}

int config_yaml_fail(config_yaml_t *r, const yaml_node_t *node, const char *key, const char *fmt,
                     ...) {
    config_error_t *e = r->err;
    snprintf(e->file, sizeof e->file, "%s", r->file);
    e->line = node ? (int)node->start_mark.line + 1 : 0;
    e->column = node ? (int)node->start_mark.column + 1 : 0;
    snprintf(e->key, sizeof e->key, "%s", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

void config_yaml_path(char *out, size_t len, const char *parent, const char *child) {
    if (parent == NULL || parent[0] == '\0')
        snprintf(out, len, "%s", child);
    else
        snprintf(out, len, "%s.%s", parent, child);
}

/* Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring),
 * case-insensitive; long words are never "close". */
static size_t edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n >= 64 || m >= 64)
        return SIZE_MAX;
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (ai != bj);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

const char *config_yaml_closest(const char *word, const char *const *candidates) {
    const char *best = NULL;
    size_t best_distance = 3; /* suggest only within distance 2 */
    for (size_t i = 0; candidates[i] != NULL; i++) {
        size_t distance = edit_distance(word, candidates[i]);
        /* A distance as long as the word itself means nothing of it survived. */
        if (distance < best_distance && distance < strlen(word)) {
            best = candidates[i];
            best_distance = distance;
        }
    }
    return best;
}

void config_yaml_join(const char *const *names, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; names[i] != NULL && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static bool in_list(const char *name, const char *const *list) {
    for (size_t i = 0; list[i] != NULL; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

bool config_yaml_is_null(const yaml_node_t *node) {
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *s = text_of(node);
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* "a mapping", "a sequence", "nothing" or the quoted scalar, for "expected X, got Y". */
static void describe(const yaml_node_t *node, char *buf, size_t len) {
    if (node->type == YAML_MAPPING_NODE)
        snprintf(buf, len, "a mapping");
    else if (node->type == YAML_SEQUENCE_NODE)
        snprintf(buf, len, "a sequence");
    else if (config_yaml_is_null(node))
        snprintf(buf, len, "nothing");
    else if (node->data.scalar.length > 48)
        snprintf(buf, len, "'%.45s...'", text_of(node));
    else
        snprintf(buf, len, "'%s'", text_of(node));
}

/* The text of a non-null scalar, or NULL after reporting "expected <what>, got ...". */
static const char *expect_scalar(config_yaml_t *r, yaml_node_t *node, const char *path,
                                 const char *what) {
    char got[64];
    if (node->type != YAML_SCALAR_NODE || config_yaml_is_null(node)) {
        describe(node, got, sizeof got);
        config_yaml_fail(r, node, path, "expected %s, got %s", what, got);
        return NULL;
    }
    if (strlen(text_of(node)) != node->data.scalar.length) {
        config_yaml_fail(r, node, path, "expected %s, got text with a NUL character", what);
        return NULL;
    }
    return text_of(node);
}

/* An earlier key of map equal to the one of pair (headers compare without case), or NULL. */
static yaml_node_t *earlier_same_key(config_yaml_t *r, yaml_node_t *map, yaml_node_pair_t *pair,
                                     bool ignore_case) {
    const char *name = text_of(node_at(r, pair->key));
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
        yaml_node_t *k = node_at(r, q->key);
        if (k->type != YAML_SCALAR_NODE)
            continue;
        if (ignore_case ? strcasecmp(text_of(k), name) == 0 : strcmp(text_of(k), name) == 0)
            return k;
    }
    return NULL;
}

/* Every key of map is a non-null scalar given once. */
static int check_key_shapes(config_yaml_t *r, yaml_node_t *map, const char *path,
                            bool ignore_case) {
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node_at(r, p->key);
        if (expect_scalar(r, k, path, "a key name") == NULL)
            return -1;
        yaml_node_t *first = earlier_same_key(r, map, p, ignore_case);
        if (first != NULL) {
            char key[CONFIG_YAML_KEY_MAX];
            config_yaml_path(key, sizeof key, path, text_of(k));
            return config_yaml_fail(
                r, k, key, "duplicate key '%s' (first given at line %d, column %d)", text_of(k),
                (int)first->start_mark.line + 1, (int)first->start_mark.column + 1);
        }
    }
    return 0;
}

static int expect_mapping(config_yaml_t *r, yaml_node_t *map, const char *path) {
    char got[64];
    if (map->type == YAML_MAPPING_NODE)
        return 0;
    describe(map, got, sizeof got);
    return config_yaml_fail(r, map, path, "expected a mapping, got %s", got);
}

int config_yaml_check_mapping(config_yaml_t *r, yaml_node_t *map, const char *path,
                              bool ignore_case) {
    if (expect_mapping(r, map, path) < 0)
        return -1;
    return check_key_shapes(r, map, path, ignore_case);
}

int config_yaml_check_keys(config_yaml_t *r, yaml_node_t *map, const char *path,
                           const char *const *keys) {
    if (config_yaml_is_null(map))
        return 0;
    if (config_yaml_check_mapping(r, map, path, false) < 0)
        return -1;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node_at(r, p->key);
        const char *name = text_of(k);
        if (in_list(name, keys))
            continue;
        char key[CONFIG_YAML_KEY_MAX], valid[384];
        config_yaml_path(key, sizeof key, path, name);
        const char *close = config_yaml_closest(name, keys);
        if (close != NULL)
            return config_yaml_fail(r, k, key, "unknown key '%s'; did you mean '%s'?", name, close);
        config_yaml_join(keys, valid, sizeof valid);
        return config_yaml_fail(r, k, key, "unknown key '%s'; valid keys here: %s", name, valid);
    }
    return 0;
}

yaml_node_t *config_yaml_get(config_yaml_t *r, yaml_node_t *map, const char *name,
                             yaml_node_t **key_node) {
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node_at(r, p->key);
        if (k->type != YAML_SCALAR_NODE || strcmp(text_of(k), name) != 0)
            continue;
        yaml_node_t *v = node_at(r, p->value);
        if (key_node != NULL)
            *key_node = k;
        return config_yaml_is_null(v) ? NULL : v;
    }
    return NULL;
}

char *config_yaml_resolve_path(const config_yaml_t *r, const char *path) {
    if (path[0] == '/' || r->base_dir[0] == '\0')
        return strdup(path);
    size_t len = strlen(r->base_dir) + 1 + strlen(path) + 1;
    char *out = malloc(len);
    if (out != NULL)
        snprintf(out, len, "%s/%s", r->base_dir, path);
    return out;
}

int config_yaml_string(config_yaml_t *r, yaml_node_t *node, const char *path, char **out) {
    const char *s = expect_scalar(r, node, path, "a string");
    if (s == NULL)
        return -1;
    if (s[0] == '\0')
        return config_yaml_fail(r, node, path, "expected a non-empty string, got ''");
    char *copy = strdup(s);
    if (copy == NULL)
        return config_yaml_fail(r, node, path, "out of memory");
    free(*out);
    *out = copy;
    return 0;
}

int config_yaml_bool(config_yaml_t *r, yaml_node_t *node, const char *path, bool *out) {
    static const char *const yes[] = {"true", "yes", "on", NULL};
    static const char *const no[] = {"false", "no", "off", NULL};
    const char *s = expect_scalar(r, node, path, "true or false");
    if (s == NULL)
        return -1;
    for (size_t i = 0; yes[i] != NULL; i++) {
        if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
            *out = strcasecmp(s, yes[i]) == 0;
            return 0;
        }
    }
    return config_yaml_fail(r, node, path, "expected true or false, got '%s'", s);
}

int config_yaml_uint(config_yaml_t *r, yaml_node_t *node, const char *path, uint64_t max,
                     uint64_t *out) {
    const char *s = expect_scalar(r, node, path, "a whole number");
    if (s == NULL)
        return -1;
    if (s[0] == '-')
        return config_yaml_fail(r, node, path, "expected a whole number >= 0, got '%s'", s);
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10 || v * 10 + digit > max)
            return config_yaml_fail(r, node, path, "expected a whole number <= %llu, got '%s'",
                                    (unsigned long long)max, s);
        v = v * 10 + digit;
    }
    if (p == s || *p != '\0')
        return config_yaml_fail(r, node, path, "expected a whole number, got '%s'", s);
    *out = v;
    return 0;
}

/* [+-]digits[.digits][e[+-]digits], finite: no hex, inf, nan or trailing text. */
static bool parse_number(const char *s, double *out) {
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    for (; isdigit((unsigned char)*p); p++)
        digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p != '\0')
        return false;
    char *end;
    double v = strtod(s, &end);
    if (end != p || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int config_yaml_number(config_yaml_t *r, yaml_node_t *node, const char *path, double *out) {
    const char *s = expect_scalar(r, node, path, "a number");
    if (s == NULL)
        return -1;
    if (!parse_number(s, out))
        return config_yaml_fail(r, node, path, "expected a number, got '%s'", s);
    return 0;
}

int config_yaml_duration(config_yaml_t *r, yaml_node_t *node, const char *path, bool positive,
                         int64_t *out) {
    const char *s = expect_scalar(r, node, path, "a duration");
    int64_t ns;
    if (s == NULL)
        return -1;
    if (s[0] == '-')
        return config_yaml_fail(r, node, path, "expected a duration >= 0, got '%s'", s);
    if (units_parse_duration(s, &ns) < 0)
        return config_yaml_fail(r, node, path, "expected %s, got '%s'", units_duration_help(), s);
    if (positive && ns == 0)
        return config_yaml_fail(r, node, path, "expected a duration greater than 0, got '%s'", s);
    *out = ns;
    return 0;
}

int config_yaml_rate(config_yaml_t *r, yaml_node_t *node, const char *path, double *out) {
    const char *s = expect_scalar(r, node, path, "a rate");
    if (s == NULL)
        return -1;
    if (s[0] == '-')
        return config_yaml_fail(r, node, path, "expected a rate >= 0, got '%s'", s);
    if (units_parse_rate(s, out) < 0)
        return config_yaml_fail(r, node, path, "expected %s, got '%s'", units_rate_help(), s);
    return 0;
}

int config_yaml_enum(config_yaml_t *r, yaml_node_t *node, const char *path,
                     const char *const *names, int *out) {
    char list[256], what[280];
    config_yaml_join(names, list, sizeof list);
    snprintf(what, sizeof what, "one of %s", list);
    const char *s = expect_scalar(r, node, path, what);
    if (s == NULL)
        return -1;
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    const char *close = config_yaml_closest(s, names);
    if (close != NULL)
        return config_yaml_fail(r, node, path, "expected %s, got '%s'; did you mean '%s'?", what, s,
                                close);
    return config_yaml_fail(r, node, path, "expected %s, got '%s'", what, s);
}

bool config_yaml_param_has_unit(dist_param_t p) {
    return p != DIST_P_SIGMA && p != DIST_P_CV && p != DIST_P_ALPHA && p != DIST_P_N &&
           p != DIST_P_EXPONENT;
}

/* A number, or for time-valued quantities also a duration (stored in seconds). */
static int dist_number(config_yaml_t *r, yaml_node_t *node, const char *path, bool time_valued,
                       const char *what, double *out) {
    const char *s = expect_scalar(r, node, path, what);
    int64_t ns;
    if (s == NULL)
        return -1;
    if (parse_number(s, out))
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
                            text_of(node));
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
        if (!in_list(empirical_keys[i], keys)) {
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
        describe(seq, got, sizeof got);
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
        yaml_node_t *item = node_at(r, seq->data.sequence.items.start[i]);
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
        const char *name = text_of(node_at(r, p->key));
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
    yaml_node_t *values_node, *weights_node, *file_node;
} dist_mapping_t;

/* A mapping without 'dist' but with a key one typo away from it ("dsit"). */
static int misspelt_dist(config_yaml_t *r, yaml_node_t *map, const char *path) {
    static const char *const dist_key[] = {"dist", NULL};
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node_at(r, p->key);
        if (config_yaml_closest(text_of(k), dist_key) != NULL) {
            char key[CONFIG_YAML_KEY_MAX];
            config_yaml_path(key, sizeof key, path, text_of(k));
            return config_yaml_fail(r, k, key, "unknown key '%s'; did you mean 'dist'?",
                                    text_of(k));
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
    const char *name = text_of(k);
    char valid[256];
    dist_param_t p;
    config_yaml_join(keys + 1, valid, sizeof valid);
    if (dist_param_from_name(name, &p) == 0 || in_list(name, empirical_keys))
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
    yaml_node_t *k = node_at(r, pair->key), *v = node_at(r, pair->value);
    const char *name = text_of(k);
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
        return expect_scalar(r, v, key, "a file path") == NULL ? -1 : 0;
    }
    dist_param_t p;
    double value;
    if (dist_param_from_name(name, &p) < 0)
        return config_yaml_fail(r, k, key, "unknown parameter '%s'", name);
    bool with_unit = time_valued && config_yaml_param_has_unit(p);
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
    char *file = config_yaml_resolve_path(r, text_of(m->file_node));
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
                        double lowest, dist_t *d) {
    const char *keys[DIST_P__COUNT + 8];
    char storage[256], msg[256], key[CONFIG_YAML_KEY_MAX];
    dist_mapping_t m = {0};
    dist_kind_t kind = DIST_FIXED;
    int rc = -1;
    if (check_key_shapes(r, map, path, false) < 0 || read_kind(r, map, path, &kind) < 0)
        return -1;
    dist_init(d);
    d->kind = kind;
    kind_keys(kind, storage, sizeof storage, keys, sizeof keys / sizeof keys[0]);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node_at(r, p->key);
        if (strcmp(text_of(k), "dist") == 0)
            continue;
        config_yaml_path(key, sizeof key, path, text_of(k));
        if (!in_list(text_of(k), keys)) {
            unknown_dist_key(r, k, key, kind, keys);
            goto done;
        }
        if (read_dist_key(r, p, path, time_valued, lowest, d, &m) < 0)
            goto done;
    }
    if (apply_empirical(r, map, path, lowest, d, &m) < 0)
        goto done;
    if (dist_prepare(d, msg, sizeof msg) < 0) {
        yaml_node_pair_t *named = param_named_in(r, map, msg);
        if (named == NULL) {
            config_yaml_fail(r, map, path, "%s", msg);
            goto done;
        }
        config_yaml_path(key, sizeof key, path, text_of(node_at(r, named->key)));
        config_yaml_fail(r, node_at(r, named->value), key, "%s", msg);
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

int config_yaml_dist(config_yaml_t *r, yaml_node_t *node, const char *path, bool time_valued,
                     double lowest, dist_t *out) {
    const char *what = time_valued ? "a duration, a number of seconds or a distribution mapping "
                                     "such as {dist: exponential, mean: 2s}"
                                   : "a number or a distribution mapping such as "
                                     "{dist: uniform, min: 10, max: 20}";
    dist_t d;
    if (node->type == YAML_MAPPING_NODE) {
        if (dist_mapping(r, node, path, time_valued, lowest, &d) < 0)
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
