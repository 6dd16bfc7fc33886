#include "merge.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000LL

/* One second of the live window, keyed by the second its records ended in. */
typedef struct live_slot {
    int64_t second; /* -1 when unused */
    uint64_t ok;
    uint64_t output_tokens;
    histogram_t *ttft;
} live_slot_t;

struct merge {
    merge_stats_t overall;
    size_t n_endpoints;
    char **endpoint_urls;
    merge_stats_t *endpoints;
    uint64_t *endpoint_sent;
    merge_stats_t *roles[MERGE_MAX_ROLES];
    uint32_t n_roles;

    uint64_t records;
    uint64_t warmup;
    uint64_t warmup_failed;
    uint64_t unplaced;
    uint64_t digest;

    int64_t window_start_ns; /* W0; 0 = not set (the rates count every record) */
    int64_t window_limit_ns; /* the latest the window may end (start + duration); 0 = none */
    int64_t window_end_ns;   /* W1, once closed */
    bool window_closed;
    int64_t first_send_ns; /* of any record; 0 before the first */
    int64_t last_end_ns;   /* of any record */

    bool partial;
    char partial_reason[256];

    uint64_t live_ok;
    uint64_t live_failed;
    int64_t first_seen_ns;
    live_slot_t live[MERGE_LIVE_WINDOW_S];
    histogram_t *live_scratch;

    sessions_t *sessions; /* per-session figures (controller/figures/sessions.h) */
    overlap_t *decode;    /* decode intervals of the ok requests (controller/figures/overlap.h) */
};

static int stats_init(merge_stats_t *stats) {
    memset(stats, 0, sizeof *stats);
    for (int k = 0; k < METRIC__COUNT; k++)
        if (!(stats->latency[k] = histogram_new()))
            return -1;
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        if (!(stats->phase[p] = histogram_new()))
            return -1;
    return 0;
}

static void stats_free(merge_stats_t *stats) {
    for (int k = 0; k < METRIC__COUNT; k++)
        histogram_destroy(&stats->latency[k]);
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        histogram_destroy(&stats->phase[p]);
}

/* The HTTP phases of an ok request, and whether its connection was reused. */
static void stats_add_phases(merge_stats_t *stats, const request_record_t *rec) {
    if (!rec->has_phases)
        return;
    stats->phases_measured++;
    stats->connection_reused += rec->connection_reused;
    if (rec->tls_version >= 10 && rec->tls_version <= 13) {
        stats->tls_version[rec->tls_version - 10]++;
        if (!rec->connection_reused) {
            stats->tls_connections++;
            stats->tls_resumed += rec->tls_resumed;
        }
    }
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        histogram_record(stats->phase[p], rec->phase_ns[p] > 0 ? (uint64_t)rec->phase_ns[p] : 0);
}

merge_t *merge_new(const config_t *cfg) {
    merge_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    bool ok = stats_init(&self->overall) == 0 && (self->live_scratch = histogram_new());
    for (int i = 0; i < MERGE_LIVE_WINDOW_S; i++) {
        self->live[i].second = -1;
        ok = ok && (self->live[i].ttft = histogram_new());
    }
    size_t n = cfg ? cfg->target.n_endpoints : 0;
    ok = ok && (self->sessions = sessions_new(cfg, n)) && (self->decode = overlap_new());
    if (ok && n > 0) {
        self->n_endpoints = n;
        self->endpoint_urls = calloc(n, sizeof *self->endpoint_urls);
        self->endpoints = calloc(n, sizeof *self->endpoints);
        self->endpoint_sent = calloc(n, sizeof *self->endpoint_sent);
        ok = self->endpoint_urls && self->endpoints && self->endpoint_sent;
        for (size_t i = 0; ok && i < n; i++)
            ok = (self->endpoint_urls[i] = strdup(cfg->target.endpoints[i])) &&
                 stats_init(&self->endpoints[i]) == 0;
    }
    if (!ok)
        merge_destroy(&self);
    return self;
}

void merge_destroy(merge_t **self_p) {
    assert(self_p);
    merge_t *self = *self_p;
    if (!self)
        return;
    stats_free(&self->overall);
    for (size_t i = 0; i < self->n_endpoints; i++) {
        if (self->endpoint_urls)
            free(self->endpoint_urls[i]);
        if (self->endpoints)
            stats_free(&self->endpoints[i]);
    }
    free(self->endpoint_urls);
    free(self->endpoints);
    free(self->endpoint_sent);
    sessions_destroy(&self->sessions);
    overlap_destroy(&self->decode);
    for (int r = 0; r < MERGE_MAX_ROLES; r++) {
        if (self->roles[r])
            stats_free(self->roles[r]);
        free(self->roles[r]);
    }
    for (int i = 0; i < MERGE_LIVE_WINDOW_S; i++)
        histogram_destroy(&self->live[i].ttft);
    histogram_destroy(&self->live_scratch);
    free(self);
    *self_p = NULL;
}

merge_stats_t *merge_stats_new(void) {
    merge_stats_t *stats = malloc(sizeof *stats);
    if (stats && stats_init(stats) != 0) {
        stats_free(stats);
        free(stats);
        return NULL;
    }
    return stats;
}

void merge_stats_destroy(merge_stats_t **stats_p) {
    if (!*stats_p)
        return;
    stats_free(*stats_p);
    free(*stats_p);
    *stats_p = NULL;
}

void merge_stats_pool(merge_stats_t *dst, const merge_stats_t *src) {
    for (int k = 0; k < METRIC__COUNT; k++)
        histogram_merge(dst->latency[k], src->latency[k]);
    for (int p = 0; p < RECORD_PHASE__COUNT; p++)
        histogram_merge(dst->phase[p], src->phase[p]);
    for (int c = 0; c < ERROR__COUNT; c++)
        dst->errors[c] += src->errors[c];
    dst->requests += src->requests;
    dst->ok += src->ok;
    dst->failed += src->failed;
    dst->cancelled += src->cancelled;
    dst->output_tokens += src->output_tokens;
    dst->input_tokens += src->input_tokens;
    dst->cached_tokens += src->cached_tokens;
    dst->usage_prompt_tokens += src->usage_prompt_tokens;
    dst->output_from_usage += src->output_from_usage;
    dst->output_from_chunks += src->output_from_chunks;
    dst->usage_chunks_differ += src->usage_chunks_differ;
    dst->output_from_tokenizer += src->output_from_tokenizer;
    dst->usage_tokenizer_differ += src->usage_tokenizer_differ;
    if (src->prompt_checked) {
        if (!dst->prompt_checked || src->prompt_extra_min < dst->prompt_extra_min)
            dst->prompt_extra_min = src->prompt_extra_min;
        if (!dst->prompt_checked || src->prompt_extra_max > dst->prompt_extra_max)
            dst->prompt_extra_max = src->prompt_extra_max;
        dst->prompt_checked += src->prompt_checked;
        dst->prompt_extra_sum += src->prompt_extra_sum;
    }
    dst->requested_checked += src->requested_checked;
    dst->requested_output_tokens += src->requested_output_tokens;
    dst->received_output_tokens += src->received_output_tokens;
    dst->output_mismatched += src->output_mismatched;
    dst->stopped_early += src->stopped_early;
    for (int f = 0; f < FINISH__COUNT; f++)
        dst->finish_reasons[f] += src->finish_reasons[f];
    dst->refusals += src->refusals;
    dst->sessions_ended += src->sessions_ended;
    dst->window_output_tokens += src->window_output_tokens;
    dst->window_requests += src->window_requests;
    dst->window_input_tokens += src->window_input_tokens;
    dst->window_sessions += src->window_sessions;
    dst->phases_measured += src->phases_measured;
    dst->connection_reused += src->connection_reused;
    for (int v = 0; v < 4; v++)
        dst->tls_version[v] += src->tls_version[v];
    dst->tls_connections += src->tls_connections;
    dst->tls_resumed += src->tls_resumed;
}

/* The role's statistics, allocated on first sight; NULL when it has no slot. */
static merge_stats_t *role_stats(merge_t *self, uint32_t role) {
    if (role >= MERGE_MAX_ROLES)
        return NULL;
    if (!self->roles[role]) {
        merge_stats_t *stats = malloc(sizeof *stats);
        if (!stats)
            return NULL;
        if (stats_init(stats) != 0) {
            stats_free(stats);
            free(stats);
            return NULL;
        }
        self->roles[role] = stats;
    }
    if (role >= self->n_roles)
        self->n_roles = role + 1;
    return self->roles[role];
}

static void stats_count_tokens(merge_stats_t *stats, const request_record_t *rec,
                               const metrics_t *m) {
    stats->output_tokens += m->output_tokens;
    stats->input_tokens += m->input_tokens;
    if (m->output_from_usage) {
        stats->output_from_usage++;
        stats->cached_tokens += rec->cached_tokens;
        stats->usage_prompt_tokens += rec->prompt_tokens;
        if (m->chunk_tokens != m->output_tokens)
            stats->usage_chunks_differ++;
        if (rec->has_tokenizer_count && rec->tokenizer_tokens != rec->completion_tokens)
            stats->usage_tokenizer_differ++;
        int64_t extra = (int64_t)rec->prompt_tokens - (int64_t)rec->requested_input_tokens;
        if (!stats->prompt_checked || extra < stats->prompt_extra_min)
            stats->prompt_extra_min = extra;
        if (!stats->prompt_checked || extra > stats->prompt_extra_max)
            stats->prompt_extra_max = extra;
        stats->prompt_checked++;
        stats->prompt_extra_sum += extra;
    } else if (rec->has_tokenizer_count) {
        stats->output_from_tokenizer++;
    } else {
        stats->output_from_chunks++;
    }
    if (rec->requested_output_tokens > 0) {
        stats->requested_checked++;
        stats->requested_output_tokens += rec->requested_output_tokens;
        stats->received_output_tokens += m->output_tokens;
        /* Counted from the chunks (no usage), a reply the server ended on `length` reached the
         * asked length: its events carried several tokens each. A `stop` short of it did not. */
        bool reached = !m->output_from_usage && rec->finish_reason == FINISH_LENGTH;
        if (m->output_vs_requested != 0 && !reached)
            stats->output_mismatched++;
        if (rec->finish_reason == FINISH_STOP && m->output_vs_requested < 0)
            stats->stopped_early++;
    }
    if (rec->finish_reason < FINISH__COUNT)
        stats->finish_reasons[rec->finish_reason]++;
    stats->refusals += rec->refusal;
}

/* Everything but the per-token ITL samples, which merge_add records for all slices at once. */
static void stats_add(merge_stats_t *stats, const request_record_t *rec, const metrics_t *m) {
    stats->requests++;
    if (rec->session_end)
        stats->sessions_ended++;
    stats->retries += rec->retries;
    stats->retried_requests += rec->retries > 0;
    stats->retry_wait_ns += rec->retry_wait_ns > 0 ? (uint64_t)rec->retry_wait_ns : 0;
    stats->resends += rec->resends;
    if (m->cancelled) {
        stats->cancelled++;
        stats->errors[ERROR_CANCELLED]++;
        return;
    }
    if (m->failed) {
        stats->failed++;
        if (rec->error < ERROR__COUNT)
            stats->errors[rec->error]++;
        /* How late the send was does not depend on how the request ended: a client that falls
         * behind on requests that then fail has still not kept the schedule. */
        if (m->has[METRIC_SCHEDULE_LAG])
            histogram_record(stats->latency[METRIC_SCHEDULE_LAG], m->value_ns[METRIC_SCHEDULE_LAG]);
        return;
    }
    stats->ok++;
    for (int k = 0; k < METRIC__COUNT; k++)
        if (k != METRIC_ITL && m->has[k])
            histogram_record(stats->latency[k], m->value_ns[k]);
    stats_count_tokens(stats, rec, m);
    stats_add_phases(stats, rec);
}

static void live_add(merge_t *self, const request_record_t *rec, const metrics_t *m) {
    if (self->first_seen_ns == 0 || (rec->send_ns && rec->send_ns < self->first_seen_ns))
        self->first_seen_ns = rec->send_ns;
    if (m->failed)
        self->live_failed++;
    if (!m->ok)
        return;
    self->live_ok++;
    if (rec->end_ns <= 0)
        return;
    int64_t second = rec->end_ns / NS_PER_S;
    live_slot_t *slot = &self->live[second % MERGE_LIVE_WINDOW_S];
    if (slot->second > second) /* older than the window */
        return;
    if (slot->second < second) {
        slot->second = second;
        slot->ok = slot->output_tokens = 0;
        histogram_reset(slot->ttft);
    }
    slot->ok++;
    slot->output_tokens += m->output_tokens;
    if (m->has[METRIC_TTFT])
        histogram_record(slot->ttft, m->value_ns[METRIC_TTFT]);
}

/* Output tokens of rec received in [lo, hi]: a chunk counts at its receive time with the tokens it
 * carried. When usage and the chunks disagree on the total, the window gets the usage count's
 * share. Only records straddling the window walk their chunks. */
static uint64_t window_tokens(const request_record_t *rec, const metrics_t *m, int64_t lo,
                              int64_t hi) {
    uint32_t n = rec->n_chunks;
    if (n == 0) /* nothing streamed (a reply in one piece): its tokens arrived at the end */
        return rec->end_ns >= lo && rec->end_ns <= hi ? m->output_tokens : 0;
    if (rec->chunk_ns[0] >= lo && rec->chunk_ns[n - 1] <= hi)
        return m->output_tokens;
    if (rec->chunk_ns[n - 1] < lo || rec->chunk_ns[0] > hi)
        return 0;
    uint64_t inside = 0;
    for (uint32_t i = 0; i < n; i++)
        if (rec->chunk_ns[i] >= lo && rec->chunk_ns[i] <= hi)
            inside += metrics_chunk_tokens(rec, i);
    if (m->chunk_tokens == m->output_tokens || m->chunk_tokens == 0)
        return inside;
    return (inside * m->output_tokens + m->chunk_tokens / 2) / m->chunk_tokens;
}

/* Counts what rec contributes to the rates of each slice: its tokens received inside the window
 * and, when it ended inside, its completion. Every record counts, warm-up and failed included:
 * a request sent during the warm-up still delivers tokens in the window. */
static void window_add(merge_t *self, merge_stats_t **slices, int n, const request_record_t *rec,
                       const metrics_t *m) {
    int64_t lo = self->window_start_ns,
            hi = self->window_limit_ns ? self->window_limit_ns : INT64_MAX;
    uint64_t tokens = window_tokens(rec, m, lo, hi);
    bool ended_inside = rec->end_ns != 0 && rec->end_ns >= lo && rec->end_ns <= hi;
    /* a session the run's end cancelled did not finish; one abandoned after a failure did */
    bool ok = m->ok && ended_inside, session = rec->session_end && !m->cancelled && ended_inside;
    for (int s = 0; s < n; s++) {
        slices[s]->window_output_tokens += tokens;
        slices[s]->window_requests += ok;
        slices[s]->window_input_tokens += ok ? m->input_tokens : 0;
        slices[s]->window_sessions += session;
    }
}

void merge_add_metrics(merge_t *self, const request_record_t *rec, const metrics_t *m) {
    self->records++;
    self->digest += rec->workload_hash;
    if (rec->endpoint < self->n_endpoints)
        self->endpoint_sent[rec->endpoint]++;
    live_add(self, rec, m);
    if (rec->send_ns && (self->first_send_ns == 0 || rec->send_ns < self->first_send_ns))
        self->first_send_ns = rec->send_ns;
    if (rec->end_ns > self->last_end_ns)
        self->last_end_ns = rec->end_ns;

    merge_stats_t *slices[3];
    int n = 0;
    slices[n++] = &self->overall;
    merge_stats_t *role = role_stats(self, rec->role);
    if (rec->endpoint < self->n_endpoints)
        slices[n++] = &self->endpoints[rec->endpoint];
    if (role)
        slices[n++] = role;
    if (n < 3)
        self->unplaced++;
    window_add(self, slices, n, rec, m);
    sessions_add(self->sessions, rec); /* a failure leaves that session uncounted */
    if (m->ok && !rec->warmup && rec->first_token_ns)
        overlap_add(self->decode, rec->first_token_ns, rec->end_ns);
    if (rec->warmup) {
        self->warmup++;
        if (m->failed)
            self->warmup_failed++;
        return;
    }

    for (int s = 0; s < n; s++)
        stats_add(slices[s], rec, m);
    if (!m->ok)
        return;
    for (uint32_t i = 1; i < rec->n_chunks; i++) {
        uint32_t k;
        uint64_t itl = metrics_itl(rec, i, &k);
        for (int s = 0; s < n && k; s++)
            histogram_record_n(slices[s]->latency[METRIC_ITL], itl, k);
    }
}

void merge_add(merge_t *self, const request_record_t *rec) {
    metrics_t m;
    metrics_compute(rec, &m);
    merge_add_metrics(self, rec, &m);
}

void merge_set_run_window(merge_t *self, int64_t start_ns, int64_t end_ns) {
    self->window_start_ns = start_ns;
    self->window_limit_ns = end_ns;
    self->window_closed = false;
    sessions_set_window(self->sessions, start_ns, end_ns);
}

void merge_close_run_window(merge_t *self, bool load_until_limit) {
    int64_t end = self->last_end_ns;
    if (self->window_limit_ns && (load_until_limit || end > self->window_limit_ns))
        end = self->window_limit_ns;
    self->window_end_ns = end;
    self->window_closed = true;
}

void merge_mark_partial(merge_t *self, const char *reason) {
    self->partial = true;
    snprintf(self->partial_reason, sizeof self->partial_reason, "%s", reason ? reason : "");
}

void merge_live(merge_t *self, int64_t now_ns, uint32_t in_flight, live_t *out) {
    memset(out, 0, sizeof *out);
    out->in_flight = in_flight;
    out->requests_ok = self->live_ok;
    out->requests_failed = self->live_failed;
    /* the run started at the earlier of the window start and the first send (warm-up included) */
    int64_t start = self->first_seen_ns;
    if (self->window_start_ns && (!start || self->window_start_ns < start))
        start = self->window_start_ns;
    out->elapsed_s = start && now_ns > start ? (double)(now_ns - start) / NS_PER_S : 0.0;
    out->ttft_p50_ms = -1.0;

    int64_t now_second = now_ns / NS_PER_S, oldest = now_second - (MERGE_LIVE_WINDOW_S - 1);
    int64_t span_from = oldest * NS_PER_S;
    if (start > span_from)
        span_from = start;
    double span_s = now_ns > span_from ? (double)(now_ns - span_from) / NS_PER_S : 0.0;
    uint64_t ok = 0, tokens = 0;
    histogram_reset(self->live_scratch);
    for (int i = 0; i < MERGE_LIVE_WINDOW_S; i++) {
        const live_slot_t *slot = &self->live[i];
        if (slot->second < oldest || slot->second > now_second)
            continue;
        ok += slot->ok;
        tokens += slot->output_tokens;
        histogram_merge(self->live_scratch, slot->ttft);
    }
    if (span_s > 0) {
        out->requests_per_s = (double)ok / span_s;
        out->output_tokens_per_s = (double)tokens / span_s;
    }
    if (histogram_count(self->live_scratch) > 0)
        out->ttft_p50_ms = (double)histogram_percentile(self->live_scratch, 50) / 1e6;
}

const merge_stats_t *merge_overall(const merge_t *self) {
    return &self->overall;
}

size_t merge_endpoint_count(const merge_t *self) {
    return self->n_endpoints;
}

const char *merge_endpoint_url(const merge_t *self, size_t i) {
    return i < self->n_endpoints ? self->endpoint_urls[i] : NULL;
}

const merge_stats_t *merge_endpoint(const merge_t *self, size_t i) {
    return i < self->n_endpoints ? &self->endpoints[i] : NULL;
}

uint64_t merge_endpoint_sent(const merge_t *self, size_t i) {
    return i < self->n_endpoints ? self->endpoint_sent[i] : 0;
}

uint32_t merge_role_count(const merge_t *self) {
    return self->n_roles;
}

const merge_stats_t *merge_role(const merge_t *self, uint32_t role) {
    return role < MERGE_MAX_ROLES ? self->roles[role] : NULL;
}

uint64_t merge_warmup(const merge_t *self) {
    return self->warmup;
}

uint64_t merge_warmup_failed(const merge_t *self) {
    return self->warmup_failed;
}

uint64_t merge_records(const merge_t *self) {
    return self->records;
}

uint64_t merge_unplaced(const merge_t *self) {
    return self->unplaced;
}

uint64_t merge_digest(const merge_t *self) {
    return self->digest;
}

double merge_duration_s(const merge_t *self) {
    int64_t start = self->window_start_ns ? self->window_start_ns : self->first_send_ns;
    int64_t end = self->last_end_ns;
    if (self->window_closed)
        end = self->window_end_ns;
    else if (self->window_limit_ns && end > self->window_limit_ns)
        end = self->window_limit_ns;
    return start && end > start ? (double)(end - start) / NS_PER_S : 0.0;
}

bool merge_partial(const merge_t *self, const char **reason) {
    if (reason)
        *reason = self->partial_reason;
    return self->partial;
}

const sessions_t *merge_sessions(const merge_t *self) {
    return self->sessions;
}

overlap_t *merge_decode(const merge_t *self) {
    return self->decode;
}

double merge_wall_clock_s(const merge_t *self) {
    return self->last_end_ns > self->first_send_ns && self->first_send_ns
               ? (double)(self->last_end_ns - self->first_send_ns) / NS_PER_S
               : 0;
}
