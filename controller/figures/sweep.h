/* A sweep is a level sequence the fleet asks for its next level: the hook every multi-level run
 * goes through (a `sweep:` section's list of levels, the capacity search of controller/capacity).
 *
 * How a source uses it: fill a sweep_source_t with next (and arg, and optionally watch) and put
 * it in controller_options_t.source. Before each level the fleet calls
 *     next(arg, previous, &spec)
 * with previous NULL the first time, then the result of the level just run (its repetitions
 * pooled in previous->pooled: read it with window.h's window_stats_percentile_ms,
 * window_stats_error_pct and window_stats_per_s, as the capacity search does). The source fills
 * spec (start from sweep_spec_from_config for the file's warm-up, snapshots, drain, repeat and
 * exclusion) and returns 1 to run it, 0 to end the sweep (-1: an error it printed, which ends the
 * sweep with exit status 1). `previous` and everything it points to live only during the call:
 * copy what is needed. While a level's window runs, watch (when set) is called about once a
 * second with the repetition so far; true stops that repetition early (its result is kept and
 * marked `stopped_early`). The fleet runs each level's repetitions, keeps workers connected
 * and probes their clocks again before each, writes every finished level to results.json, and
 * stops asking on Ctrl-C. */
#ifndef STAMPEDE_SWEEP_H
#define STAMPEDE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "window.h"

/* One level to run. */
typedef struct level_spec {
    config_sweep_axis_t axis; /* SWEEP_AXIS_CONCURRENCY or SWEEP_AXIS_RATE */
    double value;             /* sessions in flight, or sessions per second */
    double rate_cap;          /* concurrency levels: session starts per second at most; 0 none */
    int64_t warmup_ns;        /* discarded */
    uint32_t snapshots;       /* the measurement window: snapshots x snapshot_ns */
    int64_t snapshot_ns;
    int64_t drain_ns;         /* the most the level waits for its requests after the window */
    uint32_t repeat;          /* repetitions, >= 1 */
    double exclude_error_pct; /* a repetition with more errors is excluded from the pooling */
} level_spec_t;

/* What a finished level (or, for watch, the repetition in progress) gives its source. */
typedef struct level_result {
    const level_spec_t *spec;
    size_t index;                 /* 0-based position of the level in the sweep */
    uint32_t repetitions;         /* run (for watch: the repetition, 1-based) */
    uint32_t valid;               /* kept: at most exclude_error_pct errors */
    const window_stats_t *pooled; /* the valid repetitions' windows pooled (all when none is) */
    bool interrupted;             /* Ctrl-C or a lost run: the level is partial */
    bool stopped_early;           /* watch stopped a repetition */
} level_result_t;

/* The next level from previous (NULL first): 1 with *out filled, 0 when the sweep is over, -1 on
 * an error the source printed. */
typedef int (*sweep_next_fn)(void *arg, const level_result_t *previous, level_spec_t *out);
/* Called about once a second during a repetition's window; true stops it early. */
typedef bool (*sweep_watch_fn)(void *arg, const level_result_t *so_far);

typedef struct sweep_source {
    sweep_next_fn next;
    sweep_watch_fn watch; /* NULL: no early stop */
    void *arg;
    size_t planned; /* levels expected, for "level i/n" (0: unknown, shown as "level i") */
} sweep_source_t;

/* The file's sweep settings (warm-up, snapshots, drain, repeat, exclusion, rate cap) in *out with
 * axis and value of level i (i < n_levels; any i leaves value 0 when the file has no levels). */
void sweep_spec_from_config(const config_sweep_t *sweep, size_t i, level_spec_t *out);

/* The list source: the levels of a `sweep:` section, in order. */
typedef struct sweep_list {
    const config_sweep_t *sweep; /* the caller's; must outlive the list */
    size_t next_index;
} sweep_list_t;
/* A source running every level of sweep in order (list is its state, filled here). */
sweep_source_t sweep_list_source(sweep_list_t *list, const config_sweep_t *sweep);

/* Turns a run's config into the level's: scheduler set for spec (concurrency, rate, or
 * concurrency with a rate cap: constant arrivals at the cap, at most value in flight), warm-up
 * and duration (warm-up + window) set, the sweep section dropped. */
void sweep_apply_level(config_t *cfg, const level_spec_t *spec);

/* The text seed (config_t.text_seed) of level `level` (0-based in run order; a capacity search's
 * trial) and repetition rep (1-based), from the file's text seed: a draw of (text_seed, level,
 * rep), never 0, so no two levels, repetitions or trials send the same prompt words. */
uint64_t sweep_text_seed(uint64_t text_seed, size_t level, uint32_t rep);
/* Sets cfg's text seed for (level, rep) when the file's sweep (or capacity search) has
 * fresh_text, as it has by default; leaves the file's text seed otherwise. */
void sweep_apply_text(config_t *cfg, const config_t *file, size_t level, uint32_t rep);

#endif
