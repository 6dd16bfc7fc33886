#include "trace_wire.h"

#include <stdlib.h>
#include <string.h>

#include "varint.h"
#include "workload.h"

#define TRACE_WIRE_VERSION 2 /* 2: a node may carry text of its own (a dataset turn) */

static uint64_t gcd(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

bool trace_wire_needed(const config_t *cfg, const plan_share_t *share, uint64_t t) {
    const trace_t *trace = cfg->workload.replay;
    if (!cfg->workload.trace.wrap || !trace || trace->n_sessions == 0)
        return plan_share_owns(share, t) != 0;
    uint64_t n = trace->n_sessions;
    if (share->kind == PLAN_RATE) {
        if (share->arrival_workers == 0 || share->worker_index >= share->arrival_workers)
            return false;
        uint64_t g = gcd(n, share->arrival_workers);
        return t % g == share->worker_index % g;
    }
    if (share->total_slots == 0 || share->slot_count == 0)
        return false;
    uint64_t g = gcd(n, share->total_slots);
    if (share->slot_count >= g)
        return true;
    uint64_t d = (t % g + g - share->slot_first % g) % g;
    return d < share->slot_count;
}

static int put(buffer_t *out, uint64_t v) {
    if (buffer_reserve(out, VARINT_MAX_BYTES) != 0)
        return -1;
    out->len += varint_put((uint8_t *)out->data + out->len, v);
    return 0;
}

static int put_node(buffer_t *out, const trace_t *trace, const trace_node_t *node, uint32_t j) {
    uint64_t history_bits;
    memcpy(&history_bits, &node->history, sizeof history_bits);
    int rc = put(out, node->n_parents);
    for (uint32_t p = 0; p < node->n_parents; p++)
        rc |= put(out, j - trace->edges[node->parents_at + p]); /* parents are below j */
    rc |= put(out, node->history_parent == TRACE_NONE ? 0 : (uint64_t)node->history_parent + 1);
    rc |= put(out, node->role);
    rc |= put(out, node->input_tokens);
    rc |= put(out, node->output_tokens);
    rc |= put(out, (uint64_t)node->wait_ns);
    rc |= put(out, history_bits);
    rc |= put(out, node->append_parent_replies);
    rc |= put(out, node->n_hashes);
    for (uint32_t h = 0; h < node->n_hashes; h++)
        rc |= put(out, trace->hashes[node->hashes_at + h]);
    rc |= put(out, node->text_len);
    if (rc == 0 && node->text_len) {
        rc |= put(out, node->text_tokens);
        if (rc == 0 && buffer_append(out, trace->text + node->text_at, node->text_len) != 0)
            rc = -1;
    }
    return rc ? -1 : 0;
}

int trace_wire_encode(const config_t *cfg, const plan_share_t *share, buffer_t *out) {
    const trace_t *trace = cfg->workload.replay;
    if (!trace)
        return -1;
    int rc = put(out, TRACE_WIRE_VERSION);
    rc |= put(out, trace->n_sessions);
    rc |= put(out, (uint64_t)trace->period_ns);
    rc |= put(out, trace->timed);
    for (size_t i = 0; i < trace->n_sessions; i++)
        rc |= put(out, trace->sessions[i].n_nodes);
    uint64_t last = 0;
    for (size_t i = 0; rc == 0 && i < trace->n_sessions; i++) {
        const trace_session_t *s = &trace->sessions[i];
        if (s->first_node == TRACE_ABSENT || !trace_wire_needed(cfg, share, i))
            continue;
        rc |= put(out, i - last + 1); /* 0 ends the list */
        last = i;
        rc |= put(out, (uint64_t)(s->arrival_ns + 1));
        for (uint32_t j = 0; rc == 0 && j < s->n_nodes; j++)
            rc |= put_node(out, trace, &trace->nodes[s->first_node + j], j);
    }
    rc |= put(out, 0);
    return rc ? -1 : 0;
}

typedef struct reader {
    const uint8_t *p, *end;
    bool bad;
} reader_t;

static uint64_t get(reader_t *r) {
    uint64_t v = 0;
    if (!r->bad && !varint_get(&r->p, r->end, &v))
        r->bad = true;
    return r->bad ? 0 : v;
}

/* A time in ns: the loader's times saturate at 2^62 (workload_seconds_to_ns), so a larger one is
 * not from an encoder. */
static int64_t get_ns(reader_t *r) {
    uint64_t v = get(r);
    if (v > ((uint64_t)1 << 62) + 1) /* + 1: arrivals travel as arrival + 1 */
        r->bad = true;
    return r->bad ? 0 : (int64_t)v;
}

/* A count that cannot exceed the bytes left (each item takes at least one). */
static uint64_t get_count(reader_t *r) {
    uint64_t v = get(r);
    if (v > (uint64_t)(r->end - r->p))
        r->bad = true;
    return r->bad ? 0 : v;
}

static int get_node(reader_t *r, trace_t *t, trace_node_t *node, uint32_t j, size_t *cap_edges,
                    size_t *cap_hashes) {
    node->n_parents = (uint32_t)get_count(r);
    node->parents_at = (uint32_t)t->n_edges;
    if (buffer_grow_array(&t->edges, cap_edges, t->n_edges + node->n_parents, sizeof *t->edges))
        return -1;
    for (uint32_t p = 0; p < node->n_parents; p++) {
        uint64_t back = get(r);
        if (back == 0 || back > j)
            r->bad = true;
        t->edges[t->n_edges++] = j - (uint32_t)back;
    }
    uint64_t hp = get(r);
    node->history_parent = hp == 0 ? TRACE_NONE : (uint32_t)(hp - 1);
    if (hp > j)
        r->bad = true;
    node->role = (uint32_t)get(r);
    node->input_tokens = (uint32_t)get(r);
    node->output_tokens = (uint32_t)get(r);
    node->wait_ns = get_ns(r);
    uint64_t history_bits = get(r);
    memcpy(&node->history, &history_bits, sizeof node->history);
    node->append_parent_replies = get(r) != 0;
    node->n_hashes = (uint32_t)get_count(r);
    node->hashes_at = (uint32_t)t->n_hashes;
    if (buffer_grow_array(&t->hashes, cap_hashes, t->n_hashes + node->n_hashes, sizeof *t->hashes))
        return -1;
    for (uint32_t h = 0; h < node->n_hashes; h++)
        t->hashes[t->n_hashes++] = get(r);
    uint64_t text_len = get_count(r);
    if (text_len > UINT32_MAX)
        r->bad = true;
    if (!r->bad && text_len) {
        uint64_t tokens = get(r);
        if (tokens > WORKLOAD_MAX_TOKENS || text_len > (uint64_t)(r->end - r->p))
            r->bad = true;
        else if (trace_set_text(t, node, (const char *)r->p, (uint32_t)text_len,
                                (uint32_t)tokens) != 0)
            return -1;
        else
            r->p += text_len;
    }
    return r->bad ? -1 : 0;
}

trace_t *trace_wire_decode(const uint8_t *data, size_t len) {
    reader_t r = {.p = data, .end = data + len};
    trace_t *t = trace_new();
    if (!t || get(&r) != TRACE_WIRE_VERSION) {
        trace_unref(&t);
        return NULL;
    }
    size_t n = (size_t)get_count(&r), cap_nodes = 0, cap_edges = 0, cap_hashes = 0;
    t->period_ns = get_ns(&r);
    bool timed = get(&r) != 0;
    t->sessions = calloc(n + 1, sizeof *t->sessions);
    if (!t->sessions || r.bad || n == 0) {
        trace_unref(&t);
        return NULL;
    }
    t->n_sessions = n;
    for (size_t i = 0; i < n && !r.bad; i++) {
        /* bounded as the loader bounds it: every session's size sizes the worker's tables */
        uint64_t size = get(&r);
        if (size > WORKLOAD_MAX_NODES)
            r.bad = true;
        t->sessions[i].n_nodes = (uint32_t)size;
        t->sessions[i].first_node = TRACE_ABSENT;
        t->sessions[i].arrival_ns = -1;
    }
    uint64_t at = 0;
    bool first = true;
    for (uint64_t step; !r.bad && (step = get(&r)) != 0;) {
        at += step - 1;
        if ((!first && step == 1) || at >= n) {
            r.bad = true;
            break;
        }
        first = false;
        trace_session_t *s = &t->sessions[at];
        s->arrival_ns = get_ns(&r) - 1;
        s->first_node = (uint32_t)t->n_nodes;
        if (s->n_nodes > (size_t)(r.end - r.p)) /* a node takes at least one byte */
            r.bad = true;
        if (!r.bad &&
            buffer_grow_array(&t->nodes, &cap_nodes, t->n_nodes + s->n_nodes, sizeof *t->nodes))
            r.bad = true;
        for (uint32_t j = 0; !r.bad && j < s->n_nodes; j++)
            if (get_node(&r, t, &t->nodes[t->n_nodes++], j, &cap_edges, &cap_hashes) != 0)
                r.bad = true;
    }
    if (r.bad || r.p != r.end) {
        trace_unref(&t);
        return NULL;
    }
    int64_t period = t->period_ns; /* the whole trace's, not this part's */
    trace_finish(t);
    t->timed = timed;
    t->period_ns = period;
    return t;
}
