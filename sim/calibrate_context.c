/* max_model_len from the requests refused for context length (HTTP 400). A request fits when its
 * prompt + max_tokens is at most the limit, so the limit lies between the largest that passed and
 * the smallest that was refused: read per request from the levels' traces (requests.jsonl, with
 * --trace), the prompt as the server counted it (usage) for the passed ones and as asked plus the
 * chat template's tokens (measured on the passed ones) for the refused ones. Without a trace the
 * results' counts give only an estimate, said and not written. */
#include "calibrate_fit.h"

#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the traces say about the limit. */
typedef struct cal_context {
    double passed_max, refused_min; /* prompt + max_tokens */
    double template_sum;            /* usage.prompt_tokens - requested_input_tokens, passed */
    size_t passed, refused, traces;
    double refused_asked_min; /* requested_input + requested_output of the smallest refused */
    unsigned server_said;     /* the limit a refusal's message names (vLLM's does), or 0 */
} cal_context_t;

static double cal_context_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One trace line into ctx. */
static void cal_context_record(cal_context_t *ctx, const json_t *rec) {
    double asked_in = cal_context_num(rec, "requested_input_tokens");
    double asked_out = cal_context_num(rec, "requested_output_tokens");
    if (!(asked_out > 0) || isnan(asked_in))
        return; /* no max_tokens sent: the limit binds the prompt alone; not read here */
    const char *error = json_string_value(json_object_get(rec, "error"));
    if (error && !strcmp(error, "context_length")) {
        ctx->refused++;
        ctx->refused_asked_min = fmin(ctx->refused_asked_min, asked_in + asked_out);
        const char *message = json_string_value(json_object_get(rec, "error_message"));
        const char *said = message ? strstr(message, "maximum context length is ") : NULL;
        unsigned limit;
        if (said && sscanf(said, "maximum context length is %u", &limit) == 1)
            ctx->server_said = limit;
        return;
    }
    double prompt = cal_context_num(json_object_get(rec, "usage"), "prompt_tokens");
    if ((error && strcmp(error, "none") != 0) || isnan(prompt))
        return;
    ctx->passed++;
    ctx->passed_max = fmax(ctx->passed_max, prompt + asked_out);
    ctx->template_sum += prompt - asked_in;
}

/* Every line of one trace into ctx. */
static void cal_context_trace(cal_context_t *ctx, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    ctx->traces++;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *rec = json_loads(line, 0, NULL);
        if (rec)
            cal_context_record(ctx, rec);
        json_decref(rec);
    }
    free(line);
    fclose(f);
}

/* Every trace of every input: a run's DIR/requests.jsonl, a sweep's levels' repetitions'. */
static void cal_context_read(const cal_t *self, cal_context_t *ctx) {
    for (size_t i = 0; i < self->n; i++) {
        const cal_level_t *l = &self->levels[i];
        if (i > 0 && !strcmp(self->levels[i - 1].dir, l->dir))
            continue;
        static const char *const patterns[] = {"%s/requests.jsonl",
                                               "%s/levels/*/rep-*/requests.jsonl"};
        for (size_t k = 0; k < 2; k++) {
            char pattern[CAL_MAX_PATH + 40];
            snprintf(pattern, sizeof pattern, patterns[k], l->dir);
            glob_t g;
            if (glob(pattern, 0, NULL, &g) == 0)
                for (size_t j = 0; j < g.gl_pathc; j++)
                    cal_context_trace(ctx, g.gl_pathv[j]);
            globfree(&g);
        }
    }
}

/* The limit in [lower, upper): the roundest number there (servers set round limits), else
 * lower. */
static double cal_context_round(double lower, double upper) {
    static const double grains[] = {1024, 512, 256, 128, 100, 64, 16};
    for (size_t i = 0; i < sizeof grains / sizeof grains[0]; i++) {
        double v = ceil(lower / grains[i]) * grains[i];
        if (v < upper)
            return v;
    }
    return lower;
}

/* Without traces: a role's ok requests fitted, so the limit is above their mean prompt +
 * completion (each passed prompt + max_tokens is at most the limit); an estimate, said, not
 * written. */
static void cal_context_estimate(cal_t *self, double refused) {
    double fits = 0;
    for (size_t i = 0; i < self->n; i++)
        fits = fmax(fits, self->levels[i].ok_context);
    snprintf(self->p[P_MAX_MODEL_LEN].quality, sizeof self->p[P_MAX_MODEL_LEN].quality,
             "not fitted: %.0f requests refused for context length but no trace "
             "(requests.jsonl, --trace) gives their sizes; an estimate: above %.0f tokens (a "
             "role's mean prompt + completion of the ok requests); the base profile's is kept",
             refused, fits);
}

void cal_fit_context(cal_t *self) {
    double refused = 0;
    bool used[CAL_MAX_LEVELS] = {false};
    for (size_t i = 0; i < self->n; i++)
        if (self->levels[i].context_length_errors > 0) {
            refused += self->levels[i].context_length_errors;
            used[i] = true;
        }
    cal_param_t *p = &self->p[P_MAX_MODEL_LEN];
    if (refused == 0) {
        snprintf(p->quality, sizeof p->quality,
                 "not fitted: no request was refused for context length; the base profile's");
        return;
    }
    cal_context_t ctx = {.refused_asked_min = INFINITY};
    cal_context_read(self, &ctx);
    if (ctx.refused == 0 || ctx.passed == 0) {
        cal_context_estimate(self, refused);
        return;
    }
    double template_tokens = ctx.template_sum / ctx.passed;
    double lower = ctx.passed_max, upper = ctx.refused_asked_min + template_tokens;
    char quality[480], levels[400];
    cal_levels_text(self, used, levels, sizeof levels);
    if (upper <= lower) { /* the template's tokens vary: the two overlap */
        snprintf(quality, sizeof quality,
                 "%zu passed up to %.0f, %zu refused from %.0f tokens (prompt + max_tokens, the "
                 "template's %.1f estimated): they overlap; the midpoint",
                 ctx.passed, lower, ctx.refused, upper, template_tokens);
        cal_set(p, round((lower + upper) / 2), quality, levels);
        return;
    }
    char said[64] = "";
    if (ctx.server_said)
        snprintf(said, sizeof said, "; the refusals' message says %u", ctx.server_said);
    snprintf(quality, sizeof quality,
             "between %.0f (the largest of %zu passed) and %.0f tokens (the smallest of %zu "
             "refused), prompt + max_tokens from %zu traces%s",
             lower, ctx.passed, upper, ctx.refused, ctx.traces, said);
    cal_set(p, cal_context_round(lower, upper), quality, levels);
}
