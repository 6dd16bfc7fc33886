#include "calibrate.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mock_profiles.h"
#include "outfile.h"

#define CAL_MAX_LEVELS 512
/* A level whose queue held this many requests on average is saturated (a request that arrives
 * during a step waits for the next one: a fraction of one on average otherwise). */
#define CAL_SATURATED_WAITING 1.0
/* Tokens a running sequence holds beyond its context on average: half a 16-token block. */
#define CAL_HALF_BLOCK 8.0

/* One level of one input, as the fits read it (server figures summed over its pages). */
typedef struct cal_level {
    char name[96]; /* "FILE c=N" */
    size_t input;  /* which RESULTS it came from */
    double c;
    double running, running_max, waiting, waiting_max, kv_pct;
    double batch; /* the batch a decoding request sees: E[running^2] / E[running] */
    double requests, prompt, hits, output; /* per request, from the server's counters */
    double window_s, prompt_total, hits_total;
    double tpot_ms, prefill_ms, queue_ms, ttft_ms; /* the server's means */
    double context_length_errors;
    bool saturated;
} cal_level_t;

/* One fitted parameter. */
typedef struct cal_param {
    const char *key; /* the mock section's key */
    double value;
    bool fitted; /* from the data; else the base profile's */
    char quality[160];
    char levels[400];
} cal_param_t;

enum { P_TPOT_BASE, P_ALPHA, P_STEP_FIXED, P_PREFILL, P_OVERHEAD, P_MAX_SEQS, P_KV, P__COUNT };

typedef struct cal {
    cal_level_t levels[CAL_MAX_LEVELS];
    size_t n;
    cal_param_t p[P__COUNT];
    bool prefix_cache;
    double prefix_hit_rate;
    double context_errors;
} cal_t;

static double cal_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Sums a gauge's mean and max over the pages (one page per endpoint or replica). */
static void cal_gauge(const json_t *pages, const char *key, double *mean, double *max) {
    *mean = *max = 0;
    size_t i;
    const json_t *page;
    json_array_foreach(pages, i, page) {
        const json_t *g = json_object_get(page, key);
        double m = cal_num(g, "mean"), x = cal_num(g, "max");
        *mean += isnan(m) ? 0 : m;
        *max += isnan(x) ? 0 : x;
    }
}

/* The batch size a decoding request sees on average: the running gauge weighted by itself
 * (E[W^2] / E[W], from the gauge's mean_square or its sampled series), or its mean when neither
 * is there. A single page only: the replicas' batches are each their own. */
static double cal_batch(const json_t *pages, double mean) {
    if (json_array_size(pages) != 1 || !(mean > 0))
        return mean;
    const json_t *page = json_array_get(pages, 0);
    double square = cal_num(json_object_get(page, "running"), "mean_square");
    if (isnan(square)) {
        const json_t *series = json_object_get(json_object_get(page, "series"), "running");
        double sum = 0, sq = 0;
        size_t i;
        const json_t *v;
        json_array_foreach(series, i, v) {
            sum += json_number_value(v);
            sq += json_number_value(v) * json_number_value(v);
        }
        if (!(sum > 0))
            return mean;
        return sq / sum;
    }
    return square / mean;
}

/* The level's server figures into l; false (with why) when it has none. */
static bool cal_level_read(const json_t *level, cal_level_t *l, char *why, size_t len) {
    const json_t *server = json_object_get(level, "server");
    const json_t *total = json_object_get(server, "total");
    const json_t *pages = json_object_get(server, "pages");
    if (!json_is_object(total) || !json_is_array(pages) || json_array_size(pages) == 0) {
        snprintf(why, len, "no server figures (level.server.total and .pages)");
        return false;
    }
    l->requests = cal_num(total, "requests");
    l->window_s = cal_num(server, "window_s");
    l->prompt_total = cal_num(total, "prompt_tokens");
    l->hits_total = cal_num(total, "prefix_hits");
    double generated = cal_num(total, "generation_tokens");
    if (!(l->requests > 0) || !(l->window_s > 0) || isnan(l->prompt_total) || isnan(generated)) {
        snprintf(why, len, "its server figures count no request in the window");
        return false;
    }
    if (isnan(l->hits_total))
        l->hits_total = 0;
    l->prompt = l->prompt_total / l->requests;
    l->hits = l->hits_total / l->requests;
    l->output = generated / l->requests;
    cal_gauge(pages, "running", &l->running, &l->running_max);
    l->batch = cal_batch(pages, l->running);
    cal_gauge(pages, "waiting", &l->waiting, &l->waiting_max);
    double kv_max;
    cal_gauge(pages, "kv_usage_pct", &l->kv_pct, &kv_max);
    l->kv_pct /= (double)json_array_size(pages);
    l->tpot_ms = cal_num(json_object_get(total, "tpot"), "mean_ms");
    l->prefill_ms = cal_num(json_object_get(total, "prefill"), "mean_ms");
    l->queue_ms = cal_num(json_object_get(total, "queue"), "mean_ms");
    l->ttft_ms = cal_num(json_object_get(total, "ttft"), "mean_ms");
    if (isnan(l->tpot_ms) || isnan(l->prefill_ms) || !(l->running > 0)) {
        snprintf(why, len,
                 "its server figures lack the TPOT or prefill means or the running gauge");
        return false;
    }
    l->context_length_errors = cal_num(json_object_get(level, "errors"), "context_length");
    l->saturated = l->waiting >= CAL_SATURATED_WAITING;
    return true;
}

/* path, or path/results.json for a directory. */
static void cal_results_path(const char *path, char *buf, size_t len) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(buf, len, "%s/results.json", path);
    else
        snprintf(buf, len, "%s", path);
}

/* Every level of one input with server figures into self. 0, or -1 said. */
static int cal_read(cal_t *self, const char *arg, size_t input) {
    char path[4200];
    cal_results_path(arg, path, sizeof path);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        fprintf(stderr, "calibrate: %s:%d: %s\n", path, jerr.line, jerr.text);
        return -1;
    }
    const json_t *levels = json_object_get(root, "levels");
    if (!json_is_array(levels) || json_array_size(levels) == 0) {
        fprintf(stderr, "calibrate: %s: no levels: not a stampede results.json\n", path);
        json_decref(root);
        return -1;
    }
    size_t i, used = 0;
    const json_t *level;
    char why[200] = "";
    json_array_foreach(levels, i, level) {
        if (self->n == CAL_MAX_LEVELS)
            break;
        cal_level_t *l = &self->levels[self->n];
        memset(l, 0, sizeof *l);
        l->c = cal_num(level, "concurrency");
        if (isnan(l->c)) {
            snprintf(why, sizeof why,
                     "level %zu is a rate level: calibrate reads concurrency "
                     "sweeps",
                     i + 1);
            continue;
        }
        if (json_is_true(json_object_get(level, "interrupted")) ||
            !cal_level_read(level, l, why, sizeof why))
            continue;
        snprintf(l->name, sizeof l->name, "%.80s c=%g", arg, l->c);
        l->input = input;
        self->n++;
        used++;
    }
    json_decref(root);
    if (used == 0) {
        fprintf(stderr, "calibrate: %s: no level it can use: %s\n", path, why);
        return -1;
    }
    return 0;
}

/* The levels a fit used, "FILE c=4, c=8, ..." (the file named once in a row). */
static void cal_levels_text(const cal_t *self, const bool *used, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < self->n && n < len; i++)
        if (used[i])
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", self->levels[i].name);
}

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

static void cal_set(cal_param_t *p, double value, const char *quality, const char *levels) {
    p->value = value;
    p->fitted = true;
    snprintf(p->quality, sizeof p->quality, "%s", quality);
    snprintf(p->levels, sizeof p->levels, "%s", levels);
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
    char quality[160], levels[400];
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
        if (isnan(l->ttft_ms) || isnan(l->queue_ms))
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
    char quality[160], levels[400];
    snprintf(quality, sizeof quality,
             "server TTFT - queue - prefill, mean of %zu levels, sd %.3g ms", n, sd);
    cal_levels_text(self, used, levels, sizeof levels);
    cal_set(&self->p[P_OVERHEAD], mean > 0 ? mean : 0, quality, levels);
}

/* Whether l is the lowest concurrency of its input. */
static bool cal_lowest_of_input(const cal_t *self, const cal_level_t *l) {
    for (size_t i = 0; i < self->n; i++)
        if (self->levels[i].input == l->input && self->levels[i].c < l->c)
            return false;
    return true;
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
        if (l->saturated || !(uncached > 0) || !cal_lowest_of_input(self, l))
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

/* The decode step of a level: its TPOT less the share of engine time spent on prefill. */
static double cal_decode_step_ms(const cal_t *self, const cal_level_t *l) {
    double rate = self->p[P_PREFILL].fitted ? self->p[P_PREFILL].value : 0;
    if (!(rate > 0))
        return l->tpot_ms;
    double share = (l->prompt_total - l->hits_total) / l->window_s / rate;
    return l->tpot_ms * (share < 0.9 ? 1 - share : 0.1);
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
 * these two by a sweep (the fit trades them), so it is left at 0 and folds into them. */
static int cal_fit_tpot(cal_t *self) {
    double w[CAL_MAX_LEVELS], step[CAL_MAX_LEVELS];
    bool used[CAL_MAX_LEVELS] = {false};
    size_t n = 0, distinct = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        bool is_new = true;
        for (size_t j = 0; j < n; j++)
            is_new = is_new && fabs(w[j] - l->batch) > 0.5;
        distinct += is_new;
        w[n] = l->batch;
        step[n++] = cal_decode_step_ms(self, l);
        used[i] = true;
    }
    if (distinct < 2)
        return -1;
    double best = INFINITY, best_alpha = 1, b = 0;
    for (double alpha = 0.01; alpha <= 2.0 + 1e-9; alpha += 0.001) {
        double a1, sse = cal_step_sse(w, step, n, alpha, &a1);
        if (sse < best) {
            best = sse;
            best_alpha = alpha;
            b = a1;
        }
    }
    double mean = 0, sst = 0;
    for (size_t i = 0; i < n; i++)
        mean += step[i] / n;
    for (size_t i = 0; i < n; i++)
        sst += (step[i] - mean) * (step[i] - mean);
    char quality[160], levels[400];
    snprintf(quality, sizeof quality,
             "decode step = tpot_base x batch^alpha: R^2 %.4f over %zu levels (%zu batch sizes)",
             sst > 0 ? 1 - best / sst : 1.0, n, distinct);
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
    size_t n = 0;
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        seen = fmax(seen, l->running_max);
        if (!l->saturated)
            continue;
        seqs = fmax(seqs, l->running_max);
        lowest = fmin(lowest, l->running_max);
        used[i] = true;
        n++;
    }
    char quality[160], levels[400];
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
        if (!(l->kv_pct > 0) || l->saturated) /* a queue skews the contexts the counters see */
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

static void cal_fit_cache(cal_t *self) {
    double queries = 0, hits = 0;
    for (size_t i = 0; i < self->n; i++) {
        queries += self->levels[i].prompt_total;
        hits += self->levels[i].hits_total;
        self->context_errors += isnan(self->levels[i].context_length_errors)
                                    ? 0
                                    : self->levels[i].context_length_errors;
    }
    self->prefix_hit_rate = queries > 0 ? hits / queries : 0;
    self->prefix_cache = hits > 0;
}

static void cal_base(cal_t *self, const mock_profile_t *base) {
    static const char *const keys[P__COUNT] = {
        [P_TPOT_BASE] = "tpot_base",    [P_ALPHA] = "alpha",
        [P_STEP_FIXED] = "step_fixed",  [P_PREFILL] = "prefill_tokens_per_s",
        [P_OVERHEAD] = "ttft_overhead", [P_MAX_SEQS] = "max_num_seqs",
        [P_KV] = "kv_cache_tokens"};
    const double values[P__COUNT] = {
        [P_TPOT_BASE] = base->tpot_base_ms,    [P_ALPHA] = base->alpha,
        [P_STEP_FIXED] = base->step_fixed_ms,  [P_PREFILL] = base->prefill_tokens_per_s,
        [P_OVERHEAD] = base->ttft_overhead_ms, [P_MAX_SEQS] = base->max_num_seqs,
        [P_KV] = (double)base->kv_cache_tokens};
    for (int i = 0; i < P__COUNT; i++) {
        self->p[i] = (cal_param_t){.key = keys[i], .value = values[i]};
        snprintf(self->p[i].quality, sizeof self->p[i].quality,
                 "not fitted: no level says it (the base profile's)");
    }
}

/* A value as the mock section takes it: durations in ms, counts whole. */
static void cal_value_text(const cal_param_t *p, char *buf, size_t len) {
    if (!strcmp(p->key, "max_num_seqs") || !strcmp(p->key, "kv_cache_tokens"))
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
    fprintf(f, "  prefix_cache: %s\ncalibration:\n", self->prefix_cache ? "true" : "false");
    for (int i = 0; i < P__COUNT; i++) {
        fprintf(f, "  %s:\n    fitted: %s\n    quality: ", self->p[i].key,
                self->p[i].fitted ? "true" : "false");
        cal_yaml_text(f, self->p[i].quality);
        fprintf(f, "\n    levels: ");
        cal_yaml_text(f, self->p[i].levels);
        fputc('\n', f);
    }
    fprintf(f, "  prefix_cache:\n    hit_rate: %.4f\n", self->prefix_hit_rate);
    fprintf(f, "  max_model_len:\n    fitted: false\n    quality: ");
    char why[200];
    if (self->context_errors > 0)
        snprintf(why, sizeof why,
                 "%.0f requests refused for context length: the limit is below their contexts; "
                 "the sizes are per request (--trace), not fitted here",
                 self->context_errors);
    else
        snprintf(why, sizeof why,
                 "no request was refused for context length: the base "
                 "profile's is kept");
    cal_yaml_text(f, why);
    fputc('\n', f);
    int rc = fclose(f) == 0 ? 0 : -1;
    if (rc)
        fprintf(stderr, "calibrate: cannot write %s: %s\n", o->out, strerror(errno));
    return rc;
}

/* The fitted model at one level: its decode step, TPOT, first-token step and KV usage. */
static void cal_print_table(const cal_t *self, FILE *out) {
    const cal_param_t *p = self->p;
    fprintf(out, "\n%-44s %7s %17s %17s %17s %15s\n", "level", "running", "TPOT ms meas/model",
            "prefill meas/mod", "KV % meas/model", "waiting");
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        double step =
            p[P_STEP_FIXED].value + p[P_TPOT_BASE].value * pow(l->running, p[P_ALPHA].value);
        double share = (l->prompt_total - l->hits_total) / l->window_s / p[P_PREFILL].value;
        double tpot = step / (share < 0.9 ? 1 - share : 0.1);
        double prefill = tpot + (l->prompt - l->hits) / p[P_PREFILL].value * 1e3;
        double kv = 100 * l->running * (l->prompt + l->output / 2 + CAL_HALF_BLOCK) / p[P_KV].value;
        fprintf(out, "%-44.44s %7.1f %8.2f/%-8.2f %8.1f/%-8.1f %8.2f/%-8.2f %6.2f%s\n", l->name,
                l->running, l->tpot_ms, tpot, l->prefill_ms, prefill, l->kv_pct, kv, l->waiting,
                l->saturated ? " saturated" : "");
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
    int rc = 0;
    for (size_t i = 0; i < o->n_results && rc == 0; i++)
        rc = cal_read(self, o->results[i], i);
    if (rc == 0 && self->n < 2) {
        fprintf(stderr,
                "calibrate: %zu usable level in all: TPOT against concurrency needs two levels "
                "or more (a sweep), each with server figures\n",
                self->n);
        rc = -1;
    }
    if (rc == 0) {
        cal_fit_overhead(self);
        cal_fit_prefill(self);
        if (cal_fit_tpot(self) != 0) {
            fprintf(stderr, "calibrate: the levels ran one batch size only (running gauge): TPOT "
                            "against the batch needs two or more\n");
            rc = -1;
        }
    }
    if (rc == 0) {
        cal_fit_max_seqs(self);
        cal_fit_kv(self);
        cal_fit_cache(self);
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
        fprintf(out, "  %-22s %-12s hit rate %.1f %% of prompt tokens\n", "prefix_cache",
                self->prefix_cache ? "on" : "off", 100 * self->prefix_hit_rate);
        cal_print_table(self, out);
        fprintf(out, "\nprofile written to %s\n", o->out);
    }
    free(self);
    return rc == 0 ? 0 : 1;
}
