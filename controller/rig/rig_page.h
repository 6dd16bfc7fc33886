/* The rig's read-only page (`stampede serve --page HOST:PORT`, docs/rig.md "The page"): plain
 * HTML with inline SVG and no external fetch, like report.html: the queue, every run in progress
 * with its live figures and a chart of its request rate, and the archive newest first, filtered
 * by user, group and model from the query string, each row linking to the run's report.html. */
#ifndef STAMPEDE_RIG_PAGE_H
#define STAMPEDE_RIG_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "archive.h"
#include "buffer.h"
#include "merge.h"

#define RIG_PAGE_SAMPLES 600 /* the live chart's last seconds */

/* A run in progress as the page shows it, sampled once a second. */
typedef struct rig_page_live {
    int64_t id; /* 0: no run */
    char user[64], group[64];
    char phase[160]; /* a sweep's level and repetition ("level 1/3 concurrency 4 rep 1/2"), or "" */
    live_t last;
    double t_s[RIG_PAGE_SAMPLES], requests_per_s[RIG_PAGE_SAMPLES];
    size_t n; /* samples kept (the oldest dropped past RIG_PAGE_SAMPLES) */
} rig_page_live_t;

/* Starts a run's samples (id 0: none in progress). */
void rig_page_live_begin(rig_page_live_t *self, int64_t id, const char *user, const char *group);
/* Adds one second's figures. */
void rig_page_live_add(rig_page_live_t *self, const live_t *live);
/* Appends the page for query (the part after '?', or "") to out, with the n runs in progress of
 * live (oldest first). 200, or 500 on no memory. */
int rig_page_render(archive_t *archive, const rig_page_live_t *const *live, size_t n,
                    const char *query, size_t query_len, buffer_t *out);

#endif
