/* `stampede keygen`: CURVE key pairs for controller and workers (docs/security.md). */
#ifndef STAMPEDE_KEYGEN_CLI_H
#define STAMPEDE_KEYGEN_CLI_H

/* Entry point: `keygen NAME...` writes NAME.key (secret, 0600) and NAME.pub for each NAME, never
 * over a file. 0 ok, 1 when a pair cannot be written, 2 usage. */
int keygen_main(int argc, char **argv);

#endif
