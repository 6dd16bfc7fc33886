/* A Veeksha file, read as it is: a `veeksha benchmark` file or a `veeksha capacity-search` one.
 * Each key maps onto stampede's config, is accepted and ignored (a note says so), or is refused
 * naming what is out of scope (docs/workloads.md, "Veeksha files", has the table). */
#include "config_veeksha.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config_veeksha_internal.h"

static const char *const benchmark_keys[] = {"seed",
                                             "output_dir",
                                             "session_generator",
                                             "traffic_scheduler",
                                             "evaluators",
                                             "client",
                                             "runtime",
                                             "trace_recorder",
                                             "server",
                                             "wandb",
                                             "target",
                                             "output",
                                             "mock",
                                             NULL};
static const char *const capacity_keys[] = {
    "output_dir", "start_value",      "max_value", "expansion_factor", "max_iterations",
    "precision",  "benchmark_config", "target",    "output",           "mock",
    NULL};
/* Keys only a Veeksha file has at its root (stampede's own files never do). */
static const char *const veeksha_only[] = {
    "session_generator", "traffic_scheduler",  "evaluators",  "client",
    "runtime",           "trace_recorder",     "server",      "wandb",
    "output_dir",        "benchmark_config",   "start_value", "input_lengths",
    "batch_sizes",       "samples_per_length", NULL};

bool config_veeksha_is(config_yaml_t *r, yaml_node_t *root) {
    if (root->type != YAML_MAPPING_NODE)
        return false;
    for (const char *const *k = veeksha_only; *k; k++)
        if (config_yaml_get(r, root, *k, NULL) != NULL)
            return true;
    return false;
}

/* The scheduler's knob of a benchmark mapping (a capacity search's is searched, a benchmark's
 * !expand list of it is a sweep): traffic_scheduler.target_concurrent_sessions, its arrival_rate
 * or its interval_generator's. */
static bool veeksha_is_knob(config_yaml_t *r, yaml_node_t *benchmark, const yaml_node_t *node) {
    yaml_node_t *s = config_yaml_get(r, benchmark, "traffic_scheduler", NULL);
    if (!s || s->type != YAML_MAPPING_NODE)
        return false;
    yaml_node_t *g = config_yaml_get(r, s, "interval_generator", NULL);
    return node == config_yaml_get(r, s, "target_concurrent_sessions", NULL) ||
           node == config_yaml_get(r, s, "arrival_rate", NULL) ||
           (g && g->type == YAML_MAPPING_NODE &&
            node == config_yaml_get(r, g, "arrival_rate", NULL));
}

/* The !expand lists other than the knob's, in document order, into v->expands; the number of
 * runs they make (their sizes' product), or -1 with r->err filled. */
static int veeksha_collect_expands(config_yaml_t *r, yaml_node_t *root, veeksha_t *v) {
    int runs = 1;
    v->n_expands = 0;
    for (yaml_node_t *n = r->doc.nodes.start; n < r->doc.nodes.top; n++) {
        if (!veeksha_is_expand(n) || veeksha_is_knob(r, root, n))
            continue;
        int size = n->type == YAML_SEQUENCE_NODE
                       ? (int)(n->data.sequence.items.top - n->data.sequence.items.start)
                       : 0;
        if (size == 0)
            return config_yaml_fail(r, n, "!expand", "!expand wants a non-empty list of values");
        if (v->n_expands == VEEKSHA_MAX_EXPANDS || runs > 1000 / size)
            return config_yaml_fail(r, n, "!expand",
                                    "at most %d !expand lists and 1000 runs in one file",
                                    VEEKSHA_MAX_EXPANDS);
        v->expands[v->n_expands++] = veeksha_index(r, n);
        runs *= size;
    }
    return runs;
}

/* Files of Veeksha's other commands, audio and lm-eval: refused before any key is read, naming
 * what is out of scope. */
static int veeksha_microbench(config_yaml_t *r, yaml_node_t *root) {
    yaml_node_t *key = NULL;
    if (!config_yaml_get(r, root, "input_lengths", &key) &&
        !config_yaml_get(r, root, "batch_sizes", &key) &&
        !config_yaml_get(r, root, "samples_per_length", &key))
        return 0;
    bool decode = config_yaml_get(r, root, "batch_sizes", NULL) ||
                  config_yaml_get(r, root, "engine_chunk_size", NULL);
    return config_yaml_fail(r, key, config_yaml_text(key),
                            "a file for `veeksha %s` (%s), out of scope: stampede "
                            "runs the files of `veeksha benchmark` (stampede run FILE) and "
                            "`veeksha capacity-search` (stampede capacity FILE)",
                            decode ? "decode" : "prefill",
                            decode ? "its decode microbenchmark over input_lengths x batch_sizes"
                                   : "its prefill microbenchmark over input_lengths");
}

static int veeksha_lmeval(config_yaml_t *r, yaml_node_t *at, const char *key, const char *what) {
    return config_yaml_fail(r, at, key,
                            "%s: lm-eval accuracy evaluation is out of scope: stampede measures "
                            "serving performance, not task accuracy",
                            what);
}

static const char *veeksha_type(config_yaml_t *r, yaml_node_t *map, yaml_node_t **node) {
    *node = map && map->type == YAML_MAPPING_NODE ? config_yaml_get(r, map, "type", NULL) : NULL;
    return *node && (*node)->type == YAML_SCALAR_NODE ? config_yaml_text(*node) : "";
}

static int veeksha_scope(config_yaml_t *r, yaml_node_t *bench) {
    yaml_node_t *t;
    const char *type = veeksha_type(r, config_yaml_get(r, bench, "client", NULL), &t);
    if (!strcmp(type, "stt") || !strcmp(type, "tts") || !strcmp(type, "streaming_tts")) {
        char what[64];
        snprintf(what, sizeof what, "a %s client", type);
        return veeksha_audio(r, t, "client.type", what);
    }
    yaml_node_t *gen = config_yaml_get(r, bench, "session_generator", NULL);
    if (!strcmp(veeksha_type(r, gen, &t), "lmeval"))
        return veeksha_lmeval(r, t, "session_generator.type", "lmeval sessions");
    type = veeksha_type(r, config_yaml_get(r, gen, "flavor", NULL), &t);
    if (!strcmp(type, "audio") || !strcmp(type, "seed_tts_text"))
        return veeksha_audio(r, t, "session_generator.flavor.type", "an audio trace flavor");
    yaml_node_t *list = config_yaml_get(r, bench, "evaluators", NULL);
    for (int i = 0; list && list->type == YAML_SEQUENCE_NODE &&
                    i < list->data.sequence.items.top - list->data.sequence.items.start;
         i++) {
        yaml_node_t *e = config_yaml_node(r, list->data.sequence.items.start[i]);
        char key[64];
        snprintf(key, sizeof key, "evaluators[%d].type", i);
        type = veeksha_type(r, e, &t);
        if (!strcmp(type, "accuracy_lmeval"))
            return veeksha_lmeval(r, t, key, "an accuracy_lmeval evaluator");
        if (!strcmp(type, "audio_quality"))
            return veeksha_audio(r, t, key, "an audio_quality evaluator");
    }
    return 0;
}

int config_veeksha_runs(yaml_document_t *doc) {
    config_error_t err;
    config_yaml_t r = {.doc = *doc, .err = &err, .file = ""};
    yaml_node_t *root = yaml_document_get_root_node(doc);
    veeksha_t v = {.r = &r};
    if (!root || !config_veeksha_is(&r, root) ||
        config_yaml_get(&r, root, "benchmark_config", NULL) || veeksha_microbench(&r, root) < 0 ||
        veeksha_scope(&r, root) < 0)
        return 1; /* a refused file is one run: its refusal is said once */
    int runs = veeksha_collect_expands(&r, root, &v);
    return runs > 0 ? runs : 1;
}

/* A !expand list of the scheduler's knob: stampede's sweep levels, each run for
 * benchmark_timeout. */
static int veeksha_sweep(veeksha_t *v) {
    config_t *c = v->c;
    yaml_node_t *list = v->knob_expand;
    if (list == NULL)
        return 0;
    if (c->limits.duration_ns == 0)
        return config_yaml_fail(v->r, list, "!expand",
                                "a sweep runs each level for runtime.benchmark_timeout: give one");
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    config_sweep_t *s = &c->sweep;
    s->levels = calloc(n, sizeof *s->levels);
    if (!s->levels)
        return config_yaml_fail(v->r, list, "!expand", "out of memory");
    s->axis = c->scheduler.kind == SCHEDULER_RATE ? SWEEP_AXIS_RATE : SWEEP_AXIS_CONCURRENCY;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = config_yaml_node(v->r, list->data.sequence.items.start[i]);
        char key[64];
        snprintf(key, sizeof key, "!expand[%zu]", i);
        double x;
        if (config_yaml_number(v->r, item, key, &x) < 0)
            return -1;
        if (!(x > 0) || (s->axis == SWEEP_AXIS_CONCURRENCY && (x != floor(x) || x > UINT32_MAX)))
            return config_yaml_fail(v->r, item, key, "expected %s, got '%s'",
                                    s->axis == SWEEP_AXIS_RATE ? "a rate > 0"
                                                               : "a whole number of sessions >= 1",
                                    config_yaml_text(item));
        s->levels[s->n_levels++] = x;
    }
    s->snapshots = 1;
    s->snapshot_ns = c->limits.duration_ns;
    s->drain_ns = 30 * 1000000000LL;
    s->repeat = 1;
    s->exclude_error_pct = 5;
    c->limits.duration_ns = 0; /* a sweep sets each level's */
    return 0;
}

/* The keys of a `veeksha benchmark` file (or a capacity search's benchmark_config). */
static int veeksha_benchmark(veeksha_t *v, yaml_node_t *bench, const char *default_dir) {
    config_t *c = v->c;
    yaml_node_t *n;
    c->seed = 42;
    if ((n = veeksha_get(v, bench, "seed")) &&
        config_yaml_uint(v->r, n, "seed", UINT64_MAX, &c->seed) < 0)
        return -1;
    if (veeksha_session_generator(v, veeksha_get(v, bench, "session_generator")) < 0 ||
        veeksha_traffic_scheduler(v, veeksha_get(v, bench, "traffic_scheduler")) < 0 ||
        veeksha_client(v, veeksha_get(v, bench, "client")) < 0 ||
        veeksha_runtime(v, veeksha_get(v, bench, "runtime")) < 0 ||
        veeksha_evaluators(v, veeksha_get(v, bench, "evaluators")) < 0 ||
        veeksha_outputs(v, bench, default_dir) < 0 || veeksha_extras(v, bench) < 0)
        return -1;
    return v->capacity ? 0 : veeksha_sweep(v);
}
/* start_value, max_value, expansion_factor, max_iterations, precision (decimal places of a
 * rate), benchmark_config: stampede's capacity: section over the same benchmark. */
static int veeksha_capacity(veeksha_t *v, yaml_node_t *root) {
    config_t *c = v->c;
    config_capacity_t *cap = &c->capacity;
    double start = 1, max = 100, factor = 2, iterations = 20, precision = 2;
    if (config_yaml_check_keys(v->r, root, "", capacity_keys) < 0)
        return -1;
    yaml_node_t *bench = config_yaml_get(v->r, root, "benchmark_config", NULL);
    for (yaml_node_t *n = v->r->doc.nodes.start; n < v->r->doc.nodes.top; n++)
        if (veeksha_is_expand(n))
            return config_yaml_fail(v->r, n, "!expand",
                                    "a capacity search varies its scheduler's knob itself; "
                                    "!expand is for `veeksha benchmark` files");
    v->capacity = true;
    if (veeksha_scope(v->r, bench) < 0 || veeksha_benchmark(v, bench, "capacity_search_output") < 0)
        return -1;
    yaml_node_t *dir = veeksha_get(v, root, "output_dir");
    free(c->output.dir);
    c->output.dir = NULL;
    if (dir ? config_yaml_string(v->r, dir, "output_dir", &c->output.dir) < 0
            : !(c->output.dir = strdup("capacity_search_output")))
        return dir ? -1 : config_yaml_fail(v->r, root, "output_dir", "out of memory");
    if (veeksha_number(v, root, "", "start_value", 0, &start) < 0 ||
        veeksha_number(v, root, "", "max_value", 0, &max) < 0 ||
        veeksha_number(v, root, "", "expansion_factor", 0, &factor) < 0 ||
        veeksha_number(v, root, "", "max_iterations", 1, &iterations) < 0 ||
        veeksha_number(v, root, "", "precision", 0, &precision) < 0)
        return -1;
    bool concurrency = c->scheduler.kind == SCHEDULER_CONCURRENT;
    yaml_node_t *at = veeksha_get(v, root, "max_value");
    if (concurrency) { /* whole sessions */
        start = fmax(1, round(start));
        max = floor(max);
    }
    if (!(start > 0) || max < start)
        return config_yaml_fail(v->r, at ? at : root, "max_value",
                                "expected 0 < start_value <= max_value, got %g and %g", start, max);
    if (!(factor > 1))
        return config_yaml_fail(v->r, veeksha_get(v, root, "expansion_factor"), "expansion_factor",
                                "expected a factor greater than 1");
    if (iterations != floor(iterations) || iterations > CONFIG_CAPACITY_MAX_TRIALS)
        return config_yaml_fail(v->r, veeksha_get(v, root, "max_iterations"), "max_iterations",
                                "expected a whole number from 1 to %d", CONFIG_CAPACITY_MAX_TRIALS);
    if (precision != floor(precision) || precision > 9)
        return config_yaml_fail(v->r, veeksha_get(v, root, "precision"), "precision",
                                "expected decimal places from 0 to 9");
    *cap = (config_capacity_t){.given = true,
                               .axis = concurrency ? CAPACITY_AXIS_CONCURRENCY : CAPACITY_AXIS_RATE,
                               .start = start,
                               .max = max,
                               .precision = concurrency ? 1 : pow(10, -precision),
                               .expansion = factor,
                               .max_trials = (uint32_t)iterations,
                               .repeat_near_boundary = 0};
    return 0;
}

int config_veeksha_parse(config_yaml_t *r, yaml_node_t *root, config_t *c) {
    veeksha_t v = {.r = r, .c = c};
    if (veeksha_microbench(r, root) < 0)
        return -1;
    if (config_yaml_get(r, root, "benchmark_config", NULL) ||
        config_yaml_get(r, root, "start_value", NULL))
        return veeksha_capacity(&v, root);
    if (veeksha_scope(r, root) < 0 || config_yaml_check_keys(r, root, "", benchmark_keys) < 0)
        return -1;
    int runs = veeksha_collect_expands(r, root, &v);
    if (runs < 0)
        return -1;
    v.run = r->veeksha_run > 0 ? r->veeksha_run - 1 : 0;
    if (v.run >= runs)
        return config_yaml_fail(r, root, "!expand", "the file's !expand lists make %d runs, not %d",
                                runs, v.run + 1);
    return veeksha_benchmark(&v, root, "benchmark_output");
}
