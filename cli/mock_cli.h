/* `stampede mock`: the flags of the simulated server (docs/mock.md) into mock_options_t, and the
 * subcommand that serves until SIGTERM or SIGINT. */
#ifndef STAMPEDE_MOCK_CLI_H
#define STAMPEDE_MOCK_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "mock_options.h"

/* Parses argv[1..argc) (argv[0] is the subcommand) into *self (mock_options_init'ed). Returns 0
 * to run, 1 when --help was printed to out, -1 with a message naming the flag and the problem in
 * err. */
int mock_cli_parse(mock_options_t *self, int argc, char **argv, FILE *out, char *err,
                   size_t errlen);
/* Writes the --help text. */
void mock_cli_usage(FILE *out);
/* The subcommand: parses argv (argv[0] is "mock"), binds, prints "listening on ADDR:PORT" on
 * stdout, serves until SIGTERM or SIGINT. Returns the exit status (0 after a signal, 2 on a bad
 * option, 1 when it cannot start). */
int mock_main(int argc, char **argv);

#endif
