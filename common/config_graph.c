/* workload.graph: the session graph of `kind: graph` (a shape and the settings of its nodes, or an
 * explicit node list), read from YAML and checked: a template must be a non-empty DAG whose parents
 * exist and whose history parents are ancestors. Errors name the file, line and node. */
#include "config_graph.h"

#include <stdlib.h>
#include <string.h>

#include "config_dist.h"

static const char *const config_graph_shape_names[] = {"linear",    "diamond",  "fanout",
                                                       "branching", "template", NULL};
static const char *const executors_names[] = {"parallel", "sequential", NULL};
static const char *const graph_keys[] = {"shape",
                                         "nodes",
                                         "message_overhead_tokens",
                                         "step_overhead",
                                         "context_limit",
                                         "context_margin",
                                         "length",
                                         "executors",
                                         "executor_count",
                                         "children",
                                         "child_length",
                                         "rounds",
                                         "depth",
                                         "width",
                                         "fan_out",
                                         "fan_in",
                                         "max_depth",
                                         "max_width",
                                         NULL};
static const char *const slot_keys[] = {
    "role", "history", "append_parent_replies", "input_tokens", "output_tokens", "wait_after_ready",
    NULL};
static const char *const template_keys[] = {
    "id",           "parents",       "history_parent",   "role", "history", "append_parent_replies",
    "input_tokens", "output_tokens", "wait_after_ready", NULL};

/* The slots of each shape, with their default history and append_parent_replies. */
typedef struct slot_default {
    const char *name;
    double history;
    bool append;
} slot_default_t;

static const slot_default_t linear_slots[] = {{"turn", 1.0, false}, {NULL, 0, false}};
static const slot_default_t diamond_slots[] = {
    {"planner", 1.0, false}, {"executor", 0.0, true}, {"aggregator", 0.0, true}, {NULL, 0, false}};
static const slot_default_t fanout_slots[] = {
    {"main", 1.0, false}, {"child", 0.0, true}, {"continuation", 1.0, true}, {NULL, 0, false}};
static const slot_default_t branching_slots[] = {{"node", 1.0, false}, {NULL, 0, false}};

static const slot_default_t *shape_slots(config_graph_shape_t shape) {
    switch (shape) {
    case GRAPH_LINEAR:
        return linear_slots;
    case GRAPH_DIAMOND:
        return diamond_slots;
    case GRAPH_FANOUT:
        return fanout_slots;
    case GRAPH_BRANCHING:
        return branching_slots;
    default:
        return NULL;
    }
}

const char *config_graph_shape_name(config_graph_shape_t shape) {
    return (unsigned)shape < 5 ? config_graph_shape_names[shape] : "?";
}

const char *config_graph_executors_name(bool sequential) {
    return executors_names[sequential ? 1 : 0];
}

void config_graph_init(config_graph_t *g) {
    memset(g, 0, sizeof *g);
    g->shape = GRAPH_LINEAR;
    dist_init(&g->length);
    g->length.kind = DIST_UNIFORM;
    dist_set(&g->length, DIST_P_MIN, 100, NULL, 0);
    dist_set(&g->length, DIST_P_MAX, 150, NULL, 0);
    dist_prepare(&g->length, NULL, 0);
    g->executor_count = 3;
    g->children = 3;
    dist_fixed(&g->child_length, 1);
    g->rounds = 1;
    dist_fixed(&g->depth, 3);
    dist_fixed(&g->width, 2);
    dist_fixed(&g->fan_out, 2);
    dist_fixed(&g->fan_in, 1);
    g->max_depth = 16;
    g->max_width = 64;
    dist_fixed(&g->step_overhead, 0);
}

static void node_clear(config_graph_node_t *n) {
    free(n->id);
    free(n->parents);
    dist_clear(&n->input_tokens);
    dist_clear(&n->output_tokens);
    dist_clear(&n->wait_after_ready);
    memset(n, 0, sizeof *n);
}

static void nodes_free(config_graph_node_t *nodes, size_t n) {
    for (size_t i = 0; nodes && i < n; i++)
        node_clear(&nodes[i]);
    free(nodes);
}

void config_graph_free(config_graph_t *g) {
    nodes_free(g->nodes, g->n_nodes);
    dist_clear(&g->length);
    dist_clear(&g->child_length);
    dist_clear(&g->depth);
    dist_clear(&g->width);
    dist_clear(&g->fan_out);
    dist_clear(&g->fan_in);
    dist_clear(&g->step_overhead);
    memset(g, 0, sizeof *g);
}

int config_graph_copy(config_graph_t *dst, const config_graph_t *src) {
    *dst = *src;
    dst->nodes = NULL;
    dst->n_nodes = 0;
    dist_t *d[] = {&dst->length,  &dst->child_length, &dst->depth,        &dst->width,
                   &dst->fan_out, &dst->fan_in,       &dst->step_overhead};
    const dist_t *s[] = {&src->length,  &src->child_length, &src->depth,        &src->width,
                         &src->fan_out, &src->fan_in,       &src->step_overhead};
    bool ok = true;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        dist_init(d[i]);
        ok = dist_copy(d[i], s[i]) == 0 && ok;
    }
    dst->nodes = calloc(src->n_nodes + 1, sizeof *dst->nodes);
    ok = ok && dst->nodes != NULL;
    for (size_t i = 0; ok && i < src->n_nodes; i++) {
        const config_graph_node_t *a = &src->nodes[i];
        config_graph_node_t *b = &dst->nodes[i];
        *b = *a;
        b->id = a->id ? strdup(a->id) : NULL;
        b->parents = a->n_parents ? malloc(a->n_parents * sizeof *b->parents) : NULL;
        if (b->parents)
            memcpy(b->parents, a->parents, a->n_parents * sizeof *b->parents);
        dist_init(&b->input_tokens);
        dist_init(&b->output_tokens);
        dist_init(&b->wait_after_ready);
        dst->n_nodes = i + 1;
        ok = (!a->id || b->id) && (!a->n_parents || b->parents) &&
             dist_copy(&b->input_tokens, &a->input_tokens) == 0 &&
             dist_copy(&b->output_tokens, &a->output_tokens) == 0 &&
             dist_copy(&b->wait_after_ready, &a->wait_after_ready) == 0;
    }
    if (!ok) {
        config_graph_free(dst);
        return -1;
    }
    return 0;
}

/* Per-node state while reading: which distributions the file gave, and where. */
typedef struct node_read {
    bool input_given, output_given, wait_given;
    yaml_node_t *map;            /* the node's mapping */
    yaml_node_t *parents_node;   /* template: its parents value */
    yaml_node_t *history_parent; /* template: its history_parent value */
    uint32_t order;              /* template: its position once sorted */
    size_t file_index;           /* template: its position in the file */
} node_read_t;

/* history: full | none | a fraction in [0, 1]. */
static int read_history(config_yaml_t *r, yaml_node_t *v, const char *path, double *out) {
    const char *s = config_yaml_scalar(r, v, path, "full, none or a fraction in [0, 1]");
    double x;
    if (s == NULL)
        return -1;
    if (strcmp(s, "full") == 0) {
        *out = 1.0;
        return 0;
    }
    if (strcmp(s, "none") == 0) {
        *out = 0.0;
        return 0;
    }
    if (config_yaml_parse_number(s, &x) && x >= 0.0 && x <= 1.0) {
        *out = x;
        return 0;
    }
    return config_yaml_fail(r, v, path, "expected full, none or a fraction in [0, 1], got '%s'", s);
}

/* The settings every node has (role, history, append, lengths, wait). */
static int read_settings(config_yaml_t *r, yaml_node_t *map, const char *path, config_workload_t *w,
                         config_graph_node_t *n, node_read_t *nr) {
    char key[CONFIG_YAML_KEY_MAX];
    yaml_node_t *v;
    if ((v = config_yaml_get(r, map, "role", NULL))) {
        config_yaml_path(key, sizeof key, path, "role");
        const char *name = config_yaml_scalar(r, v, key, "a role name");
        if (name == NULL)
            return -1;
        if (name[0] == '\0' ||
            strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
                strlen(name))
            return config_yaml_fail(
                r, v, key, "'%s' is not a role name (letters, digits, '_', '-', '.')", name);
        bool known = false;
        for (size_t i = 0; i < w->n_roles; i++)
            known = known || strcmp(w->roles[i], name) == 0;
        if (!known && w->n_roles >= CONFIG_MAX_ROLES)
            return config_yaml_fail(r, v, key, "at most %d roles", CONFIG_MAX_ROLES);
        if (config_workload_role_index(w, name, &n->role) < 0)
            return config_yaml_fail(r, v, key, "out of memory");
    }
    if ((v = config_yaml_get(r, map, "history", NULL))) {
        config_yaml_path(key, sizeof key, path, "history");
        if (read_history(r, v, key, &n->history) < 0)
            return -1;
    }
    if ((v = config_yaml_get(r, map, "append_parent_replies", NULL))) {
        config_yaml_path(key, sizeof key, path, "append_parent_replies");
        if (config_yaml_bool(r, v, key, &n->append_parent_replies) < 0)
            return -1;
    }
    if ((v = config_yaml_get(r, map, "input_tokens", NULL))) {
        config_yaml_path(key, sizeof key, path, "input_tokens");
        if (config_dist_read_tokens(r, v, key, &n->input_tokens) < 0)
            return -1;
        nr->input_given = true;
    }
    if ((v = config_yaml_get(r, map, "output_tokens", NULL))) {
        config_yaml_path(key, sizeof key, path, "output_tokens");
        if (config_dist_read_tokens(r, v, key, &n->output_tokens) < 0)
            return -1;
        nr->output_given = true;
    }
    if ((v = config_yaml_get(r, map, "wait_after_ready", NULL))) {
        config_yaml_path(key, sizeof key, path, "wait_after_ready");
        if (config_dist_read(r, v, key, true, 0, &n->wait_after_ready) < 0)
            return -1;
        nr->wait_given = true;
    }
    return 0;
}

/* Slot nodes of a shape: every slot exists (with its defaults); `nodes` may set any of them. */
static int read_slots(config_yaml_t *r, yaml_node_t *nodes, config_workload_t *w, node_read_t *nr) {
    config_graph_t *g = &w->graph;
    const slot_default_t *slots = shape_slots(g->shape);
    size_t n = 0;
    const char *names[8];
    while (slots[n].name) {
        names[n] = slots[n].name;
        n++;
    }
    names[n] = NULL;
    g->nodes = calloc(n + 1, sizeof *g->nodes);
    if (g->nodes == NULL)
        return config_yaml_fail(r, nodes, "workload.graph.nodes", "out of memory");
    g->n_nodes = n;
    for (size_t i = 0; i < n; i++) {
        config_graph_node_t *s = &g->nodes[i];
        s->history = slots[i].history;
        s->append_parent_replies = slots[i].append;
        s->history_parent = UINT32_MAX;
        if ((s->id = strdup(slots[i].name)) == NULL)
            return config_yaml_fail(r, nodes, "workload.graph.nodes", "out of memory");
    }
    if (nodes == NULL) {
        for (size_t i = 0; i < n; i++)
            if (config_workload_role_index(w, g->nodes[i].id, &g->nodes[i].role) < 0)
                return config_yaml_fail(r, NULL, "workload.graph.nodes", "out of memory");
        return 0;
    }
    char path[CONFIG_YAML_KEY_MAX];
    snprintf(path, sizeof path, "workload.graph.nodes");
    if (nodes->type != YAML_MAPPING_NODE)
        return config_yaml_fail(r, nodes, path,
                                "a %s graph takes a mapping of its nodes (%s%s%s%s%s)",
                                config_graph_shape_name(g->shape), names[0], n > 1 ? ", " : "",
                                n > 1 ? names[1] : "", n > 2 ? ", " : "", n > 2 ? names[2] : "");
    if (config_yaml_check_keys(r, nodes, path, names) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        config_graph_node_t *s = &g->nodes[i];
        yaml_node_t *map = config_yaml_get(r, nodes, s->id, NULL);
        char slot_path[CONFIG_YAML_KEY_MAX];
        config_yaml_path(slot_path, sizeof slot_path, path, s->id);
        bool has_role = map && config_yaml_get(r, map, "role", NULL) != NULL;
        if (!has_role && config_workload_role_index(w, s->id, &s->role) < 0)
            return config_yaml_fail(r, nodes, path, "out of memory");
        if (map == NULL)
            continue;
        s->line = (int)map->start_mark.line + 1;
        nr[i].map = map;
        if (config_yaml_check_keys(r, map, slot_path, slot_keys) < 0 ||
            read_settings(r, map, slot_path, w, s, &nr[i]) < 0)
            return -1;
    }
    return 0;
}

/* The index of the template node with that id, or -1. */
static long node_named(const config_graph_t *g, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (g->nodes[i].id && strcmp(g->nodes[i].id, id) == 0)
            return (long)i;
    return -1;
}

/* A template node's parents: a sequence of ids (or one id); each must name a node. */
static int read_parents(config_yaml_t *r, config_graph_t *g, size_t i, yaml_node_t *v,
                        const char *path) {
    config_graph_node_t *n = &g->nodes[i];
    bool list = v->type == YAML_SEQUENCE_NODE;
    size_t count = list ? (size_t)(v->data.sequence.items.top - v->data.sequence.items.start) : 1;
    n->parents = calloc(count + 1, sizeof *n->parents);
    if (n->parents == NULL)
        return config_yaml_fail(r, v, path, "out of memory");
    for (size_t p = 0; p < count; p++) {
        yaml_node_t *item = list ? config_yaml_node(r, v->data.sequence.items.start[p]) : v;
        char item_path[CONFIG_YAML_KEY_MAX + 24];
        if (list)
            snprintf(item_path, sizeof item_path, "%s[%zu]", path, p);
        else
            snprintf(item_path, sizeof item_path, "%s", path);
        const char *id = config_yaml_scalar(r, item, item_path, "a node id");
        if (id == NULL)
            return -1;
        long k = node_named(g, g->n_nodes, id);
        if (k < 0)
            return config_yaml_fail(r, item, item_path, "node '%s': unknown parent '%s'", n->id,
                                    id);
        for (size_t q = 0; q < n->n_parents; q++)
            if (n->parents[q] == (uint32_t)k)
                return config_yaml_fail(r, item, item_path, "node '%s': parent '%s' given twice",
                                        n->id, id);
        n->parents[n->n_parents++] = (uint32_t)k;
    }
    return 0;
}

/* A node on a cycle among the unsorted ones: follows unsorted parents until one repeats, and
 * writes the cycle "a -> b -> a" (parent to child) into buf. */
static size_t find_cycle(const config_graph_t *g, const bool *sorted, char *buf, size_t len) {
    size_t start = 0;
    while (sorted[start])
        start++;
    uint32_t *seen = calloc(g->n_nodes, sizeof *seen); /* step + 1 at which a node was visited */
    size_t at = start, step = 1;
    while (seen && !seen[at]) {
        seen[at] = (uint32_t)step++;
        const config_graph_node_t *n = &g->nodes[at];
        for (size_t p = 0; p < n->n_parents; p++)
            if (!sorted[n->parents[p]]) {
                at = n->parents[p];
                break;
            }
    }
    /* at is on the cycle: walk it again, writing child <- parent, then reverse into buf */
    size_t path[64], k = 0, node = at;
    do {
        if (k < 64)
            path[k++] = node;
        const config_graph_node_t *n = &g->nodes[node];
        for (size_t p = 0; p < n->n_parents; p++)
            if (!sorted[n->parents[p]] && seen && seen[n->parents[p]]) {
                node = n->parents[p];
                break;
            }
    } while (node != at && k < 64);
    free(seen);
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, len, "%s", g->nodes[at].id);
    for (size_t i = k; i-- > 0 && used < len;)
        used += (size_t)snprintf(buf + used, len - used, " -> %s", g->nodes[path[i]].id);
    return at;
}

/* Orders the template parents first (stable: file order where the graph allows), or fails on a
 * cycle naming it. */
static int sort_template(config_yaml_t *r, config_graph_t *g, node_read_t *nr) {
    size_t n = g->n_nodes;
    bool *sorted = calloc(n, sizeof *sorted);
    config_graph_node_t *out = calloc(n + 1, sizeof *out);
    node_read_t *out_nr = calloc(n + 1, sizeof *out_nr);
    if (!sorted || !out || !out_nr) {
        free(sorted);
        free(out);
        free(out_nr);
        return config_yaml_fail(r, NULL, "workload.graph.nodes", "out of memory");
    }
    size_t done = 0;
    while (done < n) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (sorted[i])
                continue;
            bool ready = true;
            for (size_t p = 0; p < g->nodes[i].n_parents && ready; p++)
                ready = sorted[g->nodes[i].parents[p]];
            if (ready)
                pick = i;
        }
        if (pick == n)
            break;
        sorted[pick] = true;
        nr[pick].order = (uint32_t)done++;
    }
    if (done < n) {
        char cycle[512], key[CONFIG_YAML_KEY_MAX];
        size_t at = find_cycle(g, sorted, cycle, sizeof cycle);
        snprintf(key, sizeof key, "workload.graph.nodes[%zu]", nr[at].file_index);
        free(sorted);
        free(out);
        free(out_nr);
        return config_yaml_fail(r, nr[at].map, key, "node '%s' is on a cycle: %s", g->nodes[at].id,
                                cycle);
    }
    for (size_t i = 0; i < n; i++) {
        config_graph_node_t *node = &g->nodes[i];
        for (size_t p = 0; p < node->n_parents; p++)
            node->parents[p] = nr[node->parents[p]].order;
        if (node->history_parent != UINT32_MAX)
            node->history_parent = nr[node->history_parent].order;
    }
    for (size_t i = 0; i < n; i++) {
        out[nr[i].order] = g->nodes[i];
        out_nr[nr[i].order] = nr[i];
    }
    memcpy(g->nodes, out, n * sizeof *out);
    memcpy(nr, out_nr, n * sizeof *out_nr);
    free(sorted);
    free(out);
    free(out_nr);
    return 0;
}

/* Whether a is an ancestor of b (nodes sorted: parents first). */
static bool is_ancestor(const config_graph_t *g, uint32_t a, uint32_t b) {
    if (a >= b)
        return false;
    bool *reach = calloc(b + 1, sizeof *reach);
    if (reach == NULL)
        return false;
    reach[b] = true;
    for (uint32_t j = b + 1; j-- > a;) {
        if (!reach[j])
            continue;
        for (size_t p = 0; p < g->nodes[j].n_parents; p++)
            reach[g->nodes[j].parents[p]] = true;
    }
    bool found = reach[a];
    free(reach);
    return found;
}

/* The template's node list: ids, parents and history parents checked, then sorted. */
static int read_template(config_yaml_t *r, yaml_node_t *nodes, config_workload_t *w,
                         node_read_t **nr_out) {
    config_graph_t *g = &w->graph;
    const char *path = "workload.graph.nodes";
    if (nodes == NULL)
        return config_yaml_fail(r, NULL, path,
                                "a template graph needs nodes: [{id: ..., parents: [...]}, ...]");
    if (nodes->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(r, nodes, path,
                                "a template graph takes a sequence of nodes, each {id: ..., "
                                "parents: [...]}");
    size_t n = (size_t)(nodes->data.sequence.items.top - nodes->data.sequence.items.start);
    if (n == 0)
        return config_yaml_fail(r, nodes, path, "the graph is empty: give at least one node");
    if (n > UINT32_MAX / 2)
        return config_yaml_fail(r, nodes, path, "too many nodes");
    g->nodes = calloc(n + 1, sizeof *g->nodes);
    node_read_t *nr = calloc(n + 1, sizeof *nr);
    *nr_out = nr;
    if (g->nodes == NULL || nr == NULL)
        return config_yaml_fail(r, nodes, path, "out of memory");
    char item_path[CONFIG_YAML_KEY_MAX], key[CONFIG_YAML_KEY_MAX];
    for (size_t i = 0; i < n; i++) { /* ids first: parents may name later nodes */
        yaml_node_t *map = config_yaml_node(r, nodes->data.sequence.items.start[i]);
        snprintf(item_path, sizeof item_path, "%s[%zu]", path, i);
        config_graph_node_t *node = &g->nodes[i];
        g->n_nodes = i + 1;
        node->history = 1.0;
        node->history_parent = UINT32_MAX;
        nr[i].map = map;
        nr[i].file_index = i;
        if (config_yaml_check_keys(r, map, item_path, template_keys) < 0)
            return -1;
        if (map->type != YAML_MAPPING_NODE)
            return config_yaml_fail(r, map, item_path, "expected a node {id: ..., parents: [...]}");
        node->line = (int)map->start_mark.line + 1;
        yaml_node_t *id = config_yaml_get(r, map, "id", NULL);
        config_yaml_path(key, sizeof key, item_path, "id");
        if (id == NULL)
            return config_yaml_fail(r, map, key, "node %zu (line %d) has no id", i + 1, node->line);
        if (config_yaml_string(r, id, key, &node->id) < 0)
            return -1;
        long first = node_named(g, i, node->id);
        if (first >= 0)
            return config_yaml_fail(r, id, key, "node '%s' is given twice (first at line %d)",
                                    node->id, g->nodes[first].line);
        if (read_settings(r, map, item_path, w, node, &nr[i]) < 0)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *v;
        snprintf(item_path, sizeof item_path, "%s[%zu]", path, i);
        if ((v = config_yaml_get(r, nr[i].map, "parents", NULL))) {
            config_yaml_path(key, sizeof key, item_path, "parents");
            if (read_parents(r, g, i, v, key) < 0)
                return -1;
        }
        if ((v = config_yaml_get(r, nr[i].map, "history_parent", NULL))) {
            config_yaml_path(key, sizeof key, item_path, "history_parent");
            const char *id = config_yaml_scalar(r, v, key, "a node id");
            if (id == NULL)
                return -1;
            long k = node_named(g, n, id);
            if (k < 0)
                return config_yaml_fail(r, v, key, "node '%s': unknown history parent '%s'",
                                        g->nodes[i].id, id);
            g->nodes[i].history_parent = (uint32_t)k;
            nr[i].history_parent = v;
        }
    }
    if (sort_template(r, g, nr) < 0)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        config_graph_node_t *node = &g->nodes[i];
        if (node->history_parent == UINT32_MAX) {
            if (node->n_parents)
                node->history_parent = node->parents[0];
            continue;
        }
        if (!is_ancestor(g, node->history_parent, i)) {
            snprintf(key, sizeof key, "%s[%zu].history_parent", path, nr[i].file_index);
            return config_yaml_fail(r, nr[i].history_parent, key,
                                    "node '%s': history parent '%s' is not an ancestor of it",
                                    node->id, g->nodes[node->history_parent].id);
        }
    }
    return 0;
}

static int read_uint(config_yaml_t *r, yaml_node_t *map, const char *name, uint64_t min,
                     uint64_t max, uint32_t *out) {
    char key[CONFIG_YAML_KEY_MAX];
    uint64_t u;
    yaml_node_t *v = config_yaml_get_at(r, map, "workload.graph", name, key);
    if (v == NULL)
        return 0;
    if (config_yaml_uint(r, v, key, max, &u) < 0)
        return -1;
    if (u < min)
        return config_yaml_fail(r, v, key, "expected at least %llu, got %llu",
                                (unsigned long long)min, (unsigned long long)u);
    *out = (uint32_t)u;
    return 0;
}

static int read_count_dist(config_yaml_t *r, yaml_node_t *map, const char *name, double lowest,
                           dist_t *out, bool *given) {
    char key[CONFIG_YAML_KEY_MAX];
    yaml_node_t *v = config_yaml_get_at(r, map, "workload.graph", name, key);
    if (v == NULL)
        return 0;
    if (given)
        *given = true;
    return config_dist_read(r, v, key, false, lowest, out);
}

/* The keys each shape takes besides shape, nodes and message_overhead_tokens. */
static const char *const shape_keys[5][7] = {
    [GRAPH_LINEAR] = {"length", NULL},
    [GRAPH_DIAMOND] = {"executors", "executor_count", NULL},
    [GRAPH_FANOUT] = {"children", "child_length", "rounds", NULL},
    [GRAPH_BRANCHING] = {"depth", "width", "fan_out", "fan_in", "max_depth", "max_width", NULL},
    [GRAPH_TEMPLATE] = {NULL},
};

/* What every shape takes: the framework's costs (docs/workloads.md, "Framework overheads"). */
static const char *const framework_keys[] = {"message_overhead_tokens", "step_overhead",
                                             "context_limit", "context_margin", NULL};

/* Refuses a parameter of another shape (children under a diamond, say). */
static int check_shape_keys(config_yaml_t *r, yaml_node_t *map, config_graph_shape_t shape) {
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = config_yaml_node(r, p->key);
        const char *name = config_yaml_text(k);
        if (!strcmp(name, "shape") || !strcmp(name, "nodes") ||
            config_yaml_in_list(name, framework_keys) ||
            config_yaml_in_list(name, shape_keys[shape]))
            continue;
        char key[CONFIG_YAML_KEY_MAX], takes[256];
        config_yaml_path(key, sizeof key, "workload.graph", name);
        config_yaml_join(shape_keys[shape], takes, sizeof takes);
        return config_yaml_fail(r, k, key,
                                "a %s graph does not take %s (it takes: %s%snodes, "
                                "message_overhead_tokens, step_overhead, context_limit, "
                                "context_margin)",
                                config_graph_shape_name(shape), name, takes, takes[0] ? ", " : "");
    }
    return 0;
}

/* The shape's own parameters. */
static int read_parameters(config_yaml_t *r, yaml_node_t *map, config_graph_t *g) {
    yaml_node_t *v;
    int index;
    if ((v = config_yaml_get(r, map, "executors", NULL))) {
        if (config_yaml_enum(r, v, "workload.graph.executors", executors_names, &index) < 0)
            return -1;
        g->sequential = index == 1;
    }
    if (read_uint(r, map, "message_overhead_tokens", 0, 1000000, &g->message_overhead_tokens) < 0 ||
        read_uint(r, map, "executor_count", 1, CONFIG_GRAPH_MAX_FAN, &g->executor_count) < 0 ||
        read_uint(r, map, "children", 1, CONFIG_GRAPH_MAX_FAN, &g->children) < 0 ||
        read_uint(r, map, "rounds", 1, 10000, &g->rounds) < 0 ||
        read_uint(r, map, "max_depth", 1, 10000, &g->max_depth) < 0 ||
        read_uint(r, map, "max_width", 1, CONFIG_GRAPH_MAX_WIDTH, &g->max_width) < 0 ||
        read_uint(r, map, "context_limit", 0, WORKLOAD_MAX_TOKENS, &g->context_limit) < 0 ||
        read_uint(r, map, "context_margin", 0, WORKLOAD_MAX_TOKENS, &g->context_margin) < 0)
        return -1;
    if ((v = config_yaml_get(r, map, "step_overhead", NULL)) &&
        config_dist_read(r, v, "workload.graph.step_overhead", true, 0, &g->step_overhead) < 0)
        return -1;
    if (read_count_dist(r, map, "length", 1, &g->length, NULL) < 0 ||
        read_count_dist(r, map, "child_length", 1, &g->child_length, NULL) < 0 ||
        read_count_dist(r, map, "depth", 0, &g->depth, NULL) < 0 ||
        read_count_dist(r, map, "width", 1, &g->width, &g->width_given) < 0 ||
        read_count_dist(r, map, "fan_out", 1, &g->fan_out, NULL) < 0 ||
        read_count_dist(r, map, "fan_in", 1, &g->fan_in, NULL) < 0)
        return -1;
    return 0;
}

/* Distributions a node did not give: the workload's own. */
static int fill_defaults(config_workload_t *w, node_read_t *nr) {
    for (size_t i = 0; i < w->graph.n_nodes; i++) {
        config_graph_node_t *n = &w->graph.nodes[i];
        if ((!nr[i].input_given && dist_copy(&n->input_tokens, &w->input_tokens) < 0) ||
            (!nr[i].output_given && dist_copy(&n->output_tokens, &w->output_tokens) < 0) ||
            (!nr[i].wait_given && dist_copy(&n->wait_after_ready, &w->think_time) < 0))
            return -1;
    }
    return 0;
}

int config_graph_read(config_yaml_t *r, yaml_node_t *workload, config_workload_t *w) {
    yaml_node_t *node = config_yaml_get(r, workload, "graph", NULL);
    config_graph_t *g = &w->graph;
    const char *path = "workload.graph";
    if (w->kind != WORKLOAD_GRAPH) {
        if (node != NULL)
            return config_yaml_fail(r, node, path, "a graph goes with kind: graph (kind is %s)",
                                    config_workload_kind_name(w->kind));
        return 0;
    }
    if (node == NULL)
        return config_yaml_fail(r, workload, path,
                                "kind: graph needs graph: {shape: linear | diamond | fanout | "
                                "branching | template, ...}");
    if (config_yaml_check_keys(r, node, path, graph_keys) < 0)
        return -1;
    yaml_node_t *v = config_yaml_get(r, node, "shape", NULL);
    int index;
    if (v == NULL)
        return config_yaml_fail(r, node, path,
                                "a graph needs shape: linear, diamond, fanout, branching or "
                                "template");
    if (config_yaml_enum(r, v, "workload.graph.shape", config_graph_shape_names, &index) < 0)
        return -1;
    g->shape = (config_graph_shape_t)index;
    if (check_shape_keys(r, node, g->shape) < 0 || read_parameters(r, node, g) < 0)
        return -1;
    yaml_node_t *nodes = config_yaml_get(r, node, "nodes", NULL);
    node_read_t *nr = NULL;
    int rc;
    if (g->shape == GRAPH_TEMPLATE) {
        rc = read_template(r, nodes, w, &nr);
    } else {
        nr = calloc(8, sizeof *nr);
        rc = nr ? read_slots(r, nodes, w, nr) : config_yaml_fail(r, node, path, "out of memory");
    }
    if (rc == 0 && fill_defaults(w, nr) < 0)
        rc = config_yaml_fail(r, node, path, "out of memory");
    free(nr);
    return rc;
}
