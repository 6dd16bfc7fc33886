/* The `target:` section of a workload file: the endpoints, the API, the model, headers, timeouts,
 * TLS and proxy; and where a request to an endpoint goes. Read by config_load.c and config_net.c,
 * written back by config_write.c. */
#ifndef STAMPEDE_CONFIG_TARGET_H
#define STAMPEDE_CONFIG_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The names as written in the file, NULL-terminated, in enum order. */
extern const char *const config_api_names[];
extern const char *const config_routing_names[];
/* Names as written in the file ("chat", "round_robin", ...). */
const char *config_api_name(config_api_t api);
const char *config_routing_name(config_routing_t routing);

/* Checks a list of endpoint URLs: each as config_endpoint_check, and no two the same once
 * normalised (results are keyed by URL: two would collapse into one entry). 0 ok; -1 with why
 * filled (naming the URLs) and *bad (may be NULL) set to the index of the offending one. */
int config_endpoints_check(char **urls, size_t n, size_t *bad, char *why, size_t len);
/* Checks an endpoint URL (http:// or https://, a host, no spaces; a query only on a whole request
 * URL); 0 ok, -1 with why filled. */
int config_endpoint_check(const char *url, char *why, size_t len);
/* The base URL without trailing slashes or /v1 (the engine appends /v1/chat/completions); a whole
 * request URL as it is. malloc'd, the caller frees it; NULL when memory is short. */
char *config_endpoint_normalize(const char *url);
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
/* True for header names whose values are secrets (authorization, cookies, api keys, tokens). */
bool config_header_is_secret(const char *name);

#endif
