/* Endpoint host names looked up off the loop: a thread runs the blocking lookups
 * (engine_lookup) while the loop goes on with its heartbeats, since one lookup can take seconds
 * (Kubernetes' ndots:5, a lost DNS packet). The loop hears of the end through an eventfd. */
#ifndef STAMPEDE_RESOLVER_H
#define STAMPEDE_RESOLVER_H

#include <stddef.h>

#include "loop.h"

typedef struct resolver resolver_t;

/* Called once, on the loop thread, when every lookup has ended. It may destroy the resolver. */
typedef void (*resolver_done_fn)(void *arg, resolver_t *resolver);

/* A check run on the thread after url i was looked up (pin: its line, or NULL), e.g. the
 * preflight: 0 ok; -1 with why filled, which becomes resolver_error. */
typedef int (*resolver_check_fn)(void *arg, size_t i, const char *pin, char *why, size_t len);
/* Starts looking up the hosts of urls[0..n-1] (copied), running check(check_arg, ...) after each
 * lookup, in order, until one fails (check may be NULL). NULL when the thread or the eventfd
 * cannot be made. */
resolver_t *resolver_new(loop_t *loop, char *const *urls, size_t n, resolver_check_fn check,
                         void *check_arg, resolver_done_fn done, void *arg);
/* After done: the CURLOPT_RESOLVE line of url i (for engine_pin), or NULL when it needs none (an
 * address literal) or failed. */
const char *resolver_line(const resolver_t *self, size_t i);
/* After done: the first failure, "cannot resolve host NAME (endpoint URL): reason", or NULL. */
const char *resolver_error(const resolver_t *self);
/* Waits for the thread (blocking while a lookup lasts), closes and frees; *self_p becomes NULL. */
void resolver_destroy(resolver_t **self_p);

#endif
