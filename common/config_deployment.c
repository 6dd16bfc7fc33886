#include "config_deployment.h"

#include <jansson.h>
#include <stdlib.h>

/* The node as JSON: NULL (with r->err filled) when a mapping's keys are not unique scalars. */
static json_t *config_deployment_json(config_yaml_t *r, yaml_node_t *node, const char *path) {
    if (node->type == YAML_SCALAR_NODE)
        return json_string(config_yaml_text(node));
    if (node->type == YAML_SEQUENCE_NODE) {
        json_t *array = json_array();
        int i = 0;
        for (yaml_node_item_t *item = node->data.sequence.items.start;
             item < node->data.sequence.items.top; item++, i++) {
            char child[CONFIG_YAML_KEY_MAX];
            snprintf(child, sizeof child, "%s[%d]", path, i);
            json_t *value = config_deployment_json(r, config_yaml_node(r, *item), child);
            if (!value) {
                json_decref(array);
                return NULL;
            }
            json_array_append_new(array, value);
        }
        return array;
    }
    if (config_yaml_check_mapping(r, node, path, false) < 0)
        return NULL;
    json_t *object = json_object();
    for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
         pair < node->data.mapping.pairs.top; pair++) {
        const char *key = config_yaml_text(config_yaml_node(r, pair->key));
        char child[CONFIG_YAML_KEY_MAX];
        config_yaml_path(child, sizeof child, path, key);
        json_t *value = config_deployment_json(r, config_yaml_node(r, pair->value), child);
        if (!value) {
            json_decref(object);
            return NULL;
        }
        json_object_set_new(object, key, value);
    }
    return object;
}

int config_deployment_parse(config_yaml_t *r, yaml_node_t *node, char **out) {
    if (node == NULL)
        return 0;
    if (node->type != YAML_MAPPING_NODE) {
        char got[64];
        config_yaml_describe(node, got, sizeof got);
        return config_yaml_fail(r, node, "deployment",
                                "expected a mapping of deployment details (e.g. Model: ..., "
                                "GPU: ...), got %s",
                                got);
    }
    json_t *map = config_deployment_json(r, node, "deployment");
    if (!map)
        return -1;
    char *text = json_dumps(map, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(map);
    if (!text)
        return config_yaml_fail(r, node, "deployment", "out of memory");
    free(*out);
    *out = text;
    return 0;
}

void config_deployment_write(FILE *out, const char *deployment) {
    if (deployment)
        fprintf(out, "deployment: %s\n", deployment);
}
