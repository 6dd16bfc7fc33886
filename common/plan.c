#include "plan.h"

#include <assert.h>
#include <string.h>

void plan_partition(uint64_t total, uint32_t n, uint32_t index, uint64_t *first, uint64_t *count) {
    assert(n > 0 && index < n);
    uint64_t base = total / n;
    uint64_t larger = total % n; /* the first `larger` parts get base + 1 */
    *first = index * base + (index < larger ? index : larger);
    *count = base + (index < larger ? 1 : 0);
}

uint32_t plan_slots(const config_t *cfg) {
    if (cfg->scheduler.kind == SCHEDULER_RATE)
        return 0;
    return cfg->scheduler.kind == SCHEDULER_SEQUENTIAL ? 1 : cfg->scheduler.concurrency;
}

int plan_share_for(const config_t *cfg, uint32_t n_workers, uint32_t index, plan_share_t *out) {
    if (n_workers == 0 || index >= n_workers)
        return -1;
    memset(out, 0, sizeof *out);
    out->worker_index = index;
    out->n_workers = n_workers;
    uint64_t first, count;
    if (cfg->scheduler.kind != SCHEDULER_RATE) {
        out->kind = PLAN_CONCURRENT;
        out->total_slots = plan_slots(cfg);
        plan_partition(out->total_slots, n_workers, index, &first, &count);
        out->slot_first = (uint32_t)first;
        out->slot_count = (uint32_t)count;
    } else {
        out->kind = PLAN_RATE;
        out->arrival_workers = plan_arrival_workers(cfg, n_workers);
        if (cfg->scheduler.concurrency > 0 && index < out->arrival_workers) {
            plan_partition(cfg->scheduler.concurrency, out->arrival_workers, index, &first, &count);
            out->rate_cap = (uint32_t)count; /* >= 1: there are no more parts than the cap */
        }
    }
    return 0;
}

uint32_t plan_arrival_workers(const config_t *cfg, uint32_t n_workers) {
    uint32_t cap = cfg->scheduler.concurrency;
    return cap > 0 && cap < n_workers ? cap : n_workers;
}

int plan_share_owns(const plan_share_t *share, uint64_t session) {
    if (share->kind == PLAN_RATE)
        return share->arrival_workers > 0 &&
               session % share->arrival_workers == share->worker_index;
    if (share->total_slots == 0)
        return 0;
    uint64_t slot = session % share->total_slots;
    return slot >= share->slot_first && slot < (uint64_t)share->slot_first + share->slot_count;
}

uint64_t plan_first_in_class(uint64_t residue, uint64_t modulus, uint64_t floor) {
    assert(modulus > 0);
    residue %= modulus;
    return floor + (residue + modulus - floor % modulus) % modulus;
}

void plan_split_class(uint64_t residue, uint64_t modulus, uint32_t n, uint32_t j,
                      uint64_t *out_residue, uint64_t *out_modulus) {
    assert(n > 0 && j < n && modulus > 0);
    *out_modulus = modulus * n;
    *out_residue = (residue % modulus) + (uint64_t)j * modulus;
}
