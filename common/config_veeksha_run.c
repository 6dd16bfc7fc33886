/* A Veeksha benchmark's run settings: client (the target), runtime (the limits), evaluators (the
 * SLOs), trace_recorder and output_dir (the outputs), wandb and server (noted). Veeksha's defaults
 * where a key is left out (docs/workloads.md, "Veeksha files"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_veeksha_internal.h"
#include "metrics.h"

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
        const char *s = veeksha_name(n);
        if (strcmp(s, "max_tokens") != 0 && strcmp(s, "max_completion_tokens") != 0)
            return config_yaml_fail(v->r, n, "client.max_tokens_param",
                                    "expected max_tokens or max_completion_tokens, got '%s'", s);
        t->max_completion_tokens = strcmp(s, "max_completion_tokens") == 0;
    }
    n = config_yaml_get(v->r, client, "min_tokens_param", NULL);
    t->min_tokens = n != NULL && !config_yaml_is_null(n);
    if (t->min_tokens && strcmp(veeksha_name(n), "min_tokens") != 0)
        return config_yaml_fail(v->r, n, "client.min_tokens_param",
                                "expected min_tokens (stampede sends min_tokens = max_tokens) "
                                "or nothing, got '%s'",
                                veeksha_name(n));
    if ((n = veeksha_get(v, client, "additional_sampling_params")) &&
        (n->type != YAML_SCALAR_NODE || strspn(veeksha_name(n), "{} ") != strlen(veeksha_name(n))))
        return config_yaml_fail(v->r, n, "client.additional_sampling_params",
                                "extra sampling parameters are not mapped: stampede's requests "
                                "carry only the limit, min_tokens and ignore_eos");
    if ((n = veeksha_get(v, client, "address_append_value")) &&
        strcmp(veeksha_name(n), t->api == API_CHAT ? "chat/completions" : "completions") != 0)
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

int veeksha_client(veeksha_t *v, yaml_node_t *client) {
    config_target_t *t = &v->c->target;
    yaml_node_t *n;
    int type = 0;
    double seconds = 300;
    free(t->model);
    t->model = strdup("meta-llama/Meta-Llama-3-8B-Instruct");
    t->ignore_eos = true;
    t->max_completion_tokens = true; /* Veeksha's chat client names the limit so */
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
    t->max_completion_tokens = t->api == API_CHAT; /* Veeksha's default per client type */
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

int veeksha_runtime(veeksha_t *v, yaml_node_t *node) {
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
    if ((n = veeksha_get(v, item, "type")) && strcmp(veeksha_name(n), "constant") != 0)
        return config_yaml_fail(v->r, n, key, "expected constant, got '%s'", veeksha_name(n));
    static const char *const veeksha_metrics[] = {"ttfc", "tbc", "tpot", "e2e", NULL};
    static const char *const stampede_metrics[] = {"ttfc", "itl", "tpot", "e2e"};
    const char *metric = "ttfc";
    config_yaml_path(key, sizeof key, path, "metric");
    if ((n = veeksha_get(v, item, "metric")))
        metric = veeksha_name(n);
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
    if ((n = veeksha_get(v, e, "type")) && strcmp(veeksha_name(n), "performance") != 0)
        return config_yaml_fail(v->r, n, key, "expected performance, got '%s'", veeksha_name(n));
    yaml_node_t *channels = veeksha_get(v, e, "target_channels");
    for (int c = 0; channels && channels->type == YAML_SEQUENCE_NODE &&
                    c < channels->data.sequence.items.top - channels->data.sequence.items.start;
         c++) {
        n = config_yaml_node(v->r, channels->data.sequence.items.start[c]);
        snprintf(key, sizeof key, "%s.target_channels[%d]", path, c);
        if (!strcmp(veeksha_name(n), "audio"))
            return veeksha_audio(v->r, n, key, "an audio target channel");
        if (strcmp(veeksha_name(n), "text") != 0)
            return config_yaml_fail(v->r, n, key,
                                    "%s channels are out of scope: stampede "
                                    "measures text",
                                    veeksha_name(n));
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

int veeksha_evaluators(veeksha_t *v, yaml_node_t *list) {
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
int veeksha_outputs(veeksha_t *v, yaml_node_t *root, const char *default_dir) {
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
int veeksha_extras(veeksha_t *v, yaml_node_t *root) {
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
             type ? veeksha_name(type) : "inference");
    free(v->c->managed_server);
    if (!(v->c->managed_server = strdup(where)))
        return config_yaml_fail(v->r, key, "server", "out of memory");
    return 0;
}
