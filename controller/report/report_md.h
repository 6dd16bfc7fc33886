/* report.md: a run's or a sweep's results.json as the Markdown report of the reference sweep
 * reports (../shared/reference/sweep-round-robin-eagle3-50-160.md): methodology, deployment,
 * the per-level TPOT, TTFT, latency, error and RPS tables, the saturation points, the scaling
 * fit, roles and sessions, the client-vs-server gap and the Reference Data (JSON). Everything
 * comes from the document, so rendering the same file twice gives the same bytes. */
#ifndef STAMPEDE_REPORT_MD_H
#define STAMPEDE_REPORT_MD_H

#include <jansson.h>
#include <stdio.h>

/* Writes the Markdown of root (a results.json document) to out. */
void report_md_render(const json_t *root, FILE *out);

#endif
