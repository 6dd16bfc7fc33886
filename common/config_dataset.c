#include "config_dataset.h"

#include <stdlib.h>
#include <string.h>

#include "config_dist.h"

static const char *const format_names[] = {"sharegpt", "jsonl", NULL};
static const char *const dataset_keys[] = {"path",
                                           "format",
                                           "min_input_tokens",
                                           "max_input_tokens",
                                           "max_context_tokens",
                                           "sample",
                                           "output_tokens",
                                           "roles",
                                           NULL};

const char *config_dataset_format_name(config_dataset_format_t format) {
    return (unsigned)format < 2 ? format_names[format] : "?";
}

void config_dataset_init(config_dataset_t *d) {
    memset(d, 0, sizeof *d);
    d->format = DATASET_FORMAT_SHAREGPT;
    d->min_input_tokens = 1;
    dist_init(&d->output_tokens);
}

void config_dataset_free(config_dataset_t *d) {
    free(d->path);
    dist_clear(&d->output_tokens);
    config_dataset_init(d);
}

int config_dataset_copy(config_dataset_t *dst, const config_dataset_t *src) {
    *dst = *src;
    dst->path = NULL;
    dist_init(&dst->output_tokens);
    if (src->path && !(dst->path = strdup(src->path)))
        return -1;
    return dist_copy(&dst->output_tokens, &src->output_tokens) < 0 ? -1 : 0;
}

/* A token count key: a whole number up to WORKLOAD_MAX_TOKENS, left alone when absent. */
static int dataset_tokens(config_yaml_t *r, yaml_node_t *map, const char *name, uint32_t *out) {
    char path[CONFIG_YAML_KEY_MAX];
    uint64_t u;
    yaml_node_t *v = config_yaml_get_at(r, map, "workload.dataset", name, path);
    if (!v)
        return 0;
    if (config_yaml_uint(r, v, path, WORKLOAD_MAX_TOKENS, &u) < 0)
        return -1;
    *out = (uint32_t)u;
    return 0;
}

/* roles: the names of the roles whose nodes take the dataset's text (kind graph). */
static int dataset_roles(config_yaml_t *r, yaml_node_t *v, config_t *c) {
    const char *path = "workload.dataset.roles";
    if (c->workload.kind != WORKLOAD_GRAPH)
        return config_yaml_fail(r, v, path, "roles go with kind: graph (kind is %s)",
                                config_workload_kind_name(c->workload.kind));
    if (v->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(r, v, path, "expected a list of role names");
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *item = config_yaml_node(r, *it);
        const char *name = config_yaml_scalar(r, item, path, "a role name");
        if (!name)
            return -1;
        size_t i = 0;
        while (i < c->workload.n_roles && strcmp(c->workload.roles[i], name) != 0)
            i++;
        if (i == c->workload.n_roles)
            return config_yaml_fail(r, item, path, "unknown role '%s': name one of the graph's",
                                    name);
        c->workload.dataset.roles |= (uint64_t)1 << i;
    }
    return 0;
}

/* output_tokens: replies (the dataset's own reply to each turn), or a count distribution. */
static int dataset_output(config_yaml_t *r, yaml_node_t *v, config_dataset_t *d) {
    if (v->type == YAML_SCALAR_NODE && strcmp(config_yaml_text(v), "replies") == 0) {
        d->output_given = false;
        return 0;
    }
    if (config_dist_read_tokens(r, v, "workload.dataset.output_tokens", &d->output_tokens) < 0)
        return -1;
    d->output_given = true;
    return 0;
}

int config_dataset_read(config_yaml_t *r, yaml_node_t *workload, config_t *c) {
    yaml_node_t *node = config_yaml_get(r, workload, "dataset", NULL);
    config_dataset_t *d = &c->workload.dataset;
    yaml_node_t *v;
    int index;
    if (node == NULL)
        return 0;
    if (c->workload.kind == WORKLOAD_TRACE)
        return config_yaml_fail(r, node, "workload.dataset",
                                "a dataset goes with kind requests, chat or graph (kind is "
                                "trace: its file gives the sessions)");
    if (config_yaml_check_keys(r, node, "workload.dataset", dataset_keys) < 0)
        return -1;
    if (config_yaml_file(r, node, "workload.dataset",
                         "a dataset needs path: the ShareGPT JSON or JSONL file", &d->path) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "format", NULL))) {
        if (config_yaml_enum(r, v, "workload.dataset.format", format_names, &index) < 0)
            return -1;
        d->format = (config_dataset_format_t)index;
    }
    if (dataset_tokens(r, node, "min_input_tokens", &d->min_input_tokens) < 0 ||
        dataset_tokens(r, node, "max_input_tokens", &d->max_input_tokens) < 0 ||
        dataset_tokens(r, node, "max_context_tokens", &d->max_context_tokens) < 0)
        return -1;
    if (d->max_input_tokens && d->max_input_tokens < d->min_input_tokens)
        return config_yaml_fail(r, config_yaml_get(r, node, "max_input_tokens", NULL),
                                "workload.dataset.max_input_tokens",
                                "%u is below min_input_tokens %u: no turn would be left",
                                (unsigned)d->max_input_tokens, (unsigned)d->min_input_tokens);
    if ((v = config_yaml_get(r, node, "sample", NULL)) &&
        config_yaml_uint(r, v, "workload.dataset.sample", UINT32_MAX, &d->sample) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "output_tokens", NULL)) && dataset_output(r, v, d) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "roles", NULL)) && dataset_roles(r, v, c) < 0)
        return -1;
    return 0;
}
