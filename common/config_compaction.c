#include "config_compaction.h"

#include <ctype.h>
#include <string.h>

static const char *const compaction_keys[] = {"limit_tokens", "summary_tokens", "prompt_tokens",
                                              "role", NULL};

/* Reads one whole-number key into *out (left alone when absent). */
static int compaction_uint(config_yaml_t *r, yaml_node_t *map, const char *name, uint64_t min,
                           uint32_t *out) {
    char path[CONFIG_YAML_KEY_MAX];
    uint64_t u;
    yaml_node_t *v = config_yaml_get_at(r, map, "workload.compaction", name, path);
    if (!v)
        return 0;
    if (config_yaml_uint(r, v, path, UINT32_MAX, &u) < 0)
        return -1;
    if (u < min)
        return config_yaml_fail(r, v, path, "expected a whole number >= %llu, got %s",
                                (unsigned long long)min, config_yaml_text(v));
    *out = (uint32_t)u;
    return 0;
}

/* Whether a node of the workload has role index `role` (every turn of chat and requests has 0). */
static bool compaction_role_taken(const config_t *c, uint32_t role) {
    const config_workload_t *w = &c->workload;
    if (w->kind != WORKLOAD_GRAPH)
        return role == 0;
    for (size_t i = 0; i < w->graph.n_nodes; i++)
        if (w->graph.nodes[i].role == role)
            return true;
    return false;
}

static int compaction_role(config_yaml_t *r, yaml_node_t *map, config_t *c) {
    const char *path = "workload.compaction.role";
    yaml_node_t *v = config_yaml_get(r, map, "role", NULL);
    const char *name = "compaction";
    if (v && !(name = config_yaml_scalar(r, v, path, "a role name")))
        return -1;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
            return config_yaml_fail(
                r, v, path, "'%s' is not a role name (letters, digits, '_', '-', '.')", name);
    if (c->workload.n_roles == 0 && config_role_index(c, "default", &c->workload.compaction.role))
        return config_yaml_fail(r, v ? v : map, path, "out of memory");
    if (c->workload.n_roles >= CONFIG_MAX_ROLES)
        return config_yaml_fail(r, v ? v : map, path, "at most %d roles", CONFIG_MAX_ROLES);
    if (config_role_index(c, name, &c->workload.compaction.role) < 0)
        return config_yaml_fail(r, v ? v : map, path, "out of memory");
    if (compaction_role_taken(c, c->workload.compaction.role))
        return config_yaml_fail(r, v ? v : map, path,
                                "role '%s' is a node's role: summarise requests need a role of "
                                "their own",
                                name);
    return 0;
}

int config_compaction_read(config_yaml_t *r, yaml_node_t *workload, config_t *c) {
    config_compaction_t *s = &c->workload.compaction;
    yaml_node_t *node = config_yaml_get(r, workload, "compaction", NULL);
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "workload.compaction", compaction_keys) < 0)
        return -1;
    s->summary_tokens = 512;
    s->prompt_tokens = 32;
    if (!config_yaml_get(r, node, "limit_tokens", NULL))
        return config_yaml_fail(r, node, "workload.compaction.limit_tokens",
                                "required: the context size (prompt + max_tokens) that triggers "
                                "a summarise request");
    if (compaction_uint(r, node, "limit_tokens", 1, &s->limit_tokens) < 0 ||
        compaction_uint(r, node, "summary_tokens", 1, &s->summary_tokens) < 0 ||
        compaction_uint(r, node, "prompt_tokens", 0, &s->prompt_tokens) < 0)
        return -1;
    return compaction_role(r, node, c);
}

void config_compaction_write(FILE *out, const config_workload_t *w) {
    const config_compaction_t *s = &w->compaction;
    if (!s->limit_tokens)
        return;
    fprintf(out,
            "  compaction:\n    limit_tokens: %u\n    summary_tokens: %u\n    prompt_tokens: %u\n"
            "    role: \"%s\"\n",
            (unsigned)s->limit_tokens, (unsigned)s->summary_tokens, (unsigned)s->prompt_tokens,
            w->roles[s->role]);
}

bool config_compaction_role(const config_t *self, uint32_t role) {
    return self->workload.compaction.limit_tokens && role == self->workload.compaction.role;
}
