/* Server and GPU telemetry of a run: the pages of `server_metrics` (vLLM, SGLang, Dynamo; `auto`
 * is each endpoint's own /metrics) and `gpu_metrics` (DCGM), scraped on a loop of its own that
 * the controller polls (telemetry_fd, telemetry_poll), never blocking it. Pages are scraped at
 * marks (window and snapshot edges: telemetry_mark) and every scrape_interval for the gauge time
 * series; telemetry_delta gives what the servers did between two marks, next to what this run's
 * client saw finish in between (telemetry_record), and the shared-rig guard's verdict. */
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
/* Shared-rig guard: a server that finished more requests than this run ended, by more than
 * both of these, served someone else too. */
#define TELEMETRY_GUARD_EXTRA_MIN 5
#define TELEMETRY_GUARD_EXTRA_SHARE 0.10

typedef struct telemetry telemetry_t;
/* A mark: the pages as they were at one instant. */
typedef size_t telemetry_mark_t;

/* A gauge over a span: the mean and max of the samples taken in it (every scrape_interval and at
 * each mark); NAN when none was. */
typedef struct telemetry_gauge_span {
    double mean;
    double max;
    size_t samples;
} telemetry_gauge_span_t;

/* What this run's client saw end between two marks on one endpoint (any outcome). */
typedef struct telemetry_client_counts {
    uint64_t requests;
    uint64_t output_tokens;
    uint64_t prompt_tokens;
} telemetry_client_counts_t;

/* One server page between two marks. */
typedef struct telemetry_page_stats {
    const char *url;     /* the page */
    int endpoint;        /* index into target.endpoints, -1 when the page is not one endpoint's */
    const char *dialect; /* NULL when no page was read or none recognised */
    bool read;           /* both marks have the page */
    char error[240];     /* why not, when not */
    telemetry_delta_t delta;
    telemetry_gauge_span_t gauge[TELEMETRY_G__COUNT];
    uint64_t scrape_failures; /* GETs of this page that failed between the marks */
} telemetry_page_stats_t;

/* Everything between two marks. Owned by the caller; telemetry_stats_clear frees it. */
typedef struct telemetry_stats {
    double window_s; /* between the two marks' scrapes */
    size_t n_pages;
    telemetry_page_stats_t *pages; /* server pages, then GPU pages */
    size_t n_server_pages;
    size_t n_endpoints;
    telemetry_client_counts_t *client; /* by endpoint */
    telemetry_delta_t *endpoint;       /* by endpoint: its pages summed (absent: no page) */
    telemetry_delta_t total;           /* every server page summed */
    telemetry_gauge_span_t total_gauge[TELEMETRY_G__COUNT];
    telemetry_client_counts_t client_total;
    /* GPU pages summed */
    double gpu_energy_j;            /* NAN when no GPU page gives the counter */
    double output_tokens;           /* the server's generation tokens, else the client's */
    const char *output_tokens_from; /* "server" or "client" */
    double joules_per_output_token; /* NAN when either is missing or no token was made */
    /* the shared-rig guard */
    bool shared;
    bool restarted;
    char shared_why[320];
    char restarted_why[320];
} telemetry_stats_t;

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
/* Whether every page of mark has answered or failed. */
bool telemetry_mark_done(const telemetry_t *self, telemetry_mark_t mark);
/* Polls (blocking, at most until deadline_ns) until every mark is done. */
void telemetry_wait(telemetry_t *self, int64_t deadline_ns);
/* Counts a finished request of this run (any outcome) on its endpoint at its end instant, for
 * the marks before and after it. NULL-safe. */
void telemetry_record(telemetry_t *self, const request_record_t *rec);
/* Fills *out with what happened between marks a and b (b later), the guard's verdict included.
 * 0, or -1 when out of memory. */
int telemetry_delta(const telemetry_t *self, telemetry_mark_t a, telemetry_mark_t b,
                    telemetry_stats_t *out);
/* Frees what telemetry_delta allocated in *stats. */
void telemetry_stats_clear(telemetry_stats_t *stats);
/* The mark's label, and the config's scrape interval in seconds (for the report). */
const char *telemetry_mark_label(const telemetry_t *self, telemetry_mark_t mark);
double telemetry_scrape_interval_s(const telemetry_t *self);
/* The time series of one page (server pages first, as in telemetry_stats_t.pages): its samples'
 * times (seconds after mark a's scrape) and gauge g's values, between marks a and b. Returns the
 * number of samples written (at most cap). */
size_t telemetry_series(const telemetry_t *self, size_t page, telemetry_gauge_t g,
                        telemetry_mark_t a, telemetry_mark_t b, double *t_s, double *value,
                        size_t cap);

#endif
