#include "sessions.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define NONE UINT32_MAX

/* What one record of an open session keeps. */
typedef struct sessions_entry {
    uint32_t node;
    uint32_t endpoint;
    int64_t send_ns;
    int64_t end_ns;
    uint32_t prompt_tokens; /* usage.prompt_tokens, else the words sent */
    uint32_t completion_tokens;
    bool ok;
    bool warmup;
    bool cancelled;
    bool compaction;  /* the summarise request sent before its node */
    uint64_t replica; /* the replica that answered (record.h), 0 when none was named */
} sessions_entry_t;

typedef struct sessions_open {
    uint64_t session;
    sessions_entry_t *entries;
    size_t n, cap;
    size_t compactions; /* entries that are summarise requests */
} sessions_open_t;

struct sessions {
    const config_t *cfg;
    int64_t window_start_ns;
    int64_t window_limit_ns;
    /* Open sessions by index: linear probing, a power-of-two table at most half full. */
    sessions_open_t **slots;
    size_t n_slots, n_open;
    /* Scratch reused by every close, grown to the largest session seen. */
    workload_session_t graph;
    uint32_t *node_entry;
    int64_t *send, *end;
    size_t scratch_cap, end_cap;
    sessions_stats_t stats;
};

sessions_t *sessions_new(const config_t *cfg, size_t n_endpoints) {
    sessions_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    self->n_slots = 64;
    self->slots = calloc(self->n_slots, sizeof *self->slots);
    if (!self->slots || sessions_stats_init(&self->stats, n_endpoints) != 0)
        sessions_destroy(&self);
    return self;
}

int sessions_stats_init(sessions_stats_t *s, size_t n_endpoints) {
    memset(s, 0, sizeof *s);
    s->n_endpoints = n_endpoints;
    bool ok = (s->makespan = histogram_new()) && (s->critical = histogram_new()) &&
              (s->idle = histogram_new()) && (s->sibling_wait = histogram_new()) &&
              (s->requests = histogram_new()) && (s->compactions = histogram_new());
    if (ok && n_endpoints)
        ok = (s->endpoint_shared = calloc(n_endpoints, sizeof *s->endpoint_shared)) &&
             (s->endpoint_prompt = calloc(n_endpoints, sizeof *s->endpoint_prompt)) &&
             (s->endpoint_replica_checked = calloc(n_endpoints, sizeof(uint64_t))) &&
             (s->endpoint_replica_moved = calloc(n_endpoints, sizeof(uint64_t)));
    if (!ok) {
        sessions_stats_free(s);
        return -1;
    }
    return 0;
}

void sessions_stats_free(sessions_stats_t *s) {
    histogram_destroy(&s->makespan);
    histogram_destroy(&s->critical);
    histogram_destroy(&s->idle);
    histogram_destroy(&s->sibling_wait);
    histogram_destroy(&s->requests);
    histogram_destroy(&s->compactions);
    free(s->endpoint_shared);
    free(s->endpoint_prompt);
    free(s->endpoint_replica_checked);
    free(s->endpoint_replica_moved);
    memset(s, 0, sizeof *s);
}

void sessions_stats_pool(sessions_stats_t *dst, const sessions_stats_t *src) {
    dst->closed += src->closed;
    dst->counted += src->counted;
    if (src->closed_span_max_ns > dst->closed_span_max_ns)
        dst->closed_span_max_ns = src->closed_span_max_ns;
    histogram_merge(dst->makespan, src->makespan);
    histogram_merge(dst->critical, src->critical);
    histogram_merge(dst->idle, src->idle);
    histogram_merge(dst->sibling_wait, src->sibling_wait);
    histogram_merge(dst->requests, src->requests);
    histogram_merge(dst->compactions, src->compactions);
    dst->critical_ns += src->critical_ns;
    for (uint32_t r = 0; r < src->n_roles && r < SESSIONS_MAX_ROLES; r++)
        dst->role_critical_ns[r] += src->role_critical_ns[r];
    if (src->n_roles > dst->n_roles)
        dst->n_roles = src->n_roles;
    dst->reuse_shared += src->reuse_shared;
    dst->reuse_prompt += src->reuse_prompt;
    for (size_t e = 0; e < dst->n_endpoints && e < src->n_endpoints; e++) {
        dst->endpoint_shared[e] += src->endpoint_shared[e];
        dst->endpoint_prompt[e] += src->endpoint_prompt[e];
        dst->endpoint_replica_checked[e] += src->endpoint_replica_checked[e];
        dst->endpoint_replica_moved[e] += src->endpoint_replica_moved[e];
    }
    dst->affinity_checked += src->affinity_checked;
    dst->affinity_split += src->affinity_split;
    dst->replica_checked += src->replica_checked;
    dst->replica_moved += src->replica_moved;
    dst->compactions_total += src->compactions_total;
}

static void open_free(sessions_open_t *open) {
    if (open)
        free(open->entries);
    free(open);
}

void sessions_destroy(sessions_t **self_p) {
    assert(self_p);
    sessions_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; self->slots && i < self->n_slots; i++)
        open_free(self->slots[i]);
    free(self->slots);
    workload_session_free(&self->graph);
    free(self->node_entry);
    free(self->send);
    free(self->end);
    sessions_stats_free(&self->stats);
    free(self);
    *self_p = NULL;
}

void sessions_set_window(sessions_t *self, int64_t start_ns, int64_t limit_ns) {
    self->window_start_ns = start_ns;
    self->window_limit_ns = limit_ns;
}

size_t sessions_open(const sessions_t *self) {
    return self->n_open;
}

bool sessions_sticky(const sessions_t *self) {
    return self->cfg && self->cfg->target.routing == ROUTING_STICKY;
}

bool sessions_multi_request(const sessions_t *self) {
    return self->cfg && self->cfg->workload.kind != WORKLOAD_REQUESTS;
}

const sessions_stats_t *sessions_stats(const sessions_t *self) {
    return &self->stats;
}

static size_t slot_of(const sessions_t *self, uint64_t session) {
    uint64_t h = session * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 32) & (self->n_slots - 1);
}

/* The slot holding session, or the empty slot where it would go. */
static size_t find_slot(const sessions_t *self, uint64_t session) {
    size_t i = slot_of(self, session);
    while (self->slots[i] && self->slots[i]->session != session)
        i = (i + 1) & (self->n_slots - 1);
    return i;
}

static int grow_table(sessions_t *self) {
    size_t old_n = self->n_slots;
    sessions_open_t **old = self->slots;
    sessions_open_t **slots = calloc(old_n * 2, sizeof *slots);
    if (!slots)
        return -1;
    self->slots = slots;
    self->n_slots = old_n * 2;
    for (size_t i = 0; i < old_n; i++)
        if (old[i])
            self->slots[find_slot(self, old[i]->session)] = old[i];
    free(old);
    return 0;
}

/* Empties slot i, shifting back the entries of its probe run that it separated from their home. */
static void remove_slot(sessions_t *self, size_t i) {
    size_t mask = self->n_slots - 1, j = i;
    self->slots[i] = NULL;
    for (;;) {
        j = (j + 1) & mask;
        if (!self->slots[j])
            break;
        size_t home = slot_of(self, self->slots[j]->session);
        /* slots[j] may move to i when its home is not cyclically in (i, j] */
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        self->slots[i] = self->slots[j];
        self->slots[j] = NULL;
        i = j;
    }
    self->n_open--;
}

/* The waits of finished parents for their siblings still in flight, at every fan-in node. */
static int64_t sibling_wait(const workload_session_t *graph, const int64_t *send,
                            const int64_t *end) {
    int64_t total = 0;
    for (uint32_t j = 0; j < graph->n_nodes; j++) {
        const workload_node_t *node = &graph->nodes[j];
        for (uint32_t a = 0; a < node->n_parents && node->n_parents > 1; a++) {
            uint32_t q = node->parents[a];
            if (q >= graph->n_nodes || !send[q])
                continue;
            int64_t last = end[q];
            for (uint32_t b = 0; b < node->n_parents; b++) {
                uint32_t r = node->parents[b];
                if (r < graph->n_nodes && send[r] && send[r] < end[q] && end[r] > last)
                    last = end[r];
            }
            total += last - end[q];
        }
    }
    return total;
}

void sessions_path(const workload_session_t *graph, const int64_t *send, const int64_t *end,
                   uint64_t *role_ns, uint32_t n_roles, sessions_path_t *out) {
    memset(out, 0, sizeof *out);
    int64_t first = 0, last = 0;
    uint32_t j = NONE;
    for (uint32_t k = 0; k < graph->n_nodes; k++) {
        if (!send[k])
            continue;
        if (!first || send[k] < first)
            first = send[k];
        if (j == NONE || end[k] > last) {
            last = end[k];
            j = k;
        }
    }
    if (j == NONE)
        return;
    out->makespan_ns = last - first;
    /* Bounded by the node count: a malformed graph with a cycle cannot loop forever. */
    for (uint32_t steps = 0; j != NONE && steps < graph->n_nodes; steps++) {
        const workload_node_t *node = &graph->nodes[j];
        int64_t duration = end[j] - send[j];
        out->critical_ns += duration;
        out->length++;
        if (role_ns && node->role < n_roles)
            role_ns[node->role] += (uint64_t)duration;
        uint32_t next = NONE;
        for (uint32_t p = 0; p < node->n_parents; p++) {
            uint32_t q = node->parents[p];
            if (q < graph->n_nodes && send[q] && (next == NONE || end[q] > end[next]))
                next = q;
        }
        j = next;
    }
    out->idle_ns = out->makespan_ns - out->critical_ns;
    out->sibling_wait_ns = sibling_wait(graph, send, end);
}

/* Grows the per-node scratch to n nodes. */
static int scratch_reserve(sessions_t *self, size_t n) {
    if (buffer_grow_pair(&self->node_entry, sizeof *self->node_entry, &self->send,
                         sizeof *self->send, &self->scratch_cap, n) != 0)
        return -1;
    return buffer_grow_array(&self->end, &self->end_cap, n, sizeof *self->end);
}

/* Affinity: did every request of the session that was sent reach the same endpoint? */
static void close_affinity(sessions_t *self, const sessions_open_t *open) {
    uint32_t endpoint = NONE;
    bool split = false;
    for (size_t i = 0; i < open->n; i++) {
        if (!open->entries[i].send_ns)
            continue;
        if (endpoint != NONE && open->entries[i].endpoint != endpoint)
            split = true;
        endpoint = open->entries[i].endpoint;
    }
    if (endpoint == NONE)
        return;
    self->stats.affinity_checked++;
    self->stats.affinity_split += split;
}

/* Replica affinity: at each endpoint that named the replica answering the session's requests, did
 * one replica answer them all? Entries are few per session: the pairwise scan is cheap. */
static void close_replicas(sessions_t *self, const sessions_open_t *open) {
    sessions_stats_t *s = &self->stats;
    bool checked = false, moved = false;
    for (size_t i = 0; i < open->n; i++) {
        const sessions_entry_t *e = &open->entries[i];
        bool first = e->replica != 0;
        for (size_t j = 0; first && j < i; j++) /* only an endpoint's first named answer */
            first = !(open->entries[j].replica && open->entries[j].endpoint == e->endpoint);
        if (!first)
            continue;
        bool here = false;
        for (size_t k = i + 1; k < open->n && !here; k++)
            here = open->entries[k].endpoint == e->endpoint && open->entries[k].replica &&
                   open->entries[k].replica != e->replica;
        checked = true;
        moved |= here;
        if (e->endpoint < s->n_endpoints) {
            s->endpoint_replica_checked[e->endpoint]++;
            s->endpoint_replica_moved[e->endpoint] += here;
        }
    }
    s->replica_checked += checked;
    s->replica_moved += moved;
}

/* Whether node's conversation restarted from a summary (a summarise request preceded it). */
static bool open_compacted(const sessions_open_t *open, uint32_t node) {
    for (size_t i = 0; open->compactions && i < open->n; i++)
        if (open->entries[i].compaction && open->entries[i].node == node)
            return true;
    return false;
}

/* Prompt reuse of each ok request (docs/metrics.md section 12): with a history parent it
 * inherits in full, the parent's prompt and reply; with a partial or no inheritance, or after a
 * compaction, the scaffold; with no parent, nothing. */
static void close_reuse(sessions_t *self, const sessions_open_t *open) {
    const workload_session_t *g = &self->graph;
    sessions_stats_t *s = &self->stats;
    for (size_t i = 0; i < open->n; i++) {
        const sessions_entry_t *e = &open->entries[i];
        if (!e->ok || e->warmup || e->compaction || e->node >= g->n_nodes)
            continue;
        const workload_node_t *node = &g->nodes[e->node];
        uint64_t shared = 0;
        uint32_t h = node->n_parents ? node->parents[0] : NONE;
        const sessions_entry_t *parent = h < g->n_nodes && self->node_entry[h] != NONE
                                             ? &open->entries[self->node_entry[h]]
                                             : NULL;
        if (parent && parent->ok && open_compacted(open, e->node))
            shared = config_scaffold_shared_words(self->cfg, g->nodes[h].role, node->role);
        else if (parent && parent->ok)
            shared = node->inherit >= 1
                         ? (uint64_t)parent->prompt_tokens + parent->completion_tokens
                         : config_scaffold_shared_words(self->cfg, g->nodes[h].role, node->role);
        if (shared > e->prompt_tokens)
            shared = e->prompt_tokens;
        s->reuse_shared += shared;
        s->reuse_prompt += e->prompt_tokens;
        if (e->endpoint < s->n_endpoints) {
            s->endpoint_shared[e->endpoint] += shared;
            s->endpoint_prompt[e->endpoint] += e->prompt_tokens;
        }
    }
}

/* A session counts when each node of its graph has exactly one record, none from the warm-up or
 * cancelled, every one sent and ended, all inside the window. */
static bool close_complete(const sessions_t *self, const sessions_open_t *open) {
    const workload_session_t *g = &self->graph;
    if (open->n - open->compactions != g->n_nodes)
        return false;
    for (uint32_t j = 0; j < g->n_nodes; j++) {
        if (self->node_entry[j] == NONE)
            return false;
        const sessions_entry_t *e = &open->entries[self->node_entry[j]];
        if (e->warmup || e->cancelled || !e->send_ns || e->end_ns < e->send_ns)
            return false;
        if (self->window_start_ns && e->send_ns < self->window_start_ns)
            return false;
        if (self->window_limit_ns && e->end_ns > self->window_limit_ns)
            return false;
    }
    return true;
}

static void close_path(sessions_t *self, const sessions_open_t *open) {
    const workload_session_t *g = &self->graph;
    sessions_stats_t *s = &self->stats;
    for (uint32_t j = 0; j < g->n_nodes; j++) {
        const sessions_entry_t *e = &open->entries[self->node_entry[j]];
        self->send[j] = e->send_ns;
        self->end[j] = e->end_ns;
        if (g->nodes[j].role < SESSIONS_MAX_ROLES && g->nodes[j].role >= s->n_roles)
            s->n_roles = g->nodes[j].role + 1;
    }
    for (size_t i = 0; open->compactions && i < open->n; i++) {
        const sessions_entry_t *e = &open->entries[i]; /* the node's time includes its summary */
        if (e->compaction && e->node < g->n_nodes && e->send_ns && e->send_ns < self->send[e->node])
            self->send[e->node] = e->send_ns;
    }
    sessions_path_t path;
    sessions_path(g, self->send, self->end, s->role_critical_ns, SESSIONS_MAX_ROLES, &path);
    s->counted++;
    s->critical_ns += (uint64_t)path.critical_ns;
    histogram_record(s->makespan, (uint64_t)path.makespan_ns);
    histogram_record(s->critical, (uint64_t)path.critical_ns);
    histogram_record(s->idle, (uint64_t)path.idle_ns);
    histogram_record(s->sibling_wait, (uint64_t)path.sibling_wait_ns);
    histogram_record(s->requests, g->n_nodes);
    histogram_record(s->compactions, open->compactions);
}

/* The session's first send -> last end over what it sent, complete or not. */
static void close_span(sessions_stats_t *s, const sessions_open_t *open) {
    int64_t first = 0, last = 0;
    for (size_t i = 0; i < open->n; i++) {
        const sessions_entry_t *e = &open->entries[i];
        if (!e->send_ns || e->end_ns < e->send_ns)
            continue;
        first = !first || e->send_ns < first ? e->send_ns : first;
        last = e->end_ns > last ? e->end_ns : last;
    }
    if (first && last - first > s->closed_span_max_ns)
        s->closed_span_max_ns = last - first;
}

static void close_session(sessions_t *self, sessions_open_t *open) {
    self->stats.closed++;
    close_span(&self->stats, open);
    self->stats.compactions_total += open->compactions;
    close_affinity(self, open);
    close_replicas(self, open);
    if (!self->cfg || workload_session_generate(self->cfg, open->session, &self->graph) != 0 ||
        scratch_reserve(self, self->graph.n_nodes) != 0)
        return;
    const workload_session_t *g = &self->graph;
    for (uint32_t j = 0; j < g->n_nodes; j++)
        self->node_entry[j] = NONE;
    bool duplicate = false;
    for (size_t i = 0; i < open->n; i++) {
        uint32_t node = open->entries[i].node;
        if (node >= g->n_nodes || open->entries[i].compaction)
            continue;
        duplicate = duplicate || self->node_entry[node] != NONE;
        self->node_entry[node] = (uint32_t)i;
    }
    close_reuse(self, open);
    if (!duplicate && close_complete(self, open))
        close_path(self, open);
}

int sessions_add(sessions_t *self, const request_record_t *rec) {
    size_t i = find_slot(self, rec->session);
    sessions_open_t *open = self->slots[i];
    if (!open) {
        if ((self->n_open + 1) * 2 > self->n_slots) {
            if (grow_table(self) != 0)
                return -1;
            i = find_slot(self, rec->session);
        }
        if (!(open = calloc(1, sizeof *open)))
            return -1;
        open->session = rec->session;
        self->slots[i] = open;
        self->n_open++;
    }
    int rc = buffer_grow_array(&open->entries, &open->cap, open->n + 1, sizeof *open->entries);
    if (rc == 0) {
        bool from_usage = rec->has_usage;
        open->entries[open->n++] = (sessions_entry_t){
            .node = rec->node,
            .endpoint = rec->endpoint,
            .send_ns = rec->send_ns,
            .end_ns = rec->end_ns,
            .prompt_tokens = from_usage ? rec->prompt_tokens : rec->requested_input_tokens,
            .completion_tokens = record_output_tokens(rec, NULL),
            .ok = rec->error == ERROR_NONE,
            .warmup = rec->warmup,
            .cancelled = rec->error == ERROR_CANCELLED,
            .compaction = self->cfg && config_compaction_role(self->cfg, rec->role),
            .replica = rec->replica,
        };
        open->compactions += open->entries[open->n - 1].compaction;
    }
    if (rc == 0 && !rec->session_end)
        return 0;
    if (rc == 0)
        close_session(self, open);
    remove_slot(self, i);
    open_free(open);
    return rc == 0 ? 0 : -1;
}
