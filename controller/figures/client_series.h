/* The client's side over time for report.html: the per-second samples of the live line (in
 * flight, requests/s over the last ~5 s) kept for results.json's `client_series`. A long run
 * keeps at most CLIENT_SERIES_MAX samples: when full, every other one is dropped and from then
 * on only every second sample is kept (and so on), so memory stays bounded. */
#ifndef STAMPEDE_CLIENT_SERIES_H
#define STAMPEDE_CLIENT_SERIES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define CLIENT_SERIES_MAX 4096

typedef struct client_series client_series_t;

/* An empty series, NULL on allocation failure. The caller destroys it. */
client_series_t *client_series_new(void);
/* Frees *self_p and sets it to NULL. NULL-safe. */
void client_series_destroy(client_series_t **self_p);
/* Adds the sample taken t_s seconds into the run. */
void client_series_add(client_series_t *self, double t_s, uint32_t in_flight,
                       double requests_per_s);
/* {"t_s": [...], "in_flight": [...], "requests_per_s": [...]}: a new reference. */
json_t *client_series_json(const client_series_t *self);

#endif
