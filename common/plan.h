/* How a run is split over workers: pure arithmetic on the config, no sockets. The controller
 * computes each worker's share; a worker's session executor runs exactly the sessions its share
 * owns (plan_share_owns).
 *
 * concurrent: the C slots are partitioned into contiguous ranges (each worker gets floor(C/W)
 *   or ceil(C/W), the first C mod W workers the larger count). Global slot s runs sessions
 *   s, s+C, s+2C, ... one after another, so session i belongs to slot i mod C and to the worker
 *   whose range holds that slot. Workers beyond C get no slot and stay idle.
 * rate: there is one global seeded arrival sequence. Without a cap, arrival (= session) i belongs
 *   to worker i mod W. With a cap C on sessions in flight, only A = min(W, C) workers take
 *   arrivals: arrival i belongs to worker i mod A, and C is partitioned over those A workers like
 *   the slots (each gets floor(C/A) or ceil(C/A), at least 1), so the caps sum to exactly C. The
 *   workers beyond A get no arrival and stay idle.
 * sequential: planned as concurrent with a single slot, whatever the worker count: slot 0 runs
 *   sessions 0, 1, 2, ... one after another, all on worker 0; the other workers stay idle. */
#ifndef STAMPEDE_PLAN_H
#define STAMPEDE_PLAN_H

#include <stdint.h>

#include "config.h"

typedef enum { PLAN_CONCURRENT, PLAN_RATE } plan_kind_t;

typedef struct plan_share {
    uint32_t worker_index; /* 0-based */
    uint32_t n_workers;
    plan_kind_t kind;
    uint32_t total_slots; /* concurrent: C over the whole run (0 in rate mode) */
    uint32_t slot_first;  /* concurrent: first global slot of this worker */
    uint32_t slot_count;  /* concurrent: slots of this worker; 0 = idle */
    uint32_t rate_cap;    /* rate: this worker's share of the cap on sessions in flight; 0 = none
                             (or, beyond arrival_workers, no arrivals at all) */
    uint32_t arrival_workers; /* rate: the workers that take arrivals, indexes 0..this-1 */
} plan_share_t;

/* Splits total into n contiguous parts and gives part `index`: *first and *count, each count
 * floor(total/n) or ceil(total/n) (the first total mod n parts get the larger), summing to total.
 */
void plan_partition(uint64_t total, uint32_t n, uint32_t index, uint64_t *first, uint64_t *count);
/* Global slots of a slot-based plan: concurrency for concurrent, 1 for sequential, 0 for rate. */
uint32_t plan_slots(const config_t *cfg);
/* The share of worker `index` among n_workers for this config. 0 ok; -1 when n_workers is 0 or
 * index >= n_workers. */
int plan_share_for(const config_t *cfg, uint32_t n_workers, uint32_t index, plan_share_t *out);
/* Rate mode: how many of n_workers take arrivals (all without a cap, else min(n_workers, cap)). */
uint32_t plan_arrival_workers(const config_t *cfg, uint32_t n_workers);
/* Whether `share` owns `session` (docs/architecture.md, "Session ownership"). */
int plan_share_owns(const plan_share_t *share, uint64_t session);

/* Rebalancing (docs/protocol.md "Worker loss"). A worker's load is a set of residue classes of
 * session indexes: concurrent, one class (slot, C) per slot; rate, one class (index, A) of the
 * arrival sequence. A lost worker's classes go to the survivors from a floor no session of its
 * can reach (the grant it was given): its k slots over S survivors as plan_partition(k, S, j);
 * each of its arrival classes split S ways by plan_split_class.
 *
 * The first session index >= floor in the class residue mod modulus (modulus > 0). */
uint64_t plan_first_in_class(uint64_t residue, uint64_t modulus, uint64_t floor);
/* The class residue mod modulus split over n parts: part j is (residue + j * modulus) mod
 * (modulus * n), so the n parts together hold exactly the class. */
void plan_split_class(uint64_t residue, uint64_t modulus, uint32_t n, uint32_t j,
                      uint64_t *out_residue, uint64_t *out_modulus);

#endif
