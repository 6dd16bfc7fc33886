/* The client side of a simulation: a session backend (worker/session.h) that hands each request
 * body to the virtual server (mock/mock_virtual.h) instead of curl, and fills its record as the
 * worker's stream would from what a client on the same host receives: send, headers and every
 * streamed event at their virtual instants (a network delay each way, when given), usage, finish
 * reason, the reply's text (which the session appends to its history, so prefix reuse is the real
 * one). target.timeout cuts a request as the engine's timeout does. */
#ifndef STAMPEDE_SIM_BACKEND_H
#define STAMPEDE_SIM_BACKEND_H

#include <stdint.h>

#include "config.h"
#include "loop.h"
#include "mock_virtual.h"
#include "session.h"
#include "sim_figures.h"

typedef struct sim_backend sim_backend_t;

/* A backend to server on loop for cfg's requests (all three must outlive it), each request
 * reaching the server delay_ns after its send and each event the client delay_ns after the
 * server sent it (the network, one way); NULL without memory. */
sim_backend_t *sim_backend_new(loop_t *loop, mock_virtual_t *server, const config_t *cfg,
                               int64_t delay_ns);
/* The session_backend_t of the executor (ctx is self). */
session_backend_t sim_backend_session(sim_backend_t *self);
/* Every finished reply also goes to figures (NULL: none) from now on. */
void sim_backend_set_figures(sim_backend_t *self, sim_figures_t *figures);
/* Requests handed to the server and not yet finished. */
uint32_t sim_backend_inflight(const sim_backend_t *self);
/* Cancels what is in flight (no done call) and frees; *self_p = NULL. */
void sim_backend_destroy(sim_backend_t **self_p);

#endif
