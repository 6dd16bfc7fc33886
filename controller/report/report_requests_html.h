/* report.html's per-request charts of a single run, from DIR/requests.jsonl (--trace, read by
 * report_requests): requests in flight, TTFT, ITL and E2E over time with the live window's
 * p50 and p99, TTFT against prompt length, ITL against token position. */
#ifndef STAMPEDE_REPORT_REQUESTS_HTML_H
#define STAMPEDE_REPORT_REQUESTS_HTML_H

#include <stdbool.h>

#include "buffer.h"

/* Appends the "Requests over time" and "Latency against the request" sections for dir's trace
 * to out, or one line saying how to get them (sweep: the document is a sweep's, whose traces
 * are its repetitions'). Returns the number of charts drawn. */
int report_requests_html(const char *dir, bool sweep, buffer_t *out);

#endif
