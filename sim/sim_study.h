/* A scaling study in virtual time, as agentic-concurrency-scaling.md ran one on real servers:
 * workload files (frameworks) x engine profiles (server configurations), each cell a sweep whose
 * every level is the file's own run (its limits: the report's 48 tasks) at one concurrency, and
 * the report's §3-§5 tables printed from the cells' results.json: §3 the profiles side by side on
 * the first file, §4 the files side by side on the first profile, §5 the power-law fits and the
 * throughput scaling of every cell run. The cells run are the report's matrix: the first file on
 * every profile and every file on the first profile (docs/simulate.md "The scaling study"). */
#ifndef STAMPEDE_SIM_STUDY_H
#define STAMPEDE_SIM_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sweep.h"

#define SIM_STUDY_MAX_LEVELS 64

/* The sweep source of one cell: the levels in order, each run until the file's limits end it
 * (limits.max_sessions, else limits.duration), no warm-up, one window. */
typedef struct sim_study_levels {
    double levels[SIM_STUDY_MAX_LEVELS];
    size_t n_levels, next;
    int64_t window_ns; /* the window's bound: limits.duration, else a day of virtual time */
} sim_study_levels_t;

/* A source running self's levels (self must outlive it). */
sweep_source_t sim_study_source(sim_study_levels_t *self);

/* Whether the study runs cell (file, profile): the first file on every profile, every file on the
 * first profile. */
bool sim_study_runs(size_t file, size_t profile);

/* The cell's results directory, DIR/LABEL-PROFILE. */
void sim_study_cell_dir(const char *dir, const char *label, const char *profile, char *buf,
                        size_t len);

/* Prints §3-§5 from the cells' results.json under dir (labels[i] names file i, as its directory
 * does). 0 ok, -1 when a cell's results.json cannot be read (said on stderr). */
int sim_study_print(FILE *out, const char *dir, const char *const *labels, size_t n_files,
                    const char *const *profiles, size_t n_profiles);

#endif
