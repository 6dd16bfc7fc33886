/* The preflight (docs/config.md, target.preflight): before a run starts, worker 0 sends each
 * endpoint one small request, as `vllm bench serve` does, so that a server that is down, a wrong
 * path or key (4xx/5xx), a model the server does not serve (its /v1/models list), or an answer
 * that is not an SSE stream stops the run in seconds, with a message naming the endpoint, the
 * request and the answer, instead of a run of failures. Blocking: it runs on the resolver's
 * thread, before Ready. Its requests carry "X-Stampede-Preflight: 1" (the embedded mock answers
 * them apart from its counters and faults). */
#ifndef STAMPEDE_PREFLIGHT_H
#define STAMPEDE_PREFLIGHT_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "curl_net.h"

/* The header a preflight request carries. */
#define PREFLIGHT_HEADER "X-Stampede-Preflight: 1"

typedef struct preflight {
    const config_t *cfg;              /* endpoints, api, path, model, stream */
    const curl_net_t *net;            /* TLS and proxy, as the requests use them */
    const struct curl_slist *headers; /* the requests' headers (auth, extra headers) */
    int64_t deadline_ns;              /* CLOCK_MONOTONIC: every check ends by then */
    json_t *said; /* what each endpoint that passed said about itself, appended by
                     preflight_endpoint (a JSON array the caller owns; NULL: not asked) */
} preflight_t;

/* Checks endpoint e (pin: its CURLOPT_RESOLVE line, or NULL): GET /v1/models (the model must be
 * listed when the server answers the list), then one request of max_tokens 1 that must answer
 * 2xx, and an SSE stream when target.stream. 0 ok; -1 with why ("preflight of ENDPOINT: ...").
 * When it passes and self->said is set, appends what the server says about itself:
 * {"endpoint", "server_header" (the answer's Server header), "models" (the ids /v1/models lists),
 * "version" (vLLM's GET /version)}, each null when the server does not say. */
int preflight_endpoint(const preflight_t *self, size_t e, const char *pin, char *why, size_t len);

#endif
