/* The simulated server's own figures over a run's measured window, as a scrape of its /metrics
 * at the window's edges would give them: results.json's level "server" block (docs/results.md),
 * a page per replica and their total. Counters are deltas between the edges; the running,
 * waiting and KV-usage gauges are sampled every second inside the window; the server-side
 * timings (queue, prefill, TTFT, TPOT) are the exact means of the requests that ended inside it,
 * from the engine itself, not bucket estimates. `stampede calibrate` reads them as a real
 * server's. */
#ifndef STAMPEDE_SIM_FIGURES_H
#define STAMPEDE_SIM_FIGURES_H

#include <jansson.h>
#include <stdint.h>

#include "loop.h"
#include "mock_virtual.h"

typedef struct sim_figures sim_figures_t;

/* Figures of server (which, like loop, must outlive them) over [opens_ns, closes_ns) (closes_ns
 * 0: until sim_figures_json); sampling starts at opens_ns. NULL without memory. */
sim_figures_t *sim_figures_new(loop_t *loop, mock_virtual_t *server, int64_t opens_ns,
                               int64_t closes_ns);
/* A finished request's server-side times (those that ended inside the window count). */
void sim_figures_reply(sim_figures_t *self, const mock_virtual_reply_t *reply);
/* {"source", "window_s", "scrape_interval_s", "pages": [...], "total": {...}}; the caller owns
 * it. NULL when the window never opened. */
json_t *sim_figures_json(sim_figures_t *self);
/* Stops the sampling and frees; *self_p = NULL. */
void sim_figures_destroy(sim_figures_t **self_p);

#endif
