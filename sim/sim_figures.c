#include "sim_figures.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SIM_FIGURES_SAMPLE_NS 1000000000LL

/* A gauge sampled every second. */
typedef struct sim_gauge {
    double sum, sum_sq, max;
    uint32_t samples;
} sim_gauge_t;

/* A mean of per-request times. */
typedef struct sim_mean {
    double sum_ms;
    uint64_t count;
} sim_mean_t;

/* What one replica (a page) or all of them (the total) show. */
typedef struct sim_page {
    mock_engine_stats_t at_open;
    sim_gauge_t running, waiting, kv_usage;
    sim_mean_t queue, prefill, ttft, tpot;
    uint64_t requests;
} sim_page_t;

struct sim_figures {
    loop_t *loop;
    mock_virtual_t *server;
    int64_t opens_ns, closes_ns;
    uint64_t timer;
    bool open;
    uint32_t n_pages;
    sim_page_t *pages; /* one per replica, then the total */
};

static void sim_gauge_add(sim_gauge_t *g, double v) {
    g->sum += v;
    g->sum_sq += v * v;
    g->max = g->samples == 0 || v > g->max ? v : g->max;
    g->samples++;
}

static void sim_figures_sample(loop_t *loop, uint64_t id, void *arg) {
    sim_figures_t *self = arg;
    (void)id;
    int64_t now = loop_time_ns(loop);
    self->timer = 0;
    sim_page_t *total = &self->pages[self->n_pages];
    double running = 0, waiting = 0, kv = 0;
    for (uint32_t i = 0; i < self->n_pages; i++) {
        mock_engine_stats_t st;
        mock_virtual_stats(self->server, i, &st);
        if (!self->open)
            self->pages[i].at_open = st;
        sim_gauge_add(&self->pages[i].running, st.running);
        sim_gauge_add(&self->pages[i].waiting, st.waiting);
        sim_gauge_add(&self->pages[i].kv_usage, 100 * st.kv_usage);
        running += st.running;
        waiting += st.waiting;
        kv += 100 * st.kv_usage / self->n_pages;
    }
    sim_gauge_add(&total->running, running);
    sim_gauge_add(&total->waiting, waiting);
    sim_gauge_add(&total->kv_usage, kv);
    self->open = true;
    int64_t next = now + SIM_FIGURES_SAMPLE_NS;
    if (!self->closes_ns || next < self->closes_ns)
        self->timer = loop_timer_at(loop, next, sim_figures_sample, self);
}

sim_figures_t *sim_figures_new(loop_t *loop, mock_virtual_t *server, int64_t opens_ns,
                               int64_t closes_ns) {
    sim_figures_t *self = calloc(1, sizeof(*self));
    if (!self)
        return NULL;
    self->loop = loop;
    self->server = server;
    self->opens_ns = opens_ns;
    self->closes_ns = closes_ns;
    self->n_pages = mock_virtual_replicas(server);
    self->pages = calloc(self->n_pages + 1, sizeof(*self->pages));
    if (!self->pages || !(self->timer = loop_timer_at(loop, opens_ns, sim_figures_sample, self))) {
        free(self->pages);
        free(self);
        return NULL;
    }
    return self;
}

static void sim_mean_add(sim_mean_t *m, int64_t from_ns, int64_t to_ns) {
    if (from_ns <= 0 || to_ns < from_ns)
        return;
    m->sum_ms += (double)(to_ns - from_ns) / 1e6;
    m->count++;
}

static void sim_page_reply(sim_page_t *p, const mock_virtual_reply_t *r, int64_t first,
                           int64_t last) {
    p->requests++;
    sim_mean_add(&p->queue, r->enqueued_ns, r->scheduled_ns);
    sim_mean_add(&p->prefill, r->scheduled_ns, first);
    sim_mean_add(&p->ttft, r->accepted_ns, first);
    if (r->completion_tokens > 1 && last > first) {
        p->tpot.sum_ms += (double)(last - first) / 1e6 / (r->completion_tokens - 1);
        p->tpot.count++;
    }
}

void sim_figures_reply(sim_figures_t *self, const mock_virtual_reply_t *reply) {
    if (reply->status != 200 || reply->n_events == 0 || reply->replica >= self->n_pages)
        return;
    int64_t first = reply->event_ns[0], last = reply->event_ns[reply->n_events - 1];
    if (!self->open || last < self->opens_ns || (self->closes_ns && last > self->closes_ns))
        return;
    sim_page_reply(&self->pages[reply->replica], reply, first, last);
    sim_page_reply(&self->pages[self->n_pages], reply, first, last);
}

/* {"mean", "max", "samples", "mean_square"}: the last, E[x^2], lets a reader weigh a batch by
 * its sequences (a request sees larger batches than the time average). */
static json_t *sim_gauge_json(const sim_gauge_t *g) {
    double n = g->samples ? g->samples : 1;
    return json_pack("{s:f, s:f, s:i, s:f}", "mean", g->sum / n, "max", g->max, "samples",
                     (json_int_t)g->samples, "mean_square", g->sum_sq / n);
}

static json_t *sim_mean_json(const sim_mean_t *m) {
    json_t *o = json_pack("{s:i}", "count", (json_int_t)m->count);
    json_object_set_new(o, "mean_ms", m->count ? json_real(m->sum_ms / m->count) : json_null());
    return o;
}

static json_t *sim_page_json(const sim_page_t *p, const mock_engine_stats_t *now, double window_s) {
    const mock_engine_stats_t *a = &p->at_open;
    double prompt = (double)(now->prompt_tokens - a->prompt_tokens);
    double generated = (double)(now->generation_tokens - a->generation_tokens);
    double queries = (double)(now->prefix_queries - a->prefix_queries);
    double hits = (double)(now->prefix_hits - a->prefix_hits);
    json_t *o = json_object();
    json_object_set_new(o, "requests", json_real((double)p->requests));
    json_object_set_new(o, "prompt_tokens", json_real(prompt));
    json_object_set_new(o, "generation_tokens", json_real(generated));
    json_object_set_new(o, "prefix_queries", json_real(queries));
    json_object_set_new(o, "prefix_hits", json_real(hits));
    json_object_set_new(o, "preemptions", json_real((double)(now->preemptions - a->preemptions)));
    json_object_set_new(o, "generation_tokens_per_s", json_real(generated / window_s));
    json_object_set_new(o, "prompt_tokens_per_s", json_real(prompt / window_s));
    json_object_set_new(o, "prefix_cache_hit_rate",
                        queries > 0 ? json_real(hits / queries) : json_null());
    json_object_set_new(o, "running", sim_gauge_json(&p->running));
    json_object_set_new(o, "waiting", sim_gauge_json(&p->waiting));
    json_object_set_new(o, "kv_usage_pct", sim_gauge_json(&p->kv_usage));
    json_object_set_new(o, "queue", sim_mean_json(&p->queue));
    json_object_set_new(o, "prefill", sim_mean_json(&p->prefill));
    json_object_set_new(o, "ttft", sim_mean_json(&p->ttft));
    json_object_set_new(o, "tpot", sim_mean_json(&p->tpot));
    return o;
}

json_t *sim_figures_json(sim_figures_t *self) {
    if (!self->open)
        return NULL;
    /* the planned edge, or the run's end when it ended first (limits.max_sessions, a stop) */
    int64_t now = loop_now_ns();
    int64_t closes = self->closes_ns && self->closes_ns < now ? self->closes_ns : now;
    double window_s = (double)(closes - self->opens_ns) / 1e9;
    if (!(window_s > 0))
        return NULL;
    json_t *pages = json_array();
    mock_engine_stats_t total_now = {0}, total_open = {0};
    for (uint32_t i = 0; i < self->n_pages; i++) {
        mock_engine_stats_t st;
        mock_virtual_stats(self->server, i, &st);
        json_t *page = sim_page_json(&self->pages[i], &st, window_s);
        json_object_set_new(page, "replica", json_integer(i));
        json_array_append_new(pages, page);
        const mock_engine_stats_t *a = &self->pages[i].at_open;
        total_now.prompt_tokens += st.prompt_tokens;
        total_now.generation_tokens += st.generation_tokens;
        total_now.prefix_queries += st.prefix_queries;
        total_now.prefix_hits += st.prefix_hits;
        total_now.preemptions += st.preemptions;
        total_open.prompt_tokens += a->prompt_tokens;
        total_open.generation_tokens += a->generation_tokens;
        total_open.prefix_queries += a->prefix_queries;
        total_open.prefix_hits += a->prefix_hits;
        total_open.preemptions += a->preemptions;
    }
    sim_page_t *total = &self->pages[self->n_pages];
    total->at_open = total_open;
    json_t *o = json_object();
    json_object_set_new(o, "source", json_string("simulated engine (exact, from the model)"));
    json_object_set_new(o, "window_s", json_real(window_s));
    json_object_set_new(o, "scrape_interval_s", json_real(SIM_FIGURES_SAMPLE_NS / 1e9));
    json_object_set_new(o, "pages", pages);
    json_object_set_new(o, "total", sim_page_json(total, &total_now, window_s));
    return o;
}

void sim_figures_destroy(sim_figures_t **self_p) {
    sim_figures_t *self = *self_p;
    if (!self)
        return;
    loop_timer_cancel(self->loop, self->timer);
    free(self->pages);
    free(self);
    *self_p = NULL;
}
