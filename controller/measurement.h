/* One measured run on the fleet: its config (loaded, --target applied, checked), its output
 * directory, its run id, its merge and ingest, and the registry's workers made ready to be taken
 * into it. The steps in between (clock_probe, launch, collect, results) work on the run part of
 * the controller that measurement_begin fills and measurement_end empties. */
#ifndef STAMPEDE_MEASUREMENT_H
#define STAMPEDE_MEASUREMENT_H

#include <stddef.h>

#include "controller.h"

/* Loads config_path as a run would (the --target URLs applied) and frees it: 0 when it would
 * run, -1 after printing why on stderr (file, line, key). */
int measurement_check(const controller_t *self, const char *config_path);
/* Sets up run number (1-based) of n_runs from config_path: results go to the output directory
 * (--out, else the file's output.dir, else "results"), in run-N under it when n_runs > 1. A new
 * run id; the fleet's workers are made ready to be taken in (registry_next_run). 0 ok, -1 after
 * printing why. */
int measurement_begin(controller_t *self, const char *config_path, size_t number, size_t n_runs);
/* Frees what the run owned and clears the run part of the controller (NULL-safe parts). */
void measurement_end(controller_t *self);

#endif
