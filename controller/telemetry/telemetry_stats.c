/* What happened between two marks: each page's delta (telemetry_read), the restarts and failed
 * GETs in between, the gauges' spans over the samples, the pages summed by endpoint and in total,
 * the GPU energy per output token, and the shared-rig guard's verdict. */
#include "telemetry_stats.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "telemetry_internal.h"

/* The page's gauge g over [from, to]: mean and max of its samples. */
static telemetry_gauge_span_t telemetry_span(const telemetry_page_t *p, telemetry_gauge_t g,
                                             int64_t from, int64_t to) {
    telemetry_gauge_span_t span = {NAN, NAN, 0};
    double total = 0;
    for (size_t i = 0; i < p->n_series; i++) {
        const telemetry_sample_t *s = &p->series[i];
        if (s->at_ns < from || s->at_ns > to || isnan(s->gauge[g]))
            continue;
        total += s->gauge[g];
        span.max = span.samples == 0 || s->gauge[g] > span.max ? s->gauge[g] : span.max;
        span.samples++;
    }
    if (span.samples)
        span.mean = total / (double)span.samples;
    return span;
}

/* The page between marks a and b: its delta, restarts and failures in between, gauges. */
static void telemetry_page_between(const telemetry_t *self, size_t i,
                                   const telemetry_mark_entry_t *a, const telemetry_mark_entry_t *b,
                                   telemetry_page_stats_t *out) {
    const telemetry_page_t *p = &self->pages[i];
    out->url = p->url;
    out->endpoint = p->endpoint;
    out->dialect = b->read[i] ? b->readings[i].dialect : a->read[i] ? a->readings[i].dialect : NULL;
    out->read = a->read[i] && b->read[i];
    telemetry_read_delta_init(&out->delta);
    out->absent = p->absent;
    if (p->absent) {
        out->read = false;
        snprintf(out->error, sizeof out->error, "absent: %s", p->absent_why);
    } else if (!a->read[i])
        snprintf(out->error, sizeof out->error, "at %s: %s", a->label,
                 a->errors[i][0] ? a->errors[i] : "no answer");
    else if (!b->read[i])
        snprintf(out->error, sizeof out->error, "at %s: %s", b->label,
                 b->errors[i][0] ? b->errors[i] : "no answer");
    else if (!out->dialect)
        snprintf(out->error, sizeof out->error, "no %s names on the page",
                 p->gpu ? "DCGM" : "vLLM, SGLang or Dynamo");
    if (out->read)
        telemetry_read_delta(&a->readings[i], &b->readings[i], &out->delta);
    for (size_t k = 0; k < p->n_restarts && !out->delta.restarted; k++)
        if (p->restarts[k].at_ns > a->at_ns && p->restarts[k].at_ns <= b->at_ns) {
            out->delta.restarted = true;
            snprintf(out->delta.restart_why, sizeof out->delta.restart_why, "%s",
                     p->restarts[k].why);
        }
    for (size_t k = 0; k < p->n_failures; k++)
        out->scrape_failures += p->failures[k] >= a->at_ns && p->failures[k] <= b->at_ns;
    for (size_t g = 0; g < TELEMETRY_G__COUNT; g++)
        out->gauge[g] = telemetry_span(p, (telemetry_gauge_t)g, a->at_ns, b->at_ns);
}

static bool telemetry_gauge_is_mean(telemetry_gauge_t g) {
    return g == TELEMETRY_G_KV_USAGE || g == TELEMETRY_G_GPU_UTIL;
}

/* Gauges over several pages: summed (or averaged, for shares) means; the max only of one page. */
static void telemetry_combine_gauges(telemetry_stats_t *out, size_t from, size_t to,
                                     telemetry_gauge_t first, telemetry_gauge_t last) {
    for (size_t g = first; g <= last; g++) {
        telemetry_gauge_span_t span = {NAN, NAN, 0};
        size_t n = 0;
        for (size_t i = from; i < to; i++) {
            const telemetry_gauge_span_t *s = &out->pages[i].gauge[g];
            if (!s->samples)
                continue;
            span.mean = n == 0 ? s->mean : span.mean + s->mean;
            span.max = s->max;
            span.samples += s->samples;
            n++;
        }
        if (n > 1) {
            span.max = NAN;
            if (telemetry_gauge_is_mean((telemetry_gauge_t)g))
                span.mean /= (double)n;
        }
        out->total_gauge[g] = span;
    }
}

bool telemetry_stats_absent(const telemetry_stats_t *stats) {
    if (stats->n_pages > stats->n_server_pages)
        return false;
    for (size_t i = 0; i < stats->n_server_pages; i++)
        if (!stats->pages[i].absent)
            return false;
    return true;
}

bool telemetry_stats_served_others(double served, uint64_t sent) {
    if (isnan(served))
        return false;
    double extra = served - (double)sent, allowed = TELEMETRY_GUARD_EXTRA_SHARE * (double)sent;
    if (allowed < TELEMETRY_GUARD_EXTRA_MIN)
        allowed = TELEMETRY_GUARD_EXTRA_MIN;
    return extra > allowed;
}

static void telemetry_guard(telemetry_stats_t *out, const char *who, double served, uint64_t sent) {
    if (out->shared || !telemetry_stats_served_others(served, sent))
        return;
    out->shared = true;
    snprintf(out->shared_why, sizeof out->shared_why,
             "someone else is using this server: %s finished %.0f requests while this run ended "
             "%llu (more than %.0f %% and %d over)",
             who, served, (unsigned long long)sent, TELEMETRY_GUARD_EXTRA_SHARE * 100,
             TELEMETRY_GUARD_EXTRA_MIN);
}

static void telemetry_judge(telemetry_stats_t *out) {
    bool per_endpoint = true;
    for (size_t i = 0; i < out->n_server_pages; i++)
        per_endpoint &= out->pages[i].endpoint >= 0;
    if (per_endpoint) {
        for (size_t i = 0; i < out->n_server_pages; i++) {
            const telemetry_page_stats_t *p = &out->pages[i];
            if (p->read)
                telemetry_guard(out, p->url, p->delta.counter[TELEMETRY_C_REQUESTS],
                                out->client[p->endpoint].requests);
        }
    } else {
        bool all = out->n_server_pages > 0;
        for (size_t i = 0; i < out->n_server_pages; i++)
            all &= out->pages[i].read;
        if (all)
            telemetry_guard(out, "the servers", out->total.counter[TELEMETRY_C_REQUESTS],
                            out->client_total.requests);
    }
    for (size_t i = 0; i < out->n_pages && !out->restarted; i++)
        if (out->pages[i].delta.restarted) {
            out->restarted = true;
            snprintf(out->restarted_why, sizeof out->restarted_why,
                     "the server restarted during the run: %s: %s", out->pages[i].url,
                     out->pages[i].delta.restart_why);
        }
}

static void telemetry_energy(telemetry_stats_t *out) {
    out->gpu_energy_j = NAN;
    for (size_t i = out->n_server_pages; i < out->n_pages; i++) {
        double mj = out->pages[i].delta.counter[TELEMETRY_C_GPU_ENERGY_MJ];
        if (!isnan(mj))
            out->gpu_energy_j = (isnan(out->gpu_energy_j) ? 0 : out->gpu_energy_j) + mj / 1000;
    }
    bool all_read = out->n_server_pages > 0;
    for (size_t i = 0; i < out->n_server_pages; i++)
        all_read &= out->pages[i].read;
    double server = out->total.counter[TELEMETRY_C_GENERATION_TOKENS];
    if (all_read && !isnan(server)) {
        out->output_tokens = server;
        out->output_tokens_from = "server";
    } else {
        out->output_tokens = (double)out->client_total.output_tokens;
        out->output_tokens_from = "client";
    }
    out->joules_per_output_token = !isnan(out->gpu_energy_j) && out->output_tokens > 0
                                       ? out->gpu_energy_j / out->output_tokens
                                       : NAN;
}

int telemetry_stats_between(const telemetry_t *self, telemetry_mark_t a, telemetry_mark_t b,
                            telemetry_stats_t *out) {
    assert(a < self->n_marks && b < self->n_marks);
    const telemetry_mark_entry_t *ma = self->marks[a], *mb = self->marks[b];
    memset(out, 0, sizeof *out);
    out->n_pages = self->n_pages;
    out->n_server_pages = self->n_server_pages;
    out->n_endpoints = self->n_endpoints;
    out->pages = calloc(self->n_pages + 1, sizeof *out->pages);
    out->client = calloc(self->n_endpoints + 1, sizeof *out->client);
    out->endpoint = calloc(self->n_endpoints + 1, sizeof *out->endpoint);
    if (!out->pages || !out->client || !out->endpoint) {
        telemetry_stats_clear(out);
        return -1;
    }
    out->window_s = ma->fired && mb->fired ? (double)(mb->at_ns - ma->at_ns) / 1e9 : NAN;
    for (size_t e = 0; e <= self->n_endpoints; e++) {
        telemetry_client_counts_t *c = &out->client[e];
        c->requests = mb->client[e].requests - ma->client[e].requests;
        c->output_tokens = mb->client[e].output_tokens - ma->client[e].output_tokens;
        c->prompt_tokens = mb->client[e].prompt_tokens - ma->client[e].prompt_tokens;
        out->client_total.requests += c->requests;
        out->client_total.output_tokens += c->output_tokens;
        out->client_total.prompt_tokens += c->prompt_tokens;
        if (e < self->n_endpoints)
            telemetry_read_delta_init(&out->endpoint[e]);
    }
    telemetry_read_delta_init(&out->total);
    for (size_t i = 0; i < self->n_pages; i++) {
        telemetry_page_stats_t *p = &out->pages[i];
        telemetry_page_between(self, i, ma, mb, p);
        if (i >= self->n_server_pages || !p->read)
            continue;
        telemetry_read_add(&out->total, &p->delta);
        if (p->endpoint >= 0)
            telemetry_read_add(&out->endpoint[p->endpoint], &p->delta);
    }
    telemetry_read_finish(&out->total);
    for (size_t e = 0; e < self->n_endpoints; e++)
        telemetry_read_finish(&out->endpoint[e]);
    telemetry_combine_gauges(out, 0, self->n_server_pages, TELEMETRY_G_RUNNING,
                             TELEMETRY_G_KV_USAGE);
    telemetry_combine_gauges(out, self->n_server_pages, self->n_pages, TELEMETRY_G_GPU_UTIL,
                             TELEMETRY_G_GPU_FB_USED_MIB);
    telemetry_energy(out);
    telemetry_judge(out);
    return 0;
}

void telemetry_stats_clear(telemetry_stats_t *stats) {
    free(stats->pages);
    free(stats->client);
    free(stats->endpoint);
    memset(stats, 0, sizeof *stats);
}

size_t telemetry_stats_series(const telemetry_t *self, size_t page, telemetry_gauge_t g,
                              telemetry_mark_t a, telemetry_mark_t b, double *t_s, double *value,
                              size_t cap) {
    const telemetry_page_t *p = &self->pages[page];
    int64_t from = self->marks[a]->at_ns, to = self->marks[b]->at_ns;
    size_t n = 0;
    for (size_t i = 0; i < p->n_series && n < cap; i++) {
        const telemetry_sample_t *s = &p->series[i];
        if (s->at_ns < from || s->at_ns > to)
            continue;
        t_s[n] = (double)(s->at_ns - from) / 1e9;
        value[n++] = s->gauge[g];
    }
    return n;
}
