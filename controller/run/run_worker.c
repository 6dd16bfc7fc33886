#include "run_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_worker_init(run_worker_t *self, const char *name, uint64_t max_message_bytes) {
    memset(self, 0, sizeof *self);
    snprintf(self->name, sizeof self->name, "%s", name ? name : "?");
    self->max_message_bytes = max_message_bytes;
    self->index = -1;
}

void run_worker_reset(run_worker_t *self, run_worker_state_t state) {
    char name[sizeof self->name];
    memcpy(name, self->name, sizeof name);
    uint64_t max_message_bytes = self->max_message_bytes;
    free(self->held);
    run_worker_init(self, name, max_message_bytes);
    self->state = state;
}

bool run_worker_in_run(const run_worker_t *self) {
    return self->index >= 0;
}

bool run_worker_finished(const run_worker_t *self) {
    return self->state == RUN_WORKER_COMPLETE || self->state == RUN_WORKER_LOST;
}
