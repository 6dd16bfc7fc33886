#include "config_trace.h"

#include <stdlib.h>
#include <string.h>

#include "trace.h"

static const char *const config_trace_format_names[] = {"session", "mooncake", "azure", "veeksha",
                                                        NULL};
static const char *const trace_keys[] = {"path",       "format", "block_size",
                                         "time_scale", "wrap",   NULL};

const char *config_trace_format_name(config_trace_format_t format) {
    return (unsigned)format < 4 ? config_trace_format_names[format] : "?";
}

void config_trace_init(config_trace_t *t) {
    memset(t, 0, sizeof *t);
    t->format = TRACE_FORMAT_SESSION;
    t->block_size = 512;
    t->time_scale = 1.0;
}

void config_trace_free(config_workload_t *w) {
    free(w->trace.path);
    w->trace.path = NULL;
    trace_unref(&w->replay);
}

int config_trace_copy(config_workload_t *dst, const config_workload_t *src) {
    dst->trace.path = src->trace.path ? strdup(src->trace.path) : NULL;
    dst->replay = trace_ref(src->replay);
    return src->trace.path && !dst->trace.path ? -1 : 0;
}

int config_trace_read(config_yaml_t *r, yaml_node_t *workload, config_workload_t *w) {
    yaml_node_t *node = config_yaml_get(r, workload, "trace", NULL);
    config_trace_t *t = &w->trace;
    yaml_node_t *v;
    uint64_t u;
    int index;
    if (w->kind != WORKLOAD_TRACE) {
        if (node != NULL)
            return config_yaml_fail(r, node, "workload.trace",
                                    "a trace goes with kind: trace (kind is %s)",
                                    config_workload_kind_name(w->kind));
        return 0;
    }
    if (node == NULL)
        return config_yaml_fail(r, workload, "workload.trace",
                                "kind: trace needs trace: {path: FILE.jsonl, format: session | "
                                "mooncake | azure | veeksha}");
    if (config_yaml_check_keys(r, node, "workload.trace", trace_keys) < 0)
        return -1;
    if (config_yaml_file(r, node, "workload.trace", "a trace needs path: the JSONL file to replay",
                         &t->path) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "format", NULL))) {
        if (config_yaml_enum(r, v, "workload.trace.format", config_trace_format_names, &index) < 0)
            return -1;
        t->format = (config_trace_format_t)index;
    }
    if ((v = config_yaml_get(r, node, "block_size", NULL))) {
        if (config_yaml_uint(r, v, "workload.trace.block_size", 1u << 20, &u) < 0)
            return -1;
        if (u == 0)
            return config_yaml_fail(r, v, "workload.trace.block_size",
                                    "expected a whole number >= 1 (tokens per hash id)");
        t->block_size = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "time_scale", NULL))) {
        if (config_yaml_number(r, v, "workload.trace.time_scale", &t->time_scale) < 0)
            return -1;
        if (!(t->time_scale > 0))
            return config_yaml_fail(r, v, "workload.trace.time_scale",
                                    "expected a number greater than 0, got '%s'",
                                    config_yaml_text(v));
    }
    if ((v = config_yaml_get(r, node, "wrap", NULL)) &&
        config_yaml_bool(r, v, "workload.trace.wrap", &t->wrap) < 0)
        return -1;
    return 0;
}
