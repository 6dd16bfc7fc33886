/* The state telemetry.c keeps and telemetry_stats.c reads. Each GET carries a small context (its
 * page, and its mark or none for a periodic one). A page keeps its series of gauge samples, its
 * last reading (every new reading is compared with it, so a restart between two periodic scrapes
 * is seen even when the counters have climbed past their old values by the next mark), its
 * restarts and its failed GETs, each with its instant, so any two marks can be compared
 * afterwards. Internal to controller/telemetry*.c. */
#ifndef STAMPEDE_TELEMETRY_INTERNAL_H
#define STAMPEDE_TELEMETRY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "loop.h"
#include "scrape.h"
#include "telemetry.h"
#include "telemetry_read.h"

typedef struct telemetry_sample {
    int64_t at_ns;
    double gauge[TELEMETRY_G__COUNT];
} telemetry_sample_t;

typedef struct telemetry_event {
    int64_t at_ns;
    char why[200];
} telemetry_event_t;

typedef struct telemetry_page {
    char *url;
    int endpoint;
    bool gpu;
    bool periodic_inflight;
    bool said_failure; /* the first failed GET is said on stderr, the rest counted */
    bool said_skips;
    bool said_unknown;
    bool auto_page; /* an endpoint's own /metrics (server_metrics: auto, the default) */
    bool absent;    /* an auto page that is not there (4xx) or not a server's: never asked again */
    char absent_why[160];
    telemetry_sample_t *series;
    size_t n_series, cap_series;
    bool have_last;
    int64_t last_ns;
    telemetry_reading_t last;
    telemetry_event_t *restarts;
    size_t n_restarts, cap_restarts;
    int64_t *failures;
    size_t n_failures, cap_failures;
} telemetry_page_t;

typedef struct telemetry_mark_entry {
    telemetry_t *owner;
    char *label;
    int64_t when_ns;
    int64_t at_ns; /* when its GETs started */
    bool fired;
    uint64_t timer;
    size_t pending;
    telemetry_reading_t *readings; /* by page */
    bool *read;
    char (*errors)[240];
    telemetry_client_counts_t *client; /* by endpoint: requests that ended by at_ns */
} telemetry_mark_entry_t;

typedef struct telemetry_get {
    telemetry_t *owner;
    size_t page;
    telemetry_mark_entry_t *mark; /* NULL: a periodic GET */
} telemetry_get_t;

struct telemetry {
    const config_t *cfg;
    const char *name;
    loop_t *loop;
    scrape_t *scrape;
    telemetry_page_t *pages;
    size_t n_pages;
    size_t n_server_pages;
    size_t n_endpoints;
    telemetry_client_counts_t *client; /* by endpoint: every request counted so far */
    telemetry_mark_entry_t **marks;
    size_t n_marks, cap_marks;
    int64_t interval_ns;
    uint64_t series_timer;
    bool series_started;
    bool series_stopped;
};

#endif
