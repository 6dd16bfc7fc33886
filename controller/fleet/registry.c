#include "registry.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "buffer.h"

/* Open addressing over entry pointers, at most half full; NULL is an empty slot. */
struct registry {
    registry_worker_t **workers; /* in the order they said Hello */
    run_worker_t **runs;         /* their run parts, in the same order */
    size_t n, cap_workers, cap_runs;
    registry_worker_t **slots;
    size_t n_slots; /* a power of two, at least 2 n */
};

static size_t slot_of(const registry_t *self, const void *id, size_t id_len) {
    return (size_t)XXH3_64bits(id, id_len) & (self->n_slots - 1);
}

static void insert(registry_t *self, registry_worker_t *w) {
    size_t s = slot_of(self, w->id, w->id_len);
    while (self->slots[s])
        s = (s + 1) & (self->n_slots - 1);
    self->slots[s] = w;
}

/* Rebuilds the hash for n_slots slots. 0 ok, -1 out of memory (the old hash is kept). */
static int rehash(registry_t *self, size_t n_slots) {
    registry_worker_t **slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return -1;
    free(self->slots);
    self->slots = slots;
    self->n_slots = n_slots;
    for (size_t i = 0; i < self->n; i++)
        insert(self, self->workers[i]);
    return 0;
}

registry_t *registry_new(void) {
    registry_t *self = calloc(1, sizeof *self);
    if (!self || rehash(self, 16) != 0) {
        free(self);
        return NULL;
    }
    return self;
}

void registry_destroy(registry_t **self_p) {
    registry_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->n; i++) {
        free(self->workers[i]->run.held);
        free(self->workers[i]);
    }
    free(self->workers);
    free(self->runs);
    free(self->slots);
    free(self);
    *self_p = NULL;
}

registry_worker_t *registry_add(registry_t *self, const void *id, size_t id_len, const char *name,
                                int64_t now) {
    registry_worker_t *w = NULL;
    if (id_len > sizeof w->id)
        return NULL;
    if (buffer_grow_array(&self->workers, &self->cap_workers, self->n + 1, sizeof *self->workers) <
            0 ||
        buffer_grow_array(&self->runs, &self->cap_runs, self->n + 1, sizeof *self->runs) < 0)
        return NULL;
    if (2 * (self->n + 1) > self->n_slots && rehash(self, 2 * self->n_slots) != 0)
        return NULL;
    if (!(w = calloc(1, sizeof *w)))
        return NULL;
    memcpy(w->id, id, id_len);
    w->id_len = id_len;
    w->last_rx_ns = now;
    w->job_index = -1;
    w->threads = 1;
    w->slot = -1;
    run_worker_init(&w->run, name, REGISTRY_WORKER_MESSAGE_BYTES);
    self->workers[self->n] = w;
    self->runs[self->n] = &w->run;
    self->n++;
    insert(self, w);
    return w;
}

void registry_remove(registry_t *self, registry_worker_t *w) {
    size_t i = 0;
    while (i < self->n && self->workers[i] != w)
        i++;
    if (i == self->n)
        return;
    memmove(self->workers + i, self->workers + i + 1, (self->n - i - 1) * sizeof *self->workers);
    memmove(self->runs + i, self->runs + i + 1, (self->n - i - 1) * sizeof *self->runs);
    self->n--;
    free(w->run.held);
    free(w);
    /* The chains past its slot are rebuilt in place: no memory needed. */
    memset(self->slots, 0, self->n_slots * sizeof *self->slots);
    for (size_t k = 0; k < self->n; k++)
        insert(self, self->workers[k]);
}

registry_worker_t *registry_find(const registry_t *self, const void *id, size_t id_len) {
    for (size_t s = slot_of(self, id, id_len);; s = (s + 1) & (self->n_slots - 1)) {
        registry_worker_t *w = self->slots[s];
        if (!w)
            return NULL;
        if (w->id_len == id_len && memcmp(w->id, id, id_len) == 0)
            return w;
    }
}

size_t registry_size(const registry_t *self) {
    return self->n;
}

registry_worker_t *registry_at(const registry_t *self, size_t i) {
    return i < self->n ? self->workers[i] : NULL;
}

uint32_t registry_count(const registry_t *self, run_worker_state_t state) {
    uint32_t n = 0;
    for (size_t i = 0; i < self->n; i++)
        n += self->workers[i]->run.state == state;
    return n;
}

registry_worker_t *registry_of(run_worker_t *w) {
    return (registry_worker_t *)((char *)w - offsetof(registry_worker_t, run));
}

/* Whether w is in the run, still owes its work and missed a heartbeat (quiet for 1.5 intervals
 * at now: its last in-flight count is stale). */
static bool registry_is_silent(const registry_worker_t *w, int64_t now, int64_t heartbeat_ns) {
    return run_worker_in_run(&w->run) && !run_worker_finished(&w->run) &&
           now - w->last_rx_ns > heartbeat_ns * 3 / 2;
}

uint32_t registry_inflight_of(run_worker_t *const *runs, size_t n, int64_t now,
                              int64_t heartbeat_ns) {
    uint64_t inflight = 0; /* each is a worker's word, up to 2^32 - 1: the sum must not wrap */
    for (size_t i = 0; i < n; i++) {
        const registry_worker_t *w = registry_of(runs[i]);
        if (run_worker_in_run(&w->run) && !run_worker_finished(&w->run) &&
            !registry_is_silent(w, now, heartbeat_ns))
            inflight += w->run.inflight;
    }
    return inflight > UINT32_MAX ? UINT32_MAX : (uint32_t)inflight;
}

uint32_t registry_inflight(const registry_t *self, int64_t now, int64_t heartbeat_ns) {
    return registry_inflight_of(self->runs, self->n, now, heartbeat_ns);
}

uint32_t registry_silent_of(run_worker_t *const *runs, size_t n, int64_t now,
                            int64_t heartbeat_ns) {
    uint32_t silent = 0;
    for (size_t i = 0; i < n; i++)
        silent += registry_is_silent(registry_of(runs[i]), now, heartbeat_ns);
    return silent;
}

void registry_excuse_stall(registry_t *self, int64_t gap_ns) {
    for (size_t i = 0; i < self->n; i++)
        self->workers[i]->last_rx_ns += gap_ns;
}

void registry_peer_name(const registry_worker_t *w, const uint8_t *id, size_t id_len, char *buf,
                        size_t len) {
    if (w) {
        snprintf(buf, len, "worker %s", w->run.name);
        return;
    }
    size_t used = (size_t)snprintf(buf, len, "unregistered peer with routing id 0x");
    for (size_t i = 0; i < id_len && i < 16 && used + 3 <= len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%02x", id[i]);
    if (id_len > 16 && used + 4 <= len)
        snprintf(buf + used, len - used, "...");
}

int64_t registry_next_silence(const registry_t *self, int64_t silence_ns) {
    int64_t next = INT64_MAX;
    for (size_t i = 0; i < self->n; i++) {
        const registry_worker_t *w = self->workers[i];
        if (!run_worker_finished(&w->run) && w->last_rx_ns + silence_ns < next)
            next = w->last_rx_ns + silence_ns;
    }
    return next;
}

/* Appends "a, c-e" for the set bits of seen[0..n) that equal want. */
static void append_ranges(buffer_t *b, const bool *seen, size_t n, bool want) {
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (seen[i] != want)
            continue;
        size_t j = i;
        while (j + 1 < n && seen[j + 1] == want)
            j++;
        buffer_appendf(b,
                       j == i       ? "%s%zu"
                       : j == i + 1 ? "%s%zu, %zu"
                                    : "%s%zu-%zu",
                       first ? "" : ", ", i, j);
        first = false;
        i = j;
    }
}

void registry_describe_missing(const registry_t *self, uint32_t expect, int64_t timeout_ns,
                               char *buf, size_t len) {
    uint32_t have = registry_count(self, RUN_WORKER_REGISTERED);
    buffer_t b;
    buffer_init(&b);
    buffer_appendf(&b, "only %u of %u workers registered within %g s", have, expect,
                   timeout_ns / 1e9);
    /* An Indexed Job's pods: expect / threads of them, indexes 0..pods-1. */
    uint32_t threads = 0;
    bool indexed = false;
    for (size_t i = 0; i < self->n; i++) {
        const registry_worker_t *w = self->workers[i];
        if (w->run.state != RUN_WORKER_REGISTERED || w->job_index < 0)
            continue;
        indexed = true;
        if (w->threads > threads)
            threads = w->threads;
    }
    size_t pods = indexed && threads ? (expect + threads - 1) / threads : 0;
    size_t span = pods;
    for (size_t i = 0; i < self->n; i++)
        if (self->workers[i]->run.state == RUN_WORKER_REGISTERED &&
            self->workers[i]->job_index >= (int64_t)span)
            span = (size_t)self->workers[i]->job_index + 1;
    bool *seen = span ? calloc(span, sizeof *seen) : NULL;
    if (seen) {
        size_t missing = 0;
        for (size_t i = 0; i < self->n; i++)
            if (self->workers[i]->run.state == RUN_WORKER_REGISTERED &&
                self->workers[i]->job_index >= 0)
                seen[self->workers[i]->job_index] = true;
        for (size_t i = 0; i < pods; i++)
            missing += !seen[i];
        if (missing) {
            buffer_appendf(&b, "; missing worker index%s ", missing == 1 ? "" : "es");
            append_ranges(&b, seen, pods, false);
            buffer_appendf(&b, " (JOB_COMPLETION_INDEX of the Indexed Job: see that pod's "
                               "events and log)");
        }
        buffer_appendf(&b, "; registered indexes ");
        append_ranges(&b, seen, span, true);
    }
    free(seen);
    /* The registered workers by name, a few of them. */
    size_t named = 0;
    for (size_t i = 0; i < self->n && named < 8; i++) {
        if (self->workers[i]->run.state != RUN_WORKER_REGISTERED)
            continue;
        buffer_appendf(&b, "%s%s", named ? ", " : "; registered: ", self->workers[i]->run.name);
        named++;
    }
    if (have > named)
        buffer_appendf(&b, " and %u more", have - (uint32_t)named);
    snprintf(buf, len, "%s", buffer_pending(&b) ? (const char *)buffer_head(&b) : "");
    buffer_clear(&b);
}
