/* What the servers did between two marks of a telemetry_t (controller/telemetry/telemetry.h): each
 * page's counter and histogram deltas, its gauges over the span, the pages summed by endpoint and
 * in total, what this run's client saw end in between, the GPU energy per output token, and the
 * shared-rig guard's verdict. A sweep calls telemetry_stats_between at each snapshot's edges. */
#ifndef STAMPEDE_TELEMETRY_STATS_H
#define STAMPEDE_TELEMETRY_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemetry.h"
#include "telemetry_read.h"

/* Shared-rig guard: a server that finished more requests than this run ended, by more than
 * both of these, served someone else too. */
#define TELEMETRY_GUARD_EXTRA_MIN 5
#define TELEMETRY_GUARD_EXTRA_SHARE 0.10

/* A gauge over a span: the mean and max of the samples taken in it (every scrape_interval and at
 * each mark); NAN when none was. */
typedef struct telemetry_gauge_span {
    double mean;
    double max;
    size_t samples;
} telemetry_gauge_span_t;

/* One server page between two marks. */
typedef struct telemetry_page_stats {
    const char *url;     /* the page */
    int endpoint;        /* index into target.endpoints, -1 when the page is not one endpoint's */
    const char *dialect; /* NULL when no page was read or none recognised */
    bool read;           /* both marks have the page */
    bool absent;         /* an endpoint's /metrics that is not there or not a server's */
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

/* The guard's test: served (a server's Δrequests; NAN: unknown) exceeds sent (the requests this
 * run ended) by more than TELEMETRY_GUARD_EXTRA_SHARE of sent and more than
 * TELEMETRY_GUARD_EXTRA_MIN. */
bool telemetry_stats_served_others(double served, uint64_t sent);
/* Fills *out with what happened between marks a and b (b later), the guard's verdict included.
 * 0, or -1 when out of memory. */
int telemetry_stats_between(const telemetry_t *self, telemetry_mark_t a, telemetry_mark_t b,
                            telemetry_stats_t *out);
/* Whether nothing was there to read: every server page absent (a 404 or not a server's page at
 * an endpoint's /metrics) and no GPU page. A run then reports no server side at all. */
bool telemetry_stats_absent(const telemetry_stats_t *stats);
/* Frees what telemetry_stats_between allocated in *stats. */
void telemetry_stats_clear(telemetry_stats_t *stats);
/* The time series of one page (server pages first, as in telemetry_stats_t.pages): its samples'
 * times (seconds after mark a's scrape) and gauge g's values, between marks a and b. Returns the
 * number of samples written (at most cap). */
size_t telemetry_stats_series(const telemetry_t *self, size_t page, telemetry_gauge_t g,
                              telemetry_mark_t a, telemetry_mark_t b, double *t_s, double *value,
                              size_t cap);

#endif
