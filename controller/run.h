/* `stampede run`: the quick start on one machine. The controller runs in this process; N local
 * workers are separate processes (fork + exec of this binary's `worker --once`, so no ZeroMQ
 * state crosses a fork); when neither the file nor --target names an endpoint, the embedded
 * simulated server (`stampede mock --port 0`) is started too. Children are in their own process
 * group (a terminal's Ctrl-C reaches only this process, which stops the workers cleanly), die with
 * this process (PR_SET_PDEATHSIG) and are reaped at the end: no orphans. Worker and mock logs go
 * to OUT/workers.log and OUT/mock.log. */
#ifndef STAMPEDE_RUN_H
#define STAMPEDE_RUN_H

/* `run FILE [FILE]... [--workers N] [--target URL]... [--out DIR] [--trace]`: several files run
 * one after another on the same local workers (then long-lived, stopped at the end). Exit status as
 * controller_run: 0 ok, 1 could not start or every request failed, 130 interrupted. */
int run_main(int argc, char **argv);
struct sweep_source;
/* The same with every file's levels asked of source (controller/sweep.h; NULL: as run_main):
 * `stampede capacity` runs its search this way. */
int run_main_source(int argc, char **argv, const struct sweep_source *source);

#endif
