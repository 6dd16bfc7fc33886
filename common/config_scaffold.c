#include "config_scaffold.h"

static const char *const scaffold_keys[] = {"system_tokens", "tools", "tool_tokens", "tool_results",
                                            NULL};

/* Tools and descriptions are bounded so one role's tools array stays a few MB at most. */
#define SCAFFOLD_MAX_TOOLS 1024
#define SCAFFOLD_MAX_TOOL_TOKENS 100000

int config_scaffold_read(config_yaml_t *r, yaml_node_t *workload, config_t *c) {
    config_scaffold_t *s = &c->workload.scaffold;
    yaml_node_t *key = NULL;
    yaml_node_t *node = config_yaml_get(r, workload, "scaffold", &key);
    yaml_node_t *v;
    uint64_t u;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "workload.scaffold", scaffold_keys) < 0)
        return -1;
    s->given = true;
    if ((v = config_yaml_get(r, node, "system_tokens", NULL))) {
        if (config_yaml_get(r, workload, "system_prompt_tokens", NULL))
            return config_yaml_fail(r, v, "workload.scaffold.system_tokens",
                                    "give the system prompt's size once: here or as "
                                    "workload.system_prompt_tokens, not both");
        if (config_yaml_uint(r, v, "workload.scaffold.system_tokens", UINT32_MAX, &u) < 0)
            return -1;
        c->workload.system_prompt_tokens = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "tools", NULL))) {
        if (config_yaml_uint(r, v, "workload.scaffold.tools", SCAFFOLD_MAX_TOOLS, &u) < 0)
            return -1;
        s->tools = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "tool_tokens", NULL))) {
        if (config_yaml_uint(r, v, "workload.scaffold.tool_tokens", SCAFFOLD_MAX_TOOL_TOKENS, &u) <
            0)
            return -1;
        s->tool_tokens = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "tool_results", NULL))) {
        double x;
        if (config_yaml_number(r, v, "workload.scaffold.tool_results", &x) < 0)
            return -1;
        if (!(x >= 0 && x <= 1))
            return config_yaml_fail(r, v, "workload.scaffold.tool_results",
                                    "expected a share in [0, 1], got %s", config_yaml_text(v));
        if (x > 0 && s->tools == 0)
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
}

uint32_t config_scaffold_words(const config_t *self, uint32_t role) {
    const config_workload_t *w = &self->workload;
    uint64_t words = w->system_prompt_tokens;
    if (w->scaffold.given && self->target.api == API_CHAT)
        words += (uint64_t)w->scaffold.tools * w->scaffold.tool_tokens;
    (void)role; /* every role's scaffold has the same sizes */
    return words > UINT32_MAX ? UINT32_MAX : (uint32_t)words;
}

uint32_t config_scaffold_shared_words(const config_t *self, uint32_t a, uint32_t b) {
    if (self->workload.scaffold.given && a != b)
        return 0;
    return config_scaffold_words(self, a);
}
