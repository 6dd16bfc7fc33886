/* The tool: every command's entry point, each parsing its own arguments (argv[0] is the
 * command's name) and calling the libraries below it; main.c dispatches to them. Only this room
 * parses argv, as curl's src/ does and its lib/ never does. */
#ifndef STAMPEDE_CLI_H
#define STAMPEDE_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "controller.h"

struct sweep_source;

/* getopt_long rows of the flags `stampede run` and `stampede controller` share. */
/* clang-format off */
#define CONTROLLER_SHARED_LONGOPTS                                                                 \
    {"target", required_argument, NULL, 't'},                                                      \
    {"out", required_argument, NULL, 'o'},                                                         \
    {"trace", no_argument, NULL, 'T'},                                                             \
    {"http-phases", no_argument, NULL, 'P'},                                                       \
    {"verbose", no_argument, NULL, 'v'},                                                           \
    {"allow-invalid", no_argument, NULL, 'I'},                                                     \
    {"metrics-listen", required_argument, NULL, CONTROLLER_OPT_METRICS_LISTEN},                    \
    {"metrics-prefix", required_argument, NULL, CONTROLLER_OPT_METRICS_PREFIX},                    \
    {"metrics-compat", required_argument, NULL, CONTROLLER_OPT_METRICS_COMPAT},                    \
    {"metrics-token-file", required_argument, NULL, CONTROLLER_OPT_METRICS_TOKEN_FILE},           \
    {"metrics-insecure", no_argument, NULL, CONTROLLER_OPT_METRICS_INSECURE},                      \
    {"progress-interval", required_argument, NULL, CONTROLLER_OPT_PROGRESS_INTERVAL},              \
    {"grace", required_argument, NULL, CONTROLLER_OPT_GRACE},                                      \
    {"no-preflight", no_argument, NULL, CONTROLLER_OPT_NO_PREFLIGHT}
/* clang-format on */
/* getopt values of the shared flags that have no short letter. */
enum {
    CONTROLLER_OPT_METRICS_LISTEN = 0x5380,
    CONTROLLER_OPT_METRICS_PREFIX,
    CONTROLLER_OPT_METRICS_COMPAT,
    CONTROLLER_OPT_METRICS_TOKEN_FILE,
    CONTROLLER_OPT_METRICS_INSECURE,
    CONTROLLER_OPT_PROGRESS_INTERVAL,
    CONTROLLER_OPT_GRACE,
    CONTROLLER_OPT_NO_PREFLIGHT
};
/* Applies a shared flag (t o T P v I, the --metrics-* ones, --grace, --no-preflight) to options,
 * appending --target to targets (argc entries suffice); false for any other flag. */
bool controller_options_apply(controller_options_t *options, const char **targets, int flag,
                              const char *arg);

/* `stampede controller FILE --bind tcp://HOST:PORT --expect-workers N [--target URL]... [--out DIR]
 * [--trace] [--http-phases|--verbose] [--data-port P] [--register-timeout SECONDS]`. */
int controller_main(int argc, char **argv);
/* The same with every file's levels asked of source (NULL: as controller_main): `stampede
 * capacity --bind` runs its search this way. */
int controller_main_source(int argc, char **argv, const struct sweep_source *source);
/* As controller_main_source, with after(arg, rc) called once the runs are over and before the
 * --linger (the caller's own results, e.g. capacity's, are then written before they are served);
 * a non-zero return of after replaces a zero rc. */
int controller_main_after(int argc, char **argv, const struct sweep_source *source,
                          int (*after)(void *arg, int rc), void *arg);

/* `stampede run`: the quick start on one machine. The controller runs in this process; N local
 * workers are separate processes (fork + exec of this binary's `worker --once`, so no ZeroMQ
 * state crosses a fork); when neither the file nor --target names an endpoint, the embedded
 * simulated server (`stampede mock --port 0`) is started too. Children are in their own process
 * group (a terminal's Ctrl-C reaches only this process, which stops the workers cleanly), die with
 * this process (PR_SET_PDEATHSIG) and are reaped at the end: no orphans. Worker and mock logs go
 * to OUT/workers.log and OUT/mock.log.
 *
 * `run FILE [FILE]... [--workers N] [--target URL]... [--out DIR] [--trace]`: several files run
 * one after another on the same local workers (then long-lived, stopped at the end). Exit status as
 * controller_run: 0 ok, 1 could not start or every request failed, 130 interrupted. */
int run_main(int argc, char **argv);
/* The same with every file's levels asked of source (controller/sweep.h; NULL: as run_main):
 * `stampede capacity` runs its search this way. */
int run_main_source(int argc, char **argv, const struct sweep_source *source);
/* `stampede capacity FILE`: the capacity search of controller/capacity run on a fleet. The search
 * is a sweep source (controller/sweep.h): before each level the fleet passes it the level just
 * run, whose SLOs (controller/slo) decide pass or fail, and it answers with the next level; while
 * a level runs, its watch stops it early once an SLO is clearly lost. The fleet is the one
 * `stampede run` makes (local workers, the embedded mock when no target is named), or with --bind
 * the one `stampede controller` makes. At the end OUT/results.json (the sweep's, with each level's
 * SLOs) gets analysis.capacity, and stdout the search's summary (docs/slo.md).
 *
 * `capacity FILE [--workers N] [--target URL]... [--out DIR] [--trace] [--allow-invalid]`: exit
 * status 0 when the search ended (found, or its range passed or failed entirely), 1 when a level
 * could not run or a file could not be written, 2 on a usage error, 130 when interrupted. */
int capacity_main(int argc, char **argv);
/* The capacity search of file (cfg loaded from it, kept by the caller for the search's life) as a
 * sweep source in *source, its results added to out_dir's results.json (NULL: the file's
 * output.dir) by capacity_run_finish; NULL after saying why (no slo: section, a sweep: section,
 * no limits.duration). `stampede capacity` runs it on a fleet, `stampede simulate` in virtual
 * time. */
typedef struct capacity_run capacity_run_t;
struct config;
capacity_run_t *capacity_run_open(const char *file, const struct config *cfg, const char *out_dir,
                                  struct sweep_source *source);
/* The search's summary on stdout and its analysis in DIR/results.json, once the levels ran
 * (nothing without a level); arg is the search. 0, or 1 when the file cannot be written. */
int capacity_run_finish(void *arg, int rc);
void capacity_run_close(capacity_run_t **self_p);
/* `compare RUN RUN... [--format md|csv|json] [--out FILE]`: 0 ok, 1 on bad input or a write
 * error, 2 on a usage error. */
int compare_main(int argc, char **argv);

/* `plan [--model-config FILE] [--layers N] [--hidden N] [--kv-ratio R | --heads N --kv-heads N]
 * ... --context TOKENS --free-gib G [--workload FILE]`: exit status 0 ok, 1 when a file cannot be
 * read or is malformed (config.json, the workload), 2 on a usage error or a missing input. */
int plan_main(int argc, char **argv);

/* `read-metrics [--json] FILE...`: 0 when every file was read, 1 when one could not be, 2 on a
 * usage error. */
int read_metrics_main(int argc, char **argv);

/* `report DIR [DIR...] [--definitions LIST]`: 0 when every directory was rendered, 1 when one
 * could not be (said on stderr, naming the file), 2 on a usage error. */
int report_cmd_main(int argc, char **argv);

/* `stampede merge SPOOL... --into DIR` (controller/run/spool_merge.h). */
int spool_merge_main(int argc, char **argv);

/* `stampede serve --bind EP --key K --authorized-keys DIR --archive DIR --config FILE`: a shared
 * rig (controller/rig/rig.h, docs/rig.md); runs until SIGINT/SIGTERM. */
int serve_main(int argc, char **argv);
/* `stampede submit FILE --to EP --key K --server-key P [--group G] [--follow]`: queues a run on a
 * rig; 0 queued (with --follow: the run's own exit status), 1 refused or unreachable. */
int submit_main(int argc, char **argv);
/* `stampede runs list|show|follow|fetch|cancel|pin|unpin|compare`: a rig's queue and archive. */
int runs_main(int argc, char **argv);
/* `simulate FILE [--profile NAME] [--replicas N --router R] [--out DIR] [--trace]`: the file in
 * virtual time through the mock's engine model (sim/simulate.h). Exit status as run_main's, 2 on
 * a usage error. */
int simulate_main(int argc, char **argv);
/* `calibrate RESULTS... --out profile.yaml [--base PROFILE]` (sim/calibrate.h): 0 ok, 1 when the
 * input cannot be fitted, 2 on a usage error. */
int calibrate_main(int argc, char **argv);

#endif
