/* Fetches Prometheus /metrics pages without blocking: one curl multi handle driven from a loop_t
 * (common/curl_loop), each GET bounded by a timeout, each page parsed (common/prom_parse) and
 * handed to a callback. A dead or slow endpoint costs at most the timeout, on no one's path. */
#ifndef STAMPEDE_SCRAPE_H
#define STAMPEDE_SCRAPE_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "prom_parse.h"

/* The largest page read; a longer one fails the scrape (a /metrics page is a few hundred KiB). */
#define SCRAPE_MAX_PAGE (32u << 20)

typedef struct scrape scrape_t;

/* Called once per GET on the loop thread: page (the caller of scrape_get now owns it; NULL on
 * failure, then error says why, e.g. "timed out after 2000 ms", "HTTP 404"), and the instants the
 * GET started and ended (CLOCK_MONOTONIC ns). */
typedef void (*scrape_done_fn)(void *arg, prom_page_t *page, const char *error, int64_t start_ns,
                               int64_t end_ns);

/* A scraper on loop (which must outlive it) whose GETs time out after timeout_ns; NULL when out
 * of memory. The caller destroys it. */
scrape_t *scrape_new(loop_t *loop, int64_t timeout_ns);
/* Abandons the GETs in flight (their callbacks are not called), frees, sets *self_p to NULL. Not
 * from inside a callback. */
void scrape_destroy(scrape_t **self_p);
/* Starts a GET of url (copied); fn reports it later, from the loop, even when it cannot start.
 * 0 started, -1 out of memory (fn is not called). */
int scrape_get(scrape_t *self, const char *url, scrape_done_fn fn, void *arg);

#endif
