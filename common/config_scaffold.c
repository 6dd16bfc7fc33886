#include "config_scaffold.h"

#include <string.h>

static const char *const scaffold_keys[] = {"system_tokens", "tools", "tool_tokens",
                                            "tool_results",  "roles", NULL};
static const char *const size_keys[] = {"system_tokens", "tools", "tool_tokens", NULL};

/* Tools and descriptions are bounded so one role's tools array stays a few MB at most. */
#define SCAFFOLD_MAX_TOOLS 1024
#define SCAFFOLD_MAX_TOOL_TOKENS 100000

/* Reads the sizes a mapping gives (at path) over *size; the others stay. */
static int scaffold_read_size(config_yaml_t *r, yaml_node_t *map, const char *path,
                              config_scaffold_size_t *size) {
    static const uint64_t max[] = {UINT32_MAX, SCAFFOLD_MAX_TOOLS, SCAFFOLD_MAX_TOOL_TOKENS};
    uint32_t *field[] = {&size->system_tokens, &size->tools, &size->tool_tokens};
    for (size_t i = 0; size_keys[i]; i++) {
        char key[CONFIG_YAML_KEY_MAX];
        uint64_t u;
        yaml_node_t *v = config_yaml_get(r, map, size_keys[i], NULL);
        if (!v)
            continue;
        config_yaml_path(key, sizeof key, path, size_keys[i]);
        if (config_yaml_uint(r, v, key, max[i], &u) < 0)
            return -1;
        *field[i] = (uint32_t)u;
    }
    return 0;
}

/* scaffold.roles: a mapping from role names (known by now: workload.roles and the graph's) to
 * sizes, each defaulting to the section's. */
static int scaffold_read_roles(config_yaml_t *r, yaml_node_t *map, config_t *c,
                               const config_scaffold_size_t *defaults) {
    config_scaffold_t *s = &c->workload.scaffold;
    if (config_yaml_check_mapping(r, map, "workload.scaffold.roles", false) < 0)
        return -1;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = config_yaml_node(r, p->key), *value = config_yaml_node(r, p->value);
        const char *name = config_yaml_text(key);
        char path[CONFIG_YAML_KEY_MAX];
        config_yaml_path(path, sizeof path, "workload.scaffold.roles", name);
        uint32_t role = 0;
        while (role < c->workload.n_roles && strcmp(c->workload.roles[role], name) != 0)
            role++;
        if (role == c->workload.n_roles) {
            const char *near =
                c->workload.n_roles
                    ? config_yaml_closest(name, (const char *const *)c->workload.roles)
                    : NULL;
            return config_yaml_fail(r, key, path, "no role is named '%s'%s%s%s", name,
                                    near ? "; did you mean '" : "", near ? near : "",
                                    near ? "'?" : " (name roles in workload.roles)");
        }
        if (config_yaml_check_keys(r, value, path, size_keys) < 0)
            return -1;
        s->role[role] = *defaults;
        if (scaffold_read_size(r, value, path, &s->role[role]) < 0)
            return -1;
        s->role_given[role] = true;
    }
    return 0;
}

int config_scaffold_read(config_yaml_t *r, yaml_node_t *workload, config_t *c) {
    config_scaffold_t *s = &c->workload.scaffold;
    yaml_node_t *node = config_yaml_get(r, workload, "scaffold", NULL);
    yaml_node_t *v;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "workload.scaffold", scaffold_keys) < 0)
        return -1;
    s->given = true;
    if ((v = config_yaml_get(r, node, "system_tokens", NULL)) &&
        config_yaml_get(r, workload, "system_prompt_tokens", NULL))
        return config_yaml_fail(r, v, "workload.scaffold.system_tokens",
                                "give the system prompt's size once: here or as "
                                "workload.system_prompt_tokens, not both");
    config_scaffold_size_t size = {c->workload.system_prompt_tokens, 0, 0};
    if (scaffold_read_size(r, node, "workload.scaffold", &size) < 0)
        return -1;
    c->workload.system_prompt_tokens = size.system_tokens;
    s->tools = size.tools;
    s->tool_tokens = size.tool_tokens;
    if ((v = config_yaml_get(r, node, "roles", NULL)) && scaffold_read_roles(r, v, c, &size) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "tool_results", NULL))) {
        double x;
        bool tools = s->tools > 0;
        for (size_t i = 0; i < CONFIG_MAX_ROLES; i++)
            tools = tools || (s->role_given[i] && s->role[i].tools > 0);
        if (config_yaml_number(r, v, "workload.scaffold.tool_results", &x) < 0)
            return -1;
        if (!(x >= 0 && x <= 1))
            return config_yaml_fail(r, v, "workload.scaffold.tool_results",
                                    "expected a share in [0, 1], got %s", config_yaml_text(v));
        if (x > 0 && !tools)
            return config_yaml_fail(r, v, "workload.scaffold.tool_results",
                                    "tool results answer tool calls: give workload.scaffold.tools "
                                    "(at least 1) too");
        s->tool_results = x;
    }
    return 0;
}

void config_scaffold_write(FILE *out, const config_workload_t *w) {
    const config_scaffold_t *s = &w->scaffold;
    if (!s->given)
        return;
    fprintf(out, "  scaffold:\n    tools: %u\n    tool_tokens: %u\n    tool_results: %.17g\n",
            (unsigned)s->tools, (unsigned)s->tool_tokens, s->tool_results);
    const char *open = "    roles:\n";
    for (size_t i = 0; i < w->n_roles && i < CONFIG_MAX_ROLES; i++) {
        if (!s->role_given[i])
            continue;
        fprintf(out, "%s      \"%s\": {system_tokens: %u, tools: %u, tool_tokens: %u}\n", open,
                w->roles[i], (unsigned)s->role[i].system_tokens, (unsigned)s->role[i].tools,
                (unsigned)s->role[i].tool_tokens);
        open = "";
    }
}

config_scaffold_size_t config_scaffold_size(const config_t *self, uint32_t role) {
    const config_scaffold_t *s = &self->workload.scaffold;
    if (s->given && role < CONFIG_MAX_ROLES && s->role_given[role])
        return s->role[role];
    if (s->given)
        return (config_scaffold_size_t){self->workload.system_prompt_tokens, s->tools,
                                        s->tool_tokens};
    return (config_scaffold_size_t){self->workload.system_prompt_tokens, 0, 0};
}

uint32_t config_scaffold_words(const config_t *self, uint32_t role) {
    config_scaffold_size_t size = config_scaffold_size(self, role);
    uint64_t words = size.system_tokens;
    if (self->target.api != API_COMPLETIONS) /* completions sends no tools */
        words += (uint64_t)size.tools * size.tool_tokens;
    return words > UINT32_MAX ? UINT32_MAX : (uint32_t)words;
}

uint32_t config_scaffold_shared_words(const config_t *self, uint32_t a, uint32_t b) {
    if (self->workload.scaffold.given && a != b)
        return 0;
    return config_scaffold_words(self, a);
}
