/* Where a worker's requests go: the request URL of each endpoint, and the endpoint of each request
 * under the configured routing (round_robin, sticky, random, least_inflight; see
 * worker/session.h for what each guarantees). */
#ifndef STAMPEDE_ROUTE_H
#define STAMPEDE_ROUTE_H

#include <stdint.h>

#include "config.h"

/* Requests in flight from this worker to an endpoint (asked by least_inflight). */
typedef uint32_t (*route_inflight_fn)(void *ctx, uint32_t endpoint);

/* The URL of the API's path at base ("/v1" added unless base ends in it, trailing '/' dropped):
 * malloc'd, the caller frees it; NULL when memory is short. */
char *route_url(const char *base, config_api_t api);
/* The endpoint (index into target->endpoints, of which there is at least one) of the request with
 * global ordinal g in session `session`; inflight_to(ctx, e) is asked only by least_inflight. */
uint32_t route_endpoint(const config_target_t *target, uint64_t seed, uint64_t session, uint64_t g,
                        route_inflight_fn inflight_to, void *ctx);

#endif
