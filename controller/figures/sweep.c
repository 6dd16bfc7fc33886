#include "sweep.h"

#include <string.h>

#include "rng.h"

void sweep_spec_from_config(const config_sweep_t *sweep, size_t i, level_spec_t *out) {
    *out = (level_spec_t){
        .axis = sweep->axis,
        .value = i < sweep->n_levels ? sweep->levels[i] : 0,
        .rate_cap = sweep->rate_cap,
        .warmup_ns = sweep->warmup_ns,
        .snapshots = sweep->snapshots ? sweep->snapshots : 1,
        .snapshot_ns = sweep->snapshot_ns,
        .drain_ns = sweep->drain_ns,
        .repeat = sweep->repeat ? sweep->repeat : 1,
        .exclude_error_pct = sweep->exclude_error_pct,
    };
}

/* The list source's next: level next_index, whatever the previous one gave. */
static int sweep_list_next(void *arg, const level_result_t *previous, level_spec_t *out) {
    (void)previous;
    sweep_list_t *list = arg;
    if (list->next_index >= list->sweep->n_levels)
        return 0;
    sweep_spec_from_config(list->sweep, list->next_index++, out);
    return 1;
}

sweep_source_t sweep_list_source(sweep_list_t *list, const config_sweep_t *sweep) {
    *list = (sweep_list_t){.sweep = sweep};
    return (sweep_source_t){.next = sweep_list_next, .arg = list, .planned = sweep->n_levels};
}

void sweep_apply_level(config_t *cfg, const level_spec_t *spec) {
    config_scheduler_t *sched = &cfg->scheduler;
    if (spec->axis == SWEEP_AXIS_RATE) {
        if (sched->kind != SCHEDULER_RATE)
            sched->concurrency = 0; /* no cap unless the file's rate scheduler had one */
        sched->kind = SCHEDULER_RATE;
        sched->rate = spec->value;
    } else if (spec->rate_cap > 0) {
        /* At most value in flight, started no faster than the cap: constant arrivals at the cap
         * rate, each held back while every slot is busy (worker/session_schedule.c). */
        sched->kind = SCHEDULER_RATE;
        sched->rate = spec->rate_cap;
        sched->arrival = ARRIVAL_CONSTANT;
        sched->concurrency = (uint32_t)spec->value;
    } else {
        if (sched->kind != SCHEDULER_RATE)
            sched->kind = SCHEDULER_CONCURRENT;
        sched->concurrency = (uint32_t)spec->value;
    }
    cfg->warmup_ns = spec->warmup_ns;
    cfg->limits.duration_ns = spec->warmup_ns + (int64_t)spec->snapshots * spec->snapshot_ns;
    config_sweep_free(&cfg->sweep);
}

uint64_t sweep_text_seed(uint64_t text_seed, size_t level, uint32_t rep) {
    rng_t rng;
    rng_init(&rng, text_seed, RNG_STREAM_PROMPT, level, rep, RNG_FIELD_TEXT_SEED);
    uint64_t seed = rng_next_u64(&rng);
    return seed ? seed : 1; /* 0 would mean "the seed" */
}

void sweep_apply_text(config_t *cfg, const config_t *file, size_t level, uint32_t rep) {
    bool fresh = file->capacity.given ? file->capacity.fresh_text : file->sweep.fresh_text;
    cfg->text_seed = fresh ? sweep_text_seed(config_text_seed(file), level, rep) : file->text_seed;
}
