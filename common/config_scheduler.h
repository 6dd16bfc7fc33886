/* The `scheduler:` section of a workload file: sessions kept in flight, or started at a rate. */
#ifndef STAMPEDE_CONFIG_SCHEDULER_H
#define STAMPEDE_CONFIG_SCHEDULER_H

#include <stdint.h>

/* sequential: one session in flight over the whole fleet, the next starting when the previous
 * one completes (only worker 0 runs). */
typedef enum { SCHEDULER_CONCURRENT, SCHEDULER_RATE, SCHEDULER_SEQUENTIAL } config_scheduler_kind_t;
typedef enum { ARRIVAL_POISSON, ARRIVAL_CONSTANT, ARRIVAL_GAMMA } config_arrival_t;

typedef struct config_scheduler {
    config_scheduler_kind_t kind;
    uint32_t concurrency; /* concurrent: sessions in flight; rate: cap on sessions in flight (0 =
                             none); sequential: always 1 */
    int64_t ramp_up_ns;   /* concurrent: slot k starts at k * ramp_up / concurrency */
    double rate;          /* rate: sessions per second */
    config_arrival_t arrival; /* rate: default poisson */
    double arrival_cv;        /* rate, gamma arrivals: coefficient of variation of gaps */
} config_scheduler_t;

/* The names as written in the file, NULL-terminated, in enum order. */
extern const char *const config_scheduler_kind_names[];
extern const char *const config_arrival_names[];
/* "concurrent", "rate", "sequential"; "poisson", "constant", "gamma". */
const char *config_scheduler_kind_name(config_scheduler_kind_t kind);
const char *config_arrival_name(config_arrival_t arrival);

#endif
