#include "route.h"

#include "rng.h"

/* The endpoint with the fewest requests in flight, ties broken starting from g mod E. */
static uint32_t route_least_inflight(uint32_t endpoints, uint64_t g, route_inflight_fn inflight_to,
                                     void *ctx) {
    uint32_t best = (uint32_t)(g % endpoints);
    uint32_t best_load = inflight_to(ctx, best);
    for (uint32_t k = 1; k < endpoints && best_load > 0; k++) {
        uint32_t e = (uint32_t)((g + k) % endpoints);
        uint32_t load = inflight_to(ctx, e);
        if (load < best_load) {
            best = e;
            best_load = load;
        }
    }
    return best;
}

uint32_t route_endpoint(const config_target_t *target, uint64_t seed, uint64_t session, uint64_t g,
                        route_inflight_fn inflight_to, void *ctx) {
    uint32_t endpoints = (uint32_t)target->n_endpoints;
    switch (target->routing) {
    case ROUTING_STICKY:
        return (uint32_t)(session % endpoints);
    case ROUTING_RANDOM: {
        rng_t rng;
        rng_init(&rng, seed, RNG_STREAM_ROUTING, g, 0, 0);
        return (uint32_t)rng_next_below(&rng, endpoints);
    }
    case ROUTING_LEAST_INFLIGHT:
        return route_least_inflight(endpoints, g, inflight_to, ctx);
    case ROUTING_ROUND_ROBIN:
    default:
        return (uint32_t)(g % endpoints);
    }
}
