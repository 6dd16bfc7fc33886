/* A Veeksha file's session_generator onto stampede's workload (docs/workloads.md, "Veeksha files").
 * Where Veeksha has a default (a generator left out, a whole section left out), the default is
 * Veeksha's. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_veeksha_internal.h"

static const char *const generator_types[] = {"synthetic", "trace", "lmeval", NULL};
static const char *const synthetic_keys[] = {"type", "session_graph", "channels", "output_spec",
                                             NULL};
static const char *const trace_keys[] = {"type", "trace_file", "wrap_mode", "flavor", NULL};
static const char *const graph_types[] = {"linear", "single_request", "branching", NULL};
static const char *const linear_keys[] = {"type", "num_request_generator", "request_wait_generator",
                                          "inherit_history", NULL};
static const char *const single_keys[] = {"type", NULL};
static const char *const branching_keys[] = {"type",
                                             "num_layers_generator",
                                             "layer_width_generator",
                                             "fan_out_generator",
                                             "fan_in_generator",
                                             "connection_dist_generator",
                                             "request_wait_generator",
                                             "inherit_history",
                                             "single_root",
                                             NULL};
static const char *const channel_keys[] = {"type", "body_length_generator", "shared_prefix_ratio",
                                           "shared_prefix_probability", NULL};
static const char *const output_spec_keys[] = {"text", "image", "audio", "video", NULL};
static const char *const output_text_keys[] = {"output_length_generator", NULL};
static const char *const flavor_keys[] = {"type", "page_size", NULL};

/* The one node of a generated shape (linear: "turn", branching: "node"), with the workload's
 * lengths and waits. */
static int veeksha_graph_slot(veeksha_t *v, config_graph_shape_t shape, double history) {
    config_t *c = v->c;
    config_graph_t *g = &c->workload.graph;
    c->workload.kind = WORKLOAD_GRAPH;
    g->shape = shape;
    g->nodes = calloc(1, sizeof *g->nodes);
    if (!g->nodes)
        return config_yaml_fail(v->r, NULL, "session_generator.session_graph", "out of memory");
    g->n_nodes = 1;
    config_graph_node_t *n = &g->nodes[0];
    n->history = history;
    n->history_parent = UINT32_MAX;
    dist_init(&n->input_tokens);
    dist_init(&n->output_tokens);
    dist_init(&n->wait_after_ready);
    if (!(n->id = strdup(shape == GRAPH_LINEAR ? "turn" : "node")) ||
        config_role_index(c, n->id, &n->role) < 0 ||
        dist_copy(&n->input_tokens, &c->workload.input_tokens) < 0 ||
        dist_copy(&n->output_tokens, &c->workload.output_tokens) < 0 ||
        dist_copy(&n->wait_after_ready, &c->workload.think_time) < 0)
        return config_yaml_fail(v->r, NULL, "session_generator.session_graph", "out of memory");
    return 0;
}

/* fixed n or uniform (a, b) minus one: Veeksha counts the root's layer, stampede does not. */
static int veeksha_layers(veeksha_t *v, yaml_node_t *at, const char *path, dist_t *layers,
                          dist_t *depth) {
    dist_t d;
    if (layers->kind == DIST_FIXED)
        dist_fixed(&d, layers->param[DIST_P_VALUE] - 1);
    else if (layers->kind == DIST_UNIFORM)
        veeksha_uniform(&d, layers->param[DIST_P_MIN] - 1, layers->param[DIST_P_MAX] - 1);
    else
        return config_yaml_fail(v->r, at, path,
                                "stampede maps a fixed or uniform number of layers here");
    return veeksha_prepare(v, at, path, &d, depth);
}

typedef struct graph_read {
    int type;             /* index into graph_types */
    double history;       /* inherit_history: 1, else 0 */
    dist_t depth, layers; /* branching */
} graph_read_t;

static int veeksha_branching(veeksha_t *v, yaml_node_t *node, const char *path, graph_read_t *gr) {
    char key[CONFIG_YAML_KEY_MAX];
    config_graph_t *g = &v->c->workload.graph;
    dist_t def, dist_value;
    bool single_root = true;
    dist_init(&dist_value);
    static const struct {
        const char *key;
        double min, max;
    } defaults[] = {{"num_layers_generator", 2, 5},
                    {"layer_width_generator", 1, 3},
                    {"fan_out_generator", 1, 2},
                    {"fan_in_generator", 1, 2}};
    dist_t *outs[] = {&gr->layers, &g->width, &g->fan_out, &g->fan_in};
    for (size_t i = 0; i < 4; i++) {
        veeksha_uniform(&def, defaults[i].min, defaults[i].max);
        dist_prepare(&def, NULL, 0);
        config_yaml_path(key, sizeof key, path, defaults[i].key);
        int rc = veeksha_length(v, node ? veeksha_get(v, node, defaults[i].key) : NULL, key, &def,
                                outs[i]);
        dist_clear(&def);
        if (rc < 0)
            return -1;
    }
    g->width_given = true;
    config_yaml_path(key, sizeof key, path, "num_layers_generator");
    if (veeksha_layers(v, node ? veeksha_get(v, node, "num_layers_generator") : node, key,
                       &gr->layers, &g->depth) < 0)
        return -1;
    config_yaml_path(key, sizeof key, path, "connection_dist_generator");
    dist_fixed(&def, 1);
    yaml_node_t *skip = node ? veeksha_get(v, node, "connection_dist_generator") : NULL;
    int rc = veeksha_length(v, skip, key, &def, &dist_value);
    bool skips = rc == 0 && (dist_value.kind != DIST_FIXED || dist_value.param[DIST_P_VALUE] > 1);
    dist_clear(&dist_value);
    if (rc < 0 || (skips && veeksha_note(v, skip, key,
                                         "skip connections are not drawn: stampede's parents "
                                         "come from the layer just before") < 0))
        return -1;
    if (node && veeksha_bool(v, node, path, "single_root", &single_root) < 0)
        return -1;
    config_yaml_path(key, sizeof key, path, "single_root");
    if (!single_root)
        return config_yaml_fail(v->r, veeksha_get(v, node, "single_root"), key,
                                "false is not mapped: stampede's branching graphs have one root");
    return 0;
}

static int veeksha_session_graph(veeksha_t *v, yaml_node_t *node, graph_read_t *gr) {
    const char *path = "session_generator.session_graph";
    char key[CONFIG_YAML_KEY_MAX];
    config_workload_t *w = &v->c->workload;
    gr->type = 0;
    if (node != NULL) {
        yaml_node_t *t = veeksha_get(v, node, "type");
        if (t && config_yaml_enum(v->r, t, "session_generator.session_graph.type", graph_types,
                                  &gr->type) < 0)
            return -1;
        static const char *const *const keys[] = {linear_keys, single_keys, branching_keys};
        if (config_yaml_check_keys(v->r, node, path, keys[gr->type]) < 0)
            return -1;
    }
    bool inherit = true;
    if (node && veeksha_bool(v, node, path, "inherit_history", &inherit) < 0)
        return -1;
    gr->history = inherit ? 1 : 0;
    dist_t def;
    veeksha_uniform(&def, 6, 12);
    dist_prepare(&def, NULL, 0);
    int rc = 0;
    if (gr->type == 0) {
        config_yaml_path(key, sizeof key, path, "num_request_generator");
        rc = veeksha_length(v, node ? veeksha_get(v, node, "num_request_generator") : NULL, key,
                            &def, &w->turns);
    } else if (gr->type == 1) {
        dist_fixed(&w->turns, 1);
    } else {
        rc = veeksha_branching(v, node, path, gr);
    }
    dist_clear(&def);
    config_yaml_path(key, sizeof key, path, "request_wait_generator");
    if (rc == 0 && gr->type != 1 &&
        veeksha_wait(v, node ? veeksha_get(v, node, "request_wait_generator") : NULL, key,
                     &w->think_time) < 0)
        return -1;
    return rc;
}

/* shared_prefix_ratio r of each root prompt is the same text across sessions: stampede's shared
 * system prompt of r x the mean prompt length, the fresh part scaled by 1 - r. */
static int veeksha_shared_prefix(veeksha_t *v, yaml_node_t *item, const char *path, double ratio,
                                 double probability) {
    config_workload_t *w = &v->c->workload;
    char key[CONFIG_YAML_KEY_MAX];
    config_yaml_path(key, sizeof key, path, "shared_prefix_ratio");
    if (ratio > 0) {
        double mean = dist_mean(&w->input_tokens);
        w->system_prompt_tokens = (uint32_t)llround(ratio * mean);
        dist_t d;
        if (w->input_tokens.kind == DIST_FIXED) {
            dist_fixed(&d, fmax(1, llround(w->input_tokens.param[DIST_P_VALUE] * (1 - ratio))));
        } else if (w->input_tokens.kind == DIST_UNIFORM) {
            veeksha_uniform(&d, fmax(1, llround(w->input_tokens.param[DIST_P_MIN] * (1 - ratio))),
                            fmax(1, llround(w->input_tokens.param[DIST_P_MAX] * (1 - ratio))));
        } else {
            dist_init(&d);
            if (dist_copy(&d, &w->input_tokens) < 0)
                return config_yaml_fail(v->r, item, key, "out of memory");
            if (veeksha_note(v, item, key,
                             "the shared prefix is added to this length generator's prompts, not "
                             "taken from them") < 0)
                return -1;
        }
        if (veeksha_prepare(v, item, key, &d, &w->input_tokens) < 0)
            return -1;
    }
    config_yaml_path(key, sizeof key, path, "shared_prefix_probability");
    if (ratio > 0 && probability < 1)
        return veeksha_note(v, veeksha_get(v, item, "shared_prefix_probability"), key,
                            "every session shares the prefix (stampede's system prompt), not a "
                            "share %g of them",
                            probability);
    return 0;
}

static int veeksha_channels(veeksha_t *v, yaml_node_t *node) {
    char path[CONFIG_YAML_KEY_MAX], key[CONFIG_YAML_KEY_MAX];
    config_workload_t *w = &v->c->workload;
    dist_t def;
    veeksha_uniform(&def, 6, 12);
    dist_prepare(&def, NULL, 0);
    if (node == NULL) {
        int rc = veeksha_length(v, NULL, "session_generator.channels", &def, &w->input_tokens);
        dist_clear(&def);
        return rc;
    }
    dist_clear(&def);
    if (node->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(v->r, node, "session_generator.channels",
                                "expected a list of channels, e.g. [{type: text}]");
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (n != 1)
        return config_yaml_fail(v->r, node, "session_generator.channels",
                                "expected one text channel, got %zu channels", n);
    yaml_node_t *item = config_yaml_node(v->r, node->data.sequence.items.start[0]);
    snprintf(path, sizeof path, "session_generator.channels[0]");
    config_yaml_path(key, sizeof key, path, "type");
    yaml_node_t *t = item->type == YAML_MAPPING_NODE ? veeksha_get(v, item, "type") : NULL;
    if (t == NULL)
        return config_yaml_fail(v->r, item, key, "missing key 'type'");
    const char *type = veeksha_name(t);
    if (strcmp(type, "text") != 0)
        return config_yaml_fail(v->r, t, key,
                                "%s channels are out of scope: stampede sends text prompts to "
                                "LLM endpoints",
                                type);
    if (config_yaml_check_keys(v->r, item, path, channel_keys) < 0)
        return -1;
    double ratio = 0, probability = 1;
    config_yaml_path(key, sizeof key, path, "body_length_generator");
    veeksha_uniform(&def, 6, 12);
    dist_prepare(&def, NULL, 0);
    int rc = veeksha_length(v, veeksha_get(v, item, "body_length_generator"), key, &def,
                            &w->input_tokens);
    dist_clear(&def);
    if (rc < 0 || veeksha_number(v, item, path, "shared_prefix_ratio", 0, &ratio) < 0 ||
        veeksha_number(v, item, path, "shared_prefix_probability", 0, &probability) < 0)
        return -1;
    if (ratio >= 1 || probability > 1)
        return config_yaml_fail(v->r, item, path,
                                "shared_prefix_ratio is below 1 and shared_prefix_probability at "
                                "most 1");
    return veeksha_shared_prefix(v, item, path, ratio, probability);
}

static int veeksha_output_spec(veeksha_t *v, yaml_node_t *node) {
    const char *path = "session_generator.output_spec";
    yaml_node_t *text = NULL, *other;
    dist_t def;
    if (node != NULL) {
        if (config_yaml_check_keys(v->r, node, path, output_spec_keys) < 0)
            return -1;
        for (const char *const *k = output_spec_keys + 1; *k; k++)
            if ((other = veeksha_get(v, node, *k)))
                return config_yaml_fail(v->r, other, path,
                                        "%s output is out of scope: stampede asks LLM endpoints "
                                        "for text",
                                        *k);
        if ((text = veeksha_get(v, node, "text")) &&
            config_yaml_check_keys(v->r, text, "session_generator.output_spec.text",
                                   output_text_keys) < 0)
            return -1;
    }
    veeksha_uniform(&def, 6, 12);
    dist_prepare(&def, NULL, 0);
    int rc = veeksha_length(v, text ? veeksha_get(v, text, "output_length_generator") : NULL,
                            "session_generator.output_spec.text.output_length_generator", &def,
                            &v->c->workload.output_tokens);
    dist_clear(&def);
    return rc;
}

/* type: trace: trace_file (format veeksha: its timed_synthetic_session rows), wrap_mode (Veeksha's
 * default: true),
 * flavor {type: timed_synthetic_session, page_size (the server's KV page: not the client's)};
 * flavor untimed_content_multi_turn (rows of real conversations) is a dataset of JSONL rows
 * replayed as chats (workload.dataset, docs/workloads.md "Datasets"). */
static int veeksha_trace(veeksha_t *v, yaml_node_t *node) {
    const char *path = "session_generator";
    config_t *c = v->c;
    yaml_node_t *n;
    c->workload.kind = WORKLOAD_TRACE;
    c->workload.trace.format = TRACE_FORMAT_VEEKSHA;
    c->workload.trace.wrap = true;
    if (config_yaml_check_keys(v->r, node, path, trace_keys) < 0)
        return -1;
    if ((n = veeksha_get(v, node, "trace_file")) == NULL)
        return config_yaml_fail(v->r, node, "session_generator.trace_file",
                                "missing key 'trace_file'");
    const char *file = config_yaml_scalar(v->r, n, "session_generator.trace_file", "a file name");
    if (file == NULL)
        return -1;
    free(c->workload.trace.path);
    if ((c->workload.trace.path = config_yaml_resolve_path(v->r, file)) == NULL)
        return config_yaml_fail(v->r, n, "session_generator.trace_file", "out of memory");
    if (access(c->workload.trace.path, R_OK) != 0)
        return config_yaml_fail(v->r, n, "session_generator.trace_file",
                                "cannot read the trace '%s' (%s): %s", file, c->workload.trace.path,
                                strerror(errno));
    if (veeksha_bool(v, node, path, "wrap_mode", &c->workload.trace.wrap) < 0)
        return -1;
    yaml_node_t *flavor = veeksha_get(v, node, "flavor");
    if (flavor == NULL)
        return 0;
    if ((n = veeksha_get(v, flavor, "type")) &&
        strcmp(veeksha_name(n), "untimed_content_multi_turn") == 0) {
        c->workload.kind = WORKLOAD_CHAT;
        c->workload.dataset.path = c->workload.trace.path;
        c->workload.dataset.format = DATASET_FORMAT_JSONL;
        c->workload.trace.path = NULL;
        if (c->workload.trace.wrap &&
            veeksha_note(v, n, "session_generator.wrap_mode",
                         "each conversation of the trace is sent once (a dataset does not "
                         "wrap)") < 0)
            return -1;
        c->workload.trace.wrap = false;
    } else if (n && strcmp(veeksha_name(n), "timed_synthetic_session") != 0) {
        return config_yaml_fail(v->r, n, "session_generator.flavor.type",
                                "the %s trace flavor is not mapped: stampede replays "
                                "timed_synthetic_session traces and reads "
                                "untimed_content_multi_turn ones as a dataset",
                                veeksha_name(n));
    }
    return config_yaml_check_keys(v->r, flavor, "session_generator.flavor", flavor_keys);
}

int veeksha_session_generator(veeksha_t *v, yaml_node_t *node) {
    const char *path = "session_generator";
    int type = 0;
    yaml_node_t *t = node ? veeksha_get(v, node, "type") : NULL;
    if (t && config_yaml_enum(v->r, t, "session_generator.type", generator_types, &type) < 0)
        return -1;
    if (type == 2)
        return config_yaml_fail(v->r, t, "session_generator.type",
                                "lmeval sessions are out of scope: stampede measures serving "
                                "performance, not lm-eval accuracy tasks");
    if (type == 1)
        return veeksha_trace(v, node);
    if (node && config_yaml_check_keys(v->r, node, path, synthetic_keys) < 0)
        return -1;
    graph_read_t gr = {0};
    dist_init(&gr.layers);
    config_workload_t *w = &v->c->workload;
    int rc = veeksha_session_graph(v, node ? veeksha_get(v, node, "session_graph") : NULL, &gr);
    dist_clear(&gr.layers);
    if (rc < 0 || veeksha_channels(v, node ? veeksha_get(v, node, "channels") : NULL) < 0 ||
        veeksha_output_spec(v, node ? veeksha_get(v, node, "output_spec") : NULL) < 0)
        return -1;
    if (gr.type == 2)
        return veeksha_graph_slot(v, GRAPH_BRANCHING, gr.history);
    bool one = w->turns.kind == DIST_FIXED && w->turns.param[DIST_P_VALUE] == 1;
    if (one) {
        w->kind = WORKLOAD_REQUESTS;
        return 0;
    }
    if (gr.history == 1) { /* linear: each request continues the conversation */
        w->kind = WORKLOAD_CHAT;
        return 0;
    }
    dist_clear(&w->graph.length); /* linear without history: a chain of fresh prompts */
    if (dist_copy(&w->graph.length, &w->turns) < 0)
        return config_yaml_fail(v->r, node, path, "out of memory");
    return veeksha_graph_slot(v, GRAPH_LINEAR, 0);
}
