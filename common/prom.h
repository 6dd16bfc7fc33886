/* The Prometheus text exposition format (0.0.4): fixed-bucket histograms to observe into, and a
 * writer that renders counters, gauges and histograms with their HELP and TYPE lines into a
 * buffer_t, escaping label values and help text as the format says. The mock's /metrics uses
 * it; so will the controller's live exporter. Numbers print as Python's float repr ("2.0",
 * "0.25"), as prometheus_client does, so the mock reads like vLLM to a scraper. */
#ifndef STAMPEDE_PROM_H
#define STAMPEDE_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "buffer.h"

/* Cumulative-on-render histogram over fixed upper bounds (le is inclusive). */
typedef struct prom_histogram {
    const double *bounds; /* ascending upper bounds; borrowed (static tables) */
    uint32_t n_bounds;
    uint64_t *counts; /* n_bounds + 1 (the last is +Inf), not cumulative; owned */
    uint64_t count;
    double sum;
} prom_histogram_t;

/* One label; the value is raw (the writer escapes it). */
typedef struct prom_label {
    const char *name;
    const char *value;
} prom_label_t;

/* Renders into out; rc turns -1 on the first allocation failure and stays so. */
typedef struct prom_writer {
    buffer_t *out;
    int rc;
} prom_writer_t;

/* Empty histogram over bounds[0..n). 0 ok, -1 out of memory. */
int prom_histogram_init(prom_histogram_t *self, const double *bounds, uint32_t n);
/* Frees the counts. */
void prom_histogram_clear(prom_histogram_t *self);
/* Counts one observation (O(log buckets), no allocation). */
void prom_histogram_observe(prom_histogram_t *self, double value);

/* A writer appending to out. */
prom_writer_t prom_writer(buffer_t *out);
/* The # HELP and # TYPE lines of a family (type: counter, gauge, histogram, ...). */
void prom_family(prom_writer_t *w, const char *name, const char *type, const char *help);
/* One sample line name{labels} value (no braces when n_labels is 0). */
void prom_sample(prom_writer_t *w, const char *name, const prom_label_t *labels, size_t n_labels,
                 double value);
/* A whole histogram family: HELP/TYPE, name_bucket (with le placed in the labels' alphabetical
 * order, as prometheus_client's multiprocess mode prints it), name_count and name_sum. */
void prom_histogram(prom_writer_t *w, const char *name, const char *help,
                    const prom_label_t *labels, size_t n_labels, const prom_histogram_t *h);
/* Writes v as Python's float repr: integral values keep ".0", others the shortest form that
 * reads back exactly; +Inf, -Inf and NaN as the format spells them. */
void prom_number(char *buf, size_t cap, double v);

#endif
