#include "capacity.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct capacity {
    capacity_params_t params;
    capacity_level_t levels[CAPACITY_MAX_TRIALS]; /* sorted by level; each trial adds one at most */
    size_t n_levels;
    uint32_t trials;
    capacity_state_t state;
};

capacity_t *capacity_new(const capacity_params_t *params) {
    assert(params && params->start > 0 && params->max >= params->start && params->precision > 0);
    capacity_t *self = calloc(1, sizeof *self);
    if (self)
        self->params = *params;
    return self;
}

void capacity_destroy(capacity_t **self_p) {
    assert(self_p);
    free(*self_p);
    *self_p = NULL;
}

static bool capacity_passes(const capacity_level_t *l) {
    return l->passes > l->fails;
}

/* The lowest failing level and the highest passing one below it (each NULL when none). */
static void capacity_bracket(const capacity_t *self, const capacity_level_t **lo,
                             const capacity_level_t **hi) {
    *lo = *hi = NULL;
    for (size_t i = 0; i < self->n_levels && !*hi; i++) {
        if (capacity_passes(&self->levels[i]))
            *lo = &self->levels[i];
        else
            *hi = &self->levels[i];
    }
}

static capacity_level_t *capacity_find(capacity_t *self, double level) {
    for (size_t i = 0; i < self->n_levels; i++)
        if (self->levels[i].level == level)
            return &self->levels[i];
    return NULL;
}

/* The smallest level worth trying: 1 for whole numbers, else the precision (absolute) or a
 * thousandth of the start (relative). */
static double capacity_floor(const capacity_t *self) {
    const capacity_params_t *p = &self->params;
    if (p->integer)
        return 1;
    return p->precision_relative ? p->start / 1000 : p->precision;
}

/* The bracket width at which bisection stops, around frontier lo. */
static double capacity_target(const capacity_t *self, double lo) {
    const capacity_params_t *p = &self->params;
    double target = p->precision_relative ? p->precision / 100 * lo : p->precision;
    return p->integer && target < 1 ? 1 : target;
}

static bool capacity_wants_repeat(const capacity_t *self, const capacity_level_t *l) {
    return l && l->passes + l->fails < 1 + self->params.repeat_near_boundary;
}

/* Probing, bisecting or confirming: the next level, or false with the state set. */
static bool capacity_decide(capacity_t *self, double *level) {
    const capacity_params_t *p = &self->params;
    const capacity_level_t *lo, *hi;
    capacity_bracket(self, &lo, &hi);
    double factor = p->expansion > 1 ? p->expansion : 2;
    if (!hi) { /* everything tried passed: multiply by the expansion (double), up to max */
        if (lo->level < p->max) {
            double up =
                p->integer ? fmax(floor(lo->level * factor), lo->level + 1) : lo->level * factor;
            *level = fmin(up, p->max);
            return true;
        }
        if (capacity_wants_repeat(self, lo)) {
            *level = lo->level;
            return true;
        }
        self->state = CAPACITY_MAX_PASSES;
        return false;
    }
    if (!lo) { /* nothing passed below the lowest failure: divide by the expansion (halve) */
        double half =
            p->integer ? fmin(floor(hi->level / factor), hi->level - 1) : hi->level / factor;
        if (half >= capacity_floor(self)) {
            *level = half;
            return true;
        }
        if (capacity_wants_repeat(self, hi)) {
            *level = hi->level;
            return true;
        }
        self->state = CAPACITY_NONE_PASSES;
        return false;
    }
    if (hi->level - lo->level > capacity_target(self, lo->level)) {
        double mid = (lo->level + hi->level) / 2;
        if (p->integer)
            mid = floor(mid);
        if (mid > lo->level) {
            *level = mid;
            return true;
        }
    }
    const capacity_level_t *repeat = capacity_wants_repeat(self, lo)   ? lo
                                     : capacity_wants_repeat(self, hi) ? hi
                                                                       : NULL;
    if (repeat) {
        *level = repeat->level;
        return true;
    }
    self->state = CAPACITY_FOUND;
    return false;
}

bool capacity_next(capacity_t *self, double *level) {
    if (self->state != CAPACITY_SEARCHING)
        return false;
    uint32_t max_trials = self->params.max_trials ? self->params.max_trials : CAPACITY_MAX_TRIALS;
    if (self->trials >= max_trials || self->trials >= CAPACITY_MAX_TRIALS) {
        self->state = CAPACITY_TRIALS_SPENT;
        return false;
    }
    if (self->n_levels == 0) {
        *level = self->params.start;
        return true;
    }
    return capacity_decide(self, level);
}

void capacity_report(capacity_t *self, double level, bool pass, const char *binding) {
    capacity_level_t *l = capacity_find(self, level);
    if (!l) {
        assert(self->n_levels < CAPACITY_MAX_TRIALS);
        size_t at = 0;
        while (at < self->n_levels && self->levels[at].level < level)
            at++;
        memmove(&self->levels[at + 1], &self->levels[at],
                (self->n_levels - at) * sizeof self->levels[0]);
        self->n_levels++;
        l = &self->levels[at];
        *l = (capacity_level_t){.level = level};
    }
    self->trials++;
    if (pass)
        l->passes++;
    else
        l->fails++;
    snprintf(l->binding, sizeof l->binding, "%s", binding ? binding : "");
}

void capacity_summary(const capacity_t *self, capacity_summary_t *out) {
    capacity_bracket(self, &out->frontier, &out->first_fail);
    out->state = self->state;
    out->trials = self->trials;
}

size_t capacity_levels(const capacity_t *self) {
    return self->n_levels;
}

const capacity_level_t *capacity_level(const capacity_t *self, size_t i) {
    assert(i < self->n_levels);
    return &self->levels[i];
}

const char *capacity_state_name(capacity_state_t state) {
    static const char *const names[] = {"searching", "found", "max_passes", "none_passes",
                                        "trials_spent"};
    return (unsigned)state < 5 ? names[state] : "?";
}
