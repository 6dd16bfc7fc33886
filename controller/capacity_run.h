/* `stampede capacity FILE`: the capacity search of controller/capacity run on a fleet. The search
 * is a sweep source (controller/sweep.h): before each level the fleet passes it the level just
 * run, whose SLOs (controller/slo) decide pass or fail, and it answers with the next level; while
 * a level runs, its watch stops it early once an SLO is clearly lost. The fleet is the one
 * `stampede run` makes (local workers, the embedded mock when no target is named), or with --bind
 * the one `stampede controller` makes. At the end OUT/results.json (the sweep's, with each level's
 * SLOs) gets analysis.capacity, and stdout the search's summary (docs/slo.md). */
#ifndef STAMPEDE_CAPACITY_RUN_H
#define STAMPEDE_CAPACITY_RUN_H

/* `capacity FILE [--workers N] [--target URL]... [--out DIR] [--trace] [--allow-invalid]`: exit
 * status 0 when the search ended (found, or its range passed or failed entirely), 1 when a level
 * could not run or a file could not be written, 2 on a usage error, 130 when interrupted. */
int capacity_main(int argc, char **argv);

#endif
