/* The pages and their marks: scraping them (at marks and periodically), reading each page
 * (telemetry_read) into its mark, its series and its restart check, and counting the client's
 * finished requests by endpoint. What happened between two marks is telemetry_stats.c. */
#define _GNU_SOURCE
#include "telemetry.h"

#include <assert.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "loop.h"
#include "scrape.h"
#include "telemetry_internal.h"

static int telemetry_add_page(telemetry_t *self, const char *url, int endpoint, bool gpu) {
    telemetry_page_t *p = &self->pages[self->n_pages];
    if (!(p->url = strdup(url)))
        return -1;
    p->endpoint = endpoint;
    p->gpu = gpu;
    self->n_pages++;
    return 0;
}

/* The endpoint's own /metrics: its base URL (no trailing slash) + "/metrics". */
static int telemetry_add_auto_page(telemetry_t *self, const char *endpoint_url, int endpoint) {
    char url[2048], base[2048];
    config_endpoint_base(endpoint_url, base, sizeof base);
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    snprintf(url, sizeof url, "%.*s/metrics", (int)n, base);
    if (telemetry_add_page(self, url, endpoint, false) < 0)
        return -1;
    self->pages[self->n_pages - 1].auto_page = true;
    return 0;
}

static int telemetry_add_pages(telemetry_t *self) {
    const config_telemetry_t *t = &self->cfg->telemetry;
    const config_target_t *target = &self->cfg->target;
    size_t n = (t->server_metrics == SERVER_METRICS_AUTO ? target->n_endpoints : 0) +
               (t->server_metrics == SERVER_METRICS_URLS ? t->n_server_urls : 0) + t->n_gpu_urls;
    if (!(self->pages = calloc(n ? n : 1, sizeof *self->pages)))
        return -1;
    if (t->server_metrics == SERVER_METRICS_AUTO)
        for (size_t i = 0; i < target->n_endpoints; i++)
            if (telemetry_add_auto_page(self, target->endpoints[i], (int)i) < 0)
                return -1;
    /* A list as long as the endpoints is theirs, in order; any other list is the servers as a
     * whole (compared with the run's total). */
    bool per_endpoint = t->n_server_urls == target->n_endpoints;
    if (t->server_metrics == SERVER_METRICS_URLS)
        for (size_t i = 0; i < t->n_server_urls; i++)
            if (telemetry_add_page(self, t->server_urls[i], per_endpoint ? (int)i : -1, false) < 0)
                return -1;
    self->n_server_pages = self->n_pages;
    for (size_t i = 0; i < t->n_gpu_urls; i++)
        if (telemetry_add_page(self, t->gpu_urls[i], -1, true) < 0)
            return -1;
    return 0;
}

telemetry_t *telemetry_new(const config_t *cfg, const char *name) {
    const config_telemetry_t *t = &cfg->telemetry;
    if (t->server_metrics == SERVER_METRICS_OFF && t->n_gpu_urls == 0)
        return NULL;
    if (t->server_metrics == SERVER_METRICS_AUTO && cfg->target.n_endpoints == 0 &&
        t->n_gpu_urls == 0)
        return NULL;
    telemetry_t *self = calloc(1, sizeof *self);
    if (!self)
        goto oom;
    self->cfg = cfg;
    self->name = name;
    self->interval_ns = t->scrape_interval_ns > 0 ? t->scrape_interval_ns : 1000000000LL;
    self->n_endpoints = cfg->target.n_endpoints;
    if (!(self->client = calloc(self->n_endpoints + 1, sizeof *self->client)) ||
        !(self->loop = loop_new()) ||
        !(self->scrape = scrape_new(self->loop, TELEMETRY_SCRAPE_TIMEOUT_NS)) ||
        telemetry_add_pages(self) < 0)
        goto oom;
    return self;
oom:
    fprintf(stderr, "%s: out of memory for server metrics; the run goes on without them\n", name);
    telemetry_destroy(&self);
    return NULL;
}

static void telemetry_mark_free(telemetry_mark_entry_t *m) {
    if (!m)
        return;
    free(m->label);
    free(m->readings);
    free(m->read);
    free(m->errors);
    free(m->client);
    free(m);
}

void telemetry_destroy(telemetry_t **self_p) {
    telemetry_t *self = *self_p;
    if (!self)
        return;
    scrape_destroy(&self->scrape); /* before the contexts its GETs point to go */
    for (size_t i = 0; i < self->n_marks; i++)
        telemetry_mark_free(self->marks[i]);
    for (size_t i = 0; self->pages && i < self->n_pages; i++) {
        free(self->pages[i].url);
        free(self->pages[i].series);
        free(self->pages[i].restarts);
        free(self->pages[i].failures);
    }
    free(self->pages);
    free(self->marks);
    free(self->client);
    loop_destroy(&self->loop);
    free(self);
    *self_p = NULL;
}

int telemetry_fd(const telemetry_t *self) {
    return self ? loop_fd(self->loop) : -1;
}

void telemetry_poll(telemetry_t *self) {
    if (self)
        loop_run_once(self->loop);
}

static void telemetry_note_sample(telemetry_page_t *p, int64_t at_ns,
                                  const telemetry_reading_t *r) {
    if (buffer_grow_array(&p->series, &p->cap_series, p->n_series + 1, sizeof *p->series) < 0)
        return;
    telemetry_sample_t *s = &p->series[p->n_series++];
    s->at_ns = at_ns;
    memcpy(s->gauge, r->gauge, sizeof s->gauge);
}

/* Compares r with the page's last reading (when r is newer): a counter that went backwards is a
 * restart, kept with its instant. */
static void telemetry_check_restart(telemetry_page_t *p, int64_t at_ns,
                                    const telemetry_reading_t *r) {
    if (p->have_last && at_ns < p->last_ns)
        return; /* an older GET answering late: nothing to compare */
    if (p->have_last) {
        telemetry_delta_t d;
        telemetry_read_delta(&p->last, r, &d);
        if (d.restarted && buffer_grow_array(&p->restarts, &p->cap_restarts, p->n_restarts + 1,
                                             sizeof *p->restarts) == 0) {
            telemetry_event_t *e = &p->restarts[p->n_restarts++];
            e->at_ns = at_ns;
            snprintf(e->why, sizeof e->why, "%s", d.restart_why);
        }
    }
    p->last = *r;
    p->last_ns = at_ns;
    p->have_last = true;
}

/* An endpoint's /metrics that is not there (a 4xx) or is no server's page: a quiet absence, said
 * in one line, never asked again, never an error or a zero in the figures. */
static void telemetry_note_absent(telemetry_t *self, telemetry_page_t *p, const char *why) {
    if (p->absent)
        return;
    p->absent = true;
    snprintf(p->absent_why, sizeof p->absent_why, "%s", why);
    fprintf(stderr, "%s: server metrics absent: %s %s (server_metrics: none skips the scrape)\n",
            self->name, p->url, why);
}

static bool telemetry_absent_error(const telemetry_page_t *p, const char *error) {
    return p->auto_page && strncmp(error, "HTTP 4", 6) == 0;
}

static void telemetry_note_failure(telemetry_t *self, telemetry_page_t *p, int64_t at_ns,
                                   const char *error) {
    if (buffer_grow_array(&p->failures, &p->cap_failures, p->n_failures + 1, sizeof *p->failures) ==
        0)
        p->failures[p->n_failures++] = at_ns;
    if (!p->said_failure) {
        p->said_failure = true;
        fprintf(stderr, "%s: cannot read %s: %s (the run goes on; later failures are counted)\n",
                self->name, p->url, error);
    }
}

static void telemetry_say_page_problems(telemetry_t *self, telemetry_page_t *p,
                                        const prom_page_t *page, const telemetry_reading_t *r) {
    if (page->lines_skipped && !p->said_skips) {
        p->said_skips = true;
        fprintf(stderr, "%s: %s: line %zu: %s (%zu malformed line%s skipped)\n", self->name, p->url,
                page->first_error_line, page->first_error, page->lines_skipped,
                page->lines_skipped == 1 ? "" : "s");
    }
    if (!r->dialect && !p->said_unknown) {
        p->said_unknown = true;
        fprintf(stderr, "%s: %s has no %s names; its figures are absent\n", self->name, p->url,
                p->gpu ? "DCGM" : "vLLM, SGLang or Dynamo");
    }
}

static void telemetry_on_page(void *arg, prom_page_t *page, const char *error, int64_t start_ns,
                              int64_t end_ns) {
    telemetry_get_t *get = arg;
    telemetry_t *self = get->owner;
    telemetry_page_t *p = &self->pages[get->page];
    telemetry_mark_entry_t *m = get->mark;
    if (m) /* a mark's pages count at the mark's instant, inside the spans it closes or opens */
        start_ns = m->at_ns;
    if (page) {
        telemetry_reading_t *r = m ? &m->readings[get->page] : malloc(sizeof *r);
        if (r) {
            telemetry_read_page(page, r);
            if (p->auto_page && !r->dialect)
                telemetry_note_absent(self, p, "has no vLLM, SGLang or Dynamo names");
            else
                telemetry_say_page_problems(self, p, page, r);
            telemetry_check_restart(p, start_ns, r);
            telemetry_note_sample(p, start_ns, r);
            if (m)
                m->read[get->page] = true;
            else
                free(r);
        }
        prom_page_destroy(&page);
    } else {
        if (telemetry_absent_error(p, error))
            telemetry_note_absent(self, p, error);
        else
            telemetry_note_failure(self, p, start_ns, error);
        if (m)
            snprintf(m->errors[get->page], sizeof m->errors[get->page], "%s", error);
    }
    if (m)
        m->pending--;
    else
        p->periodic_inflight = false;
    free(get);
}

static void telemetry_get(telemetry_t *self, size_t page, telemetry_mark_entry_t *m) {
    if (self->pages[page].absent) {
        if (m) {
            snprintf(m->errors[page], sizeof m->errors[page], "absent: %s",
                     self->pages[page].absent_why);
            m->pending--;
        }
        return;
    }
    telemetry_get_t *get = malloc(sizeof *get);
    if (get)
        *get = (telemetry_get_t){self, page, m};
    if (!get || scrape_get(self->scrape, self->pages[page].url, telemetry_on_page, get) < 0) {
        free(get);
        if (m) {
            snprintf(m->errors[page], sizeof m->errors[page], "out of memory");
            m->pending--;
        }
        return;
    }
    if (!m)
        self->pages[page].periodic_inflight = true;
}

static void telemetry_on_series_tick(loop_t *loop, uint64_t timer_id, void *arg) {
    telemetry_t *self = arg;
    self->series_timer = 0;
    if (self->series_stopped)
        return;
    for (size_t i = 0; i < self->n_pages; i++)
        if (!self->pages[i].periodic_inflight) /* a slow page is not asked twice at once */
            telemetry_get(self, i, NULL);
    self->series_timer = loop_timer_at(self->loop, loop_now_ns() + self->interval_ns,
                                       telemetry_on_series_tick, self);
}

static void telemetry_fire(telemetry_t *self, telemetry_mark_entry_t *m) {
    m->fired = true;
    m->timer = 0;
    m->at_ns = loop_now_ns();
    memcpy(m->client, self->client, (self->n_endpoints + 1) * sizeof *m->client);
    m->pending = self->n_pages;
    for (size_t i = 0; i < self->n_pages; i++)
        telemetry_get(self, i, m);
    if (!self->series_started && !self->series_stopped) {
        self->series_started = true;
        self->series_timer =
            loop_timer_at(self->loop, m->at_ns + self->interval_ns, telemetry_on_series_tick, self);
    }
}

static void telemetry_on_mark_due(loop_t *loop, uint64_t timer_id, void *arg) {
    telemetry_mark_entry_t *m = arg;
    telemetry_fire(m->owner, m);
}

telemetry_mark_t telemetry_mark(telemetry_t *self, int64_t when_ns, const char *label) {
    assert(self);
    telemetry_mark_entry_t *m = calloc(1, sizeof *m);
    size_t np = self->n_pages ? self->n_pages : 1;
    if (!m || !(m->label = strdup(label)) || !(m->readings = calloc(np, sizeof *m->readings)) ||
        !(m->read = calloc(np, sizeof *m->read)) || !(m->errors = calloc(np, sizeof *m->errors)) ||
        !(m->client = calloc(self->n_endpoints + 1, sizeof *m->client)) ||
        buffer_grow_array(&self->marks, &self->cap_marks, self->n_marks + 1, sizeof *self->marks) <
            0) {
        fprintf(stderr, "%s: out of memory for a server-metrics mark\n", self->name);
        telemetry_mark_free(m);
        abort();
    }
    m->when_ns = when_ns;
    self->marks[self->n_marks] = m;
    m->owner = self;
    telemetry_mark_t handle = self->n_marks++;
    if (when_ns > loop_now_ns()) {
        m->timer = loop_timer_at(self->loop, when_ns, telemetry_on_mark_due, m);
    } else {
        telemetry_fire(self, m);
    }
    loop_run_once(self->loop); /* curl's first timers, so that telemetry_fd knows them */
    return handle;
}

void telemetry_stop_series(telemetry_t *self) {
    if (!self)
        return;
    self->series_stopped = true;
    loop_timer_cancel(self->loop, self->series_timer);
    self->series_timer = 0;
}

/* Whether every page of mark has answered or failed. */
static bool telemetry_mark_done(const telemetry_t *self, telemetry_mark_t mark) {
    const telemetry_mark_entry_t *m = self->marks[mark];
    return m->fired && m->pending == 0;
}

void telemetry_wait(telemetry_t *self, int64_t deadline_ns) {
    for (;;) {
        bool done = true;
        for (size_t i = 0; i < self->n_marks; i++)
            done &= telemetry_mark_done(self, i);
        int64_t left = deadline_ns - loop_now_ns();
        if (done || left <= 0)
            return;
        struct pollfd p = {.fd = loop_fd(self->loop), .events = POLLIN};
        poll(&p, 1, (int)(left / 1000000 < 100 ? left / 1000000 + 1 : 100));
        loop_run_once(self->loop);
    }
}

static void telemetry_count(telemetry_client_counts_t *c, const request_record_t *rec) {
    bool from_usage;
    c->requests++;
    c->output_tokens += record_output_tokens(rec, &from_usage);
    c->prompt_tokens += rec->prompt_tokens;
}

void telemetry_record(telemetry_t *self, const request_record_t *rec) {
    if (!self || rec->send_ns == 0) /* never sent: the server never saw it */
        return;
    size_t ep = rec->endpoint < self->n_endpoints ? rec->endpoint : self->n_endpoints;
    telemetry_count(&self->client[ep], rec);
    /* A record ingested after a mark fired that ended before it belongs to that mark too. */
    for (size_t i = 0; i < self->n_marks; i++) {
        telemetry_mark_entry_t *m = self->marks[i];
        if (m->fired && rec->end_ns <= m->at_ns)
            telemetry_count(&m->client[ep], rec);
    }
}

const char *telemetry_mark_label(const telemetry_t *self, telemetry_mark_t mark) {
    return self->marks[mark]->label;
}

double telemetry_scrape_interval_s(const telemetry_t *self) {
    return (double)self->interval_ns / 1e9;
}
