/* Loading workload.dataset's file into the replay, above config.c (the loader needs workload.c,
 * which needs config.c): config_load_file calls it, as it calls config_trace_load. */
#include "config.h"
#include "dataset.h"
#include "trace.h"

int config_dataset_load(config_t *self, config_error_t *err) {
    if (!self->workload.dataset.path)
        return 0;
    trace_t *trace = NULL;
    if (dataset_load(self, &trace, err) != 0)
        return -1;
    config_replay_set(self, trace, true);
    return 0;
}
