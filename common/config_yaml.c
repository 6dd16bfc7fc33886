#include "config_yaml.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

const char *config_yaml_text(const yaml_node_t *node) {
    return (const char *)node->data.scalar.value;
}

yaml_node_t *config_yaml_node(config_yaml_t *r, int index) {
    return yaml_document_get_node(&r->doc, index);
}

int config_yaml_fail(config_yaml_t *r, const yaml_node_t *node, const char *key, const char *fmt,
                     ...) {
    va_list ap;
    va_start(ap, fmt);
    config_error_setv(r->err, r->file, node ? (int)node->start_mark.line + 1 : 0,
                      node ? (int)node->start_mark.column + 1 : 0, key, fmt, ap);
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

bool config_yaml_in_list(const char *name, const char *const *list) {
    for (size_t i = 0; list[i] != NULL; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

bool config_yaml_is_null(const yaml_node_t *node) {
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *s = config_yaml_text(node);
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

void config_yaml_describe(const yaml_node_t *node, char *buf, size_t len) {
    if (node->type == YAML_MAPPING_NODE)
        snprintf(buf, len, "a mapping");
    else if (node->type == YAML_SEQUENCE_NODE)
        snprintf(buf, len, "a sequence");
    else if (config_yaml_is_null(node))
        snprintf(buf, len, "nothing");
    else if (node->data.scalar.length > 48)
        snprintf(buf, len, "'%.45s...'", config_yaml_text(node));
    else
        snprintf(buf, len, "'%s'", config_yaml_text(node));
}

const char *config_yaml_scalar(config_yaml_t *r, yaml_node_t *node, const char *path,
                               const char *what) {
    char got[64];
    if (node->type != YAML_SCALAR_NODE || config_yaml_is_null(node)) {
        config_yaml_describe(node, got, sizeof got);
        config_yaml_fail(r, node, path, "expected %s, got %s", what, got);
        return NULL;
    }
    if (strlen(config_yaml_text(node)) != node->data.scalar.length) {
        config_yaml_fail(r, node, path, "expected %s, got text with a NUL character", what);
        return NULL;
    }
    return config_yaml_text(node);
}

/* An earlier key of map equal to the one of pair (headers compare without case), or NULL. */
static yaml_node_t *earlier_same_key(config_yaml_t *r, yaml_node_t *map, yaml_node_pair_t *pair,
                                     bool ignore_case) {
    const char *name = config_yaml_text(config_yaml_node(r, pair->key));
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
        yaml_node_t *k = config_yaml_node(r, q->key);
        if (k->type != YAML_SCALAR_NODE)
            continue;
        if (ignore_case ? strcasecmp(config_yaml_text(k), name) == 0
                        : strcmp(config_yaml_text(k), name) == 0)
            return k;
    }
    return NULL;
}

/* Every key of map is a non-null scalar given once. */
static int check_key_shapes(config_yaml_t *r, yaml_node_t *map, const char *path,
                            bool ignore_case) {
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = config_yaml_node(r, p->key);
        if (config_yaml_scalar(r, k, path, "a key name") == NULL)
            return -1;
        yaml_node_t *first = earlier_same_key(r, map, p, ignore_case);
        if (first != NULL) {
            char key[CONFIG_YAML_KEY_MAX];
            config_yaml_path(key, sizeof key, path, config_yaml_text(k));
            return config_yaml_fail(r, k, key,
                                    "duplicate key '%s' (first given at line %d, column %d)",
                                    config_yaml_text(k), (int)first->start_mark.line + 1,
                                    (int)first->start_mark.column + 1);
        }
    }
    return 0;
}

static int expect_mapping(config_yaml_t *r, yaml_node_t *map, const char *path) {
    char got[64];
    if (map->type == YAML_MAPPING_NODE)
        return 0;
    config_yaml_describe(map, got, sizeof got);
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
        yaml_node_t *k = config_yaml_node(r, p->key);
        const char *name = config_yaml_text(k);
        if (config_yaml_in_list(name, keys))
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
        yaml_node_t *k = config_yaml_node(r, p->key);
        if (k->type != YAML_SCALAR_NODE || strcmp(config_yaml_text(k), name) != 0)
            continue;
        yaml_node_t *v = config_yaml_node(r, p->value);
        if (key_node != NULL)
            *key_node = k;
        return config_yaml_is_null(v) ? NULL : v;
    }
    return NULL;
}

yaml_node_t *config_yaml_get_at(config_yaml_t *r, yaml_node_t *map, const char *section,
                                const char *name, char *path) {
    config_yaml_path(path, CONFIG_YAML_KEY_MAX, section, name);
    return config_yaml_get(r, map, name, NULL);
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

int config_yaml_file(config_yaml_t *r, yaml_node_t *map, const char *section, const char *needs,
                     char **out) {
    char key[CONFIG_YAML_KEY_MAX];
    config_yaml_path(key, sizeof key, section, "path");
    yaml_node_t *v = config_yaml_get(r, map, "path", NULL);
    if (v == NULL)
        return config_yaml_fail(r, map, key, "%s", needs);
    const char *text = config_yaml_scalar(r, v, key, "a file name");
    if (text == NULL)
        return -1;
    char *file = config_yaml_resolve_path(r, text);
    if (file == NULL)
        return config_yaml_fail(r, v, key, "out of memory");
    free(*out);
    *out = file;
    return 0;
}

int config_yaml_string(config_yaml_t *r, yaml_node_t *node, const char *path, char **out) {
    const char *s = config_yaml_scalar(r, node, path, "a string");
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
    const char *s = config_yaml_scalar(r, node, path, "true or false");
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
    const char *s = config_yaml_scalar(r, node, path, "a whole number");
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

bool config_yaml_parse_number(const char *s, double *out) {
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
    const char *s = config_yaml_scalar(r, node, path, "a number");
    if (s == NULL)
        return -1;
    if (!config_yaml_parse_number(s, out))
        return config_yaml_fail(r, node, path, "expected a number, got '%s'", s);
    return 0;
}

int config_yaml_duration(config_yaml_t *r, yaml_node_t *node, const char *path, bool positive,
                         int64_t *out) {
    const char *s = config_yaml_scalar(r, node, path, "a duration");
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
    const char *s = config_yaml_scalar(r, node, path, "a rate");
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
    const char *s = config_yaml_scalar(r, node, path, what);
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
