/* The levels of a sweep's results.json as the calibration reads them: the server's figures when
 * the level has them, else the client's (TTFT, TPOT, E2E, the request rate and the roles' token
 * counts), with Little's law standing in for the gauges the client cannot see. */
#include "calibrate_fit.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A level whose queue held this many requests on average is saturated (a request that arrives
 * during a step waits for the next one: a fraction of one on average otherwise). */
#define CAL_SATURATED_WAITING 1.0

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
static bool cal_level_server(const json_t *level, cal_level_t *l, char *why, size_t len) {
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
    l->prompt_known = l->hits_known = true;
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
    l->saturated = l->waiting >= CAL_SATURATED_WAITING;
    l->server = true;
    return true;
}

/* A client figure: the block's mean (ttft_ms.mean), else the headline p50 (ttft_p50_ms), which
 * is all the reference reports give (*medians set). */
static double cal_client_figure(const json_t *level, const char *block, const char *p50,
                                bool *medians) {
    double v = cal_num(json_object_get(level, block), "mean");
    if (isnan(v)) {
        v = cal_num(level, p50);
        *medians = *medians || !isnan(v);
    }
    return v;
}

/* Prompt and output tokens per request from the roles' means, weighted by their requests. */
static void cal_client_tokens(const json_t *level, cal_level_t *l) {
    double n = 0, prompt = 0, output = 0;
    const char *key;
    const json_t *role;
    json_object_foreach((json_t *)json_object_get(level, "roles"), key, role) {
        double r = cal_num(role, "requests"), p = cal_num(role, "prompt_tokens_mean"),
               o = cal_num(role, "completion_tokens_mean");
        if (!(r > 0) || isnan(p) || isnan(o))
            continue;
        n += r;
        prompt += r * p;
        output += r * o;
        double ttft = cal_num(json_object_get(role, "ttft_ms"), "mean");
        if (ttft > 0 && l->n_roles < CAL_MAX_ROLES) {
            l->role_prompt[l->n_roles] = p;
            l->role_ttft_ms[l->n_roles++] = ttft;
        }
    }
    if (n > 0) {
        l->prompt = prompt / n;
        l->output = output / n;
        l->prompt_known = true;
        double hit = cal_num(level, "kv_hit_rate_pct");
        l->hits = isnan(hit) ? 0 : l->prompt * hit / 100;
        l->hits_known = !isnan(hit);
    }
}

/* The level's client figures into l: TTFT, TPOT, E2E (else TTFT + the roles' output tokens at
 * TPOT), errors, the requests in flight (the concurrency, or a rate level's request rate x E2E:
 * Little's law) and, of those, the ones decoding: output tokens/s x TPOT (Little's law on the
 * tokens: a decoding request emits one per TPOT), else in flight x the share of E2E after the
 * first token. False (with why) without them. */
static bool cal_level_client(const json_t *level, cal_level_t *l, char *why, size_t len) {
    l->ttft_ms = cal_client_figure(level, "ttft_ms", "ttft_p50_ms", &l->medians);
    l->tpot_ms = cal_client_figure(level, "tpot_ms", "tpot_p50_ms", &l->medians);
    l->e2e_ms = cal_client_figure(level, "e2e_ms", "latency_p50_ms", &l->medians);
    cal_client_tokens(level, l);
    if (isnan(l->e2e_ms) && l->prompt_known)
        l->e2e_ms = l->ttft_ms + (l->output - 1) * l->tpot_ms;
    if (!(l->ttft_ms > 0) || !(l->tpot_ms > 0) || !(l->e2e_ms > l->ttft_ms)) {
        snprintf(why, len,
                 "no server figures (level.server) and no client TTFT, TPOT and E2E "
                 "(ttft_ms.mean or ttft_p50_ms, tpot_..., e2e_ms.mean or latency_p50_ms)");
        return false;
    }
    if (!l->prompt_known)
        l->output = (l->e2e_ms - l->ttft_ms) / l->tpot_ms + 1;
    l->ttft_p95_ms = cal_num(level, "ttft_p95_ms");
    l->error_pct = cal_num(level, "error_pct");
    if (isnan(l->error_pct))
        l->error_pct = 0;
    l->requests_per_s = cal_num(level, "requests_per_s");
    double little =
        l->requests_per_s > 0 ? l->requests_per_s * l->e2e_ms / 1e3 : NAN; /* Little's law */
    if (!isnan(l->rate) && isnan(little)) {
        snprintf(why, len, "a rate level without requests_per_s: Little's law needs it");
        return false;
    }
    l->in_flight = isnan(l->rate) ? (little < l->c ? little : l->c) : little;
    if (!isnan(l->rate))
        l->c = l->in_flight;
    double tokens_per_s = cal_num(level, "output_tokens_per_s");
    l->batch = tokens_per_s > 0 ? tokens_per_s * l->tpot_ms / 1e3
                                : l->in_flight * (l->e2e_ms - l->ttft_ms) / l->e2e_ms;
    l->running = l->running_max = l->batch;
    /* the engine's prompt load, per second of a 1 s window (cal_decode_step_ms reads it) */
    double request_rate = l->in_flight / (l->e2e_ms / 1e3);
    l->window_s = 1;
    l->requests = request_rate;
    l->prompt_total = l->prompt_known ? request_rate * l->prompt : 0;
    l->hits_total = l->prompt_known ? request_rate * l->hits : 0;
    l->prefill_ms = l->queue_ms = l->kv_pct = NAN;
    l->server = false;
    return true;
}

/* The largest mean context of a role's ok requests (prompt + completion tokens), or 0. */
static double cal_ok_context(const json_t *level) {
    double most = 0;
    const char *key;
    const json_t *role;
    json_object_foreach((json_t *)json_object_get(level, "roles"), key, role) {
        double p = cal_num(role, "prompt_tokens_mean"), o = cal_num(role, "completion_tokens_mean");
        if (p + o > most)
            most = p + o;
    }
    return most;
}

/* path, or path/results.json for a directory; its directory into dir. */
static void cal_results_path(const char *path, char *buf, size_t len, char *dir, size_t dirlen) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "%s/results.json", path);
        snprintf(dir, dirlen, "%s", path);
        return;
    }
    snprintf(buf, len, "%s", path);
    const char *slash = strrchr(path, '/');
    snprintf(dir, dirlen, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
}

/* The input as the levels are named: its file's name, or its directory's for a results.json. */
static void cal_label(const char *path, char *buf, size_t len) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strcmp(base, "results.json") != 0 || !slash) {
        snprintf(buf, len, "%.200s", base);
        return;
    }
    const char *start = slash;
    while (start > path && start[-1] != '/')
        start--;
    snprintf(buf, len, "%.*s", (int)(slash - start < 200 ? slash - start : 200), start);
}

int cal_levels_read(cal_t *self, const char *arg, size_t input) {
    char path[CAL_MAX_PATH + 16], dir[CAL_MAX_PATH];
    cal_results_path(arg, path, sizeof path, dir, sizeof dir);
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
    char why[300] = "", label[256];
    cal_label(path, label, sizeof label);
    json_array_foreach(levels, i, level) {
        if (self->n == CAL_MAX_LEVELS)
            break;
        cal_level_t *l = &self->levels[self->n];
        memset(l, 0, sizeof *l);
        l->c = cal_num(level, "concurrency");
        l->rate = cal_num(level, "rate");
        if (isnan(l->c) && isnan(l->rate)) {
            snprintf(why, sizeof why, "level %zu has neither concurrency nor rate", i + 1);
            continue;
        }
        if (json_is_true(json_object_get(level, "interrupted")))
            continue;
        char server_why[200];
        if (!cal_level_server(level, l, server_why, sizeof server_why) &&
            !cal_level_client(level, l, why, sizeof why))
            continue;
        if (l->server && !isnan(l->rate)) { /* Little's law: the requests in flight */
            double e2e = cal_num(json_object_get(level, "e2e_ms"), "mean");
            l->c = l->requests / l->window_s * (e2e > 0 ? e2e / 1e3 : 0);
            if (!(l->c > 0))
                l->c = l->running + l->waiting;
            /* open arrivals: a decoding request sees itself and the others' mean (Poisson, as
             * in calibrate_client.c); the gauge's E[W^2] / E[W] over 1 s samples overstates it
             * at low load (measured: 13 against 9.3 at 1 session/s of tests/data/sim/
             * calibrate-rate.yaml). Saturated, the batch is full and the gauge's says it. */
            if (!l->saturated)
                l->batch = l->running + 1;
        }
        l->context_length_errors = cal_num(json_object_get(level, "errors"), "context_length");
        l->ok_context = cal_ok_context(level);
        if (isnan(l->rate))
            snprintf(l->name, sizeof l->name, "%.60s c=%g", label, l->c);
        else
            snprintf(l->name, sizeof l->name, "%.60s rate=%g/s", label, l->rate);
        snprintf(l->dir, sizeof l->dir, "%s", dir);
        l->index = i;
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

void cal_levels_text(const cal_t *self, const bool *used, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < self->n && n < len; i++)
        if (used[i])
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", self->levels[i].name);
}

void cal_set(cal_param_t *p, double value, const char *quality, const char *levels) {
    p->value = value;
    p->fitted = true;
    snprintf(p->quality, sizeof p->quality, "%s", quality);
    snprintf(p->levels, sizeof p->levels, "%s", levels);
}

bool cal_lowest_of_input(const cal_t *self, const cal_level_t *l) {
    for (size_t i = 0; i < self->n; i++)
        if (self->levels[i].input == l->input && self->levels[i].c < l->c)
            return false;
    return true;
}

double cal_tokens_per_step(const mock_profile_t *base) {
    double tokens = 1, p = 1;
    for (uint32_t i = 0; i < base->spec_tokens; i++)
        tokens += p *= base->spec_acceptance; /* a draft is kept if every one before it was */
    return tokens;
}
