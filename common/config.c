#include "config.h"
#include "config_graph.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_dataset.h"
#include "config_mock.h"
#include "config_net.h"
#include "config_sweep.h"
#include "config_telemetry.h"
#include "config_trace.h"
#include "trace.h"
#include "units.h"

static char *checked_strdup(const char *s) {
    char *copy = strdup(s);
    if (copy == NULL)
        abort(); /* a few bytes of defaults: nothing sensible is left to do */
    return copy;
}

uint64_t config_text_seed(const config_t *self) {
    return self->text_seed ? self->text_seed : self->seed;
}

void config_init(config_t *self) {
    memset(self, 0, sizeof *self);
    self->seed = 1;
    self->sweep.fresh_text = true;
    self->capacity.fresh_text = true;
    self->target.api = API_CHAT;
    self->target.model = checked_strdup("mock");
    self->target.timeout_ns = 600 * UNITS_NS_PER_S;
    self->target.connect_timeout_ns = 10 * UNITS_NS_PER_S;
    self->target.routing = ROUTING_ROUND_ROBIN;
    self->target.stream = true;
    self->target.reasoning_open = checked_strdup("<think>");
    self->target.reasoning_close = checked_strdup("</think>");
    self->target.retry_after_max_ns = 10 * UNITS_NS_PER_S;
    self->target.retry_429_max = 5;
    self->target.preflight = true;
    self->limits.endpoint_dead_after_ns = 10 * UNITS_NS_PER_S;
    self->workload.kind = WORKLOAD_REQUESTS;
    dist_fixed(&self->workload.turns, 1);
    dist_fixed(&self->workload.input_tokens, 512);
    dist_fixed(&self->workload.output_tokens, 128);
    dist_fixed(&self->workload.think_time, 0);
    config_graph_init(&self->workload.graph);
    config_trace_init(&self->workload.trace);
    config_dataset_init(&self->workload.dataset);
    self->scheduler.kind = SCHEDULER_CONCURRENT;
    self->scheduler.concurrency = 1;
    self->scheduler.arrival = ARRIVAL_POISSON;
    self->scheduler.arrival_cv = 1.0;
    self->validity.max_schedule_lag_ns = 10 * 1000000LL; /* 10 ms */
    self->fleet.heartbeat_ns = 1000000000LL;
    self->fleet.liveness = 3;
    self->fleet.abort_on_worker_loss_pct = -1;
    self->output.dir = checked_strdup("results");
    self->telemetry.server_metrics = SERVER_METRICS_AUTO; /* config_telemetry.c */
    self->telemetry.scrape_interval_ns = 1000000000LL;
}

static void free_endpoints(char **endpoints, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(endpoints[i]);
    free(endpoints);
}

void config_free(config_t *self) {
    free(self->source);
    free(self->deployment);
    free_endpoints(self->target.endpoints, self->target.n_endpoints);
    free(self->target.model);
    for (size_t i = 0; i < self->target.n_headers; i++) {
        free(self->target.headers[i].name);
        free(self->target.headers[i].value);
        free(self->target.headers[i].value_env);
        free(self->target.headers[i].value_file);
    }
    free(self->target.headers);
    free(self->target.api_key_env);
    free(self->target.api_key_file);
    free(self->target.reasoning_open);
    free(self->target.reasoning_close);
    config_net_free(&self->target);
    free(self->target.tokenizer);
    dist_clear(&self->workload.turns);
    dist_clear(&self->workload.input_tokens);
    dist_clear(&self->workload.output_tokens);
    dist_clear(&self->workload.think_time);
    free_endpoints(self->workload.roles, self->workload.n_roles);
    config_graph_free(&self->workload.graph);
    config_trace_free(&self->workload);
    config_dataset_free(&self->workload.dataset);
    free(self->output.dir);
    free(self->notes);
    free(self->managed_server);
    config_mock_free(&self->mock);
    config_telemetry_free(&self->telemetry);
    config_sweep_free(&self->sweep);
    memset(self, 0, sizeof *self);
}

static char *copy_or_null(const char *s, bool *ok) {
    if (s == NULL)
        return NULL;
    char *copy = strdup(s);
    if (copy == NULL)
        *ok = false;
    return copy;
}

int config_copy(config_t *dst, const config_t *src) {
    bool ok = true;
    *dst = *src;
    dst->target.endpoints = calloc(src->target.n_endpoints + 1, sizeof *dst->target.endpoints);
    dst->target.headers = calloc(src->target.n_headers + 1, sizeof *dst->target.headers);
    dst->workload.roles = calloc(src->workload.n_roles + 1, sizeof *dst->workload.roles);
    ok =
        dst->target.endpoints != NULL && dst->target.headers != NULL && dst->workload.roles != NULL;
    dst->workload.n_roles = ok ? src->workload.n_roles : 0;
    for (size_t i = 0; i < dst->workload.n_roles; i++)
        dst->workload.roles[i] = copy_or_null(src->workload.roles[i], &ok);
    dst->target.n_endpoints = ok ? src->target.n_endpoints : 0;
    dst->target.n_headers = ok ? src->target.n_headers : 0;
    for (size_t i = 0; i < dst->target.n_endpoints; i++)
        dst->target.endpoints[i] = copy_or_null(src->target.endpoints[i], &ok);
    for (size_t i = 0; i < dst->target.n_headers; i++) {
        dst->target.headers[i].name = copy_or_null(src->target.headers[i].name, &ok);
        dst->target.headers[i].value = copy_or_null(src->target.headers[i].value, &ok);
        dst->target.headers[i].value_env = copy_or_null(src->target.headers[i].value_env, &ok);
        dst->target.headers[i].value_file = copy_or_null(src->target.headers[i].value_file, &ok);
    }
    dst->source = copy_or_null(src->source, &ok);
    dst->deployment = copy_or_null(src->deployment, &ok);
    dst->target.model = copy_or_null(src->target.model, &ok);
    dst->target.api_key_env = copy_or_null(src->target.api_key_env, &ok);
    dst->target.api_key_file = copy_or_null(src->target.api_key_file, &ok);
    dst->target.reasoning_open = copy_or_null(src->target.reasoning_open, &ok);
    dst->target.reasoning_close = copy_or_null(src->target.reasoning_close, &ok);
    if (config_net_copy(&dst->target, &src->target) < 0)
        ok = false;
    dst->target.tokenizer = copy_or_null(src->target.tokenizer, &ok);
    dst->output.dir = copy_or_null(src->output.dir, &ok);
    dst->notes = copy_or_null(src->notes, &ok);
    dst->managed_server = copy_or_null(src->managed_server, &ok);
    dist_t *d[] = {&dst->workload.turns, &dst->workload.input_tokens, &dst->workload.output_tokens,
                   &dst->workload.think_time};
    const dist_t *s[] = {&src->workload.turns, &src->workload.input_tokens,
                         &src->workload.output_tokens, &src->workload.think_time};
    for (size_t i = 0; i < 4; i++) {
        dist_init(d[i]);
        if (dist_copy(d[i], s[i]) < 0)
            ok = false;
    }
    if (config_mock_copy(&dst->mock, &src->mock) < 0)
        ok = false;
    if (config_telemetry_copy(&dst->telemetry, &src->telemetry) < 0)
        ok = false;
    if (config_trace_copy(&dst->workload, &src->workload) < 0)
        ok = false;
    if (config_dataset_copy(&dst->workload.dataset, &src->workload.dataset) < 0)
        ok = false;
    if (config_sweep_copy(&dst->sweep, &src->sweep) < 0)
        ok = false;
    if (config_graph_copy(&dst->workload.graph, &src->workload.graph) < 0) {
        config_graph_init(&dst->workload.graph); /* nothing shared with src left to free */
        ok = false;
    }
    if (!ok) {
        config_free(dst);
        return -1;
    }
    return 0;
}

int config_set_endpoints(config_t *self, char **urls, size_t n) {
    char why[1024];
    if (config_endpoints_check(urls, n, NULL, why, sizeof why) < 0)
        return -1;
    char **copy = calloc(n + 1, sizeof *copy);
    if (copy == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        copy[i] = config_endpoint_normalize(urls[i]);
        if (copy[i] == NULL) {
            free_endpoints(copy, i);
            return -1;
        }
    }
    free_endpoints(self->target.endpoints, self->target.n_endpoints);
    self->target.endpoints = copy;
    self->target.n_endpoints = n;
    return 0;
}

static int api_key_error(const config_t *self, config_error_t *err, const char *key,
                         const char *fmt, const char *arg, const char *why) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", self->source ? self->source : "");
    /* a header's key ("target.headers.NAME") may be longer than err->key: cut, as gcc -O3 warns */
    snprintf(err->key, sizeof err->key, "%.*s", (int)sizeof err->key - 1, key);
    snprintf(err->message, sizeof err->message, fmt, arg, why);
    return -1;
}

/* The first line of the file, without surrounding white space (files often end in a newline). */
static int read_key_file(const config_t *self, const char *path, const char *config_key, char **key,
                         config_error_t *err) {
    char buf[16384];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return api_key_error(self, err, config_key, "cannot read %s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return api_key_error(self, err, config_key, "cannot read %s: %s", path, "read error");
    buf[n] = '\0';
    char *start = buf;
    while (isspace((unsigned char)*start))
        start++;
    size_t len = strcspn(start, "\r\n");
    while (len > 0 && isspace((unsigned char)start[len - 1]))
        len--;
    if (len == 0)
        return api_key_error(self, err, config_key, "%s holds no value%s", path, "");
    *key = strndup(start, len);
    memset(buf, 0, sizeof buf);
    return *key ? 0 : api_key_error(self, err, config_key, "%s%s", "out of memory", "");
}

int config_api_key(const config_t *self, char **key, config_error_t *err) {
    *key = NULL;
    if (self->target.api_key_env != NULL) {
        const char *value = getenv(self->target.api_key_env);
        if (value == NULL || value[0] == '\0')
            return api_key_error(self, err, "target.api_key_env",
                                 "environment variable %s is not set%s", self->target.api_key_env,
                                 value ? " (it is empty)" : "");
        *key = strdup(value);
        return *key ? 0
                    : api_key_error(self, err, "target.api_key_env", "%s%s", "out of memory", "");
    }
    if (self->target.api_key_file != NULL)
        return read_key_file(self, self->target.api_key_file, "target.api_key_file", key, err);
    return 0;
}

int config_header_value(const config_t *self, const config_header_t *h, char **value,
                        config_error_t *err) {
    char key[256];
    snprintf(key, sizeof key, "target.headers.%s", h->name);
    *value = NULL;
    if (h->value_file != NULL)
        return read_key_file(self, h->value_file, key, value, err);
    if (h->value_env != NULL) {
        const char *v = getenv(h->value_env);
        if (v == NULL || v[0] == '\0')
            return api_key_error(self, err, key, "environment variable %s is not set%s",
                                 h->value_env, v ? " (it is empty)" : "");
        *value = strdup(v);
    } else {
        *value = strdup(h->value ? h->value : "");
    }
    return *value ? 0 : api_key_error(self, err, key, "%s%s", "out of memory", "");
}

bool config_replays(const config_t *self) {
    return self->workload.kind == WORKLOAD_TRACE || self->workload.dataset.path != NULL;
}

void config_replay_set(config_t *self, trace_t *trace, bool cap_sessions) {
    trace_unref(&self->workload.replay);
    self->workload.replay = trace;
    if (cap_sessions &&
        (self->limits.max_sessions == 0 || self->limits.max_sessions > trace->n_sessions))
        self->limits.max_sessions = trace->n_sessions;
}

const char *config_role_name(const config_t *self, uint32_t i) {
    return config_workload_role_name(&self->workload, i);
}

int config_role_index(config_t *self, const char *name, uint32_t *index) {
    return config_workload_role_index(&self->workload, name, index);
}
