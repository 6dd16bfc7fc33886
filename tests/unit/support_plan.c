/* Who owns a session, computed from the configuration alone, as the check of plan_share_owns
 * (test_plan, test_session). */
#include "support.h"

#include <assert.h>

#include "plan.h"

/* Inverse of plan_partition: which part holds position `pos` (< total). */
static uint32_t plan_part_of(uint64_t total, uint32_t n, uint64_t pos) {
    uint64_t base = total / n;
    uint64_t larger = total % n;
    uint64_t boundary = larger * (base + 1);
    if (pos < boundary)
        return (uint32_t)(pos / (base + 1));
    return (uint32_t)(larger + (pos - boundary) / base); /* base > 0 here: pos < total */
}

uint32_t plan_session_owner(const config_t *cfg, uint32_t n_workers, uint64_t session) {
    assert(n_workers > 0);
    if (cfg->scheduler.kind == SCHEDULER_RATE)
        return (uint32_t)(session % plan_arrival_workers(cfg, n_workers));
    uint32_t slots = plan_slots(cfg);
    if (slots == 0)
        return 0;
    return plan_part_of(slots, n_workers, session % slots);
}
