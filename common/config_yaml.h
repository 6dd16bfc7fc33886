/* Typed reading of libyaml document nodes for common/config: each reader checks one value against
 * what the schema expects and, when it does not fit, fills the config_error_t with the node's
 * line and column, the dotted key and what was expected. Internal to common/config*.c. */
#ifndef STAMPEDE_CONFIG_YAML_H
#define STAMPEDE_CONFIG_YAML_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <yaml.h>

#include "config_error.h"

#define CONFIG_YAML_KEY_MAX 128

/* One loaded document and where its errors go. */
typedef struct config_yaml {
    yaml_document_t doc;
    config_error_t *err;
    const char *file;        /* name used in messages */
    char base_dir[PATH_MAX]; /* relative paths in the file resolve against it ("" = cwd) */
    const char *text;        /* the YAML text, for hints in syntax errors */
    size_t text_len;
    int document; /* of a file of several runs, the document to read (1-based); 0: the only one */
    int veeksha_run; /* of a Veeksha file whose !expand lists make several runs, the run (1-based)
                      */
} config_yaml_t;

/* Fills r->err at node's position (line 0 when node is NULL) and returns -1. */
int config_yaml_fail(config_yaml_t *r, const yaml_node_t *node, const char *key, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
/* "parent.child" (or "child" when parent is empty) into out. */
void config_yaml_path(char *out, size_t len, const char *parent, const char *child);
/* The candidate within Damerau-Levenshtein distance 2 of word (case-insensitive), or NULL. */
const char *config_yaml_closest(const char *word, const char *const *candidates);
/* "a, b, c" from a NULL-terminated list. */
void config_yaml_join(const char *const *names, char *buf, size_t len);

/* The scalar text of a node; the node at a document index. */
const char *config_yaml_text(const yaml_node_t *node);
yaml_node_t *config_yaml_node(config_yaml_t *r, int index);
/* "a mapping", "a sequence", "nothing" or the quoted scalar, for "expected X, got Y". */
void config_yaml_describe(const yaml_node_t *node, char *buf, size_t len);
/* Whether name is in the NULL-terminated list. */
bool config_yaml_in_list(const char *name, const char *const *list);
/* [+-]digits[.digits][e[+-]digits], finite: no hex, inf, nan or trailing text. */
bool config_yaml_parse_number(const char *text, double *out);
/* The text of a non-null scalar, or NULL after reporting "expected <what>, got ...". */
const char *config_yaml_scalar(config_yaml_t *r, yaml_node_t *node, const char *path,
                               const char *what);

/* A plain empty, "~" or "null" scalar: the key then takes its default. */
bool config_yaml_is_null(const yaml_node_t *node);
/* Checks that map is a mapping whose keys are non-null scalars, each given once (compared
 * without case when ignore_case: HTTP header names). */
int config_yaml_check_mapping(config_yaml_t *r, yaml_node_t *map, const char *path,
                              bool ignore_case);
/* Checks that map is a mapping (a null counts as empty) whose keys are scalars from the
 * NULL-terminated list, each given once; unknown keys get a did-you-mean. */
int config_yaml_check_keys(config_yaml_t *r, yaml_node_t *map, const char *path,
                           const char *const *keys);
/* The value of key name in map, or NULL when absent or null. *key_node (optional) gets the key. */
yaml_node_t *config_yaml_get(config_yaml_t *r, yaml_node_t *map, const char *name,
                             yaml_node_t **key_node);
/* config_yaml_get of key name in map (the mapping at dotted path section), with the key's own
 * dotted path "section.name" written into path (CONFIG_YAML_KEY_MAX bytes) for its messages. */
yaml_node_t *config_yaml_get_at(config_yaml_t *r, yaml_node_t *map, const char *section,
                                const char *name, char *path);
/* Resolves a path from the file against r->base_dir into a malloc'd string (NULL on OOM). */
char *config_yaml_resolve_path(const config_yaml_t *r, const char *path);

/* The file a section (at dotted path section) names in its required key path:, resolved as
 * config_yaml_resolve_path does into *out (the old value freed); needs is the refusal when the
 * key is absent. 0, or -1 with r->err filled and *out untouched. */
int config_yaml_file(config_yaml_t *r, yaml_node_t *map, const char *section, const char *needs,
                     char **out);

/* Readers: 0 ok with *out set; -1 with r->err filled and *out untouched. */
int config_yaml_string(config_yaml_t *r, yaml_node_t *node, const char *path, char **out);
int config_yaml_bool(config_yaml_t *r, yaml_node_t *node, const char *path, bool *out);
int config_yaml_uint(config_yaml_t *r, yaml_node_t *node, const char *path, uint64_t max,
                     uint64_t *out);
int config_yaml_number(config_yaml_t *r, yaml_node_t *node, const char *path, double *out);
int config_yaml_duration(config_yaml_t *r, yaml_node_t *node, const char *path, bool positive,
                         int64_t *out);
int config_yaml_rate(config_yaml_t *r, yaml_node_t *node, const char *path, double *out);
/* names is NULL-terminated; *out is the index of the match. */
int config_yaml_enum(config_yaml_t *r, yaml_node_t *node, const char *path,
                     const char *const *names, int *out);
#endif
