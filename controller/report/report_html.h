/* report.html: one self-contained page (inline CSS and SVG, no script, no external URL) with
 * the charts of a run's or a sweep's results.json: latency percentiles, throughput and errors
 * against the level, latency CDFs, time series, decode overlap and per-role bars. */
#ifndef STAMPEDE_REPORT_HTML_H
#define STAMPEDE_REPORT_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "buffer.h"

/* Appends the page for the results document root to out; a single run's per-request charts come
 * from dir/requests.jsonl when it exists (dir NULL: none). Returns the number of charts drawn
 * (each with at least one data mark), or -1 when root is not a results document with levels. */
int report_html_render(const json_t *root, const char *dir, buffer_t *out);

/* The page for root written to out (report_cmd's render signature; dir names the files in err). 0
 * ok; -1 with the reason in err. */
int report_html_emit(const json_t *root, const char *dir, FILE *out, char *err, size_t err_len);

#endif
