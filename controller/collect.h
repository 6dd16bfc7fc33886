/* Gathering a started run: each worker's event batches are merged strictly in sequence (go back
 * N: a duplicate or a batch past a gap is only answered with the cumulative Ack), its Done is
 * matched against what was merged, and it is released once everything up to its last batch is
 * in. On an interrupt every unfinished worker is told to stop and is drained. */
#ifndef STAMPEDE_COLLECT_H
#define STAMPEDE_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "controller.h"
#include "registry.h"
#include "stampede.pb-c.h"

/* A message from the data socket (a transport_message_fn; arg is the controller): merges the
 * next batch of a worker of the run, acks and releases the worker when it is complete. */
void collect_data(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data, size_t len,
                  int64_t rx_ns);
/* w's Done: kept, and w released when every batch it announced is merged (again when w repeats
 * its Done after our release was lost). */
void collect_done(controller_t *self, registry_worker_t *w, const Stampede__Done *done);
/* Sends Stop{cancel} with reason to every unfinished worker of the run and drains for 15 s. */
void collect_stop(controller_t *self, const char *reason);

#endif
