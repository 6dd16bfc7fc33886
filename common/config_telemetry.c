/* server_metrics, gpu_metrics, scrape_interval. `auto` by default, as AIPerf's auto-discovery:
 * a run against an endpoint that serves /metrics gets the server's side without asking (one GET
 * per scrape_interval); one that does not is a quiet absence. `none` (or `off`) turns it off. */
#include "config_telemetry.h"

#include <stdlib.h>
#include <string.h>

#include "config_target.h"
#include "config_yaml.h"
#include "units.h"

#define CONFIG_TELEMETRY_DEFAULT_INTERVAL_NS 1000000000LL

/* A list of /metrics URLs under key (a single URL is accepted as a one-item list), each checked
 * as an endpoint URL is. */
static int config_telemetry_urls(config_yaml_t *r, yaml_node_t *node, const char *key, char ***urls,
                                 size_t *n_urls) {
    bool list = node->type == YAML_SEQUENCE_NODE;
    if (node->type == YAML_MAPPING_NODE)
        return config_yaml_fail(r, node, key, "expected a list of URLs, got a mapping");
    size_t n = list ? (size_t)(node->data.sequence.items.top - node->data.sequence.items.start) : 1;
    *urls = calloc(n + 1, sizeof **urls);
    if (!*urls)
        return config_yaml_fail(r, node, key, "out of memory");
    char path[CONFIG_YAML_KEY_MAX], why[1024];
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item =
            list ? yaml_document_get_node(&r->doc, node->data.sequence.items.start[i]) : node;
        if (list)
            snprintf(path, sizeof path, "%s[%zu]", key, i);
        else
            snprintf(path, sizeof path, "%s", key);
        if (config_yaml_string(r, item, path, &(*urls)[i]) < 0)
            return -1;
        *n_urls = i + 1;
        if (config_endpoint_check((*urls)[i], why, sizeof why) < 0)
            return config_yaml_fail(r, item, path, "%s", why);
    }
    return 0;
}

int config_telemetry_parse(config_yaml_t *r, yaml_node_t *root, config_telemetry_t *self) {
    config_telemetry_free(self);
    self->server_metrics = SERVER_METRICS_AUTO;
    self->scrape_interval_ns = CONFIG_TELEMETRY_DEFAULT_INTERVAL_NS;
    yaml_node_t *v;
    if ((v = config_yaml_get(r, root, "server_metrics", NULL))) {
        const char *text = v->type == YAML_SCALAR_NODE ? config_yaml_text(v) : NULL;
        if (text && strcmp(text, "auto") == 0)
            self->server_metrics = SERVER_METRICS_AUTO;
        else if (text && (strcmp(text, "none") == 0 || strcmp(text, "off") == 0))
            self->server_metrics = SERVER_METRICS_OFF;
        else if (text && strncmp(text, "http", 4) != 0)
            return config_yaml_fail(r, v, "server_metrics",
                                    "expected auto, none or a list of /metrics URLs, got \"%s\"",
                                    text);
        else if (config_telemetry_urls(r, v, "server_metrics", &self->server_urls,
                                       &self->n_server_urls) < 0)
            return -1;
        else
            self->server_metrics = SERVER_METRICS_URLS;
    }
    if ((v = config_yaml_get(r, root, "gpu_metrics", NULL)) &&
        config_telemetry_urls(r, v, "gpu_metrics", &self->gpu_urls, &self->n_gpu_urls) < 0)
        return -1;
    if ((v = config_yaml_get(r, root, "scrape_interval", NULL)) &&
        config_yaml_duration(r, v, "scrape_interval", true, &self->scrape_interval_ns) < 0)
        return -1;
    if (self->scrape_interval_ns < 10000000LL)
        return config_yaml_fail(
            r, v, "scrape_interval",
            "a scrape every %.3f ms is too often for a server; use 10ms or more",
            self->scrape_interval_ns / 1e6);
    return 0;
}

static char **config_telemetry_copy_list(char **src, size_t n, bool *ok) {
    char **dst = calloc(n + 1, sizeof *dst);
    if (!dst) {
        *ok = false;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(dst[i] = strdup(src[i])))
            *ok = false;
    return dst;
}

int config_telemetry_copy(config_telemetry_t *dst, const config_telemetry_t *src) {
    bool ok = true;
    *dst = *src;
    dst->server_urls = config_telemetry_copy_list(src->server_urls, src->n_server_urls, &ok);
    dst->gpu_urls = config_telemetry_copy_list(src->gpu_urls, src->n_gpu_urls, &ok);
    if (!dst->server_urls)
        dst->n_server_urls = 0;
    if (!dst->gpu_urls)
        dst->n_gpu_urls = 0;
    return ok ? 0 : -1;
}

static void config_telemetry_free_list(char **list, size_t n) {
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

void config_telemetry_free(config_telemetry_t *self) {
    config_telemetry_free_list(self->server_urls, self->n_server_urls);
    config_telemetry_free_list(self->gpu_urls, self->n_gpu_urls);
    memset(self, 0, sizeof *self);
}

static void config_telemetry_put_url(FILE *out, const char *url) {
    fputs("\n  - \"", out);
    for (const char *p = url; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', out);
        fputc(*p, out);
    }
    fputc('"', out);
}

void config_telemetry_write(FILE *out, const config_telemetry_t *self) {
    fputs("server_metrics:", out);
    if (self->server_metrics == SERVER_METRICS_URLS)
        for (size_t i = 0; i < self->n_server_urls; i++)
            config_telemetry_put_url(out, self->server_urls[i]);
    else
        fputs(self->server_metrics == SERVER_METRICS_AUTO ? " auto" : " none", out);
    fputs("\ngpu_metrics:", out);
    if (self->n_gpu_urls == 0)
        fputs(" []", out);
    for (size_t i = 0; i < self->n_gpu_urls; i++)
        config_telemetry_put_url(out, self->gpu_urls[i]);
    char interval[32];
    units_format_duration(self->scrape_interval_ns, interval, sizeof interval);
    fprintf(out, "\nscrape_interval: %s\n", interval);
}
