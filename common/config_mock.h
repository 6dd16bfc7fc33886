/* The `mock:` section of a workload file: options of the embedded `stampede mock` that
 * `stampede run` starts when no target is given. */
#ifndef STAMPEDE_CONFIG_MOCK_H
#define STAMPEDE_CONFIG_MOCK_H

#include <stdbool.h>
#include <stddef.h>

/* One option of the embedded mock (the `mock:` section), checked at load. */
typedef struct config_mock_option {
    const char *key;  /* the file's key (static text), e.g. "max_model_len" */
    const char *flag; /* the `stampede mock` flag it adds (static text), e.g. "--max-model-len";
                         NULL when it adds none (prefix_cache: true, early_eos: false) */
    char *value;      /* as config.yaml writes it back: "4096", "50ms", "true", "tp1-fp8" */
    char *arg;        /* the flag's argument ("50": ttft in ms); NULL for a flag without one */
    bool quoted;      /* value is free text: written back as a quoted string */
} config_mock_option_t;

/* Options for the `stampede mock` that `stampede run` starts when no target is given (ignored
 * otherwise), in a fixed key order. */
typedef struct config_mock {
    config_mock_option_t *options;
    size_t n_options;
} config_mock_t;

/* The reader's types (common/config_yaml.h), named here without pulling libyaml into config.h. */
struct config_yaml;
struct yaml_node_s;

/* Reads and checks the section (node may be NULL: no options) into *self. 0 ok; -1 with r->err
 * filled at the offending key. */
int config_mock_parse(struct config_yaml *r, struct yaml_node_s *node, config_mock_t *self);
/* Reads a profile file (what `stampede calibrate` writes: a mock: section, with a free-form
 * calibration: beside it) into *self (config_mock_free it). 0, or -1 with err filled (file,
 * line, key). */
struct config_error;
int config_mock_load_file(config_mock_t *self, const char *path, struct config_error *err);
/* Deep copy of src into dst; 0 ok, -1 on allocation failure (dst then holds what was copied). */
int config_mock_copy(config_mock_t *dst, const config_mock_t *src);
/* Frees the options and empties *self. */
void config_mock_free(config_mock_t *self);
/* The mock section as `stampede mock` arguments: a malloc'd NULL-terminated array (free() it, not
 * its strings, which belong to *self and live as long as it), e.g. {"--max-model-len", "4096",
 * "--no-prefix-cache", NULL}; NULL when memory is exhausted. */
char **config_mock_args(const config_mock_t *self);

#endif
