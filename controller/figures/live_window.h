/* A sliding window of latencies for a Prometheus Summary: a ring of per-second HDR histograms
 * (common/histogram), the one of the current second recorded into, those of the last
 * LIVE_WINDOW_SECONDS merged on demand; a slot that left the window is freed, so a series that
 * stopped (an earlier level) holds no memory. _count and _sum are over every observation. */
#ifndef STAMPEDE_LIVE_WINDOW_H
#define STAMPEDE_LIVE_WINDOW_H

#include <stdint.h>

#include "histogram.h"

#define LIVE_WINDOW_SECONDS 60

typedef struct live_window {
    histogram_t *slot[LIVE_WINDOW_SECONDS]; /* NULL: nothing recorded in that second */
    int64_t second[LIVE_WINDOW_SECONDS];    /* the second (of CLOCK_MONOTONIC) each slot holds */
    uint64_t count;                         /* every observation, windowed or not */
    double sum_s;
} live_window_t;

/* Frees every slot (the struct itself is the caller's); it is then empty. */
void live_window_clear(live_window_t *self);
/* The histogram of the second of now_ns to record into (emptied when it held an older second),
 * or NULL when out of memory. */
histogram_t *live_window_slot(live_window_t *self, int64_t now_ns);
/* Counts n observations of value_ns into slot (from live_window_slot) and the totals. */
void live_window_record(live_window_t *self, histogram_t *slot, uint64_t value_ns, uint64_t n);
/* Adds the seconds within the window ending at now_ns into into; frees the slots that left it. */
void live_window_merge(live_window_t *self, int64_t now_ns, histogram_t *into);

#endif
