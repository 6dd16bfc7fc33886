/* What a run leaves and how it ends. Every merged record also goes to the --trace file and keeps
 * the first error for the final message; at the end come the table on stdout,
 * OUT/results.json, OUT/config.yaml (redacted) and the exit status. */
#ifndef STAMPEDE_RESULTS_H
#define STAMPEDE_RESULTS_H

#include <stdbool.h>

#include "measurement.h"
#include "record.h"

/* Called once the start instant is set, before any record: opens the measured window (start +
 * warmup, up to start + duration) and, with --trace, OUT/requests.jsonl with times from the start
 * (a failure is said, and the run goes on without a trace). */
void results_open_trace(measurement_t *run);
/* An ingest_record_fn (arg is the run): merges rec, traces it, and counts it (ok or
 * failed, warm-up included) for the exit status, keeping the first error. */
void results_record(void *arg, request_record_t *rec);
/* Writes dir's report.md, results.csv and hgrm/ from its results.json (controller/report_cmd.h),
 * saying why when it cannot. 0 ok, -1 said. */
int results_reports(const run_options_t *options, const run_link_t *link, const char *dir);
/* Prints the table, writes the files and returns the exit status: 0 ok, 1 when a file cannot be
 * written or no request succeeded, 3 when the run is invalid (controller/validity.h) unless
 * --allow-invalid, 130 when interrupted. */
int results_finish(measurement_t *run, bool interrupted);

#endif
