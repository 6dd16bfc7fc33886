/* The fits client figures alone allow (a sweep measured without the server's /metrics, or the
 * reference reports' tables): the TTFT knee and max_num_seqs from the batch past it, and the
 * TTFT's overhead and prefill rate from TTFT against prompt tokens when the prompts' sizes vary.
 * The TPOT curve is calibrate.c's, fed by the batch Little's law gives (calibrate_levels.c). */
#include "calibrate_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Past the knee, TTFT is this many times the input's lowest level's: requests wait for a slot. */
#define CAL_KNEE_TTFT_RATIO 3.0
/* A level with more errors than this (%) is left out of the batch estimate: timed-out requests
 * hold a client's slot without decoding. Of the rest, a closed loop's first level past the knee
 * says max_num_seqs: its queue is the shortest, so the TTFT's spread disturbs Little's law least.
 */
#define CAL_KNEE_MAX_ERROR_PCT 5.0

/* The lowest level of l's input. */
static const cal_level_t *cal_lowest(const cal_t *self, const cal_level_t *l) {
    const cal_level_t *low = l;
    for (size_t i = 0; i < self->n; i++)
        if (self->levels[i].input == l->input && self->levels[i].c < low->c)
            low = &self->levels[i];
    return low;
}

/* The batch a decoding request sees, from the mean number decoding (Little's law): itself and
 * the others, E[W^2] / E[W] = mean + 1 - mean / c when each of c clients decodes independently
 * (binomial), mean + 1 for a rate level's open arrivals (Poisson). */
static double cal_batch_seen(const cal_level_t *l) {
    double mean = l->batch;
    return isnan(l->rate) && l->c > 0 ? mean + 1 - mean / l->c : mean + 1;
}

void cal_client_mark_saturated(cal_t *self) {
    for (size_t i = 0; i < self->n; i++) {
        cal_level_t *l = &self->levels[i];
        if (l->server)
            continue;
        double knee = CAL_KNEE_TTFT_RATIO * cal_lowest(self, l)->ttft_ms;
        /* sustained: this level and every higher one of the input past it (a lone spike, as the
         * Phase 0 report's c = 110, is not a knee) */
        bool past = l->ttft_ms > knee;
        for (size_t j = 0; j < self->n && past; j++) {
            const cal_level_t *h = &self->levels[j];
            if (h->input == l->input && h->c > l->c && !h->server)
                past = h->ttft_ms > knee;
        }
        l->saturated = past;
        double tail_knee = CAL_KNEE_TTFT_RATIO * cal_lowest(self, l)->ttft_p95_ms;
        l->queued_tail = !past && l->ttft_p95_ms > tail_knee;
        if (!past) /* below the knee the batch varies: what a decoding request sees */
            l->batch = cal_batch_seen(l);
    }
    for (size_t i = 0; i < self->n; i++) {
        cal_level_t *l = &self->levels[i];
        bool first = l->queued_tail;
        for (size_t j = 0; j < self->n && first; j++) {
            const cal_level_t *below = &self->levels[j];
            first = !(below->input == l->input && below->queued_tail && below->c < l->c);
        }
        l->queue_begins = first;
    }
}

void cal_client_pin_saturated(cal_t *self) {
    const cal_param_t *capacity = &self->p[P_MAX_SEQS];
    if (!capacity->fitted)
        return;
    for (size_t i = 0; i < self->n; i++) {
        cal_level_t *l = &self->levels[i];
        /* the clients past the capacity wait, so the engine runs full; open arrivals' queue
         * comes and goes, so a rate level keeps Little's law's batch */
        if (l->saturated && !l->server && isnan(l->rate))
            l->batch = capacity->value;
    }
}

static int cal_double_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cal_client_fit_max_seqs(cal_t *self) {
    double batch[CAL_MAX_LEVELS], seen = 0;
    bool used[CAL_MAX_LEVELS] = {false};
    size_t n = 0, clients = 0, first_at = 0, first_level = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (l->server)
            continue;
        clients++;
        seen = fmax(seen, l->batch);
        if (!l->saturated || l->error_pct > CAL_KNEE_MAX_ERROR_PCT)
            continue;
        if (n == 0 || l->c < self->levels[first_level].c) {
            first_at = n;
            first_level = i;
        }
        batch[n++] = l->batch;
        used[i] = true;
    }
    cal_param_t *p = &self->p[P_MAX_SEQS];
    if (clients == 0 || p->fitted)
        return;
    const cal_level_t *tail = NULL;
    for (size_t i = 0; i < self->n; i++)
        if (self->levels[i].queued_tail && (!tail || self->levels[i].c < tail->c))
            tail = &self->levels[i];
    if (n == 0) {
        char said[240] = "";
        if (tail)
            snprintf(said, sizeof said,
                     "; some requests queued from %s (TTFT p95): a capacity (max_num_seqs or "
                     "the KV pool) binds near %.0f sequences there",
                     tail->name, tail->batch);
        snprintf(p->quality, sizeof p->quality,
                 "not fitted: no sustained TTFT knee (p50 over %.0fx the lowest level's) in the "
                 "client figures; about %.0f decoded at once (Little's law)%s; the base "
                 "profile's value is kept when larger",
                 CAL_KNEE_TTFT_RATIO, seen, said);
        if (p->value < round(seen))
            p->value = round(seen);
        return;
    }
    double first = batch[first_at];
    qsort(batch, n, sizeof *batch, cal_double_cmp);
    /* open arrivals past capacity queue without bound, so the fullest level says it best; a
     * closed loop's first level past the knee has the shortest queue (CAL_KNEE_MAX_ERROR_PCT) */
    bool open = !isnan(self->levels[first_level].rate);
    double value = open ? batch[n - 1] : first;
    char quality[480], levels[400];
    snprintf(quality, sizeof quality,
             "requests decoding at the %s level past the TTFT knee (Little's law: output "
             "tokens/s x TPOT, or in flight x (E2E - TTFT) / E2E): %.1f; %.1f to %.1f over %zu "
             "levels past it, an estimate",
             open ? "fullest rate" : "first", value, batch[0], batch[n - 1], n);
    cal_levels_text(self, used, levels, sizeof levels);
    cal_set(p, round(value), quality, levels);
}

/* One point of TTFT against prompt tokens: the uncached prompt, and the TTFT less the step in
 * progress when the request came (half a step on average) and the step that carries its prefill
 * (a decode step: TPOT, times the tokens a step keeps under speculative decoding), which leaves
 * the overhead + the prompt's prefill. */
typedef struct cal_ttft_point {
    double uncached, first_token_ms;
} cal_ttft_point_t;

/* Least squares y = a + b x. */
static void cal_line(const cal_ttft_point_t *pt, size_t n, double *a, double *b) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sx += pt[i].uncached;
        sy += pt[i].first_token_ms;
        sxx += pt[i].uncached * pt[i].uncached;
        sxy += pt[i].uncached * pt[i].first_token_ms;
    }
    double d = n * sxx - sx * sx;
    *b = d > 0 ? (n * sxy - sx * sy) / d : NAN;
    *a = (sy - *b * sx) / n;
}

void cal_client_fit_first_token(cal_t *self) {
    cal_ttft_point_t pt[CAL_MAX_LEVELS];
    bool used[CAL_MAX_LEVELS] = {false};
    size_t n = 0, clients = 0;
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (l->server)
            continue;
        clients++;
        if (!l->prompt_known || l->saturated || !cal_lowest_of_input(self, l))
            continue;
        used[i] = true;
        double steps = 1.5 * l->tpot_ms * cal_tokens_per_step(self->base);
        /* a graph's roles are points of their own (their prompts differ), the level's hit rate
         * taken out of each; else the level is one point */
        double uncached_share = l->prompt > 0 ? 1 - l->hits / l->prompt : 1;
        for (size_t r = 0; l->n_roles >= 2 && r < l->n_roles && n < CAL_MAX_LEVELS; r++)
            pt[n++] =
                (cal_ttft_point_t){l->role_prompt[r] * uncached_share, l->role_ttft_ms[r] - steps};
        if (l->n_roles < 2 && n < CAL_MAX_LEVELS)
            pt[n++] = (cal_ttft_point_t){l->prompt - l->hits, l->ttft_ms - steps};
    }
    for (size_t k = 0; k < n; k++) {
        lo = fmin(lo, pt[k].uncached);
        hi = fmax(hi, pt[k].uncached);
    }
    cal_param_t *overhead = &self->p[P_OVERHEAD], *prefill = &self->p[P_PREFILL];
    if (clients == 0 || overhead->fitted)
        return;
    char quality[480], levels[400];
    cal_levels_text(self, used, levels, sizeof levels);
    if (n == 0) {
        snprintf(overhead->quality, sizeof overhead->quality,
                 "not fitted: the client figures carry no prompt token counts "
                 "(roles[].prompt_tokens_mean), so TTFT's overhead and prefill cannot be told "
                 "apart; the base profile's");
        snprintf(prefill->quality, sizeof prefill->quality, "%s", overhead->quality);
        return;
    }
    double a, b;
    cal_line(pt, n, &a, &b);
    bool spread = n >= 2 && hi >= 1.3 * lo;
    if (spread && b > 0) {
        char origin[96] = "";
        if (a < 0) { /* an overhead below 0 is noise about a small one: the line through 0 */
            double sxy = 0, sxx = 0;
            for (size_t k = 0; k < n; k++) {
                sxy += pt[k].uncached * pt[k].first_token_ms;
                sxx += pt[k].uncached * pt[k].uncached;
            }
            snprintf(origin, sizeof origin, "; its intercept (%.1f ms) below 0: through 0", a);
            a = 0;
            b = sxy / sxx;
        }
        snprintf(quality, sizeof quality,
                 "TTFT - 1.5 steps = overhead + uncached prompt / rate, a line over %zu points "
                 "(the lowest levels, or their roles; uncached prompts %.0f to %.0f tokens)%s",
                 n, lo, hi, origin);
        cal_set(prefill, 1e3 / b, quality, levels);
        cal_set(overhead, a, quality, levels);
        return;
    }
    double rate = self->base->prefill_tokens_per_s, sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += pt[i].first_token_ms - (rate > 0 ? pt[i].uncached / rate * 1e3 : 0);
    snprintf(quality, sizeof quality,
             "TTFT - 1.5 steps - the prompt's prefill at the base's %.0f tokens/s, mean of %zu "
             "points (the rate is not told apart from the overhead)",
             rate, n);
    cal_set(overhead, fmax(0, sum / n), quality, levels);
    if (spread)
        snprintf(prefill->quality, sizeof prefill->quality,
                 "not fitted: TTFT does not rise with the prompt (%.0f to %.0f tokens) at the "
                 "lowest levels; the base profile's",
                 lo, hi);
    else
        snprintf(prefill->quality, sizeof prefill->quality,
                 "not fitted: one prompt size (%.0f tokens) at the lowest levels: TTFT's overhead "
                 "and per-token prefill cannot be told apart; the base profile's",
                 lo);
}
