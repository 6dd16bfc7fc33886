#include "window.h"

#include <stdlib.h>
#include <string.h>

struct window {
    int64_t start_ns;
    int64_t snapshot_ns;
    uint32_t n_snapshots;
    int64_t last_end_ns;
    window_stats_t total;
    window_stats_t *snapshots;
};

int window_stats_init(window_stats_t *self) {
    memset(self, 0, sizeof *self);
    for (int k = 0; k < METRIC__COUNT; k++)
        if (!(self->latency[k] = histogram_new())) {
            window_stats_free(self);
            return -1;
        }
    return 0;
}

void window_stats_free(window_stats_t *self) {
    for (int k = 0; k < METRIC__COUNT; k++)
        histogram_destroy(&self->latency[k]);
    memset(self, 0, sizeof *self);
}

void window_stats_pool(window_stats_t *dst, const window_stats_t *src) {
    for (int k = 0; k < METRIC__COUNT; k++)
        histogram_merge(dst->latency[k], src->latency[k]);
    dst->ok += src->ok;
    dst->failed += src->failed;
    dst->cancelled += src->cancelled;
    for (int c = 0; c < ERROR__COUNT; c++)
        dst->errors[c] += src->errors[c];
    for (int f = 0; f < FINISH__COUNT; f++)
        dst->finish_reasons[f] += src->finish_reasons[f];
    dst->refusals += src->refusals;
    dst->usage_prompt_tokens += src->usage_prompt_tokens;
    dst->cached_tokens += src->cached_tokens;
    dst->output_tokens += src->output_tokens;
    dst->requests_ended += src->requests_ended;
    dst->session_starts += src->session_starts;
    dst->duration_ns += src->duration_ns;
}

double window_stats_percentile_ms(const window_stats_t *self, metrics_kind_t k, double p) {
    if (!histogram_count(self->latency[k]))
        return -1;
    return (double)histogram_percentile(self->latency[k], p) / 1e6;
}

double window_stats_error_pct(const window_stats_t *self) {
    uint64_t done = self->ok + self->failed;
    return done ? 100.0 * (double)self->failed / (double)done : 0;
}

double window_stats_per_s(const window_stats_t *self, uint64_t count) {
    return self->duration_ns > 0 ? (double)count / ((double)self->duration_ns / 1e9) : 0;
}

double window_stats_cache_hit_pct(const window_stats_t *self) {
    if (!self->usage_prompt_tokens)
        return -1;
    return 100.0 * (double)self->cached_tokens / (double)self->usage_prompt_tokens;
}

window_t *window_new(int64_t start_ns, int64_t snapshot_ns, uint32_t n_snapshots) {
    window_t *self = calloc(1, sizeof *self);
    if (!self || n_snapshots == 0 || snapshot_ns <= 0) {
        free(self);
        return NULL;
    }
    self->start_ns = start_ns;
    self->snapshot_ns = snapshot_ns;
    self->n_snapshots = n_snapshots;
    self->snapshots = calloc(n_snapshots, sizeof *self->snapshots);
    bool ok = self->snapshots && window_stats_init(&self->total) == 0;
    for (uint32_t i = 0; ok && i < n_snapshots; i++) {
        ok = window_stats_init(&self->snapshots[i]) == 0;
        self->snapshots[i].duration_ns = snapshot_ns;
    }
    self->total.duration_ns = snapshot_ns * (int64_t)n_snapshots;
    if (!ok)
        window_destroy(&self);
    return self;
}

void window_destroy(window_t **self_p) {
    window_t *self = *self_p;
    if (!self)
        return;
    window_stats_free(&self->total);
    for (uint32_t i = 0; self->snapshots && i < self->n_snapshots; i++)
        window_stats_free(&self->snapshots[i]);
    free(self->snapshots);
    free(self);
    *self_p = NULL;
}

uint32_t window_snapshots(const window_t *self) {
    return self->n_snapshots;
}

const window_stats_t *window_snapshot(const window_t *self, uint32_t i) {
    return &self->snapshots[i];
}

const window_stats_t *window_total(const window_t *self) {
    return &self->total;
}

int64_t window_edge_ns(const window_t *self, uint32_t i) {
    return self->start_ns + (int64_t)i * self->snapshot_ns;
}

void window_close(window_t *self, int64_t end_ns) {
    int64_t total = 0;
    for (uint32_t i = 0; i < self->n_snapshots; i++) {
        int64_t from = window_edge_ns(self, i), elapsed = end_ns - from;
        elapsed = elapsed < 0 ? 0 : elapsed > self->snapshot_ns ? self->snapshot_ns : elapsed;
        self->snapshots[i].duration_ns = elapsed;
        total += elapsed;
    }
    self->total.duration_ns = total;
}

/* The snapshot instant t falls in: [start + i d, start + (i+1) d); -1 outside the window. */
static int window_index(const window_t *self, int64_t t) {
    if (t < self->start_ns)
        return -1;
    int64_t i = (t - self->start_ns) / self->snapshot_ns;
    return i < (int64_t)self->n_snapshots ? (int)i : -1;
}

/* What rec counts in the span it was sent in: its outcome and, when ok, its latencies. */
static void window_add_sent(window_stats_t *s, const request_record_t *rec, const metrics_t *m) {
    if (m->cancelled) {
        s->cancelled++;
        return;
    }
    if (m->failed) {
        s->failed++;
        if (rec->error < ERROR__COUNT)
            s->errors[rec->error]++;
        return;
    }
    s->ok++;
    if (rec->finish_reason < FINISH__COUNT)
        s->finish_reasons[rec->finish_reason]++;
    s->refusals += rec->refusal;
    for (int k = 0; k < METRIC__COUNT; k++) {
        if (!m->has[k])
            continue;
        if (k != METRIC_ITL) {
            histogram_record(s->latency[k], m->value_ns[k]);
            continue;
        }
        for (uint32_t i = 1; i < rec->n_chunks; i++) { /* every per-token gap, as merge does */
            uint32_t samples;
            uint64_t gap = metrics_itl(rec, i, &samples);
            histogram_record_n(s->latency[k], gap, samples);
        }
    }
    if (rec->has_usage) {
        s->usage_prompt_tokens += rec->prompt_tokens;
        s->cached_tokens += rec->cached_tokens;
    }
}

int64_t window_last_end_ns(const window_t *self) {
    return self->last_end_ns;
}

void window_add(window_t *self, const request_record_t *rec, const metrics_t *m) {
    if (rec->end_ns > self->last_end_ns)
        self->last_end_ns = rec->end_ns;
    int sent = window_index(self, rec->send_ns);
    if (rec->send_ns != 0 && sent >= 0) {
        window_add_sent(&self->snapshots[sent], rec, m);
        window_add_sent(&self->total, rec, m);
        if (rec->node == 0) {
            self->snapshots[sent].session_starts++;
            self->total.session_starts++;
        }
    }
    for (uint32_t i = 0; i < rec->n_chunks; i++) {
        int at = window_index(self, rec->chunk_ns[i]);
        if (at < 0)
            continue;
        uint32_t tokens = metrics_chunk_tokens(rec, i);
        self->snapshots[at].output_tokens += tokens;
        self->total.output_tokens += tokens;
    }
    int ended = m->ok ? window_index(self, rec->end_ns) : -1;
    if (ended >= 0) {
        self->snapshots[ended].requests_ended++;
        self->total.requests_ended++;
    }
}
