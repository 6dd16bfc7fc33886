/* The simulated OpenAI-compatible inference server: the mock_server_* functions run one in process
 * or in a forked child (`stampede mock`, cli/mock_cli.c; tests; benches). */
#ifndef STAMPEDE_MOCK_H
#define STAMPEDE_MOCK_H

#include <stddef.h>
#include <stdint.h>

#include "mock_options.h"

typedef struct mock_server mock_server_t;

/* A server bound and listening per options (copied; the caller keeps its own). NULL with a
 * message in err when it cannot start. SIGTERM/SIGINT end mock_server_run only if the caller
 * has blocked them (`stampede mock`, cli/mock_cli.c, does). */
mock_server_t *mock_server_new(const mock_options_t *options, char *err, size_t errlen);
/* The bound port (the chosen one for port 0). */
uint16_t mock_server_port(const mock_server_t *self);
/* Serves until a signal or mock_server_stop. 0 on a clean stop, -1 on a fatal error. */
int mock_server_run(mock_server_t *self);
/* Asks a running server to stop; safe from another thread or a signal handler. */
void mock_server_stop(mock_server_t *self);
/* Closes every connection, frees the server and sets *self_p to NULL. */
void mock_server_destroy(mock_server_t **self_p);

#endif
