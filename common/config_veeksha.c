/* A Veeksha file, read as it is: a `veeksha benchmark` file or a `veeksha capacity-search` one.
 * Each key maps onto stampede's config, is accepted and ignored (a note says so), or is refused
 * naming what is out of scope (docs/workloads.md, "Veeksha files", has the table). */
#include "config_veeksha.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config_veeksha_internal.h"
#include "metrics.h"

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
static const char *const client_keys[] = {"type",
                                          "model",
                                          "api_base",
                                          "api_key",
                                          "request_timeout",
                                          "max_tokens_param",
                                          "min_tokens_param",
                                          "ignore_eos",
                                          "use_min_tokens_prompt_fallback",
                                          "additional_sampling_params",
                                          "address_append_value",
                                          "completions_max_tokens_param",
                                          NULL};
static const char *const client_types[] = {"openai_chat_completions", "openai_completions",
                                           "openai_router", NULL};
static const char *const runtime_keys[] = {"max_sessions",
                                           "max_requests",
                                           "benchmark_timeout",
                                           "post_timeout_grace_seconds",
                                           "num_dispatcher_threads",
                                           "num_completion_threads",
                                           "num_client_threads",
                                           "pregenerate_sessions",
                                           NULL};
static const char *const evaluator_keys[] = {
    "type",           "target_channels",         "slos",
    "stream_metrics", "stream_metrics_interval", "text_channel",
    "image_channel",  "video_channel",           NULL};
static const char *const slo_keys[] = {"type", "name", "metric", "percentile", "value", NULL};
static const char *const recorder_keys[] = {"enabled", "include_content", NULL};

bool veeksha_is_expand(const yaml_node_t *node) {
    return node && node->tag && strcmp((const char *)node->tag, "!expand") == 0;
}

bool config_veeksha_is(config_yaml_t *r, yaml_node_t *root) {
    if (root->type != YAML_MAPPING_NODE)
        return false;
    for (const char *const *k = veeksha_only; *k; k++)
        if (config_yaml_get(r, root, *k, NULL) != NULL)
            return true;
    return false;
}

/* The index of node in the document's node table. */
static int veeksha_index(config_yaml_t *r, const yaml_node_t *node) {
    return (int)(node - r->doc.nodes.start) + 1;
}

yaml_node_t *veeksha_get(veeksha_t *v, yaml_node_t *map, const char *key) {
    yaml_node_t *n =
        map && map->type == YAML_MAPPING_NODE ? config_yaml_get(v->r, map, key, NULL) : NULL;
    if (!veeksha_is_expand(n) || n == v->knob_expand || n->type != YAML_SEQUENCE_NODE)
        return n;
    /* run k picks item (k / the product of the later lists' sizes) mod this list's size */
    int at = veeksha_index(v->r, n), stride = 1;
    for (int i = v->n_expands - 1; i >= 0; i--) {
        yaml_node_t *e = config_yaml_node(v->r, v->expands[i]);
        int size = (int)(e->data.sequence.items.top - e->data.sequence.items.start);
        if (v->expands[i] == at)
            return config_yaml_node(v->r, e->data.sequence.items.start[(v->run / stride) % size]);
        stride *= size;
    }
    return n;
}

int veeksha_note(veeksha_t *v, const yaml_node_t *at, const char *key, const char *fmt, ...) {
    char line[768], message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (at)
        snprintf(line, sizeof line, "%s:%d:%d: %s: %s\n", v->r->file, (int)at->start_mark.line + 1,
                 (int)at->start_mark.column + 1, key, message);
    else
        snprintf(line, sizeof line, "%s: %s: %s\n", v->r->file, key, message);
    size_t had = v->c->notes ? strlen(v->c->notes) : 0;
    char *grown = realloc(v->c->notes, had + strlen(line) + 1);
    if (!grown)
        return config_yaml_fail(v->r, at, key, "out of memory");
    memcpy(grown + had, line, strlen(line) + 1);
    v->c->notes = grown;
    return 0;
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

static int veeksha_audio(config_yaml_t *r, yaml_node_t *at, const char *key, const char *what) {
    return config_yaml_fail(r, at, key,
                            "%s: audio (speech-to-text and text-to-speech) is out of scope: "
                            "stampede drives text LLM endpoints (/v1/chat/completions, "
                            "/v1/completions)",
                            what);
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

/* api_base: Veeksha's ends in /v1, stampede's endpoint is the server's base URL. */
static int veeksha_api_base(veeksha_t *v, yaml_node_t *n) {
    char *url = NULL;
    if (config_yaml_string(v->r, n, "client.api_base", &url) < 0)
        return -1;
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        url[--len] = '\0';
    if (len >= 3 && strcmp(url + len - 3, "/v1") == 0)
        url[len - 3] = '\0';
    char why[256] = "";
    int rc =
        config_endpoint_check(url, why, sizeof why) == 0 && config_set_endpoints(v->c, &url, 1) == 0
            ? 0
            : config_yaml_fail(v->r, n, "client.api_base", "%s",
                               why[0] ? why : "not a usable endpoint URL");
    free(url);
    return rc;
}

static int veeksha_api_key(veeksha_t *v, yaml_node_t *n) {
    config_target_t *t = &v->c->target;
    char *key = NULL;
    if (config_yaml_string(v->r, n, "client.api_key", &key) < 0)
        return -1;
    config_header_t *grown = realloc(t->headers, (t->n_headers + 1) * sizeof *grown);
    size_t len = strlen(key) + 8;
    char *value = grown ? malloc(len) : NULL;
    char *name = value ? strdup("Authorization") : NULL;
    if (grown)
        t->headers = grown;
    if (!name) {
        free(value);
        free(key);
        return config_yaml_fail(v->r, n, "client.api_key", "out of memory");
    }
    snprintf(value, len, "Bearer %s", key);
    free(key);
    t->headers[t->n_headers++] = (config_header_t){.name = name, .value = value};
    return 0;
}

/* max_tokens_param, min_tokens_param, additional_sampling_params, address_append_value. */
static int veeksha_params(veeksha_t *v, yaml_node_t *client) {
    config_target_t *t = &v->c->target;
    yaml_node_t *n;
    if ((n = veeksha_get(v, client, "max_tokens_param"))) {
        const char *s = config_yaml_text(n);
        if (strcmp(s, "max_tokens") != 0 && strcmp(s, "max_completion_tokens") != 0)
            return config_yaml_fail(v->r, n, "client.max_tokens_param",
                                    "expected max_tokens or max_completion_tokens, got '%s'", s);
        if (!strcmp(s, "max_completion_tokens") &&
            veeksha_note(v, n, "client.max_tokens_param",
                         "stampede sends the limit as max_tokens, which OpenAI-compatible servers "
                         "read as max_completion_tokens") < 0)
            return -1;
    }
    n = config_yaml_get(v->r, client, "min_tokens_param", NULL);
    t->min_tokens = n != NULL && !config_yaml_is_null(n);
    if (t->min_tokens && strcmp(config_yaml_text(n), "min_tokens") != 0)
        return config_yaml_fail(v->r, n, "client.min_tokens_param",
                                "expected min_tokens (stampede sends min_tokens = max_tokens) "
                                "or nothing, got '%s'",
                                config_yaml_text(n));
    if ((n = veeksha_get(v, client, "additional_sampling_params")) &&
        strspn(config_yaml_text(n), "{} ") != strlen(config_yaml_text(n)))
        return config_yaml_fail(v->r, n, "client.additional_sampling_params",
                                "extra sampling parameters are not mapped: stampede's requests "
                                "carry only max_tokens, min_tokens and ignore_eos");
    if ((n = veeksha_get(v, client, "address_append_value")) &&
        strcmp(config_yaml_text(n), t->api == API_CHAT ? "chat/completions" : "completions") != 0)
        return config_yaml_fail(v->r, n, "client.address_append_value",
                                "stampede sends to /v1/%s for this client type",
                                t->api == API_CHAT ? "chat/completions" : "completions");
    bool fallback = false;
    if ((n = veeksha_get(v, client, "use_min_tokens_prompt_fallback")) &&
        config_yaml_bool(v->r, n, "client.use_min_tokens_prompt_fallback", &fallback) < 0)
        return -1;
    if (fallback)
        return veeksha_note(v, n, "client.use_min_tokens_prompt_fallback",
                            "not mapped: stampede adds no length instruction to its prompts");
    return 0;
}

static int veeksha_client(veeksha_t *v, yaml_node_t *client) {
    config_target_t *t = &v->c->target;
    yaml_node_t *n;
    int type = 0;
    double seconds = 300;
    free(t->model);
    t->model = strdup("meta-llama/Meta-Llama-3-8B-Instruct");
    t->ignore_eos = true;
    t->timeout_ns = 300 * 1000000000LL;
    if (!t->model)
        return config_yaml_fail(v->r, client, "client", "out of memory");
    if (client == NULL)
        return 0;
    if (config_yaml_check_keys(v->r, client, "client", client_keys) < 0)
        return -1;
    if ((n = veeksha_get(v, client, "type")) &&
        config_yaml_enum(v->r, n, "client.type", client_types, &type) < 0)
        return -1;
    t->api = type == 1 ? API_COMPLETIONS : API_CHAT;
    if (type == 2 &&
        veeksha_note(v, n, "client.type",
                     "openai_router: synthetic requests go to /v1/chat/completions") < 0)
        return -1;
    if ((n = veeksha_get(v, client, "model"))) {
        free(t->model);
        t->model = NULL;
        if (config_yaml_string(v->r, n, "client.model", &t->model) < 0)
            return -1;
    }
    if ((n = veeksha_get(v, client, "api_base")) && veeksha_api_base(v, n) < 0)
        return -1;
    if ((n = veeksha_get(v, client, "api_key")) && veeksha_api_key(v, n) < 0)
        return -1;
    if ((n = veeksha_get(v, client, "request_timeout"))) {
        if (config_yaml_number(v->r, n, "client.request_timeout", &seconds) < 0)
            return -1;
        if (!(seconds > 0))
            return config_yaml_fail(v->r, n, "client.request_timeout",
                                    "expected seconds > 0, got '%s'", config_yaml_text(n));
        t->timeout_ns = (int64_t)llround(seconds * 1e9);
    }
    if ((n = veeksha_get(v, client, "ignore_eos")) &&
        config_yaml_bool(v->r, n, "client.ignore_eos", &t->ignore_eos) < 0)
        return -1;
    return veeksha_params(v, client);
}

/* A whole count that is -1 (none) or at least 1. */
static int veeksha_count(veeksha_t *v, yaml_node_t *n, const char *key, double *out) {
    if (config_yaml_number(v->r, n, key, out) < 0)
        return -1;
    if (*out != -1 && !(*out >= 1 && *out == floor(*out)))
        return config_yaml_fail(v->r, n, key, "expected -1 (no limit) or a whole number >= 1");
    return 0;
}

static int veeksha_runtime(veeksha_t *v, yaml_node_t *node) {
    config_limits_t *l = &v->c->limits;
    yaml_node_t *n;
    double sessions = 25, seconds = 300, requests = -1;
    if (node && config_yaml_check_keys(v->r, node, "runtime", runtime_keys) < 0)
        return -1;
    if ((n = veeksha_get(v, node, "max_sessions")) &&
        veeksha_count(v, n, "runtime.max_sessions", &sessions) < 0)
        return -1;
    if ((n = veeksha_get(v, node, "max_requests")) &&
        veeksha_count(v, n, "runtime.max_requests", &requests) < 0)
        return -1;
    if ((n = veeksha_get(v, node, "benchmark_timeout"))) {
        if (config_yaml_number(v->r, n, "runtime.benchmark_timeout", &seconds) < 0)
            return -1;
        if (seconds != -1 && !(seconds > 0))
            return config_yaml_fail(v->r, n, "runtime.benchmark_timeout",
                                    "expected -1 (no limit) or seconds > 0");
    }
    l->max_sessions = sessions > 0 ? (uint64_t)sessions : 0;
    l->max_requests = requests > 0 ? (uint64_t)requests : 0;
    l->duration_ns = seconds > 0 ? (int64_t)llround(seconds * 1e9) : 0;
    if (l->max_sessions == 0 && l->max_requests == 0 && l->duration_ns == 0 &&
        !(v->c->workload.kind == WORKLOAD_TRACE && !v->c->workload.trace.wrap))
        return config_yaml_fail(v->r, node, "runtime",
                                "max_sessions -1 and benchmark_timeout -1 leave the run "
                                "unbounded; stampede refuses an unbounded run against a shared "
                                "server");
    if ((n = veeksha_get(v, node, "post_timeout_grace_seconds")))
        return veeksha_note(v, n, "runtime.post_timeout_grace_seconds",
                            "not mapped: at benchmark_timeout stampede stops sending and waits "
                            "for the requests in flight");
    return 0;
}

/* One SLO {type: constant, name, metric, percentile (0..1), value (seconds)}. */
static int veeksha_slo(veeksha_t *v, yaml_node_t *item, const char *path) {
    char key[CONFIG_YAML_KEY_MAX];
    yaml_node_t *n;
    if (config_yaml_check_keys(v->r, item, path, slo_keys) < 0)
        return -1;
    config_yaml_path(key, sizeof key, path, "type");
    if ((n = veeksha_get(v, item, "type")) && strcmp(config_yaml_text(n), "constant") != 0)
        return config_yaml_fail(v->r, n, key, "expected constant, got '%s'", config_yaml_text(n));
    static const char *const veeksha_metrics[] = {"ttfc", "tbc", "tpot", "e2e", NULL};
    static const char *const stampede_metrics[] = {"ttfc", "itl", "tpot", "e2e"};
    const char *metric = "ttfc";
    config_yaml_path(key, sizeof key, path, "metric");
    if ((n = veeksha_get(v, item, "metric")))
        metric = config_yaml_text(n);
    int m = -1;
    for (int i = 0; veeksha_metrics[i]; i++)
        if (!strcmp(metric, veeksha_metrics[i]))
            m = i;
    if (m < 0)
        return config_yaml_fail(v->r, n, key,
                                "'%s' is not a text metric stampede measures (ttfc, tbc, tpot, "
                                "e2e); audio metrics are out of scope",
                                metric);
    double percentile = 0.99, value = -1;
    config_yaml_path(key, sizeof key, path, "percentile");
    if ((n = veeksha_get(v, item, "percentile")) &&
        config_yaml_number(v->r, n, key, &percentile) < 0)
        return -1;
    if (!(percentile > 0 && percentile <= 1))
        return config_yaml_fail(v->r, n, key, "expected a fraction above 0, at most 1");
    config_yaml_path(key, sizeof key, path, "value");
    if ((n = veeksha_get(v, item, "value")) && config_yaml_number(v->r, n, key, &value) < 0)
        return -1;
    if (!(value > 0))
        return config_yaml_fail(v->r, n ? n : item, key, "expected seconds > 0");
    config_slo_t *slo = &v->c->slo;
    if (slo->n == CONFIG_MAX_SLOS)
        return config_yaml_fail(v->r, item, path, "at most %d SLOs", CONFIG_MAX_SLOS);
    config_slo_item_t *s = &slo->items[slo->n++];
    *s = (config_slo_item_t){.stat = percentile == 1 ? CONFIG_SLO_MAX : CONFIG_SLO_PERCENTILE,
                             .percentile = percentile * 100,
                             .bound_ns = (int64_t)llround(value * 1e9)};
    for (uint32_t k = 0; k < METRIC__COUNT; k++)
        if (!strcmp(metrics_name(k), stampede_metrics[m]))
            s->metric = k;
    return 0;
}

/* Veeksha's SLOs when a performance evaluator gives none: p99 TTFC 0.5 s, p90 TBC 50 ms. */
static void veeksha_default_slos(config_t *c) {
    c->slo.n = 0;
    for (uint32_t k = 0; k < METRIC__COUNT; k++) {
        if (!strcmp(metrics_name(k), "ttfc"))
            c->slo.items[c->slo.n++] = (config_slo_item_t){.metric = k,
                                                           .stat = CONFIG_SLO_PERCENTILE,
                                                           .percentile = 99,
                                                           .bound_ns = 500000000};
        if (!strcmp(metrics_name(k), "itl"))
            c->slo.items[c->slo.n++] = (config_slo_item_t){
                .metric = k, .stat = CONFIG_SLO_PERCENTILE, .percentile = 90, .bound_ns = 50000000};
    }
}

static int veeksha_evaluator(veeksha_t *v, yaml_node_t *e, int i) {
    char path[64], key[96];
    yaml_node_t *n;
    snprintf(path, sizeof path, "evaluators[%d]", i);
    if (config_yaml_check_keys(v->r, e, path, evaluator_keys) < 0)
        return -1;
    snprintf(key, sizeof key, "%s.type", path);
    if ((n = veeksha_get(v, e, "type")) && strcmp(config_yaml_text(n), "performance") != 0)
        return config_yaml_fail(v->r, n, key, "expected performance, got '%s'",
                                config_yaml_text(n));
    yaml_node_t *channels = veeksha_get(v, e, "target_channels");
    for (int c = 0; channels && channels->type == YAML_SEQUENCE_NODE &&
                    c < channels->data.sequence.items.top - channels->data.sequence.items.start;
         c++) {
        n = config_yaml_node(v->r, channels->data.sequence.items.start[c]);
        snprintf(key, sizeof key, "%s.target_channels[%d]", path, c);
        if (!strcmp(config_yaml_text(n), "audio"))
            return veeksha_audio(v->r, n, key, "an audio target channel");
        if (strcmp(config_yaml_text(n), "text") != 0)
            return config_yaml_fail(v->r, n, key,
                                    "%s channels are out of scope: stampede "
                                    "measures text",
                                    config_yaml_text(n));
    }
    if ((n = veeksha_get(v, e, "text_channel"))) {
        snprintf(key, sizeof key, "%s.text_channel", path);
        if (veeksha_note(v, n, key,
                         "decode-window analysis is not mapped: stampede reports TPOT and ITL "
                         "over every request") < 0)
            return -1;
    }
    yaml_node_t *slos = config_yaml_get(v->r, e, "slos", NULL);
    if (slos == NULL) {
        if (v->c->slo.n == 0)
            veeksha_default_slos(v->c);
        return 0;
    }
    snprintf(key, sizeof key, "%s.slos", path);
    if (slos->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(v->r, slos, key, "expected a list of SLOs");
    for (int s = 0; s < slos->data.sequence.items.top - slos->data.sequence.items.start; s++) {
        snprintf(key, sizeof key, "%s.slos[%d]", path, s);
        if (veeksha_slo(v, config_yaml_node(v->r, slos->data.sequence.items.start[s]), key) < 0)
            return -1;
    }
    return 0;
}

static int veeksha_evaluators(veeksha_t *v, yaml_node_t *list) {
    if (list == NULL) {
        veeksha_default_slos(v->c);
        return 0;
    }
    if (list->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(v->r, list, "evaluators",
                                "expected a list of evaluators, e.g. [{type: performance}]");
    for (int i = 0; i < list->data.sequence.items.top - list->data.sequence.items.start; i++)
        if (veeksha_evaluator(v, config_yaml_node(v->r, list->data.sequence.items.start[i]), i) < 0)
            return -1;
    return 0;
}

/* trace_recorder.enabled (Veeksha's default: true) -> --trace; output_dir -> output.dir. */
static int veeksha_outputs(veeksha_t *v, yaml_node_t *root, const char *default_dir) {
    yaml_node_t *rec = veeksha_get(v, root, "trace_recorder"), *n;
    config_output_t *o = &v->c->output;
    o->trace = true;
    if (rec && (config_yaml_check_keys(v->r, rec, "trace_recorder", recorder_keys) < 0 ||
                ((n = veeksha_get(v, rec, "enabled")) &&
                 config_yaml_bool(v->r, n, "trace_recorder.enabled", &o->trace) < 0)))
        return -1;
    free(o->dir);
    o->dir = NULL;
    if ((n = veeksha_get(v, root, "output_dir")))
        return config_yaml_string(v->r, n, "output_dir", &o->dir);
    if (!(o->dir = strdup(default_dir)))
        return config_yaml_fail(v->r, root, "output_dir", "out of memory");
    return 0;
}

/* wandb is accepted and ignored; a managed server is the tool's to refuse or ignore. */
static int veeksha_extras(veeksha_t *v, yaml_node_t *root) {
    yaml_node_t *key = NULL, *n = config_yaml_get(v->r, root, "wandb", &key);
    if (n && veeksha_note(v, key, "wandb", "Weights & Biases logging is not mapped; ignored") < 0)
        return -1;
    if (!(n = config_yaml_get(v->r, root, "server", &key)))
        return 0;
    yaml_node_t *type =
        n->type == YAML_MAPPING_NODE ? config_yaml_get(v->r, n, "type", NULL) : NULL;
    char where[512];
    snprintf(where, sizeof where, "%s:%d:%d: server: a managed %s server (Veeksha starts it)",
             v->r->file, (int)key->start_mark.line + 1, (int)key->start_mark.column + 1,
             type ? config_yaml_text(type) : "inference");
    free(v->c->managed_server);
    if (!(v->c->managed_server = strdup(where)))
        return config_yaml_fail(v->r, key, "server", "out of memory");
    return 0;
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

static int veeksha_capacity_number(veeksha_t *v, yaml_node_t *root, const char *key, double min,
                                   double *out) {
    yaml_node_t *n = veeksha_get(v, root, key);
    if (n == NULL)
        return 0;
    if (config_yaml_number(v->r, n, key, out) < 0)
        return -1;
    if (!(*out >= min))
        return config_yaml_fail(v->r, n, key, "expected a number >= %g, got '%s'", min,
                                config_yaml_text(n));
    return 0;
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
    if (veeksha_capacity_number(v, root, "start_value", 0, &start) < 0 ||
        veeksha_capacity_number(v, root, "max_value", 0, &max) < 0 ||
        veeksha_capacity_number(v, root, "expansion_factor", 0, &factor) < 0 ||
        veeksha_capacity_number(v, root, "max_iterations", 1, &iterations) < 0 ||
        veeksha_capacity_number(v, root, "precision", 0, &precision) < 0)
        return -1;
    bool concurrency = c->scheduler.kind == SCHEDULER_CONCURRENT;
    yaml_node_t *at = veeksha_get(v, root, "max_value");
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
                               .start = concurrency ? fmax(1, round(start)) : start,
                               .max = concurrency ? fmax(1, floor(max)) : max,
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
