/* What a run leaves behind, all computed from the merged histograms (never averaged percentiles):
 * the end-of-run table on stdout, OUT/results.json (schema in docs/metrics.md), the optional
 * per-request trace OUT/requests.jsonl, and the live status line. */
#ifndef STAMPEDE_REPORT_H
#define STAMPEDE_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "merge.h"
#include "metrics.h"
#include "record.h"
#include "report_fmt.h"
#include "trace_writer.h"
#include "validity.h"

#define REPORT_SCHEMA_VERSION 2
#define REPORT_LAG_WARNING_MS 10.0
#define REPORT_INTENDED_ROWS_LAG_MS                                                                \
    1.0 /* lag p99 above: the table shows TTFT/E2E from intended                                   \
         */

/* One level of a sweep: its accumulator and its target (kind NULL = meta's level_kind). */
typedef struct report_level {
    const merge_t *merge;
    const char *kind;
    double value;
} report_level_t;

/* results.json's top-level "served_by": {"simulated": true, "profile": P} when the embedded mock
 * served the run (simulated_profile P), else {"simulated": false}; with "reported": the array
 * server_said holds (what each endpoint said about itself at the preflight) when it is not NULL.
 * The caller owns it. */
json_t *report_served_by_json(const char *simulated_profile, const char *server_said);

/* Marks root (a results.json document) as simulated: top-level "simulated": true, and served_by
 * {"simulated": true, "profile", "virtual_time": true, "replicas", "router"}. */
void report_simulation_mark(json_t *root, const report_simulation_t *simulation);

/* Writes the end-of-run table (meta's level) to out. */
void report_print(const merge_t *merge, const report_meta_t *meta, FILE *out);
/* The results.json document for these levels; the caller json_decref's it. NULL on no memory. */
json_t *report_json(const report_level_t *levels, size_t n_levels, const report_meta_t *meta);
/* Writes the document root to path (beside, then renamed: a reader never sees half a file). 0 ok;
 * -1 with errno set when it cannot write. root stays the caller's. */
int report_write_json_root(json_t *root, const char *path);

/* The --trace writer: one JSON line per request, timestamps in µs from run_start_ns. Lines are
 * formatted on the caller's thread and written by a trace_writer thread (a bounded queue of
 * REPORT_TRACE_QUEUE_BYTES; a line that does not fit is dropped and counted). */
/* The table's rate line, "Rate: requested X/s, achieved Y/s", and the warning when achieved fell
 * short (warning: its cause, or NULL when the rate was met). */
void report_print_rate(FILE *out, double requested_per_s, double achieved_per_s,
                       const char *warning);
/* The table's last line: "Run valid", or "RUN INVALID" and every reason, one per line. */
void report_print_validity(FILE *out, const validity_t *validity);

/* The --trace writer: one JSON line per request, timestamps in µs from run_start_ns. */
typedef struct report_trace report_trace_t;
#define REPORT_TRACE_QUEUE_BYTES (64u << 20)
#define REPORT_TRACE_STALL_MS 2000 /* the close gives up on a writer stuck this long */
/* Starts the writer of path (opened and truncated by its thread, so a FIFO without a reader
 * blocks nothing); NULL with errno set when it cannot start. The caller closes it. */
report_trace_t *report_trace_open(const char *path, int64_t run_start_ns);
/* Formats rec (controller clock) with its metrics m (metrics_compute(rec); NULL: computed here)
 * and queues the line. 0 ok (queued or dropped and counted), -1 when formatting failed. */
int report_trace_write(report_trace_t *self, const request_record_t *rec, const metrics_t *m);
/* Each line also gets the replay keys of its request, regenerated from cfg (which must outlive
 * the writer), so requests.jsonl replays as a session trace (common/trace_keys.h). 0 or -1. */
int report_trace_set_workload(report_trace_t *self, const config_t *cfg);
/* Lines dropped so far (queue full, or the writer failed). */
uint64_t report_trace_dropped(report_trace_t *self);
/* errno of the writer's first open or write failure, 0 none. */
int report_trace_error(report_trace_t *self);
/* Lets the writer finish while it makes progress (gives up after REPORT_TRACE_STALL_MS without
 * any), fills stats when not NULL, frees and sets *self_p to NULL. 0 when every line was
 * written, -1 otherwise. */
int report_trace_finish(report_trace_t **self_p, trace_writer_stats_t *stats);
/* report_trace_finish without the stats. */
int report_trace_close(report_trace_t **self_p);

/* {"connect": n, "timeout": n, ...}: the failed requests by class (every class but none and
 * cancelled), errors[] indexed by error_class_t. */
json_t *report_errors_json(const uint64_t errors[ERROR__COUNT]);
/* {"none": n, "stop": n, "length": n, "tool_calls": n, "content_filter": n, "other": n}: the ok
 * requests by finish_reason, indexed by finish_reason_t. */
json_t *report_finish_reasons_json(const uint64_t finish_reasons[FINISH__COUNT]);
/* Adds "buckets" (report_buckets_json) to the ttft_ms, ttfc_ms, tpot_ms, itl_ms and e2e_ms
 * blocks of o, from latency[] indexed by metrics_kind_t. */
void report_add_buckets(json_t *o, const histogram_t *const latency[METRIC__COUNT]);

/* The live status line, NUL-terminated in buf (no newline), e.g.
 * "12.3 s | in flight 160 | 41.2 req/s | 5230 tok/s | TTFT p50 174 ms | 1234 ok, 3 failed". */
void report_live_line(const live_t *live, char *buf, size_t len);
/* "in flight N", or "in flight N (K workers silent)" when workers went quiet (their count is
 * left out until they speak again or are declared lost). */
void report_live_in_flight(const live_t *live, char *buf, size_t len);

#endif
