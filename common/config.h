/* A workload file (YAML, via libyaml) loaded into typed structs. Every error names the file, line,
 * column and key. A loaded config can be written back as YAML (secrets are never part of it: only
 * the names of the environment variable or file that hold the API key), and that YAML loads back
 * to an equal config: the controller ships the resolved config to workers this way.
 *
 * Each section's type is in a header of its own (config_target.h, config_workload.h,
 * config_scheduler.h, config_mock.h, config_telemetry.h, config_sweep.h, config_slo.h), which the
 * files that read or write that section include; config_t gathers them. The small sections with no
 * functions of their own (limits, validity, fleet, output) are here. */
#ifndef STAMPEDE_CONFIG_H
#define STAMPEDE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config_error.h"
#include "config_mock.h"
#include "config_scheduler.h"
#include "config_slo.h"
#include "config_sweep.h"
#include "config_target.h"
#include "config_telemetry.h"
#include "config_workload.h"

typedef struct config_limits {
    int64_t duration_ns;   /* 0 = none */
    uint64_t max_sessions; /* 0 = none */
    uint64_t max_requests; /* 0 = none */
    double max_error_pct;  /* circuit breaker: stop the run (a sweep: the level) once failed /
                              (ok + failed) passes it over CONFIG_BREAKER_MIN_REQUESTS; 0 = off */
    int64_t endpoint_dead_after_ns; /* circuit breaker: an endpoint whose every request failed for
                                       this long stops the run (a sweep: the level); default 10 s,
                                       0 = off */
} config_limits_t;

/* The sample the circuit breaker (limits.max_error_pct) waits for before it judges. */
#define CONFIG_BREAKER_MIN_REQUESTS 50

/* The `validity:` section: the thresholds of the run's verdict (docs/metrics.md §11). */
typedef struct config_validity {
    int64_t max_schedule_lag_ns; /* schedule lag p99 above this is a reason; default 10 ms */
} config_validity_t;

/* The `fleet:` section: how the controller and its workers watch each other, and what a run does
 * when a worker is lost or joins (docs/config.md, docs/protocol.md "Worker loss"). */
typedef struct config_fleet {
    int64_t heartbeat_ns;            /* both ways on the control socket; default 1 s */
    uint32_t liveness;               /* heartbeats missed before a peer is lost; default 3 */
    double abort_on_worker_loss_pct; /* lost share above this ends the run; < 0: never (default) */
    bool rebalance_on_join;          /* a worker joining mid-run gets a share; default false */
} config_fleet_t;

typedef struct config_output {
    char *dir;  /* default "results" */
    bool trace; /* write requests.jsonl with every chunk timestamp */
} config_output_t;

typedef struct config {
    char *source;       /* file name used in messages */
    uint64_t seed;      /* default 1 */
    uint64_t text_seed; /* the prompt words' seed (config_text_seed); 0, the default: the seed */
    config_target_t target;
    config_workload_t workload;
    config_scheduler_t scheduler;
    config_limits_t limits;
    config_validity_t validity;
    int64_t warmup_ns; /* requests sent before start + warmup are excluded from statistics */
    config_output_t output;
    config_mock_t mock;
    config_telemetry_t telemetry; /* server_metrics, gpu_metrics, scrape_interval */
    config_sweep_t sweep;
    config_slo_t slo;
    config_capacity_t capacity;
    char *deployment; /* the `deployment:` map as compact JSON (NULL: none), for the reports */
    config_fleet_t fleet;
    /* A Veeksha file's keys accepted but not acted on, one "file:line:column: key: why" line each
     * (NULL: none), for the tool to print; not written back. */
    char *notes;
    /* A Veeksha file's `server:` section ("file:line:column: server: a managed ... server"), or
     * NULL: Veeksha starts that server, stampede needs --target instead. Not written back. */
    char *managed_server;
} config_t;

/* The seed of every prompt word (fresh text, scaffolds, a trace's blocks): text_seed, or the seed
 * when it is 0. Shapes, lengths, waits and arrivals use the seed alone. */
uint64_t config_text_seed(const config_t *self);
/* Whether the sessions are read from a file (kind trace, or a dataset) rather than generated: they
 * come from workload.replay, and each worker is sent its part of them. */
bool config_replays(const config_t *self);
/* Makes trace (the caller's reference, handed over) workload.replay in place of the old one; with
 * cap_sessions, limits.max_sessions is lowered to its sessions. For the loaders of a trace file
 * and a dataset. */
void config_replay_set(config_t *self, struct trace *trace, bool cap_sessions);
/* Fills *self with every default (no endpoints). Aborts only if memory is exhausted. */
void config_init(config_t *self);
/* Loads and validates a file into *self (initialised here). Relative paths in it resolve against
 * its directory (made absolute). 0 ok; -1 with *err filled and *self left empty (freed). */
int config_load_file(config_t *self, const char *path, config_error_t *err);
/* Same from memory; name is used in messages; relative paths resolve against the cwd. */
int config_load_string(config_t *self, const char *yaml, size_t len, const char *name,
                       config_error_t *err);
/* Writes the resolved config as YAML that config_load_string reads back to an equal config
 * (every key, defaults included; values of secret-looking headers are written as "<redacted>").
 * 0 ok, -1 on a write error. */
int config_write_yaml(const config_t *self, FILE *out);
/* Same into a malloc'd string the caller frees. */
char *config_to_yaml(const config_t *self);
/* Frees everything *self owns. */
void config_free(config_t *self);
/* Replaces the endpoint list (the --target flags override the file). Each URL is checked and
 * normalised as in the file; -1 (config unchanged) when one is invalid or two are the same
 * endpoint (config_endpoints_check says which and why). */
int config_set_endpoints(config_t *self, char **urls, size_t n);

/* Deep copy of src into dst (initialised here); 0 ok, -1 on allocation failure. */
int config_copy(config_t *dst, const config_t *src);
/* Reads the API key from the environment variable or file the config names. *key is NULL when
 * none is configured, else a malloc'd string the caller frees (and never prints). 0 ok; -1 with
 * *err filled (variable unset, file unreadable or empty). */
int config_api_key(const config_t *self, char **key, config_error_t *err);
/* The value of header h (written in the file, or read now from its environment variable or file)
 * as a malloc'd string the caller frees (and never prints). 0 ok; -1 with *err filled. */
int config_header_value(const config_t *self, const config_header_t *h, char **value,
                        config_error_t *err);
/* As config_to_yaml but with secret-looking header values kept: only for the controller -> worker
 * wire, never for files or logs. */
char *config_to_yaml_unredacted(const config_t *self);

/* The name of role index i: workload.roles[i], or NULL past the named roles. */
const char *config_role_name(const config_t *self, uint32_t i);
/* The index of the named role, adding it to workload.roles when new; -1 on no memory. */
int config_role_index(config_t *self, const char *name, uint32_t *index);

/* Kind trace: reads workload.trace.path into workload.replay (roles named in it are added to
 * workload.roles; without wrap, limits.max_sessions is lowered to the trace's sessions; a timed
 * replay's scheduler.rate becomes the trace's mean rate, for the report). config_load_file calls
 * it; a config loaded from a string gets its trace separately. 0 ok; -1 with *err naming the
 * trace file, line and reason. */
int config_trace_load(config_t *self, config_error_t *err);
/* With workload.dataset: reads its file into workload.replay (docs/workloads.md "Datasets"):
 * selected, counted and built into sessions on the controller; limits.max_sessions is lowered to
 * the sessions it gives. config_load_file calls it. 0 ok (nothing to do without a dataset); -1
 * with *err naming the file, line and key. */
int config_dataset_load(config_t *self, config_error_t *err);
const char *config_dataset_format_name(config_dataset_format_t format);
/* The sizes of role index `role`'s scaffold (without a scaffold section: the one shared system
 * prompt of system_prompt_tokens and no tools). */
config_scaffold_size_t config_scaffold_size(const config_t *self, uint32_t role);
/* Words of the scaffold of role index `role`: its system prompt, and its tool descriptions in
 * chat mode. */
uint32_t config_scaffold_words(const config_t *self, uint32_t role);
/* Words two requests of roles a and b send in common at the start of their prompts: the whole
 * scaffold when both have the same one (always without a scaffold section), else none. */
uint32_t config_scaffold_shared_words(const config_t *self, uint32_t a, uint32_t b);

/* Whether a request of role index `role` is a summarise request (compaction on, its role). */
bool config_compaction_role(const config_t *self, uint32_t role);

#endif
