/* The telemetry keys of a workload file: `server_metrics: auto | [URL...]`, `gpu_metrics:
 * [URL...]` and `scrape_interval`. */
#ifndef STAMPEDE_CONFIG_TELEMETRY_H
#define STAMPEDE_CONFIG_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Whether and where the controller scrapes server and GPU /metrics (config_telemetry.c). */
typedef enum {
    SERVER_METRICS_OFF,
    SERVER_METRICS_AUTO,
    SERVER_METRICS_URLS
} config_server_metrics_t;
typedef struct config_telemetry {
    config_server_metrics_t server_metrics; /* default auto; `none` is SERVER_METRICS_OFF */
    char **server_urls;                     /* SERVER_METRICS_URLS: the pages to read */
    size_t n_server_urls;
    char **gpu_urls; /* DCGM exporter pages; none by default */
    size_t n_gpu_urls;
    int64_t scrape_interval_ns; /* time series period; default 1 s */
} config_telemetry_t;

/* The reader's types (common/config_yaml.h), named here without pulling libyaml into config.h. */
struct config_yaml;
struct yaml_node_s;

/* Reads the three keys of the root mapping (root may be NULL) into *self (defaults first). 0 ok;
 * -1 with r->err filled at the offending key. */
int config_telemetry_parse(struct config_yaml *r, struct yaml_node_s *root,
                           config_telemetry_t *self);
/* Deep copy of src into dst; 0 ok, -1 on allocation failure (dst then holds what was copied). */
int config_telemetry_copy(config_telemetry_t *dst, const config_telemetry_t *src);
/* Frees the URL lists and empties *self. */
void config_telemetry_free(config_telemetry_t *self);
/* The three keys as config.yaml writes them back (config_telemetry_parse reads them again). */
void config_telemetry_write(FILE *out, const config_telemetry_t *self);

#endif
