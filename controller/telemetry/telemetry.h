/* Server and GPU telemetry of a run: the pages of `server_metrics` (vLLM, SGLang, Dynamo; `auto`
 * is each endpoint's own /metrics) and `gpu_metrics` (DCGM), scraped on a loop of its own that
 * the controller polls (telemetry_fd, telemetry_poll), never blocking it. Pages are scraped at
 * marks (window and snapshot edges: telemetry_mark) and every scrape_interval for the gauge time
 * series; telemetry_stats.h gives what the servers did between two marks, next to what this
 * run's client saw finish in between (telemetry_record), and the shared-rig guard's verdict. */
#ifndef STAMPEDE_TELEMETRY_H
#define STAMPEDE_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "record.h"
#include "telemetry_read.h"

/* A GET of a /metrics page gives up after this: the longest a dead page delays a run's end. */
#define TELEMETRY_SCRAPE_TIMEOUT_NS 2000000000LL

typedef struct telemetry telemetry_t;
/* What this run's client saw end on one endpoint (any outcome): in all, by a mark, or between two
 * (telemetry_stats.h). */
typedef struct telemetry_client_counts {
    uint64_t requests;
    uint64_t output_tokens;
    uint64_t prompt_tokens;
} telemetry_client_counts_t;
/* A mark: the pages as they were at one instant. */
typedef size_t telemetry_mark_t;

/* The telemetry cfg asks for (its endpoints, server_metrics, gpu_metrics, scrape_interval), with
 * messages prefixed by name; NULL when it asks for none or memory ran out (said on stderr). The
 * caller destroys it; cfg must outlive it. */
telemetry_t *telemetry_new(const config_t *cfg, const char *name);
/* Abandons the GETs in flight and frees; *self_p becomes NULL. NULL-safe. */
void telemetry_destroy(telemetry_t **self_p);
/* A descriptor readable when telemetry_poll has work (-1 for NULL): poll it with the rest. */
int telemetry_fd(const telemetry_t *self);
/* Runs what is due (answers, timeouts, periodic scrapes) without waiting. NULL-safe. */
void telemetry_poll(telemetry_t *self);
/* A mark named label (copied) at when_ns (CLOCK_MONOTONIC; now or earlier means now): every page
 * is scraped then, and the periodic series runs from the first mark until telemetry_stop_series.
 */
telemetry_mark_t telemetry_mark(telemetry_t *self, int64_t when_ns, const char *label);
/* Ends the periodic scrapes (marks still scrape). */
void telemetry_stop_series(telemetry_t *self);
/* Polls (blocking, at most until deadline_ns) until every mark is done. */
void telemetry_wait(telemetry_t *self, int64_t deadline_ns);
/* Counts a finished request of this run (any outcome) on its endpoint at its end instant, for
 * the marks before and after it. NULL-safe. */
void telemetry_record(telemetry_t *self, const request_record_t *rec);
/* The mark's label, and the config's scrape interval in seconds (for the report). */
const char *telemetry_mark_label(const telemetry_t *self, telemetry_mark_t mark);
double telemetry_scrape_interval_s(const telemetry_t *self);
#endif
