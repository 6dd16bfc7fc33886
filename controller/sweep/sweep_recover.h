/* The level a sweep was running when its driver died (serve killed: docs/rig.md "Faults"),
 * rebuilt after the fact. Each repetition of the level is one run with its own journal
 * (SWEEP/levels/NN-<level>/rep-R/journal.spool, every batch the driver acknowledged); the
 * repetition in flight may also have hand-over spools (what its workers held). Each repetition is
 * rebuilt from those (controller/run/spool_merge.h) into its directory, and the level goes into
 * the sweep's results.json beside the levels it finished, marked interrupted and not valid, its
 * reasons saying it is a partial level rebuilt from whole repetitions (no measurement window);
 * the reports are rendered again from it. */
#ifndef STAMPEDE_SWEEP_RECOVER_H
#define STAMPEDE_SWEEP_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The level in flight of a sweep. */
typedef struct sweep_recover_level {
    char dir[4500]; /* SWEEP/levels/NN-<level> */
    size_t index;   /* 0-based: the count of levels its results.json holds */
    uint32_t reps;  /* its repetitions that have a directory: rep-1 .. rep-reps */
    char rep[4600]; /* the last one's directory (the repetition in flight) */
} sweep_recover_level_t;

/* Whether sweep_dir holds a sweep (a results.json of kind sweep, or a levels/ directory). */
bool sweep_recover_is_sweep(const char *sweep_dir);
/* Finds the level in flight of the sweep in sweep_dir: the level after those its results.json
 * holds, when its last repetition has a journal (or its results.json: every repetition of the
 * level had ended). 1 found, 0 none. */
int sweep_recover_find(const char *sweep_dir, sweep_recover_level_t *out);
/* Rebuilds every repetition of level (the last one with the n_spools hand-over spools of the
 * workers named in workers, "w1, w2" or NULL; the records merged from those spools into
 * *from_spools when set), then writes the level into
 * sweep_dir's results.json (the sweep interrupted), and its reports. 0 done; -1 after saying why
 * on stderr, prefixed by name. */
int sweep_recover_write(const char *name, const char *sweep_dir, const sweep_recover_level_t *level,
                        char **spools, int n_spools, const char *workers, uint64_t *from_spools);

#endif
