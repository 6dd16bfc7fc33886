#include "config_scheduler.h"

#include <stddef.h>

const char *const config_scheduler_kind_names[] = {"concurrent", "rate", "sequential", NULL};
const char *const config_arrival_names[] = {"poisson", "constant", "gamma", NULL};

const char *config_scheduler_kind_name(config_scheduler_kind_t kind) {
    return (unsigned)kind < 3 ? config_scheduler_kind_names[kind] : "?";
}

const char *config_arrival_name(config_arrival_t arrival) {
    return (unsigned)arrival < 3 ? config_arrival_names[arrival] : "?";
}
