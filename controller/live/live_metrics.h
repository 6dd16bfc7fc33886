/* Live Prometheus metrics of the controller (`--metrics-listen`), from the merged records, not
 * proxied from workers: request counters by outcome and error class, token counters, `le`
 * histograms of TTFT, TTFC, ITL, TPOT and E2E, a Summary of each over a sliding 60 s window (a
 * ring of per-second HDR histograms merged on scrape), and gauges of the fleet, labelled by
 * endpoint, role and level. It lives as long as the fleet, across the levels of a sweep and the
 * runs of a list; served by controller/live_http. Names and buckets: docs/metrics.md. */
#ifndef STAMPEDE_LIVE_METRICS_H
#define STAMPEDE_LIVE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer.h"
#include "live_http.h"
#include "metrics.h"
#include "record.h"

#define LIVE_METRICS_WINDOW_S 60 /* the Summaries' sliding window */

typedef struct live_metrics live_metrics_t;

/* What a record is labelled with; the strings are copied. */
typedef struct live_labels {
    const char *endpoint; /* the endpoint's base URL */
    const char *role;     /* the role's name, "default" without roles */
    const char *level;    /* the sweep level's value ("16", "2.5"), "run" outside a sweep */
} live_labels_t;

/* The fleet's state, set on every turn of the controller's loop. */
typedef struct live_gauges {
    uint64_t in_flight;         /* requests in flight, summed over the workers' heartbeats */
    double level;               /* the current sweep level's value; 0 outside a sweep */
    uint32_t workers_connected; /* registered and answering */
    uint32_t workers_lost;      /* silent past the timeout, or gone */
} live_gauges_t;

/* Metrics named prefix... (NULL: "stampede_"); compat NULL, or "loadgen" to also expose the
 * reference names. listen NULL: no server (render with live_metrics_render); access: who may
 * scrape it (live_http.h; NULL: loopback, no token). NULL after printing why on stderr (as who:
 * "controller", "run"): a bad prefix, compat, address or token. On success the bound address is
 * printed on stderr: "WHO: metrics on http://HOST:PORT/metrics", and a warning when it is open
 * beyond loopback without a token. */
live_metrics_t *live_metrics_new(const char *listen, const live_http_access_t *access,
                                 const char *prefix, const char *compat, const char *who);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void live_metrics_destroy(live_metrics_t **self_p);
/* The descriptor to poll (readable while a scrape needs work); -1 without a server. */
int live_metrics_fd(const live_metrics_t *self);
/* Serves the scrapes that are ready, without waiting. */
void live_metrics_poll(live_metrics_t *self);
/* Counts one merged record (m = metrics_compute(rec)) arriving at now_ns. Latencies come from
 * successful requests outside the warm-up; counters count every record. */
void live_metrics_record(live_metrics_t *self, const request_record_t *rec, const metrics_t *m,
                         const live_labels_t *labels, int64_t now_ns);
/* Sets the gauges. */
void live_metrics_set_gauges(live_metrics_t *self, const live_gauges_t *gauges);
/* From now on also serves the directory dir read-only under /results/ (controller --linger):
 * GET /results/results.json, /results/ for a listing (controller/live/live_http.h: live_http_file).
 * 0 ok, -1 out of memory. */
int live_metrics_serve_results(live_metrics_t *self, const char *dir);
/* The server's bound address ("127.0.0.1:9464"), NULL without a server. */
const char *live_metrics_address(const live_metrics_t *self);
/* Appends the exposition (text format 0.0.4) at now_ns to out. 0 ok, -1 out of memory. */
int live_metrics_render(live_metrics_t *self, int64_t now_ns, buffer_t *out);

#endif
