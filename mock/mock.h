/* `stampede mock`: the simulated OpenAI-compatible inference server. mock_main is the
 * subcommand; the mock_server_* functions let other code (tests, `stampede run`) run one in
 * process or in a forked child. */
#ifndef STAMPEDE_MOCK_H
#define STAMPEDE_MOCK_H

#include <stddef.h>
#include <stdint.h>

#include "mock_options.h"

typedef struct mock_server mock_server_t;

/* The subcommand: parses argv (argv[0] is "mock"), binds, prints "listening on ADDR:PORT" on
 * stdout, serves until SIGTERM or SIGINT. Returns the exit status (0 after a signal, 2 on a bad
 * option, 1 when it cannot start). */
int mock_main(int argc, char **argv);

/* A server bound and listening per options (copied; the caller keeps its own). NULL with a
 * message in err when it cannot start. SIGTERM/SIGINT end mock_server_run only if the caller
 * has blocked them (mock_main does). */
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
