/* `stampede calibrate`: the fits from server figures (the TPOT curve, which client figures feed
 * too), the profile file and the table; the levels are read by calibrate_levels.c, the fits only
 * client figures allow are calibrate_client.c's and the context limit calibrate_context.c's. */
#include "calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate_fit.h"
#include "outfile.h"

/* Tokens a running sequence holds beyond its context on average: half a 16-token block. */
#define CAL_HALF_BLOCK 8.0

/* y = k x through the origin: k, and R^2 against that line. */
static double cal_through_origin(const double *x, const double *y, size_t n, double *r2) {
    double sxy = 0, sxx = 0, syy = 0, sse = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += x[i] * y[i];
        sxx += x[i] * x[i];
        syy += y[i] * y[i];
    }
    double k = sxx > 0 ? sxy / sxx : NAN;
    for (size_t i = 0; i < n; i++)
        sse += (y[i] - k * x[i]) * (y[i] - k * x[i]);
    *r2 = syy > 0 ? 1 - sse / syy : NAN;
    return k;
}

/* Parameter `which` is 1 / k of y = k x through the origin over the n levels marked used (rounded
 * when whole), its quality "what: R^2 r, n levels". */
static void cal_set_inverse_slope(cal_t *self, int which, const double *x, const double *y,
                                  size_t n, const bool *used, const char *what, bool whole) {
    if (n == 0)
        return;
    double r2, k = cal_through_origin(x, y, n, &r2);
    if (!(k > 0))
        return;
    char quality[480], levels[400];
    snprintf(quality, sizeof quality, "%s: R^2 %.4f, %zu levels", what, r2, n);
    cal_levels_text(self, used, levels, sizeof levels);
    cal_set(&self->p[which], whole ? round(1 / k) : 1 / k, quality, levels);
}

/* ttft_overhead: the server's TTFT less its queue and prefill, on average. */
static void cal_fit_overhead(cal_t *self) {
    double sum = 0, sq = 0;
    size_t n = 0;
    bool used[CAL_MAX_LEVELS] = {false};
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (!l->server || isnan(l->ttft_ms) || isnan(l->queue_ms))
            continue;
        double v = l->ttft_ms - l->queue_ms - l->prefill_ms;
        sum += v;
        sq += v * v;
        n++;
        used[i] = true;
    }
    if (n == 0)
        return;
    double mean = sum / n, sd = n > 1 ? sqrt(fmax(0, (sq - n * mean * mean) / (n - 1))) : 0;
    char quality[480], levels[400];
    snprintf(quality, sizeof quality,
             "server TTFT - queue - prefill, mean of %zu levels, sd %.3g ms", n, sd);
    cal_levels_text(self, used, levels, sizeof levels);
    cal_set(&self->p[P_OVERHEAD], mean > 0 ? mean : 0, quality, levels);
}

/* prefill tokens/s: the first token's step less a decode step is the prompt's own prefill, so
 * prefill - TPOT = uncached prompt tokens / rate, through the origin over the lowest level of each
 * input (at higher concurrency more prompts share the first token's step). */
static void cal_fit_prefill(cal_t *self) {
    double x[CAL_MAX_LEVELS], y[CAL_MAX_LEVELS];
    bool used[CAL_MAX_LEVELS] = {false};
    size_t n = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        double uncached = l->prompt - l->hits;
        if (!l->server || l->saturated || !(uncached > 0) || !cal_lowest_of_input(self, l))
            continue;
        x[n] = uncached;
        y[n++] = (l->prefill_ms - l->tpot_ms) / 1e3;
        used[i] = true;
    }
    cal_set_inverse_slope(self, P_PREFILL, x, y, n, used,
                          "(prefill - TPOT) against uncached prompt tokens at each input's lowest "
                          "level, through 0",
                          false);
}

/* The share of the engine's time a level spends on prefill (uncached prompt tokens/s over the
 * rate): what a decode step is slowed by. */
static double cal_prefill_share(const cal_t *self, const cal_level_t *l, double rate) {
    if (!(rate > 0))
        return 0;
    double share = (l->prompt_total - l->hits_total) / l->window_s / rate;
    return share < 0.9 ? share : 0.9;
}

/* The prefill rate to take prefill's share out with: the fitted one; with client figures the
 * base's too (they cannot fit it unless the prompts' sizes vary). */
static double cal_prefill_rate(const cal_t *self, const cal_level_t *l) {
    return self->p[P_PREFILL].fitted || !l->server ? self->p[P_PREFILL].value : 0;
}

/* The decode step of a level, its TPOT with prefill's share of the engine's time and the base's
 * speculative decoding taken out: what tpot_base x batch^alpha models. */
static double cal_decode_step_ms(const cal_t *self, const cal_level_t *l) {
    double share = cal_prefill_share(self, l, cal_prefill_rate(self, l));
    double step = l->tpot_ms * cal_tokens_per_step(self->base) * (1 - share);
    return step - self->base->spec_tokens * self->base->spec_draft_ms;
}

/* SSE of step = b W^alpha with b by least squares for this alpha (through the origin). */
static double cal_step_sse(const double *w, const double *step, size_t n, double alpha, double *b) {
    double sxx = 0, sxy = 0, sse = 0;
    for (size_t i = 0; i < n; i++) {
        double x = pow(w[i], alpha);
        sxx += x * x;
        sxy += x * step[i];
    }
    *b = sxx > 0 ? sxy / sxx : 0;
    for (size_t i = 0; i < n; i++) {
        double e = step[i] - *b * pow(w[i], alpha);
        sse += e * e;
    }
    return sse;
}

/* TPOT base and exponent: decode step = tpot_base x batch^alpha, alpha by a fine search, the base
 * by least squares. A fixed part of the step (the mock's step_fixed) is not told apart from
 * these two by a sweep (the fit trades them), so it is left at 0 and folds into them. -1, said
 * on stderr, when the levels cannot give a curve. */
static int cal_fit_tpot(cal_t *self) {
    double w[CAL_MAX_LEVELS], step[CAL_MAX_LEVELS];
    bool used[CAL_MAX_LEVELS] = {false};
    size_t n = 0, distinct = 0, tails = 0, begins = 0, pinned = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (l->queued_tail && !l->queue_begins) { /* its batch is unknown: between the
                                                   * capacity and the concurrency */
            tails++;
            continue;
        }
        begins += l->queue_begins;
        pinned += l->saturated && !l->server && isnan(l->rate) && self->p[P_MAX_SEQS].fitted;
        bool is_new = true;
        for (size_t j = 0; j < n; j++)
            is_new = is_new && fabs(w[j] - l->batch) > 0.5;
        distinct += is_new;
        w[n] = l->batch;
        step[n++] = cal_decode_step_ms(self, l);
        used[i] = true;
    }
    if (distinct < 2) {
        fprintf(stderr, "calibrate: the levels ran one batch size only (running gauge, or in "
                        "flight by Little's law): TPOT against the batch needs two or more\n");
        return -1;
    }
    double best = INFINITY, best_alpha = 1, b = 0;
    for (double alpha = 0.01; alpha <= 2.0 + 1e-9; alpha += 0.001) {
        double a1, sse = cal_step_sse(w, step, n, alpha, &a1);
        if (sse < best) {
            best = sse;
            best_alpha = alpha;
            b = a1;
        }
    }
    if (!(b > 0)) { /* the mock refuses a step <= 0: say why instead of writing it */
        fprintf(stderr,
                "calibrate: TPOT x the %.3g tokens a step keeps, less the draft model's %.3g ms "
                "(--base %s's speculative decoding), leaves no decode step: the levels' TPOT is "
                "too low for that base\n",
                cal_tokens_per_step(self->base),
                self->base->spec_tokens * self->base->spec_draft_ms, self->base->name);
        return -1;
    }
    double mean = 0, sst = 0, sse = 0;
    for (size_t i = 0; i < n; i++)
        mean += step[i] / n;
    for (size_t i = 0; i < n; i++) {
        double e = step[i] - b * pow(w[i], best_alpha);
        sst += (step[i] - mean) * (step[i] - mean);
        sse += e * e;
    }
    char quality[480], levels[400];
    snprintf(quality, sizeof quality,
             "decode step = tpot_base x batch^alpha: R^2 %.4f over %zu levels (%zu batch "
             "sizes)%s%s%s%s%s",
             sst > 0 ? 1 - sse / sst : 1.0, n, distinct,
             self->levels[0].server ? "" : "; client TPOT, batch by Little's law",
             pinned ? ", past the knee max_num_seqs" : "",
             begins ? "; the first level where some requests queued (TTFT p95) kept" : "",
             tails ? "; the levels above it left out" : "",
             self->base->spec_tokens ? "; the base's speculative decoding taken out" : "");
    cal_levels_text(self, used, levels, sizeof levels);
    cal_set(&self->p[P_TPOT_BASE], b, quality, levels);
    cal_set(&self->p[P_ALPHA], best_alpha, quality, levels);
    self->p[P_STEP_FIXED].value = 0;
    snprintf(self->p[P_STEP_FIXED].quality, sizeof self->p[P_STEP_FIXED].quality,
             "0 by construction: a fixed part of the step folds into tpot_base and alpha");
    return 0;
}

/* max_num_seqs: the batch the saturated levels (requests queued) could not pass. */
static void cal_fit_max_seqs(cal_t *self) {
    bool used[CAL_MAX_LEVELS] = {false};
    double seqs = 0, lowest = INFINITY, seen = 0;
    size_t n = 0, servers = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (!l->server)
            continue;
        servers++;
        seen = fmax(seen, l->running_max);
        if (!l->saturated)
            continue;
        seqs = fmax(seqs, l->running_max);
        lowest = fmin(lowest, l->running_max);
        used[i] = true;
        n++;
    }
    char quality[480], levels[400];
    if (servers == 0)
        return;
    if (n == 0) {
        snprintf(self->p[P_MAX_SEQS].quality, sizeof self->p[P_MAX_SEQS].quality,
                 "not fitted: no level queued requests (at least %.0f ran at once; the base "
                 "profile's value is kept when larger)",
                 seen);
        if (self->p[P_MAX_SEQS].value < seen)
            self->p[P_MAX_SEQS].value = seen;
        return;
    }
    snprintf(quality, sizeof quality,
             "running gauge's max where requests waited: %.0f to %.0f over %zu levels", lowest,
             seqs, n);
    cal_levels_text(self, used, levels, sizeof levels);
    cal_set(&self->p[P_MAX_SEQS], seqs, quality, levels);
}

/* The KV pool: KV usage = the context the running sequences hold / the pool, through 0. */
static void cal_fit_kv(cal_t *self) {
    double x[CAL_MAX_LEVELS], y[CAL_MAX_LEVELS];
    bool used[CAL_MAX_LEVELS] = {false};
    size_t n = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (!l->server || !(l->kv_pct > 0) ||
            l->saturated) /* a queue skews the contexts the counters see */
            continue;
        x[n] = l->running * (l->prompt + l->output / 2 + CAL_HALF_BLOCK);
        y[n++] = l->kv_pct / 100;
        used[i] = true;
    }
    cal_set_inverse_slope(self, P_KV, x, y, n, used,
                          "KV usage against running x (prompt + output / 2), through 0, "
                          "unsaturated levels",
                          true);
}

/* The prefix cache: on when any prompt token was a hit, over the levels that count hits. */
static void cal_fit_cache(cal_t *self) {
    double queries = 0, hits = 0;
    for (size_t i = 0; i < self->n; i++) {
        if (!self->levels[i].hits_known)
            continue;
        queries += self->levels[i].prompt_total;
        hits += self->levels[i].hits_total;
    }
    self->prefix_cache_known = queries > 0;
    self->prefix_hit_rate = queries > 0 ? hits / queries : 0;
    self->prefix_cache = hits > 0;
}

/* What client figures cannot say, said per parameter. */
static void cal_say_server_only(cal_t *self) {
    for (size_t i = 0; i < self->n; i++)
        if (self->levels[i].server)
            return;
    cal_param_t *kv = &self->p[P_KV];
    if (!kv->fitted)
        snprintf(kv->quality, sizeof kv->quality,
                 "not fitted: needs the server's KV usage gauge (level.server, "
                 "kv_cache_usage_perc); the base profile's");
}

static void cal_base(cal_t *self, const mock_profile_t *base) {
    static const char *const keys[P__COUNT] = {
        [P_TPOT_BASE] = "tpot_base",    [P_ALPHA] = "alpha",
        [P_STEP_FIXED] = "step_fixed",  [P_PREFILL] = "prefill_tokens_per_s",
        [P_OVERHEAD] = "ttft_overhead", [P_MAX_SEQS] = "max_num_seqs",
        [P_KV] = "kv_cache_tokens",     [P_MAX_MODEL_LEN] = "max_model_len"};
    const double values[P__COUNT] = {
        [P_TPOT_BASE] = base->tpot_base_ms,     [P_ALPHA] = base->alpha,
        [P_STEP_FIXED] = base->step_fixed_ms,   [P_PREFILL] = base->prefill_tokens_per_s,
        [P_OVERHEAD] = base->ttft_overhead_ms,  [P_MAX_SEQS] = base->max_num_seqs,
        [P_KV] = (double)base->kv_cache_tokens, [P_MAX_MODEL_LEN] = base->max_model_len};
    for (int i = 0; i < P__COUNT; i++) {
        self->p[i] = (cal_param_t){.key = keys[i], .value = values[i]};
        snprintf(self->p[i].quality, sizeof self->p[i].quality,
                 "not fitted: no level says it (the base profile's)");
    }
}

/* A value as the mock section takes it: durations in ms, counts whole. */
static void cal_value_text(const cal_param_t *p, char *buf, size_t len) {
    if (!strcmp(p->key, "max_num_seqs") || !strcmp(p->key, "kv_cache_tokens") ||
        !strcmp(p->key, "max_model_len"))
        snprintf(buf, len, "%.0f", p->value);
    else if (!strcmp(p->key, "tpot_base") || !strcmp(p->key, "step_fixed") ||
             !strcmp(p->key, "ttft_overhead"))
        snprintf(buf, len, "%.4gms", p->value);
    else
        snprintf(buf, len, "%.4g", p->value);
}

static void cal_yaml_text(FILE *f, const char *text) {
    fputc('"', f);
    for (const char *s = text; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int cal_write(const cal_t *self, const calibrate_options_t *o) {
    FILE *f = outfile_fopen(o->out);
    if (!f) {
        fprintf(stderr, "calibrate: cannot write %s: %s\n", o->out, strerror(errno));
        return -1;
    }
    fprintf(f, "# An engine profile fitted by stampede calibrate from");
    for (size_t i = 0; i < o->n_results; i++)
        fprintf(f, " %s", o->results[i]);
    fprintf(f, "\n# stampede mock --profile-file %s | stampede simulate FILE --profile %s\nmock:\n",
            o->out, o->out);
    fprintf(f, "  profile: %s\n", o->base);
    for (int i = 0; i < P__COUNT; i++) {
        char value[64];
        cal_value_text(&self->p[i], value, sizeof value);
        fprintf(f, "  %s: %s%s\n", self->p[i].key, value,
                self->p[i].fitted   ? ""
                : i == P_STEP_FIXED ? "  # 0: folded into tpot_base and alpha"
                                    : "  # not fitted: the base profile's");
    }
    if (self->prefix_cache_known)
        fprintf(f, "  prefix_cache: %s\n", self->prefix_cache ? "true" : "false");
    else
        fprintf(f, "  # prefix_cache: not fitted (no level counts cache hits): the base's\n");
    fprintf(f, "calibration:\n");
    for (int i = 0; i < P__COUNT; i++) {
        fprintf(f, "  %s:\n    fitted: %s\n    quality: ", self->p[i].key,
                self->p[i].fitted ? "true" : "false");
        cal_yaml_text(f, self->p[i].quality);
        fprintf(f, "\n    levels: ");
        cal_yaml_text(f, self->p[i].levels);
        fputc('\n', f);
    }
    if (self->prefix_cache_known)
        fprintf(f, "  prefix_cache:\n    hit_rate: %.4f\n", self->prefix_hit_rate);
    int rc = fclose(f) == 0 ? 0 : -1;
    if (rc)
        fprintf(stderr, "calibrate: cannot write %s: %s\n", o->out, strerror(errno));
    return rc;
}

/* The fitted model at one level: its TPOT (the decode step with the base's speculative decoding
 * and prefill's share put back), first-token step and KV usage; "-" where the level has no
 * server figure to set beside it. */
static void cal_print_table(const cal_t *self, FILE *out) {
    const cal_param_t *p = self->p;
    const mock_profile_t *b = self->base;
    fprintf(out, "\n%-44s %7s %17s %17s %17s %15s\n", "level", "running", "TPOT ms meas/model",
            "prefill meas/mod", "KV % meas/model", "waiting");
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        double step = p[P_STEP_FIXED].value +
                      p[P_TPOT_BASE].value * pow(l->batch, p[P_ALPHA].value) +
                      b->spec_tokens * b->spec_draft_ms;
        double share = cal_prefill_share(self, l, p[P_PREFILL].value);
        double tpot = step / cal_tokens_per_step(b) / (1 - share);
        fprintf(out, "%-44.44s %7.1f %8.2f/%-8.2f ", l->name, l->running, l->tpot_ms, tpot);
        if (!l->server) {
            fprintf(out, "%17s %17s %15s%s\n", "-", "-", "- (client)",
                    l->saturated      ? " past the TTFT knee"
                    : l->queue_begins ? " some queued (TTFT p95): the first, in the TPOT fit"
                    : l->queued_tail  ? " some queued (TTFT p95): not in the TPOT fit"
                                      : "");
            continue;
        }
        double prefill = tpot + (l->prompt - l->hits) / p[P_PREFILL].value * 1e3;
        double kv = 100 * l->running * (l->prompt + l->output / 2 + CAL_HALF_BLOCK) / p[P_KV].value;
        fprintf(out, "%8.1f/%-8.1f %8.2f/%-8.2f %6.2f%s\n", l->prefill_ms, prefill, l->kv_pct, kv,
                l->waiting, l->saturated ? " saturated" : "");
    }
}

int calibrate_run(const calibrate_options_t *o, FILE *out) {
    const mock_profile_t *base = mock_profile_find(o->base ? o->base : "default");
    if (!base) {
        fprintf(stderr, "calibrate: --base %s: no such built-in profile\n", o->base);
        return 1;
    }
    cal_t *self = calloc(1, sizeof *self);
    if (!self) {
        fprintf(stderr, "calibrate: out of memory\n");
        return 1;
    }
    cal_base(self, base);
    self->base = base;
    int rc = 0;
    for (size_t i = 0; i < o->n_results && rc == 0; i++)
        rc = cal_levels_read(self, o->results[i], i);
    if (rc == 0 && self->n < 2) {
        fprintf(stderr,
                "calibrate: %zu usable level in all: TPOT against concurrency needs two levels "
                "or more (a sweep), each with server or client figures\n",
                self->n);
        rc = -1;
    }
    if (rc == 0) {
        cal_client_mark_saturated(self);
        cal_fit_overhead(self);
        cal_fit_prefill(self);
        cal_client_fit_first_token(self);
        cal_fit_max_seqs(self);
        cal_client_fit_max_seqs(self);
        cal_client_pin_saturated(self);
        if (cal_fit_tpot(self) != 0)
            rc = -1;
    }
    if (rc == 0) {
        cal_fit_kv(self);
        cal_fit_cache(self);
        cal_fit_context(self);
        cal_say_server_only(self);
        rc = cal_write(self, &(calibrate_options_t){.results = o->results,
                                                    .n_results = o->n_results,
                                                    .out = o->out,
                                                    .base = base->name});
    }
    if (rc == 0) {
        fprintf(out, "calibrated from %zu levels (base profile %s):\n", self->n, base->name);
        for (int i = 0; i < P__COUNT; i++) {
            char value[64];
            cal_value_text(&self->p[i], value, sizeof value);
            fprintf(out, "  %-22s %-12s %s%s%s\n", self->p[i].key, value, self->p[i].quality,
                    self->p[i].levels[0] ? "; from " : "", self->p[i].levels);
        }
        if (self->prefix_cache_known)
            fprintf(out, "  %-22s %-12s hit rate %.1f %% of prompt tokens\n", "prefix_cache",
                    self->prefix_cache ? "on" : "off", 100 * self->prefix_hit_rate);
        else
            fprintf(out, "  %-22s %-12s not fitted: no level counts cache hits; the base's\n",
                    "prefix_cache", "-");
        cal_print_table(self, out);
        fprintf(out, "\nprofile written to %s\n", o->out);
    }
    free(self);
    return rc == 0 ? 0 : 1;
}
