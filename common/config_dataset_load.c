/* Loading workload.dataset's file into the replay, above config.c (the loader needs workload.c,
 * which needs config.c): config_load_file calls it, as it calls config_trace_load. */
#include "config.h"
#include "dataset.h"
#include "trace.h"

int config_dataset_load(config_t *self, config_error_t *err) {
    config_workload_t *w = &self->workload;
    if (!w->dataset.path)
        return 0;
    trace_t *trace = NULL;
    if (dataset_load(self, &trace, err) != 0)
        return -1;
    trace_unref(&w->replay);
    w->replay = trace;
    if (self->limits.max_sessions == 0 || self->limits.max_sessions > trace->n_sessions)
        self->limits.max_sessions = trace->n_sessions;
    return 0;
}
