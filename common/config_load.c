#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "buffer.h"
#include "config_compaction.h"
#include "config_dataset.h"
#include "config_deployment.h"
#include "config_dist.h"
#include "config_graph.h"
#include "config_mock.h"
#include "config_net.h"
#include "config_scaffold.h"
#include "config_scan.h"
#include "config_slo.h"
#include "config_sweep.h"
#include "config_telemetry.h"
#include "config_trace.h"
#include "config_veeksha.h"
#include "config_yaml.h"
#include "think.h"
#include "units.h"
#include "workload.h"

static const char *const root_keys[] = {
    "seed",        "text_seed",       "target", "workload", "scheduler",
    "limits",      "warmup",          "output", "mock",     "server_metrics",
    "gpu_metrics", "scrape_interval", "sweep",  "slo",      "capacity",
    "deployment",  "validity",        "fleet",  NULL};
static const char *const target_keys[] = {"endpoints",
                                          "api",
                                          "model",
                                          "headers",
                                          "api_key_env",
                                          "api_key_file",
                                          "timeout",
                                          "connect_timeout",
                                          "routing",
                                          "ignore_eos",
                                          "min_tokens",
                                          "max_tokens_param",
                                          "stream",
                                          "continuous_usage_stats",
                                          "reasoning_tags",
                                          "retry_on_429",
                                          "retry_after_max",
                                          "retry_429_max",
                                          "path",
                                          "tls",
                                          "proxy",
                                          "preflight",
                                          "tokenizer",
                                          "session_header",
                                          "thinking_tokens",
                                          "previous_response_id",
                                          "replica_header",
                                          NULL};
static const char *const workload_keys[] = {
    "kind",  "turns", "input_tokens", "output_tokens", "think_time", "system_prompt_tokens",
    "roles", "graph", "trace",        "dataset",       "scaffold",   "compaction",
    NULL};
static const char *const scheduler_keys[] = {"kind",    "concurrency", "ramp_up", "rate",
                                             "arrival", "arrival_cv",  NULL};
static const char *const limits_keys[] = {"duration",      "max_sessions",        "max_requests",
                                          "max_error_pct", "endpoint_dead_after", NULL};
static const char *const retry_on_429_names[] = {"ignore", "honour", NULL};
static const char *const max_tokens_params[] = {"max_tokens", "max_completion_tokens", NULL};
static const char *const output_keys[] = {"dir", "trace", NULL};
static const char *const validity_keys[] = {"max_schedule_lag", NULL};
static const char *const fleet_keys[] = {"heartbeat", "liveness", "abort_on_worker_loss_pct",
                                         "rebalance_on_join", NULL};

static yaml_node_t *item_at(config_yaml_t *r, yaml_node_t *seq, size_t i) {
    return yaml_document_get_node(&r->doc, seq->data.sequence.items.start[i]);
}

/* "target.endpoints[i]", or "target.endpoints" for a single URL given without a list. */
static void endpoint_path(char *buf, size_t len, bool list, size_t i) {
    if (list)
        snprintf(buf, len, "target.endpoints[%zu]", i);
    else
        snprintf(buf, len, "target.endpoints");
}

/* A sequence of URLs (a single URL is accepted as a one-item list), checked one by one and then
 * for duplicates so the error points at the bad item, then normalised by config_set_endpoints. */
static int read_endpoints(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    const char *path = "target.endpoints";
    bool list = node->type == YAML_SEQUENCE_NODE;
    if (node->type == YAML_MAPPING_NODE)
        return config_yaml_fail(r, node, path, "expected a sequence of URLs, got a mapping");
    size_t n = list ? (size_t)(node->data.sequence.items.top - node->data.sequence.items.start) : 1;
    char **urls = calloc(n + 1, sizeof *urls);
    if (urls == NULL)
        return config_yaml_fail(r, node, path, "out of memory");
    int rc = 0;
    char item_path[CONFIG_YAML_KEY_MAX], why[1024];
    for (size_t i = 0; i < n && rc == 0; i++) {
        yaml_node_t *item = list ? item_at(r, node, i) : node;
        endpoint_path(item_path, sizeof item_path, list, i);
        rc = config_yaml_string(r, item, item_path, &urls[i]);
        if (rc == 0 && config_endpoint_check(urls[i], why, sizeof why) < 0)
            rc = config_yaml_fail(r, item, item_path, "%s", why);
    }
    size_t bad = 0;
    if (rc == 0 && config_endpoints_check(urls, n, &bad, why, sizeof why) < 0) {
        endpoint_path(item_path, sizeof item_path, list, bad);
        rc = config_yaml_fail(r, list ? item_at(r, node, bad) : node, item_path, "%s", why);
    }
    if (rc == 0 && config_set_endpoints(c, urls, n) < 0)
        rc = config_yaml_fail(r, node, path, "out of memory");
    for (size_t i = 0; i < n; i++)
        free(urls[i]);
    free(urls);
    return rc;
}

static bool env_name_valid(const char *name);

/* A header value {env: NAME} or {file: PATH}: the secret stays out of the file and off the wire;
 * each worker reads it when a run is assigned (common/config.h config_header_value). */
static int read_header_source(config_yaml_t *r, yaml_node_t *v, const char *key,
                              config_header_t *h) {
    static const char *const source_keys[] = {"env", "file", NULL};
    if (config_yaml_check_keys(r, v, key, source_keys) < 0)
        return -1;
    yaml_node_t *env = config_yaml_get(r, v, "env", NULL);
    yaml_node_t *file = config_yaml_get(r, v, "file", NULL);
    if ((env == NULL) == (file == NULL))
        return config_yaml_fail(r, v, key,
                                "expected a value, {env: VARIABLE} or {file: PATH} (one of them)");
    if (env != NULL) {
        if (config_yaml_string(r, env, key, &h->value_env) < 0)
            return -1;
        if (!env_name_valid(h->value_env))
            return config_yaml_fail(r, env, key,
                                    "expected the name of an environment variable (letters, "
                                    "digits and _), not the value itself");
        return 0;
    }
    char *path = NULL;
    if (config_yaml_string(r, file, key, &path) < 0)
        return -1;
    h->value_file = config_yaml_resolve_path(r, path);
    free(path);
    return h->value_file ? 0 : config_yaml_fail(r, file, key, "out of memory");
}

static int read_header(config_yaml_t *r, yaml_node_pair_t *pair, config_target_t *t) {
    yaml_node_t *k = yaml_document_get_node(&r->doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&r->doc, pair->value);
    const char *name = (const char *)k->data.scalar.value;
    char key[CONFIG_YAML_KEY_MAX];
    config_yaml_path(key, sizeof key, "target.headers", name);
    if (!config_header_name_valid(name))
        return config_yaml_fail(r, k, key, "'%s' is not a valid HTTP header name", name);
    if (strcasecmp(name, "content-length") == 0 || strcasecmp(name, "transfer-encoding") == 0)
        return config_yaml_fail(r, k, key, "%s is set by stampede for each request", name);
    config_header_t *h = &t->headers[t->n_headers];
    if (v->type == YAML_MAPPING_NODE) {
        h->name = strdup(name);
        t->n_headers++;
        if (h->name == NULL)
            return config_yaml_fail(r, k, key, "out of memory");
        return read_header_source(r, v, key, h);
    }
    if (config_yaml_string(r, v, key, &h->value) < 0)
        return -1;
    h->name = strdup(name);
    t->n_headers++;
    if (h->name == NULL)
        return config_yaml_fail(r, k, key, "out of memory");
    for (const unsigned char *c = (const unsigned char *)h->value; *c != '\0'; c++)
        if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
            return config_yaml_fail(r, v, key,
                                    "a header value must not contain a line break or other "
                                    "control character");
    return 0;
}

static int read_headers(config_yaml_t *r, yaml_node_t *map, config_target_t *t) {
    if (config_yaml_check_mapping(r, map, "target.headers", true) < 0)
        return -1;
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    t->headers = calloc(n + 1, sizeof *t->headers);
    if (t->headers == NULL)
        return config_yaml_fail(r, map, "target.headers", "out of memory");
    for (size_t i = 0; i < n; i++)
        if (read_header(r, &map->data.mapping.pairs.start[i], t) < 0)
            return -1;
    return 0;
}

static bool env_name_valid(const char *name) {
    if (!isalpha((unsigned char)name[0]) && name[0] != '_')
        return false;
    for (const char *p = name; *p != '\0'; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    return true;
}

static bool mark_before(const yaml_node_t *a, const yaml_node_t *b) {
    return a->start_mark.index < b->start_mark.index;
}

/* api_key_env or api_key_file (never both); the values are names, never the key itself. */
static int read_api_key(config_yaml_t *r, yaml_node_t *target, config_target_t *t) {
    yaml_node_t *env_key = NULL, *file_key = NULL;
    yaml_node_t *env = config_yaml_get(r, target, "api_key_env", &env_key);
    yaml_node_t *file = config_yaml_get(r, target, "api_key_file", &file_key);
    if (env != NULL && file != NULL) {
        bool env_later = mark_before(file_key, env_key);
        return config_yaml_fail(r, env_later ? env_key : file_key,
                                env_later ? "target.api_key_env" : "target.api_key_file",
                                "api_key_env and api_key_file are both given; keep one");
    }
    if (env != NULL) {
        if (config_yaml_string(r, env, "target.api_key_env", &t->api_key_env) < 0)
            return -1;
        /* Never echo the value: someone may have pasted the key itself here. */
        if (!env_name_valid(t->api_key_env))
            return config_yaml_fail(r, env, "target.api_key_env",
                                    "expected the name of an environment variable (letters, "
                                    "digits and _), not the key itself");
    }
    if (file != NULL) {
        char *path = NULL;
        if (config_yaml_string(r, file, "target.api_key_file", &path) < 0)
            return -1;
        t->api_key_file = config_yaml_resolve_path(r, path);
        free(path);
        if (t->api_key_file == NULL)
            return config_yaml_fail(r, file, "target.api_key_file", "out of memory");
    }
    return 0;
}

static int check_authorization_header(config_yaml_t *r, yaml_node_t *headers,
                                      const config_target_t *t) {
    if (t->api_key_env == NULL && t->api_key_file == NULL)
        return 0;
    for (yaml_node_pair_t *p = headers->data.mapping.pairs.start;
         p < headers->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        const char *name = (const char *)k->data.scalar.value;
        if (strcasecmp(name, "authorization") == 0) {
            char key[CONFIG_YAML_KEY_MAX];
            config_yaml_path(key, sizeof key, "target.headers", name);
            return config_yaml_fail(r, k, key,
                                    "an Authorization header and %s both supply the key; keep "
                                    "one",
                                    t->api_key_env ? "api_key_env" : "api_key_file");
        }
    }
    return 0;
}

/* target.reasoning_tags: [] (off), or [OPEN, CLOSE], two different non-empty strings. */
static int read_reasoning_tags(config_yaml_t *r, yaml_node_t *node, config_target_t *t) {
    const char *path = "target.reasoning_tags";
    if (node->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(r, node, path,
                                "expected [OPEN, CLOSE], e.g. [\"<think>\", \"</think>\"], or [] "
                                "to turn the detection off");
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (n != 0 && n != 2)
        return config_yaml_fail(r, node, path,
                                "expected two tags (the opening and the closing one) or none, got "
                                "%zu",
                                n);
    char *tags[2] = {NULL, NULL};
    char item_path[CONFIG_YAML_KEY_MAX];
    for (size_t i = 0; i < n; i++) {
        snprintf(item_path, sizeof item_path, "%s[%zu]", path, i);
        yaml_node_t *item = item_at(r, node, i);
        if (config_yaml_string(r, item, item_path, &tags[i]) < 0 ||
            (strlen(tags[i]) > THINK_TAG_MAX &&
             config_yaml_fail(r, item, item_path, "a tag is at most %d bytes long", THINK_TAG_MAX) <
                 0)) {
            free(tags[0]);
            free(tags[1]);
            return -1;
        }
    }
    if (n == 2 && strcmp(tags[0], tags[1]) == 0) {
        free(tags[0]);
        free(tags[1]);
        return config_yaml_fail(r, node, path, "the opening and the closing tag are the same");
    }
    free(t->reasoning_open);
    free(t->reasoning_close);
    t->reasoning_open = tags[0];
    t->reasoning_close = tags[1];
    return 0;
}

/* A whole request URL among the endpoints must agree with target.api and stand without
 * target.path (config_target_check); the error points at the endpoint. */
static int check_whole_urls(config_yaml_t *r, yaml_node_t *target, const config_target_t *t) {
    char why[1024], key[CONFIG_YAML_KEY_MAX];
    size_t bad = 0;
    if (config_target_check(t, &bad, why, sizeof why) == 0)
        return 0;
    yaml_node_t *node = config_yaml_get(r, target, "endpoints", NULL);
    bool list = node && node->type == YAML_SEQUENCE_NODE;
    endpoint_path(key, sizeof key, list, bad);
    return config_yaml_fail(r, list ? item_at(r, node, bad) : node, key, "%s", why);
}

static int parse_target(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    config_target_t *t = &c->target;
    yaml_node_t *v;
    int index;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "target", target_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "endpoints", NULL)) && read_endpoints(r, v, c) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "api", NULL))) {
        if (config_yaml_enum(r, v, "target.api", config_api_names, &index) < 0)
            return -1;
        t->api = (config_api_t)index;
    }
    if ((v = config_yaml_get(r, node, "model", NULL)) &&
        config_yaml_string(r, v, "target.model", &t->model) < 0)
        return -1;
    if (read_api_key(r, node, t) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "headers", NULL)) &&
        (read_headers(r, v, t) < 0 || check_authorization_header(r, v, t) < 0))
        return -1;
    if ((v = config_yaml_get(r, node, "timeout", NULL)) &&
        config_yaml_duration(r, v, "target.timeout", true, &t->timeout_ns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "connect_timeout", NULL)) &&
        config_yaml_duration(r, v, "target.connect_timeout", true, &t->connect_timeout_ns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "routing", NULL))) {
        if (config_yaml_enum(r, v, "target.routing", config_routing_names, &index) < 0)
            return -1;
        t->routing = (config_routing_t)index;
    }
    if ((v = config_yaml_get(r, node, "ignore_eos", NULL)) &&
        config_yaml_bool(r, v, "target.ignore_eos", &t->ignore_eos) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "min_tokens", NULL)) &&
        config_yaml_bool(r, v, "target.min_tokens", &t->min_tokens) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max_tokens_param", NULL))) {
        if (config_yaml_enum(r, v, "target.max_tokens_param", max_tokens_params, &index) < 0)
            return -1;
        t->max_completion_tokens = index == 1;
    }
    if ((v = config_yaml_get(r, node, "continuous_usage_stats", NULL)) &&
        config_yaml_bool(r, v, "target.continuous_usage_stats", &t->continuous_usage) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "stream", NULL)) &&
        config_yaml_bool(r, v, "target.stream", &t->stream) < 0)
        return -1;
    if (v && !t->stream && (t->api == API_MESSAGES || t->api == API_RESPONSES))
        return config_yaml_fail(r, v, "target.stream",
                                "stream: false is for chat and completions; target.api %s is "
                                "measured streamed (its events give TTFT and ITL)",
                                config_api_name(t->api));
    if ((v = config_yaml_get(r, node, "reasoning_tags", NULL)) && read_reasoning_tags(r, v, t) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "retry_on_429", NULL))) {
        if (config_yaml_enum(r, v, "target.retry_on_429", retry_on_429_names, &index) < 0)
            return -1;
        t->retry_on_429 = index == 1;
    }
    if ((v = config_yaml_get(r, node, "retry_after_max", NULL)) &&
        config_yaml_duration(r, v, "target.retry_after_max", false, &t->retry_after_max_ns) < 0)
        return -1;
    uint64_t retries;
    if ((v = config_yaml_get(r, node, "retry_429_max", NULL))) {
        if (config_yaml_uint(r, v, "target.retry_429_max", 1000, &retries) < 0)
            return -1;
        t->retry_429_max = (uint32_t)retries;
    }
    if ((v = config_yaml_get(r, node, "previous_response_id", NULL))) {
        if (config_yaml_bool(r, v, "target.previous_response_id", &t->previous_response_id) < 0)
            return -1;
        if (t->previous_response_id && t->api != API_RESPONSES)
            return config_yaml_fail(r, v, "target.previous_response_id",
                                    "previous_response_id chains the turns of api: responses; "
                                    "target.api is %s",
                                    config_api_name(t->api));
    }
    if ((v = config_yaml_get(r, node, "thinking_tokens", NULL))) {
        if (config_yaml_uint(r, v, "target.thinking_tokens", WORKLOAD_MAX_TOKENS, &retries) < 0)
            return -1;
        t->thinking_tokens = (uint32_t)retries;
    }
    if ((v = config_yaml_get(r, node, "tokenizer", NULL))) {
        char *path = NULL;
        if (config_yaml_string(r, v, "target.tokenizer", &path) < 0)
            return -1;
        t->tokenizer = config_yaml_resolve_path(r, path);
        free(path);
        if (t->tokenizer == NULL)
            return config_yaml_fail(r, v, "target.tokenizer", "out of memory");
    }
    if (config_net_parse(r, node, t) < 0)
        return -1;
    return check_whole_urls(r, node, t);
}

/* workload.roles: a sequence of distinct names (letters, digits, '_', '-', '.'). */
static int read_roles(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    if (node->type != YAML_SEQUENCE_NODE)
        return config_yaml_fail(r, node, "workload.roles",
                                "expected a sequence of role names, e.g. [planner, executor]");
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    char path[CONFIG_YAML_KEY_MAX];
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = item_at(r, node, i);
        snprintf(path, sizeof path, "workload.roles[%zu]", i);
        const char *name = config_yaml_scalar(r, item, path, "a role name");
        if (name == NULL)
            return -1;
        if (name[0] == '\0' || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_-.") != strlen(name))
            return config_yaml_fail(
                r, item, path, "'%s' is not a role name (letters, digits, '_', '-', '.')", name);
        if (config_role_name(c, 0) &&
            config_yaml_in_list(name, (const char *const *)c->workload.roles))
            return config_yaml_fail(r, item, path, "role '%s' is named twice", name);
        uint32_t index;
        if (c->workload.n_roles >= CONFIG_MAX_ROLES)
            return config_yaml_fail(r, item, path, "at most %d roles", CONFIG_MAX_ROLES);
        if (config_role_index(c, name, &index) < 0)
            return config_yaml_fail(r, item, path, "out of memory");
    }
    return 0;
}

static int parse_workload(config_yaml_t *r, yaml_node_t *node, config_t *c) {
    config_workload_t *w = &c->workload;
    yaml_node_t *v;
    uint64_t u;
    int index;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "workload", workload_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "kind", NULL))) {
        if (config_yaml_enum(r, v, "workload.kind", config_workload_kind_names, &index) < 0)
            return -1;
        w->kind = (config_workload_kind_t)index;
    }
    if ((v = config_yaml_get(r, node, "turns", NULL)) &&
        config_dist_read(r, v, "workload.turns", false, 1, &w->turns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "input_tokens", NULL)) &&
        config_dist_read_tokens(r, v, "workload.input_tokens", &w->input_tokens) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "output_tokens", NULL)) &&
        config_dist_read_tokens(r, v, "workload.output_tokens", &w->output_tokens) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "think_time", NULL)) &&
        config_dist_read(r, v, "workload.think_time", true, 0, &w->think_time) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "system_prompt_tokens", NULL))) {
        if (config_yaml_uint(r, v, "workload.system_prompt_tokens", WORKLOAD_MAX_TOKENS, &u) < 0)
            return -1;
        w->system_prompt_tokens = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "roles", NULL)) && read_roles(r, v, c) < 0)
        return -1;
    if (config_graph_read(r, node, &c->workload) < 0 ||
        config_trace_read(r, node, &c->workload) < 0 || config_dataset_read(r, node, c) < 0 ||
        config_scaffold_read(r, node, c) < 0)
        return -1;
    return config_compaction_read(r, node, c);
}

/* What only makes sense together: a rate for the rate scheduler, a concurrency for the
 * concurrent one, a cv for gamma arrivals. */
static int check_scheduler(config_yaml_t *r, yaml_node_t *node, config_scheduler_t *s,
                           bool rate_from_trace) {
    yaml_node_t *kind = config_yaml_get(r, node, "kind", NULL);
    yaml_node_t *rate = config_yaml_get(r, node, "rate", NULL);
    yaml_node_t *concurrency = config_yaml_get(r, node, "concurrency", NULL);
    yaml_node_t *arrival = config_yaml_get(r, node, "arrival", NULL);
    if (s->kind == SCHEDULER_RATE && concurrency == NULL)
        s->concurrency = 0; /* no cap unless asked for */
    if (s->kind == SCHEDULER_RATE && rate_from_trace)
        rate = NULL; /* a timed trace replay: the arrivals come from the trace */
    else if (s->kind == SCHEDULER_RATE && rate == NULL)
        return config_yaml_fail(r, kind, "scheduler.rate",
                                "a rate scheduler needs a rate (sessions per second), e.g. "
                                "rate: 5/s");
    if (s->kind == SCHEDULER_RATE && s->rate <= 0 && !rate_from_trace)
        return config_yaml_fail(r, rate, "scheduler.rate",
                                "a rate scheduler needs a rate greater than 0, got '%s'",
                                (const char *)rate->data.scalar.value);
    if (s->kind == SCHEDULER_SEQUENTIAL && s->concurrency != 1)
        return config_yaml_fail(r, concurrency, "scheduler.concurrency",
                                "a sequential scheduler runs one session at a time; drop "
                                "concurrency (or use kind: concurrent), got '%u'",
                                (unsigned)s->concurrency);
    if (s->kind == SCHEDULER_CONCURRENT && s->concurrency == 0)
        return config_yaml_fail(r, concurrency, "scheduler.concurrency",
                                "a concurrent scheduler needs concurrency >= 1, got '0'");
    if (s->arrival == ARRIVAL_GAMMA && config_yaml_get(r, node, "arrival_cv", NULL) == NULL)
        return config_yaml_fail(r, arrival, "scheduler.arrival_cv",
                                "gamma arrivals need arrival_cv (the coefficient of variation "
                                "of the gaps, > 0)");
    return 0;
}

static int parse_scheduler(config_yaml_t *r, yaml_node_t *node, config_scheduler_t *s,
                           bool rate_from_trace) {
    yaml_node_t *v;
    uint64_t u;
    int index;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "scheduler", scheduler_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "kind", NULL))) {
        if (config_yaml_enum(r, v, "scheduler.kind", config_scheduler_kind_names, &index) < 0)
            return -1;
        s->kind = (config_scheduler_kind_t)index;
    }
    if ((v = config_yaml_get(r, node, "concurrency", NULL))) {
        if (config_yaml_uint(r, v, "scheduler.concurrency", UINT32_MAX, &u) < 0)
            return -1;
        s->concurrency = (uint32_t)u;
    }
    if ((v = config_yaml_get(r, node, "ramp_up", NULL)) &&
        config_yaml_duration(r, v, "scheduler.ramp_up", false, &s->ramp_up_ns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "rate", NULL)) &&
        config_yaml_rate(r, v, "scheduler.rate", &s->rate) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "arrival", NULL))) {
        if (config_yaml_enum(r, v, "scheduler.arrival", config_arrival_names, &index) < 0)
            return -1;
        s->arrival = (config_arrival_t)index;
    }
    if ((v = config_yaml_get(r, node, "arrival_cv", NULL))) {
        if (config_yaml_number(r, v, "scheduler.arrival_cv", &s->arrival_cv) < 0)
            return -1;
        if (s->arrival_cv <= 0)
            return config_yaml_fail(r, v, "scheduler.arrival_cv",
                                    "expected a number greater than 0, got '%s'",
                                    (const char *)v->data.scalar.value);
    }
    return check_scheduler(r, node, s, rate_from_trace);
}

static int parse_limits(config_yaml_t *r, yaml_node_t *node, config_limits_t *l) {
    yaml_node_t *v;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "limits", limits_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "duration", NULL)) &&
        config_yaml_duration(r, v, "limits.duration", false, &l->duration_ns) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max_sessions", NULL)) &&
        config_yaml_uint(r, v, "limits.max_sessions", UINT64_MAX, &l->max_sessions) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max_requests", NULL)) &&
        config_yaml_uint(r, v, "limits.max_requests", UINT64_MAX, &l->max_requests) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "max_error_pct", NULL))) {
        if (config_yaml_number(r, v, "limits.max_error_pct", &l->max_error_pct) < 0)
            return -1;
        if (!(l->max_error_pct > 0 && l->max_error_pct < 100))
            return config_yaml_fail(r, v, "limits.max_error_pct",
                                    "expected a percentage above 0 and below 100, got %g",
                                    l->max_error_pct);
    }
    if ((v = config_yaml_get(r, node, "endpoint_dead_after", NULL)) &&
        config_yaml_duration(r, v, "limits.endpoint_dead_after", false,
                             &l->endpoint_dead_after_ns) < 0)
        return -1;
    return 0;
}

static int parse_validity(config_yaml_t *r, yaml_node_t *node, config_validity_t *v) {
    yaml_node_t *n;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "validity", validity_keys) < 0)
        return -1;
    if ((n = config_yaml_get(r, node, "max_schedule_lag", NULL)) &&
        config_yaml_duration(r, n, "validity.max_schedule_lag", true, &v->max_schedule_lag_ns) < 0)
        return -1;
    return 0;
}

static int parse_fleet(config_yaml_t *r, yaml_node_t *node, config_fleet_t *f) {
    yaml_node_t *n;
    uint64_t liveness;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "fleet", fleet_keys) < 0)
        return -1;
    if ((n = config_yaml_get(r, node, "heartbeat", NULL))) {
        if (config_yaml_duration(r, n, "fleet.heartbeat", true, &f->heartbeat_ns) < 0)
            return -1;
        if (f->heartbeat_ns < 10000000LL || f->heartbeat_ns > 60000000000LL)
            return config_yaml_fail(r, n, "fleet.heartbeat", "must be between 10ms and 60s");
    }
    if ((n = config_yaml_get(r, node, "liveness", NULL))) {
        if (config_yaml_uint(r, n, "fleet.liveness", 100, &liveness) < 0)
            return -1;
        if (liveness < 2)
            return config_yaml_fail(r, n, "fleet.liveness",
                                    "must be at least 2 (heartbeats missed before a peer is lost)");
        f->liveness = (uint32_t)liveness;
    }
    if ((n = config_yaml_get(r, node, "abort_on_worker_loss_pct", NULL))) {
        if (config_yaml_number(r, n, "fleet.abort_on_worker_loss_pct",
                               &f->abort_on_worker_loss_pct) < 0)
            return -1;
        if (!(f->abort_on_worker_loss_pct >= 0 && f->abort_on_worker_loss_pct <= 100))
            return config_yaml_fail(r, n, "fleet.abort_on_worker_loss_pct",
                                    "must be a percentage between 0 and 100");
    }
    if ((n = config_yaml_get(r, node, "rebalance_on_join", NULL)) &&
        config_yaml_bool(r, n, "fleet.rebalance_on_join", &f->rebalance_on_join) < 0)
        return -1;
    return 0;
}

static int parse_output(config_yaml_t *r, yaml_node_t *node, config_output_t *o) {
    yaml_node_t *v;
    if (node == NULL)
        return 0;
    if (config_yaml_check_keys(r, node, "output", output_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "dir", NULL)) &&
        config_yaml_string(r, v, "output.dir", &o->dir) < 0)
        return -1;
    if ((v = config_yaml_get(r, node, "trace", NULL)) &&
        config_yaml_bool(r, v, "output.trace", &o->trace) < 0)
        return -1;
    return 0;
}

/* A run must end on its own (a shared server is never left under unbounded load), and the
 * warm-up must leave something to measure. */
static int check_run_bounds(config_yaml_t *r, yaml_node_t *root, const config_t *c) {
    const config_limits_t *l = &c->limits;
    yaml_node_t *limits_key = NULL;
    config_yaml_get(r, root, "limits", &limits_key);
    bool trace_ends = (c->workload.kind == WORKLOAD_TRACE && !c->workload.trace.wrap) ||
                      c->workload.dataset.path != NULL; /* each conversation once */
    if (l->duration_ns == 0 && l->max_sessions == 0 && l->max_requests == 0 && !trace_ends &&
        c->sweep.axis == SWEEP_AXIS_NONE) /* a sweep bounds each level by its snapshots */
        return config_yaml_fail(r, limits_key ? limits_key : root, "limits",
                                "no limit given: set at least one of limits.duration, "
                                "limits.max_sessions or limits.max_requests (an unbounded run "
                                "against a shared server is refused)");
    yaml_node_t *warmup = config_yaml_get(r, root, "warmup", NULL);
    if (l->duration_ns > 0 && c->warmup_ns >= l->duration_ns) {
        char w[32], d[32];
        units_format_duration(c->warmup_ns, w, sizeof w);
        units_format_duration(l->duration_ns, d, sizeof d);
        return config_yaml_fail(r, warmup, "warmup",
                                "warmup %s leaves nothing to measure within limits.duration %s", w,
                                d);
    }
    return 0;
}

static int parse_root(config_yaml_t *r, yaml_node_t *root, config_t *c) {
    yaml_node_t *v;
    if (root != NULL && root->type != YAML_MAPPING_NODE && !config_yaml_is_null(root))
        return config_yaml_fail(r, root, "",
                                "expected a mapping of sections (seed, target, workload, "
                                "scheduler, limits, warmup, output, mock), got %s",
                                root->type == YAML_SEQUENCE_NODE ? "a sequence" : "a scalar");
    if (root != NULL && root->type == YAML_MAPPING_NODE && config_veeksha_is(r, root)) {
        /* a Veeksha workload file, read as it is; stampede's target, output and mock may join */
        if (config_veeksha_parse(r, root, c) < 0 ||
            parse_target(r, config_yaml_get(r, root, "target", NULL), c) < 0 ||
            parse_output(r, config_yaml_get(r, root, "output", NULL), &c->output) < 0 ||
            config_mock_parse(r, config_yaml_get(r, root, "mock", NULL), &c->mock) < 0)
            return -1;
        return check_run_bounds(r, root, c);
    }
    if (root != NULL && config_yaml_check_keys(r, root, "", root_keys) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "seed", NULL)) &&
        config_yaml_uint(r, v, "seed", UINT64_MAX, &c->seed) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "text_seed", NULL)) &&
        config_yaml_uint(r, v, "text_seed", UINT64_MAX, &c->text_seed) < 0)
        return -1;
    if (parse_target(r, config_yaml_get(r, root, "target", NULL), c) < 0 ||
        parse_workload(r, config_yaml_get(r, root, "workload", NULL), c) < 0 ||
        parse_scheduler(r, config_yaml_get(r, root, "scheduler", NULL), &c->scheduler,
                        c->workload.kind == WORKLOAD_TRACE) < 0 ||
        parse_limits(r, config_yaml_get(r, root, "limits", NULL), &c->limits) < 0 ||
        parse_validity(r, config_yaml_get(r, root, "validity", NULL), &c->validity) < 0 ||
        parse_fleet(r, config_yaml_get(r, root, "fleet", NULL), &c->fleet) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "warmup", NULL)) &&
        config_yaml_duration(r, v, "warmup", false, &c->warmup_ns) < 0)
        return -1;
    if (parse_output(r, config_yaml_get(r, root, "output", NULL), &c->output) < 0 ||
        config_mock_parse(r, config_yaml_get(r, root, "mock", NULL), &c->mock) < 0)
        return -1;
    config_sweep_context_t sweep_context = {c->scheduler.kind, c->limits.duration_ns, c->warmup_ns};
    if (config_telemetry_parse(r, root, &c->telemetry) < 0 ||
        config_sweep_parse(r, root, &sweep_context, &c->sweep) < 0)
        return -1;
    if (config_slo_parse(r, config_yaml_get(r, root, "slo", NULL), &c->slo) < 0 ||
        config_capacity_parse(r, config_yaml_get(r, root, "capacity", NULL), &c->workload,
                              &c->capacity) < 0)
        return -1;
    if (config_deployment_parse(r, config_yaml_get(r, root, "deployment", NULL), &c->deployment) <
        0)
        return -1;
    return check_run_bounds(r, root, c);
}

/* Line and column (1-based, in bytes) of a byte offset: libyaml's reader errors carry only
 * the offset. */
static void text_position(const config_yaml_t *r, size_t offset, int *line, int *column) {
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset && i < r->text_len; i++) {
        if (r->text[i] == '\n') {
            ++*line;
            *column = 1;
        } else {
            ++*column;
        }
    }
}

static int syntax_error(config_yaml_t *r, const yaml_parser_t *p) {
    config_error_t *e = r->err;
    snprintf(e->file, sizeof e->file, "%s", r->file);
    e->key[0] = '\0';
    e->line = e->column = 0;
    if (p->error == YAML_MEMORY_ERROR) {
        snprintf(e->message, sizeof e->message, "out of memory while reading YAML");
    } else if (p->error == YAML_READER_ERROR) {
        text_position(r, p->problem_offset, &e->line, &e->column);
        if (p->problem_value >= 0)
            snprintf(e->message, sizeof e->message, "cannot read the text: %s (0x%x at byte %zu)",
                     p->problem ? p->problem : "input error", (unsigned)p->problem_value,
                     p->problem_offset);
        else
            snprintf(e->message, sizeof e->message, "cannot read the text: %s (at byte %zu)",
                     p->problem ? p->problem : "input error", p->problem_offset);
    } else {
        e->line = (int)p->problem_mark.line + 1;
        e->column = (int)p->problem_mark.column + 1;
        if (p->context != NULL)
            snprintf(e->message, sizeof e->message,
                     "YAML syntax error: %s (%s at line %d, column %d)", p->problem, p->context,
                     (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
        else
            snprintf(e->message, sizeof e->message, "YAML syntax error: %s",
                     p->problem ? p->problem : "unknown problem");
        size_t at = p->problem_mark.index, used = strlen(e->message);
        if (at < r->text_len && r->text[at] == '\t')
            snprintf(e->message + used, sizeof e->message - used,
                     "; YAML allows no tabs in indentation, use spaces");
    }
    return -1;
}

/* A stream holds exactly one document; a second one is almost always a stray "---". */
static int check_single_document(config_yaml_t *r, yaml_parser_t *parser) {
    yaml_document_t extra;
    if (!yaml_parser_load(parser, &extra))
        return syntax_error(r, parser);
    yaml_node_t *root = yaml_document_get_root_node(&extra);
    int rc = 0;
    if (root != NULL) {
        config_error_t *e = r->err;
        snprintf(e->file, sizeof e->file, "%s", r->file);
        e->line = (int)extra.start_mark.line + 1;
        e->column = (int)extra.start_mark.column + 1;
        e->key[0] = '\0';
        snprintf(e->message, sizeof e->message,
                 "expected a single YAML document, found a second one");
        rc = -1;
    }
    yaml_document_delete(&extra);
    return rc;
}

/* Skips the documents before r->document, of a file of several runs (config_documents.h). */
static int skip_documents(config_yaml_t *r, yaml_parser_t *parser) {
    for (int k = 1; k < r->document; k++) {
        yaml_document_t before;
        if (!yaml_parser_load(parser, &before))
            return syntax_error(r, parser);
        bool end = yaml_document_get_root_node(&before) == NULL;
        yaml_document_delete(&before);
        if (end) {
            snprintf(r->err->message, sizeof r->err->message, "the file has no document %d",
                     r->document);
            return -1;
        }
    }
    return 0;
}

/* "FILE#k" of a file of one Veeksha document names run k of its !expand lists (config_documents.c
 * counted them), not document k. */
static void veeksha_run_of(config_yaml_t *r) {
    yaml_parser_t parser;
    yaml_document_t doc;
    if (r->document < 1 || !yaml_parser_initialize(&parser))
        return;
    yaml_parser_set_input_string(&parser, (const unsigned char *)r->text, r->text_len);
    if (yaml_parser_load(&parser, &doc)) {
        yaml_document_t next;
        bool only = yaml_document_get_root_node(&doc) != NULL && yaml_parser_load(&parser, &next);
        if (only) {
            only = yaml_document_get_root_node(&next) == NULL;
            yaml_document_delete(&next);
        }
        if (only && config_veeksha_runs(&doc) >= r->document) {
            r->veeksha_run = r->document;
            r->document = 1;
        }
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
}

static int load(config_t *self, yaml_parser_t *parser, config_yaml_t *r) {
    veeksha_run_of(r);
    if (skip_documents(r, parser) != 0)
        return -1;
    if (!yaml_parser_load(parser, &r->doc))
        return syntax_error(r, parser);
    int rc = r->document > 0 ? 0 : check_single_document(r, parser);
    if (rc == 0 && r->document > 0 && yaml_document_get_root_node(&r->doc) == NULL) {
        snprintf(r->err->message, sizeof r->err->message, "the file has no document %d",
                 r->document);
        rc = -1;
    }
    if (rc == 0)
        rc = parse_root(r, yaml_document_get_root_node(&r->doc), self);
    yaml_document_delete(&r->doc);
    return rc;
}

static int load_text(config_t *self, const char *text, size_t len, config_yaml_t *r) {
    yaml_parser_t parser;
    r->text = text;
    r->text_len = len;
    config_init(self);
    if (!yaml_parser_initialize(&parser)) {
        config_free(self);
        return config_yaml_fail(r, NULL, "", "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    self->source = strdup(r->file);
    int rc = self->source ? config_scan_check(r) : config_yaml_fail(r, NULL, "", "out of memory");
    if (rc == 0)
        rc = load(self, &parser, r);
    yaml_parser_delete(&parser);
    if (rc < 0)
        config_free(self);
    return rc;
}

/* The whole file in memory (workload files are small, and the text serves error hints);
 * NULL with *code set to an errno value. */
static char *read_file(const char *path, size_t *len, int *code) {
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        *code = errno;
        return NULL;
    }
    if (fstat(fileno(f), &st) < 0 || S_ISDIR(st.st_mode)) {
        *code = S_ISDIR(st.st_mode) ? EISDIR : errno;
        fclose(f);
        return NULL;
    }
    buffer_t text;
    buffer_init(&text);
    size_t room = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096; /* the file and its NUL */
    bool short_of_memory = false;
    while (!ferror(f) && !feof(f)) {
        if (buffer_reserve(&text, room) < 0) {
            short_of_memory = true;
            break;
        }
        text.len += fread(text.data + text.len, 1, text.cap - text.len - 1, f);
    }
    *code = short_of_memory ? ENOMEM : EIO;
    if (short_of_memory || ferror(f))
        buffer_clear(&text);
    fclose(f);
    if (text.data != NULL) {
        text.data[text.len] = '\0';
        *len = text.len;
    }
    return text.data;
}

static void error_clear(config_error_t *err, const char *file) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
}

/* The file's directory, made absolute so that resolved paths stay right when the resolved config
 * is written elsewhere (OUT/config.yaml) or shipped to workers. */
static void set_base_dir(config_yaml_t *r, const char *path) {
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path + (slash == path)), path);
    if (realpath(dir, r->base_dir) == NULL)
        snprintf(r->base_dir, sizeof r->base_dir, "%s", dir);
}

/* "FILE#k" names document k of FILE (config_documents.h) when no file has that very name. */
static const char *document_path(const char *path, char *buf, size_t len, int *document) {
    const char *hash = strrchr(path, '#');
    struct stat st;
    *document = 0;
    if (!hash || !hash[1] || strspn(hash + 1, "0123456789") != strlen(hash + 1) ||
        stat(path, &st) == 0 || (size_t)(hash - path) >= len)
        return path;
    *document = atoi(hash + 1);
    snprintf(buf, len, "%.*s", (int)(hash - path), path);
    return *document > 0 ? buf : path;
}

int config_load_file(config_t *self, const char *path, config_error_t *err) {
    config_yaml_t r = {.err = err, .file = path};
    size_t len = 0;
    int code = 0;
    char file[PATH_MAX];
    error_clear(err, path);
    char *text = read_file(document_path(path, file, sizeof file, &r.document), &len, &code);
    if (text == NULL) {
        snprintf(err->message, sizeof err->message, "cannot read the file: %s", strerror(code));
        memset(self, 0, sizeof *self);
        return -1;
    }
    set_base_dir(&r, r.document ? file : path);
    int rc = load_text(self, text, len, &r);
    free(text);
    if (rc == 0 && (config_trace_load(self, err) != 0 || config_dataset_load(self, err) != 0)) {
        config_free(self);
        rc = -1;
    }
    return rc;
}

int config_load_string(config_t *self, const char *yaml, size_t len, const char *name,
                       config_error_t *err) {
    config_yaml_t r = {.err = err, .file = name ? name : "<string>"};
    error_clear(err, r.file);
    return load_text(self, yaml, len, &r);
}

int config_mock_load_file(config_mock_t *self, const char *path, config_error_t *err) {
    static const char *const keys[] = {"mock", "calibration", NULL};
    config_yaml_t r = {.err = err, .file = path};
    size_t len = 0;
    int code = 0;
    error_clear(err, path);
    memset(self, 0, sizeof *self);
    char *text = read_file(path, &len, &code);
    if (text == NULL) {
        snprintf(err->message, sizeof err->message, "cannot read the file: %s", strerror(code));
        return -1;
    }
    set_base_dir(&r, path);
    r.text = text;
    r.text_len = len;
    yaml_parser_t parser;
    int rc = -1;
    if (!yaml_parser_initialize(&parser)) {
        config_yaml_fail(&r, NULL, "", "out of memory");
        free(text);
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &r.doc)) {
        syntax_error(&r, &parser);
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&r.doc);
        yaml_node_t *mock = NULL;
        if (!root || root->type != YAML_MAPPING_NODE)
            config_yaml_fail(&r, root, "", "expected a mapping with a mock: section");
        else if (config_yaml_check_keys(&r, root, "", keys) == 0 &&
                 !(mock = config_yaml_get(&r, root, "mock", NULL)))
            config_yaml_fail(&r, root, "mock",
                             "a profile file holds a mock: section (stampede calibrate writes "
                             "one)");
        if (mock)
            rc = config_mock_parse(&r, mock, self);
        yaml_document_delete(&r.doc);
    }
    yaml_parser_delete(&parser);
    free(text);
    return rc;
}
