/* What every report writer shares, so the end table (report.c) and the agentic tables
 * (session_report.c) need not include each other: the run's metadata beyond the records, a role's
 * name, a latency block of results.json and a table cell of milliseconds. */
#ifndef STAMPEDE_REPORT_FMT_H
#define STAMPEDE_REPORT_FMT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histogram.h"

/* One worker's clock probe result, as the controller measured it. */
typedef struct report_worker_clock {
    uint32_t worker;
    int64_t offset_ns; /* worker clock minus controller clock */
    int64_t rtt_ns; /* round trip of the probe kept (the smallest); the offset error is <= half */
} report_worker_clock_t;

/* What the controller knows about the run beyond the records. Every field may be left 0/NULL. */
typedef struct report_meta {
    const char *level_kind; /* "concurrency" (default) or "rate" */
    double level_value;     /* target concurrency, or sessions/s */
    uint32_t workers;
    const report_worker_clock_t *clocks;
    size_t n_clocks;
    int64_t start_unix_ns;   /* wall-clock start of the run (CLOCK_REALTIME) */
    const char *stop_reason; /* e.g. "duration reached", "max_requests", "interrupted" */
    const char *config_file; /* the workload file's name */
    uint64_t seed;
    const char *const *role_names; /* role_names[i] names role i; "role i" past n_role_names */
    size_t n_role_names;
    double lag_warning_ms; /* schedule lag p99 above this warns; 0 = 10 ms */
    bool http_phases;      /* the table also shows the HTTP phases (--http-phases, --verbose) */
    uint64_t run_id;       /* this run's id on the wire (0: none, e.g. stampede merge) */
    bool traced;           /* --trace: the trace_* counts below are filled */
    uint64_t trace_lines_written;
    uint64_t trace_lines_dropped; /* the writer's queue was full, or it was stuck at the end */
    uint64_t
        cap_waits; /* rate mode: arrivals the concurrency cap held back (then the lag's cause) */
    const char *level_note; /* after the level in the label, e.g. "held 6 for 3.1 s"; or NULL */
    const char *simulated_profile; /* the embedded mock served the run, this profile; or NULL */
    const struct report_simulation *simulation; /* `stampede simulate` ran it; NULL: measured */
    const char *server_said; /* what the endpoints said about themselves (JSON array), or NULL */
} report_meta_t;

/* What `stampede simulate` ran a run or sweep on instead of a server (sim/): the engine model in
 * virtual time, nothing measured. */
typedef struct report_simulation {
    const char *profile; /* the engine profile's name, or the profile file */
    uint32_t replicas;
    const char *router; /* "round_robin", "least_loaded", "prefix" */
} report_simulation_t;

/* The one-line account of a simulation ("virtual time through the engine model, profile P, N
 * replicas behind router R") into buf. */
void report_simulation_text(const report_simulation_t *simulation, char *buf, size_t len);

/* A latency block {"count","mean","p50",...,"max"} in ms of h (nulls when empty) and "clamped"
 * (samples above 1 hour, in the top bucket), as every *_ms key of results.json has it. */
json_t *report_metric_json(const histogram_t *h);
/* meta's name of role (copied into buf as "role N" when it has none); returns it. */
const char *report_role_name(const report_meta_t *meta, uint32_t role, char *buf, size_t len);
/* A table cell of milliseconds (about four significant digits, never in exponent form) into
 * buf. */
void report_format_ms(char *buf, size_t len, double value);

#endif
