#include "config_veeksha.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const root_keys[] = {
    "session_generator", "traffic_scheduler", "runtime", "seed", "target", "output", "mock", NULL};
static const char *const generator_keys[] = {
    "type", "session_graph", "channels", "output_spec", "trace_file", "wrap_mode", "flavor", NULL};
static const char *const generator_types[] = {"synthetic", "trace", NULL};
static const char *const graph_keys[] = {"type", "num_request_generator", "request_wait_generator",
                                         NULL};
static const char *const graph_types[] = {"linear", NULL};
static const char *const channel_keys[] = {"type", "body_length_generator", NULL};
static const char *const channel_types[] = {"text", NULL};
static const char *const output_spec_keys[] = {"text", NULL};
static const char *const output_text_keys[] = {"output_length_generator", NULL};
static const char *const flavor_keys[] = {"type", "page_size", NULL};
static const char *const flavor_types[] = {"timed_synthetic_session", NULL};
static const char *const scheduler_keys[] = {"type", "target_concurrent_sessions", "arrival_rate",
                                             NULL};
static const char *const scheduler_types[] = {"concurrent", "rate", NULL};
static const char *const runtime_keys[] = {"max_sessions", "max_requests", "benchmark_timeout",
                                           NULL};
static const char *const value_types[] = {"fixed", "uniform", "normal", "poisson", NULL};
static const char *const fixed_keys[] = {"type", "value", NULL};
static const char *const uniform_keys[] = {"type", "min", "max", NULL};
static const char *const normal_keys[] = {"type", "mean", "std", "min", "max", NULL};
static const char *const poisson_keys[] = {"type", "arrival_rate", NULL};

bool config_veeksha_is(config_yaml_t *r, yaml_node_t *root) {
    return root->type == YAML_MAPPING_NODE &&
           config_yaml_get(r, root, "session_generator", NULL) != NULL;
}

/* A required key of map, or NULL after saying it is missing. */
static yaml_node_t *need(config_yaml_t *r, yaml_node_t *map, const char *path, const char *key) {
    yaml_node_t *v = config_yaml_get(r, map, key, NULL);
    if (v == NULL) {
        char full[CONFIG_YAML_KEY_MAX];
        config_yaml_path(full, sizeof full, path, key);
        config_yaml_fail(r, map, full, "missing key '%s'", key);
    }
    return v;
}

static int number(config_yaml_t *r, yaml_node_t *map, const char *path, const char *key, double min,
                  double *out) {
    char full[CONFIG_YAML_KEY_MAX];
    config_yaml_path(full, sizeof full, path, key);
    yaml_node_t *v = need(r, map, path, key);
    if (v == NULL || config_yaml_number(r, v, full, out) < 0)
        return -1;
    if (!(*out >= min))
        return config_yaml_fail(r, v, full, "expected a number >= %g, got '%s'", min,
                                config_yaml_text(v));
    return 0;
}

/* A Veeksha value generator: fixed {value}, uniform {min, max}, normal {mean, std[, min, max]}
 * and, for waits (seconds), poisson {arrival_rate}: waits of an exponential with mean
 * 1 / arrival_rate. Counts are >= 1. */
static int generator(config_yaml_t *r, yaml_node_t *node, const char *path, bool wait,
                     dist_t *out) {
    char key[CONFIG_YAML_KEY_MAX];
    int type;
    double a = 0, b = 0, min = wait ? 0 : 1;
    config_yaml_path(key, sizeof key, path, "type");
    yaml_node_t *t = node->type == YAML_MAPPING_NODE ? need(r, node, path, "type") : NULL;
    if (node->type != YAML_MAPPING_NODE)
        return config_yaml_fail(r, node, path,
                                "expected a generator: {type: fixed | uniform | "
                                "normal%s, ...}",
                                wait ? " | poisson" : "");
    if (t == NULL || config_yaml_enum(r, t, key, value_types, &type) < 0)
        return -1;
    static const char *const *const keys[] = {fixed_keys, uniform_keys, normal_keys, poisson_keys};
    if (config_yaml_check_keys(r, node, path, keys[type]) < 0)
        return -1;
    dist_t d;
    dist_init(&d);
    char why[256] = "";
    int rc = 0;
    if (type == 0) {
        rc = number(r, node, path, "value", min, &a);
        dist_fixed(&d, a);
    } else if (type == 1) {
        rc = number(r, node, path, "min", min, &a) || number(r, node, path, "max", a, &b) ? -1 : 0;
        d.kind = DIST_UNIFORM;
        dist_set(&d, DIST_P_MIN, a, NULL, 0);
        dist_set(&d, DIST_P_MAX, b, NULL, 0);
    } else if (type == 2) {
        rc = number(r, node, path, "mean", min, &a) || number(r, node, path, "std", 0, &b) ? -1 : 0;
        d.kind = DIST_NORMAL;
        dist_set(&d, DIST_P_MEAN, a, NULL, 0);
        dist_set(&d, DIST_P_STDDEV, b, NULL, 0);
        dist_set(&d, DIST_P_MIN, min, NULL, 0);
        double clamp;
        if (rc == 0 && config_yaml_get(r, node, "min", NULL)) {
            rc = number(r, node, path, "min", min, &clamp);
            dist_set(&d, DIST_P_MIN, clamp, NULL, 0);
        }
        if (rc == 0 && config_yaml_get(r, node, "max", NULL)) {
            rc = number(r, node, path, "max", min, &clamp);
            dist_set(&d, DIST_P_MAX, clamp, NULL, 0);
        }
    } else if (!wait) {
        return config_yaml_fail(r, t, key,
                                "a poisson generator gives waits (request_wait_generator); use "
                                "fixed, uniform or normal for lengths");
    } else {
        rc = number(r, node, path, "arrival_rate", 0, &a);
        if (rc == 0 && !(a > 0))
            rc = config_yaml_fail(r, node, path, "arrival_rate must be greater than 0");
        d.kind = DIST_EXPONENTIAL;
        dist_set(&d, DIST_P_MEAN, rc == 0 ? 1.0 / a : 1.0, NULL, 0);
    }
    if (rc == 0 && dist_prepare(&d, why, sizeof why) != 0)
        rc = config_yaml_fail(r, node, path, "%s", why);
    if (rc != 0) {
        dist_clear(&d);
        return -1;
    }
    dist_clear(out);
    *out = d;
    return 0;
}

static int session_graph(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    const char *path = "session_generator.session_graph";
    int type;
    yaml_node_t *v;
    if (config_yaml_check_keys(r, node, path, graph_keys) < 0)
        return -1;
    if ((v = need(r, node, path, "type")) == NULL ||
        config_yaml_enum(r, v, "session_generator.session_graph.type", graph_types, &type) < 0)
        return -1;
    c->workload.kind = WORKLOAD_CHAT; /* linear: each request continues the conversation */
    if ((v = need(r, node, path, "num_request_generator")) == NULL ||
        generator(r, v, "session_generator.session_graph.num_request_generator", false,
                  &c->workload.turns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "request_wait_generator", NULL)) &&
        generator(r, v, "session_generator.session_graph.request_wait_generator", true,
                  &c->workload.think_time) < 0)
        return -1;
    return 0;
}

static int channels(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    char path[CONFIG_YAML_KEY_MAX], key[CONFIG_YAML_KEY_MAX];
    int type;
    if (node->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(r, node, "session_generator.channels",
                                "expected a list of channels, e.g. [{type: text, "
                                "body_length_generator: ...}]");
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (n != 1)
        return config_yaml_fail(r, node, "session_generator.channels",
                                "expected one text channel, got %zu channels", n);
    yaml_node_t *item = config_yaml_node(r, node->data.sequence.items.start[0]);
    snprintf(path, sizeof path, "session_generator.channels[0]");
    yaml_node_t *v;
    if (config_yaml_check_keys(r, item, path, channel_keys) < 0)
        return -1;
    config_yaml_path(key, sizeof key, path, "type");
    if ((v = need(r, item, path, "type")) == NULL ||
        config_yaml_enum(r, v, key, channel_types, &type) < 0)
        return -1;
    config_yaml_path(key, sizeof key, path, "body_length_generator");
    if ((v = need(r, item, path, "body_length_generator")) == NULL ||
        generator(r, v, key, false, &c->workload.input_tokens) < 0)
        return -1;
    return 0;
}

static int output_spec(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    yaml_node_t *text, *v;
    if (config_yaml_check_keys(r, node, "session_generator.output_spec", output_spec_keys) < 0 ||
        (text = need(r, node, "session_generator.output_spec", "text")) == NULL ||
        config_yaml_check_keys(r, text, "session_generator.output_spec.text", output_text_keys) <
            0 ||
        (v = need(r, text, "session_generator.output_spec.text", "output_length_generator")) ==
            NULL)
        return -1;
    return generator(r, v, "session_generator.output_spec.text.output_length_generator", false,
                     &c->workload.output_tokens);
}

/* type: trace: trace_file (session-trace JSONL), wrap_mode, flavor {type:
 * timed_synthetic_session, page_size (the server's KV page: not the client's business)}. */
static int trace_generator(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    const char *path = "session_generator";
    yaml_node_t *v;
    int type;
    c->workload.kind = WORKLOAD_TRACE;
    if ((v = need(r, node, path, "trace_file")) == NULL)
        return -1;
    const char *file = config_yaml_scalar(r, v, "session_generator.trace_file", "a file name");
    if (file == NULL)
        return -1;
    free(c->workload.trace.path);
    if ((c->workload.trace.path = config_yaml_resolve_path(r, file)) == NULL)
        return config_yaml_fail(r, v, "session_generator.trace_file", "out of memory");
    if ((v = config_yaml_get(r, node, "wrap_mode", NULL)) &&
        config_yaml_bool(r, v, "session_generator.wrap_mode", &c->workload.trace.wrap) < 0)
        return -1;
    yaml_node_t *flavor = config_yaml_get(r, node, "flavor", NULL);
    if (flavor &&
        (config_yaml_check_keys(r, flavor, "session_generator.flavor", flavor_keys) < 0 ||
         ((v = config_yaml_get(r, flavor, "type", NULL)) &&
          config_yaml_enum(r, v, "session_generator.flavor.type", flavor_types, &type) < 0)))
        return -1;
    for (const char *const *k =
             (const char *const[]){"session_graph", "channels", "output_spec", NULL};
         *k; k++)
        if ((v = config_yaml_get(r, node, *k, NULL)))
            return config_yaml_fail(r, v, "session_generator", "%s goes with type: synthetic", *k);
    return 0;
}

static int session_generator(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    const char *path = "session_generator";
    yaml_node_t *v;
    int type;
    if (config_yaml_check_keys(r, node, path, generator_keys) < 0)
        return -1;
    if ((v = need(r, node, path, "type")) == NULL ||
        config_yaml_enum(r, v, "session_generator.type", generator_types, &type) < 0)
        return -1;
    if (type == 1)
        return trace_generator(r, node, c);
    for (const char *const *k = (const char *const[]){"trace_file", "wrap_mode", "flavor", NULL};
         *k; k++)
        if ((v = config_yaml_get(r, node, *k, NULL)))
            return config_yaml_fail(r, v, "session_generator", "%s goes with type: trace", *k);
    if ((v = need(r, node, path, "session_graph")) == NULL || session_graph(r, v, c) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "channels", NULL)) && channels(r, v, c) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "output_spec", NULL)) && output_spec(r, v, c) < 0)
        return -1;
    return 0;
}

static int traffic_scheduler(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    const char *path = "traffic_scheduler";
    yaml_node_t *v;
    int type;
    uint64_t u;
    double rate;
    if (config_yaml_check_keys(r, node, path, scheduler_keys) < 0)
        return -1;
    if ((v = need(r, node, path, "type")) == NULL ||
        config_yaml_enum(r, v, "traffic_scheduler.type", scheduler_types, &type) < 0)
        return -1;
    if (type == 0) {
        c->scheduler.kind = SCHEDULER_CONCURRENT;
        if ((v = config_yaml_get(r, node, "target_concurrent_sessions", NULL))) {
            if (config_yaml_uint(r, v, "traffic_scheduler.target_concurrent_sessions", UINT32_MAX,
                                 &u) < 0)
                return -1;
            if (u == 0)
                return config_yaml_fail(r, v, "traffic_scheduler.target_concurrent_sessions",
                                        "expected a whole number >= 1");
            c->scheduler.concurrency = (uint32_t)u;
        }
        return 0;
    }
    c->scheduler.kind = SCHEDULER_RATE;
    c->scheduler.concurrency = 0;
    if (c->workload.kind == WORKLOAD_TRACE) /* the arrivals come from the trace */
        return 0;
    if (number(r, node, path, "arrival_rate", 0, &rate) < 0)
        return -1;
    if (!(rate > 0))
        return config_yaml_fail(r, config_yaml_get(r, node, "arrival_rate", NULL),
                                "traffic_scheduler.arrival_rate",
                                "expected sessions per second greater than 0");
    c->scheduler.rate = rate;
    return 0;
}

static int runtime(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    yaml_node_t *v;
    double seconds;
    if (config_yaml_check_keys(r, node, "runtime", runtime_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max_sessions", NULL)) &&
        config_yaml_uint(r, v, "runtime.max_sessions", UINT64_MAX, &c->limits.max_sessions) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max_requests", NULL)) &&
        config_yaml_uint(r, v, "runtime.max_requests", UINT64_MAX, &c->limits.max_requests) < 0)
        return -1;
    if (config_yaml_get(r, node, "benchmark_timeout", NULL)) {
        if (number(r, node, "runtime", "benchmark_timeout", 0, &seconds) < 0)
            return -1;
        c->limits.duration_ns = (int64_t)llround(seconds * 1e9);
    }
    return 0;
}

int config_veeksha_parse(config_yaml_t *r, yaml_node_t *root, config_t *c) {
    yaml_node_t *v;
    if (config_yaml_check_keys(r, root, "", root_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "seed", NULL)) &&
        config_yaml_uint(r, v, "seed", UINT64_MAX, &c->seed) < 0)
        return -1;
    if (session_generator(r, config_yaml_get(r, root, "session_generator", NULL), c) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "traffic_scheduler", NULL)) && traffic_scheduler(r, v, c) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "runtime", NULL)) && runtime(r, v, c) < 0)
        return -1;
    return 0;
}
