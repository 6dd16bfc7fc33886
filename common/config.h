/* A workload file (YAML, via libyaml) loaded into typed structs. Every error names the file, line,
 * column and key. A loaded config can be written back as YAML (secrets are never part of it: only
 * the names of the environment variable or file that hold the API key), and that YAML loads back
 * to an equal config: the controller ships the resolved config to workers this way. */
#ifndef STAMPEDE_CONFIG_H
#define STAMPEDE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dist.h"

/* chat -> /v1/chat/completions, completions -> /v1/completions, messages (Anthropic) ->
 * /v1/messages, responses (OpenAI Responses) -> /v1/responses. */
typedef enum { API_CHAT, API_COMPLETIONS, API_MESSAGES, API_RESPONSES } config_api_t;
#define CONFIG_API_COUNT 4
typedef enum {
    ROUTING_ROUND_ROBIN,
    ROUTING_STICKY,
    ROUTING_RANDOM,
    ROUTING_LEAST_INFLIGHT
} config_routing_t;
typedef enum {
    WORKLOAD_REQUESTS,
    WORKLOAD_CHAT,
    WORKLOAD_GRAPH,
    WORKLOAD_TRACE
} config_workload_kind_t;
typedef enum {
    GRAPH_LINEAR,
    GRAPH_DIAMOND,
    GRAPH_FANOUT,
    GRAPH_BRANCHING,
    GRAPH_TEMPLATE
} config_graph_shape_t;
/* sequential: one session in flight over the whole fleet, the next starting when the previous
 * one completes (only worker 0 runs). */
typedef enum { SCHEDULER_CONCURRENT, SCHEDULER_RATE, SCHEDULER_SEQUENTIAL } config_scheduler_kind_t;
typedef enum { ARRIVAL_POISSON, ARRIVAL_CONSTANT, ARRIVAL_GAMMA } config_arrival_t;

/* Role names a file may define (the controller keeps statistics for this many roles). */
#define CONFIG_MAX_ROLES 64

typedef struct config_header {
    char *name;
    char *value;      /* the value written in the file, or NULL when it comes from: */
    char *value_env;  /* {env: NAME}: the worker's environment variable NAME */
    char *value_file; /* {file: PATH}: the first line of PATH, read by the worker */
} config_header_t;

/* target.tls (docs/config.md): whom the workers trust and what they present. The paths are made
 * absolute at load and read on each worker's host when a run is assigned, as api_key_file is: the
 * client key is a secret, so no PEM travels in the config or lands in results/config.yaml. */
typedef struct config_tls {
    char *ca_file;     /* PEM bundle to trust; NULL: $SSL_CERT_FILE, else the system store */
    bool insecure;     /* skip certificate and host name verification (warned in the results) */
    char *client_cert; /* PEM client certificate for mTLS, or NULL (given with client_key) */
    char *client_key;  /* its PEM private key, or NULL */
} config_tls_t;

/* target.proxy: none (default; the proxy environment is ignored), env (http_proxy, https_proxy,
 * all_proxy, no_proxy as curl reads them) or one URL. */
typedef enum { CONFIG_PROXY_NONE, CONFIG_PROXY_ENV, CONFIG_PROXY_URL } config_proxy_t;

typedef struct config_target {
    char **endpoints; /* base URLs, e.g. "http://127.0.0.1:8000" (the API path is added), or whole
                         request URLs ending in /completions (config_endpoint_api) */
    size_t n_endpoints;
    config_api_t api; /* the request and stream shape, and the path after /v1 */
    char *model;
    config_header_t *headers; /* extra request headers */
    size_t n_headers;
    char *api_key_env;          /* name of the environment variable holding the key, or NULL */
    char *api_key_file;         /* path of a file holding the key, or NULL */
    int64_t timeout_ns;         /* whole-request timeout; default 600 s */
    int64_t connect_timeout_ns; /* default 10 s */
    config_routing_t routing;   /* default round_robin */
    bool ignore_eos;            /* send ignore_eos so the server generates exactly max_tokens */
    bool min_tokens;            /* send min_tokens = max_tokens (vLLM, SGLang): exact lengths */
    bool max_completion_tokens; /* name the limit max_completion_tokens, not max_tokens */
    bool continuous_usage;      /* ask for usage on every event (vLLM continuous_usage_stats) */
    uint32_t thinking_tokens;   /* api messages: thinking.budget_tokens sent (0: none) */
    bool previous_response_id;  /* api responses: a chat turn names the previous response and
                                   sends only its new input */
    /* target.reasoning_tags: content between them is reasoning (default <think> and </think>);
     * both NULL when the file gives an empty list (off) */
    char *reasoning_open;
    char *reasoning_close;
    bool stream;       /* default true */
    bool retry_on_429; /* honour: wait Retry-After and resend; ignore (default): an error */
    int64_t retry_after_max_ns; /* cap on one Retry-After wait; default 10 s */
    uint32_t retry_429_max;     /* resends of one request after 429s at most; default 5 */
    char *path; /* path and query after each endpoint instead of /v1/chat/completions, or NULL */
    config_tls_t tls;
    config_proxy_t proxy;
    char *proxy_url; /* CONFIG_PROXY_URL: the proxy */
    bool preflight;  /* one request to each endpoint before the start (worker/preflight.h) */
    /* target.session_header: the header carrying a session's id on each of its requests (KV-aware
     * routers), or NULL: X-Session-ID under sticky routing, none otherwise */
    char *session_header;
    /* target.replica_header: the response header naming the replica that answered, or NULL */
    char *replica_header;
    char
        *tokenizer; /* the target's tokenizer.json, or NULL (docs/workloads.md "Tokenizer"): prompts
                       of exact token lengths, replies counted from their text without usage */
} config_target_t;

/* One node's settings: a template node, or one slot of a generated shape (diamond: planner,
 * executor, aggregator; linear: turn; fanout: main, child, continuation; branching: node). */
typedef struct config_graph_node {
    char *id;                   /* the template node's id, or the slot's name */
    int line;                   /* where the file gives it (0: defaulted), for messages */
    uint32_t role;              /* index into workload.roles */
    uint32_t *parents;          /* template: indices of its parents (earlier nodes once loaded) */
    size_t n_parents;           /* template */
    uint32_t history_parent;    /* template: a parent or ancestor index (default: first parent) */
    double history;             /* 1 = full, 0 = none (a sub-agent), else a fraction */
    bool append_parent_replies; /* the parents' replies open its user text */
    dist_t input_tokens;        /* fresh tokens (default: workload.input_tokens) */
    dist_t output_tokens;       /* max_tokens (default: workload.output_tokens) */
    dist_t wait_after_ready;    /* seconds after its parents finish (default: think_time) */
} config_graph_node_t;

/* Caps on a graph's fan: executors of a diamond, children of a fanout round; and on a branching
 * layer's width (the generators keep these on their stack). */
#define CONFIG_GRAPH_MAX_FAN 10000
#define CONFIG_GRAPH_MAX_WIDTH 1024

typedef struct config_graph {
    config_graph_shape_t shape;
    config_graph_node_t *nodes; /* template: the nodes, parents first; a shape: its slots */
    size_t n_nodes;
    uint32_t message_overhead_tokens; /* extra fresh tokens per appended parent reply (A2A) */
    dist_t step_overhead;    /* the framework's own time per step: added to every non-root node's
                                wait (default 0) */
    uint32_t context_limit;  /* the context the framework budgets max_tokens for (0: none) */
    uint32_t context_margin; /* tokens it keeps free under context_limit */
    dist_t length;           /* linear: requests per session (default uniform 100..150) */
    uint32_t executor_count; /* diamond: executors (default 3) */
    bool sequential;         /* diamond: executors one after another (AutoGen) */
    uint32_t children;       /* fanout: sub-sessions per round (default 3) */
    dist_t child_length;     /* fanout: requests per sub-session (default 1) */
    uint32_t rounds;         /* fanout: main -> children -> continuation rounds (default 1) */
    dist_t depth;            /* branching: layers after the root (default 3) */
    dist_t width;            /* branching: nodes per layer when given (else from fan_out) */
    bool width_given;
    dist_t fan_out;     /* branching: children per node (default 2) */
    dist_t fan_in;      /* branching: parents per node (default 1) */
    uint32_t max_depth; /* branching: cap on layers (default 16) */
    uint32_t max_width; /* branching: cap on a layer's width (default 64) */
} config_graph_t;

/* workload.trace (kind: trace): which file to replay and how (docs/workloads.md). */
typedef enum {
    TRACE_FORMAT_SESSION,
    TRACE_FORMAT_MOONCAKE,
    TRACE_FORMAT_AZURE,
    TRACE_FORMAT_VEEKSHA
} config_trace_format_t;

typedef struct config_trace {
    char *path;                   /* made absolute at load */
    config_trace_format_t format; /* default session */
    uint32_t block_size;          /* tokens per hash id (default 512) */
    double time_scale;            /* timed replay: arrival x time_scale (default 1) */
    bool wrap; /* past the trace's last session, start over with new session ids */
} config_trace_t;

struct trace;
/* The sizes of one role's scaffold. */
typedef struct config_scaffold_size {
    uint32_t system_tokens; /* words of the system prompt */
    uint32_t tools;         /* function tools in each chat request's tools array */
    uint32_t tool_tokens;   /* words of each tool's description */
} config_scaffold_size_t;

/* workload.scaffold (docs/workloads.md): with it, each role (or the workload, without roles) has a
 * system prompt and tool definitions of its own, the same bytes in every session. */
typedef struct config_scaffold {
    bool given;           /* the file has the section */
    uint32_t tools;       /* every role's tools, unless scaffold.roles says otherwise */
    uint32_t tool_tokens; /* every role's tool description words, likewise */
    double tool_results;  /* share of the turns that continue a conversation sent as role: tool */
    bool role_given[CONFIG_MAX_ROLES];             /* scaffold.roles names this role */
    config_scaffold_size_t role[CONFIG_MAX_ROLES]; /* role_given: its sizes, defaults filled in */
} config_scaffold_t;

/* workload.compaction (docs/workloads.md): when a request's context would pass limit_tokens, a
 * summarise request goes first and the conversation continues from its reply. */
typedef struct config_compaction {
    uint32_t limit_tokens;   /* prompt + max_tokens above this compacts first; 0 = off */
    uint32_t summary_tokens; /* max_tokens of the summarise request (default 512) */
    uint32_t prompt_tokens;  /* words of the summarise instruction (default 32) */
    uint32_t role;           /* role index of summarise requests (default named "compaction") */
} config_compaction_t;

typedef struct config_workload {
    config_workload_kind_t kind;   /* requests: one-node sessions; chat: a chain of turns */
    dist_t turns;                  /* chat: turns per session (rounded, >= 1) */
    dist_t input_tokens;           /* fresh input tokens per request or turn (rounded, >= 1) */
    dist_t output_tokens;          /* max_tokens per request (rounded, >= 1) */
    dist_t think_time;             /* seconds between a reply and the next turn (>= 0) */
    uint32_t system_prompt_tokens; /* shared scaffold prepended to every session; default 0 */
    char **roles;                  /* role names: roles[i] names role index i (none by default) */
    size_t n_roles;
    config_graph_t graph; /* kind graph: the shape and its nodes */
    config_trace_t trace; /* kind trace: the file and how to replay it */
    struct trace *replay; /* kind trace: the loaded sessions (shared by copies), or NULL: loaded by
                             config_load_file (or, on a worker, its part from Assign) */
    config_scaffold_t scaffold;
    config_compaction_t compaction;
} config_workload_t;

typedef struct config_scheduler {
    config_scheduler_kind_t kind;
    uint32_t concurrency; /* concurrent: sessions in flight; rate: cap on sessions in flight (0 =
                             none); sequential: always 1 */
    int64_t ramp_up_ns;   /* concurrent: slot k starts at k * ramp_up / concurrency */
    double rate;          /* rate: sessions per second */
    config_arrival_t arrival; /* rate: default poisson */
    double arrival_cv;        /* rate, gamma arrivals: coefficient of variation of gaps */
} config_scheduler_t;

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

/* One option of the embedded mock (the `mock:` section), checked at load. */
typedef struct config_mock_option {
    const char *key;  /* the file's key (static text), e.g. "max_model_len" */
    const char *flag; /* the `stampede mock` flag it adds (static text), e.g. "--max-model-len";
                         NULL when it adds none (prefix_cache: true, early_eos: false) */
    char *value;      /* as config.yaml writes it back: "4096", "50ms", "true", "tp1-fp8" */
    char *arg;        /* the flag's argument ("50": ttft in ms); NULL for a flag without one */
    bool quoted;      /* value is free text: written back as a quoted string */
} config_mock_option_t;

/* Options for the `stampede mock` that `stampede run` starts when no target is given (ignored
 * otherwise), in a fixed key order. */
typedef struct config_mock {
    config_mock_option_t *options;
    size_t n_options;
} config_mock_t;

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
/* What a sweep varies from level to level (the `sweep:` section; docs/sweeps.md). */
typedef enum { SWEEP_AXIS_NONE, SWEEP_AXIS_CONCURRENCY, SWEEP_AXIS_RATE } config_sweep_axis_t;

/* The `sweep:` section: the levels, and the warm-up, measurement window (snapshots), drain and
 * repetitions each level gets. axis NONE: no sweep, the file is one run. */
typedef struct config_sweep {
    config_sweep_axis_t axis;
    double *levels; /* concurrency (whole numbers) or sessions per second, in run order */
    size_t n_levels;
    int64_t warmup_ns;        /* per level, discarded; default 0 */
    uint32_t snapshots;       /* snapshots per measurement window; default 1 */
    int64_t snapshot_ns;      /* length of each; required */
    int64_t drain_ns;         /* the most a level waits for its requests after the window */
    uint32_t repeat;          /* repetitions of every level; default 1 */
    double exclude_error_pct; /* a repetition with more errors is excluded; default 5 */
    double rate_cap;          /* concurrency levels: session starts per second at most; 0 none */
    bool fresh_text; /* each level and repetition its own prompt text (text_seed); default true */
} config_sweep_t;

/* One service-level objective of the `slo:` section (docs/slo.md): a statistic of a latency metric
 * at or below a bound, or the error rate at or below a percentage. */
typedef enum {
    CONFIG_SLO_PERCENTILE, /* the metric's percentile (p95) */
    CONFIG_SLO_MEAN,
    CONFIG_SLO_MAX,
    CONFIG_SLO_ERROR_PCT /* failed / (ok + failed) in percent */
} config_slo_stat_t;

/* SLOs a file may give. */
#define CONFIG_MAX_SLOS 16

typedef struct config_slo_item {
    uint32_t metric; /* a metrics_kind_t (common/metrics.h); unused for CONFIG_SLO_ERROR_PCT */
    config_slo_stat_t stat;
    double percentile; /* CONFIG_SLO_PERCENTILE: 0 < p < 100 */
    int64_t bound_ns;  /* latency statistics: the largest value that meets the SLO */
    double max_pct;    /* CONFIG_SLO_ERROR_PCT: the largest error rate that meets it */
} config_slo_item_t;

/* The `slo:` section, in file order (a metric's statistics stay together). */
typedef struct config_slo {
    config_slo_item_t items[CONFIG_MAX_SLOS];
    size_t n;
} config_slo_t;

typedef enum { CAPACITY_AXIS_RATE, CAPACITY_AXIS_CONCURRENCY, CAPACITY_AXIS_RHO } config_axis_t;

/* The most levels a capacity search runs. */
#define CONFIG_CAPACITY_MAX_TRIALS 48

/* The `capacity:` section: how `stampede capacity` searches (docs/slo.md). */
typedef struct config_capacity {
    bool given;                    /* the file has the section */
    config_axis_t axis;            /* default rate */
    double start;                  /* first level probed; default 1 */
    double precision;              /* bisection stops when the bracket is this narrow ... */
    bool precision_relative;       /* ... in percent of the frontier ("5%"), else in the unit */
    double max;                    /* highest level probed */
    uint32_t repeat_near_boundary; /* extra runs of the frontier and first failing level */
    double expansion;              /* probing multiplies the level by this; default 2 */
    uint32_t max_trials;           /* runs at most (<= CONFIG_CAPACITY_MAX_TRIALS, the default) */
    double requests_per_session;   /* rho: requests one session makes (0: from the workload) */
    bool fresh_text;               /* each trial its own prompt text (text_seed); default true */
} config_capacity_t;

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

typedef struct config_error {
    char file[256];
    int line;          /* 1-based; 0 when not tied to a position */
    int column;        /* 1-based */
    char key[128];     /* dotted path, e.g. "workload.input_tokens.sigma" */
    char message[512]; /* what was expected, with a did-you-mean where one fits */
} config_error_t;

/* The seed of every prompt word (fresh text, scaffolds, a trace's blocks): text_seed, or the seed
 * when it is 0. Shapes, lengths, waits and arrivals use the seed alone. */
uint64_t config_text_seed(const config_t *self);
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
/* "file:line:column: key: message" into buf (no position when line is 0, no key when it is
 * empty: a missing file, a YAML syntax error). */
void config_error_format(const config_error_t *err, char *buf, size_t len);
/* Replaces the endpoint list (the --target flags override the file). Each URL is checked and
 * normalised as in the file; -1 (config unchanged) when one is invalid or two are the same
 * endpoint (config_endpoints_check says which and why). */
int config_set_endpoints(config_t *self, char **urls, size_t n);
/* Checks a list of endpoint URLs: each as config_endpoint_check, and no two the same once
 * normalised (results are keyed by URL: two would collapse into one entry). 0 ok; -1 with why
 * filled (naming the URLs) and *bad (may be NULL) set to the index of the offending one. */
int config_endpoints_check(char **urls, size_t n, size_t *bad, char *why, size_t len);

/* Checks an endpoint URL (http:// or https://, a host, no spaces; a query only on a whole request
 * URL); 0 ok, -1 with why filled. */
int config_endpoint_check(const char *url, char *why, size_t len);
/* The path of an API after /v1: "/chat/completions", "/completions", "/messages", "/responses". */
const char *config_api_path(config_api_t api);
/* The API a whole request URL names by its path (".../chat/completions" chat, ".../completions"
 * completions, ".../messages", ".../responses", a query allowed after it), 0 ok; -1 when url is
 * a base URL (the path is added). */
int config_endpoint_api(const char *url, config_api_t *api);
/* The base URL of an endpoint (a whole request URL without its query, API path and /v1; a base
 * URL as it is) into buf, e.g. for its /metrics page; returns buf. */
const char *config_endpoint_base(const char *url, char *buf, size_t len);
/* Checks the endpoints against target.api and target.path: a whole request URL must name the
 * configured API and cannot take a path as well. 0 ok; -1 with why (naming the URL and the fix)
 * and *bad (may be NULL) set to the offending endpoint's index. */
int config_target_check(const config_target_t *target, size_t *bad, char *why, size_t len);
/* The URL requests to endpoint `base` go to: base itself when it is a whole request URL, else base
 * followed by target.path, else by /v1/chat/completions or /v1/completions ("/v1" not doubled,
 * trailing '/' dropped). malloc'd, the caller frees it; NULL when memory is short. */
char *config_request_url(const config_target_t *target, const char *base);
/* "none", "env" or the proxy URL (a password in it as <redacted>) into buf, as the table,
 * results.json and config.yaml show it; returns buf. */
const char *config_proxy_label(const config_target_t *target, char *buf, size_t len);
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
/* True for header names whose values are secrets (authorization, cookies, api keys, tokens). */
bool config_header_is_secret(const char *name);
/* As config_write_yaml / config_to_yaml but with secret-looking header values kept: only for the
 * controller -> worker wire, never for files or logs. */
int config_write_yaml_unredacted(const config_t *self, FILE *out);
char *config_to_yaml_unredacted(const config_t *self);

/* The mock section as `stampede mock` arguments: a malloc'd NULL-terminated array (free() it, not
 * its strings, which belong to *self and live as long as it), e.g. {"--max-model-len", "4096",
 * "--no-prefix-cache", NULL}; NULL when memory is exhausted. */
char **config_mock_args(const config_mock_t *self);
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
const char *config_trace_format_name(config_trace_format_t format);
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
/* Frees the sweep's levels and empties it (axis NONE: a plain run, as each level's config is). */
void config_sweep_free(config_sweep_t *self);
/* "concurrency" or "rate" ("none" without a sweep). */
const char *config_sweep_axis_name(config_sweep_axis_t axis);
/* An SLO's statistic as the file writes it: "p95", "p99.9", "mean", "max", "max_pct". */
void config_slo_key(const config_slo_item_t *item, char *buf, size_t len);
/* The SLO's metric as the file writes it: "ttfc", "itl", ..., or "errors". */
const char *config_slo_metric_name(const config_slo_item_t *item);
/* "rate", "concurrency", "rho". */
const char *config_axis_name(config_axis_t axis);

/* Names as written in the file ("chat", "round_robin", ...). */
const char *config_api_name(config_api_t api);
const char *config_routing_name(config_routing_t routing);
const char *config_workload_kind_name(config_workload_kind_t kind);
const char *config_graph_shape_name(config_graph_shape_t shape);
const char *config_scheduler_kind_name(config_scheduler_kind_t kind);
const char *config_arrival_name(config_arrival_t arrival);

#endif
