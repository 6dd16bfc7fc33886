/* Where a worker's requests go: the endpoint of each request (its URL: config_request_url)
 * under the configured routing (round_robin, sticky, random, least_inflight; see
 * worker/session.h for what each guarantees). */
#ifndef STAMPEDE_ROUTE_H
#define STAMPEDE_ROUTE_H

#include <stdint.h>

#include "config.h"

/* Requests in flight from this worker to an endpoint (asked by least_inflight). */
typedef uint32_t (*route_inflight_fn)(void *ctx, uint32_t endpoint);

/* The endpoint (index into target->endpoints, of which there is at least one) of the request with
 * global ordinal g in session `session`; inflight_to(ctx, e) is asked only by least_inflight. */
uint32_t route_endpoint(const config_target_t *target, uint64_t seed, uint64_t session, uint64_t g,
                        route_inflight_fn inflight_to, void *ctx);

#endif
