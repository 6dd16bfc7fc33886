#include "rig_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "units.h"

/* The document being read and where its first error goes. */
typedef struct reader {
    yaml_document_t doc;
    const char *path;
    char *err;
    size_t errlen;
} reader_t;

static int fail(reader_t *r, const yaml_node_t *node, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(reader_t *r, const yaml_node_t *node, const char *key, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%zu:%zu: %s: %s", r->path, node ? node->start_mark.line + 1 : 0,
             node ? node->start_mark.column + 1 : 0, key, why);
    return -1;
}

static const char *scalar(const yaml_node_t *node) {
    return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

/* A sequence of scalars (a single scalar counts as one) into a malloc'd list. */
static int read_list(reader_t *r, yaml_node_t *node, const char *key, char ***out, size_t *n) {
    if (scalar(node)) {
        *out = calloc(1, sizeof **out);
        if (!*out || !((*out)[0] = strdup(scalar(node))))
            return fail(r, node, key, "out of memory");
        *n = 1;
        return 0;
    }
    if (!node || node->type != YAML_SEQUENCE_NODE)
        return fail(r, node, key, "expected a list");
    size_t count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return fail(r, node, key, "out of memory");
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(&r->doc, node->data.sequence.items.start[i]);
        if (!scalar(item) || !*scalar(item))
            return fail(r, item, key, "expected a non-empty string in the list");
        if (!((*out)[(*n)++] = strdup(scalar(item))))
            return fail(r, item, key, "out of memory");
    }
    return 0;
}

/* A group's endpoint URLs: a list of http(s) URLs, one at least. */
static int read_urls(reader_t *r, rig_group_t *g, yaml_node_t *node, const char *key) {
    if (read_list(r, node, key, &g->urls, &g->n_urls) != 0)
        return -1;
    if (!g->n_urls)
        return fail(r, node, key, "a group needs at least one endpoint URL");
    for (size_t i = 0; i < g->n_urls; i++)
        if (strncmp(g->urls[i], "http://", 7) && strncmp(g->urls[i], "https://", 8))
            return fail(r, node, key, "'%s' is not an http:// or https:// URL", g->urls[i]);
    return 0;
}

/* A group as a mapping: {endpoints: [url, ...], workers: N}. */
static int read_group_map(reader_t *r, rig_group_t *g, yaml_node_t *node, const char *group_key) {
    char key[400];
    yaml_node_t *endpoints = NULL;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *name = scalar(k) ? scalar(k) : "?", *text = scalar(v);
        snprintf(key, sizeof key, "%s.%s", group_key, name);
        if (!strcmp(name, "endpoints")) {
            endpoints = v;
            if (read_urls(r, g, v, key) != 0)
                return -1;
        } else if (!strcmp(name, "workers")) {
            char *end = NULL;
            unsigned long n = text ? strtoul(text, &end, 10) : 0;
            if (!text || !*text || *end || *text == '-' || n == 0 || n > RIG_GROUP_MAX_WORKERS)
                return fail(r, v, key, "expected a count of workers, 1 to %d",
                            RIG_GROUP_MAX_WORKERS);
            g->workers = (uint32_t)n;
        } else {
            return fail(r, k, key, "unknown key '%s' (endpoints, workers)", name);
        }
    }
    if (!endpoints) {
        snprintf(key, sizeof key, "%s.endpoints", group_key);
        return fail(r, node, key, "missing: the group's endpoint URLs");
    }
    return 0;
}

static int read_groups(reader_t *r, rig_config_t *self, yaml_node_t *node) {
    if (!node || node->type != YAML_MAPPING_NODE)
        return fail(r, node, "groups", "expected a mapping of group name to endpoint URLs");
    size_t count = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    if (!(self->groups = calloc(count ? count : 1, sizeof *self->groups)))
        return fail(r, node, "groups", "out of memory");
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *name = scalar(k);
        if (!name || !*name ||
            strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789-_.") != strlen(name))
            return fail(r, k, "groups", "a group name is letters, digits, '-', '_' or '.'");
        if (rig_config_group(self, name))
            return fail(r, k, "groups", "group '%s' is named twice", name);
        char key[300];
        snprintf(key, sizeof key, "groups.%s", name);
        rig_group_t *g = &self->groups[self->n_groups++];
        if (!(g->name = strdup(name)))
            return fail(r, k, key, "out of memory");
        if (v && v->type == YAML_MAPPING_NODE) {
            if (read_group_map(r, g, v, key) != 0)
                return -1;
        } else if (read_urls(r, g, v, key) != 0) {
            return -1;
        }
    }
    if (!self->n_groups)
        return fail(r, node, "groups", "the rig needs at least one group");
    return 0;
}

/* A duration as units_parse_duration reads it, or whole days ("90d": runs are kept for days). */
static int parse_age(const char *text, int64_t *ns) {
    char *end;
    size_t len = strlen(text);
    if (len > 1 && text[len - 1] == 'd') {
        unsigned long days = strtoul(text, &end, 10);
        if (end != text + len - 1 || *text == '-' || days > 100000)
            return -1;
        *ns = (int64_t)days * 86400 * 1000000000LL;
        return 0;
    }
    return units_parse_duration(text, ns);
}

static int read_retention(reader_t *r, rig_config_t *self, yaml_node_t *node) {
    if (!node || node->type != YAML_MAPPING_NODE)
        return fail(r, node, "retention", "expected a mapping with keep and/or max_age");
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *key = scalar(k) ? scalar(k) : "?", *text = scalar(v);
        char *end = NULL;
        int64_t ns;
        if (!strcmp(key, "keep")) {
            unsigned long n = text ? strtoul(text, &end, 10) : 0;
            if (!text || !*text || *end || n > UINT32_MAX || *text == '-')
                return fail(r, v, "retention.keep", "expected a count of runs (0: keep all)");
            self->keep_runs = (uint32_t)n;
        } else if (!strcmp(key, "max_age")) {
            if (!text || parse_age(text, &ns) != 0 || ns < 0)
                return fail(r, v, "retention.max_age", "expected a duration such as 30d or 12h");
            self->keep_age_s = ns / 1000000000LL;
        } else {
            return fail(r, k, "retention", "unknown key '%s' (keep, max_age)", key);
        }
    }
    return 0;
}

static int read_root(reader_t *r, rig_config_t *self) {
    yaml_node_t *root = yaml_document_get_root_node(&r->doc);
    if (!root || root->type != YAML_MAPPING_NODE)
        return fail(r, root, "(top)", "expected a mapping with groups, admins, retention");
    bool have_groups = false;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        const char *key = scalar(k) ? scalar(k) : "?";
        int rc;
        if (!strcmp(key, "groups")) {
            have_groups = true;
            rc = read_groups(r, self, v);
        } else if (!strcmp(key, "admins")) {
            rc = read_list(r, v, "admins", &self->admins, &self->n_admins);
        } else if (!strcmp(key, "retention")) {
            rc = read_retention(r, self, v);
        } else {
            rc = fail(r, k, key, "unknown key (groups, admins, retention)");
        }
        if (rc != 0)
            return -1;
    }
    return have_groups ? 0 : fail(r, root, "groups", "missing: the rig needs its target groups");
}

int rig_config_load(rig_config_t *self, const char *path, char *err, size_t errlen) {
    memset(self, 0, sizeof *self);
    reader_t r = {.path = path, .err = err, .errlen = errlen};
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %m", path);
        return -1;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int rc = -1;
    if (!yaml_parser_load(&parser, &r.doc)) {
        snprintf(err, errlen, "%s:%zu:%zu: not valid YAML: %s", path, parser.problem_mark.line + 1,
                 parser.problem_mark.column + 1, parser.problem ? parser.problem : "?");
    } else {
        rc = read_root(&r, self);
        yaml_document_delete(&r.doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc != 0)
        rig_config_free(self);
    return rc;
}

static void free_list(char **list, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

void rig_config_free(rig_config_t *self) {
    for (size_t i = 0; i < self->n_groups; i++) {
        free(self->groups[i].name);
        free_list(self->groups[i].urls, self->groups[i].n_urls);
    }
    free(self->groups);
    free_list(self->admins, self->n_admins);
    memset(self, 0, sizeof *self);
}

const rig_group_t *rig_config_group(const rig_config_t *self, const char *name) {
    for (size_t i = 0; i < self->n_groups; i++)
        if (self->groups[i].name && !strcmp(self->groups[i].name, name))
            return &self->groups[i];
    return NULL;
}

bool rig_config_is_admin(const rig_config_t *self, const char *user) {
    for (size_t i = 0; i < self->n_admins; i++)
        if (!strcmp(self->admins[i], user))
            return true;
    return false;
}
