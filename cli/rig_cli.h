/* What `stampede submit` and `stampede runs` share: the flags that reach the rig (--to, --key,
 * --server-key, --timeout, else $STAMPEDE_RIG, $STAMPEDE_RIG_KEY, $STAMPEDE_RIG_SERVER_KEY) and
 * following a run (its live line on stderr, its end table on stdout, Ctrl-C detaches). */
#ifndef STAMPEDE_RIG_CLI_H
#define STAMPEDE_RIG_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "rig_client.h"

/* clang-format off */
#define RIG_CLI_LONGOPTS                                                                           \
    {"to", required_argument, NULL, RIG_CLI_OPT_TO},                                               \
    {"key", required_argument, NULL, RIG_CLI_OPT_KEY},                                             \
    {"server-key", required_argument, NULL, RIG_CLI_OPT_SERVER_KEY},                               \
    {"timeout", required_argument, NULL, RIG_CLI_OPT_TIMEOUT}
/* clang-format on */
enum { RIG_CLI_OPT_TO = 0x53a0, RIG_CLI_OPT_KEY, RIG_CLI_OPT_SERVER_KEY, RIG_CLI_OPT_TIMEOUT };

#define RIG_CLI_USAGE                                                                              \
    "  --to tcp://HOST:PORT  the rig (else $STAMPEDE_RIG)\n"                                       \
    "  --key FILE          your secret key (else $STAMPEDE_RIG_KEY); the rig knows you by it\n"    \
    "  --server-key FILE   the rig's public key (else $STAMPEDE_RIG_SERVER_KEY)\n"                 \
    "  --timeout D         how long an answer may take (default 10s)\n"

/* The environment's defaults into options (name is the command's). */
void rig_cli_defaults(rig_client_options_t *options, const char *name);
/* Applies a connection flag: 1 applied, 0 not one of them, -1 a bad value (said). */
int rig_cli_apply(rig_client_options_t *options, int flag, const char *arg);
/* Follows run id until it ends (its exit status: the run's own when it is done, 1 when it failed,
 * was cancelled or interrupted) or Ctrl-C (0, detached: the run goes on). */
int rig_cli_follow(rig_client_t *client, int64_t id, const char *name);
/* Prints reply's error (when it is not ok) and says whether it was ok. */
bool rig_cli_ok(const json_t *reply, const char *name);

#endif
