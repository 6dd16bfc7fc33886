/* Putting a trace's sessions in order: sessions by arrival and id, each session's nodes parents
 * first, with its parents and history parents resolved and checked (unknown parent, cycle,
 * history parent not an ancestor). */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_load_internal.h"
#include "workload.h"

/* Node order before the topological sort: by integer id when every id of the session is an
 * integer, else the file's. */
static int compare_positions(const void *a, const void *b, void *arg) {
    const loader_t *l = arg;
    const load_line_t *x = &l->lines[*(const uint32_t *)a];
    const load_line_t *y = &l->lines[*(const uint32_t *)b];
    if (x->id_number != y->id_number)
        return x->id_number < y->id_number ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Groups the lines by session into l->order. */
int trace_order_group(loader_t *l) {
    l->order = malloc((l->n_lines ? l->n_lines : 1) * sizeof *l->order);
    if (!l->order)
        return trace_lines_fail(l, 0, NULL, "out of memory");
    for (size_t i = 0; i < l->n_lines; i++)
        l->sessions[l->lines[i].session].n_lines++;
    uint32_t at = 0;
    for (size_t s = 0; s < l->n_sessions; s++) {
        l->sessions[s].lines_at = at;
        at += l->sessions[s].n_lines;
        l->sessions[s].n_lines = 0;
    }
    for (size_t i = 0; i < l->n_lines; i++) {
        load_session_t *s = &l->sessions[l->lines[i].session];
        l->order[s->lines_at + s->n_lines++] = (uint32_t)i;
    }
    for (size_t s = 0; s < l->n_sessions; s++) {
        load_session_t *session = &l->sessions[s];
        bool numbers = true;
        for (uint32_t k = 0; k < session->n_lines && numbers; k++)
            numbers = l->lines[l->order[session->lines_at + k]].id_is_number;
        if (numbers)
            qsort_r(&l->order[session->lines_at], session->n_lines, sizeof *l->order,
                    compare_positions, l);
        for (uint32_t k = 0; k < session->n_lines; k++)
            l->lines[l->order[session->lines_at + k]].position = k;
    }
    return 0;
}

typedef struct sort_state {
    uint32_t *parents; /* per position: its parents' positions, end to end */
    uint32_t *first;   /* per position: where its parents start (n + 1 entries) */
    uint8_t *mark;     /* 0 new, 1 on the path, 2 placed */
    uint32_t *stack;   /* positions on the path */
    uint32_t *next;    /* per path entry: the next parent to visit */
    uint32_t *topo;    /* position -> topological index */
    uint32_t *by_topo; /* topological index -> position */
    uint32_t *seen;    /* ancestor walk stamps */
    uint32_t *walk;    /* ancestor walk queue */
} sort_state_t;

static int load_cycle(loader_t *l, const load_session_t *s, const sort_state_t *st, uint32_t top,
                      uint32_t start) {
    char path[400] = "";
    size_t used = 0;
    const uint32_t *lines = &l->order[s->lines_at];
    uint32_t from = 0;
    while (st->stack[from] != start)
        from++;
    /* stack[i + 1] is a parent of stack[i]: printed parent -> child, from the repeated node */
    used += (size_t)snprintf(path + used, sizeof path - used, "%s",
                             trace_lines_text(l, l->lines[lines[start]].id));
    for (uint32_t i = top; i > from && used < sizeof path; i--)
        used += (size_t)snprintf(path + used, sizeof path - used, " -> %s",
                                 trace_lines_text(l, l->lines[lines[st->stack[i]]].id));
    if (used < sizeof path)
        snprintf(path + used, sizeof path - used, " -> %s",
                 trace_lines_text(l, l->lines[lines[start]].id));
    const load_line_t *rec = &l->lines[lines[start]];
    return trace_lines_fail(l, rec->line, "parents", "session '%s': node '%s' is on a cycle: %s",
                            trace_lines_text(l, s->id), trace_lines_text(l, rec->id), path);
}

/* Depth-first from each node in order, parents first: a topological order that keeps the given
 * order where the graph allows it; a node met again while on the path closes a cycle. */
static int load_topo(loader_t *l, const load_session_t *s, sort_state_t *st) {
    uint32_t n = s->n_lines, placed = 0;
    memset(st->mark, 0, n);
    for (uint32_t root = 0; root < n; root++) {
        if (st->mark[root])
            continue;
        uint32_t top = 0;
        st->stack[0] = root;
        st->next[0] = 0;
        st->mark[root] = 1;
        for (;;) {
            uint32_t v = st->stack[top];
            if (st->next[top] < st->first[v + 1] - st->first[v]) {
                uint32_t p = st->parents[st->first[v] + st->next[top]++];
                if (st->mark[p] == 1)
                    return load_cycle(l, s, st, top, p);
                if (st->mark[p] == 0) {
                    st->mark[p] = 1;
                    st->stack[++top] = p;
                    st->next[top] = 0;
                }
                continue;
            }
            st->mark[v] = 2;
            st->topo[v] = placed;
            st->by_topo[placed++] = v;
            if (top == 0)
                break;
            top--;
        }
    }
    return 0;
}

/* Whether position a is an ancestor of position b. */
static bool load_is_ancestor(const sort_state_t *st, uint32_t a, uint32_t b, uint32_t stamp) {
    uint32_t head = 0, tail = 0;
    st->walk[tail++] = b;
    st->seen[b] = stamp;
    while (head < tail) {
        uint32_t v = st->walk[head++];
        for (uint32_t k = st->first[v]; k < st->first[v + 1]; k++) {
            uint32_t p = st->parents[k];
            if (p == a)
                return true;
            if (st->seen[p] != stamp) {
                st->seen[p] = stamp;
                st->walk[tail++] = p;
            }
        }
    }
    return false;
}

/* Resolves one session's parents and history parent, sorts it and appends its nodes to out. */
static int load_session_nodes(loader_t *l, uint32_t si, sort_state_t *st, trace_t *out,
                              uint32_t *stamp) {
    const load_session_t *s = &l->sessions[si];
    const uint32_t *lines = &l->order[s->lines_at];
    uint32_t n = s->n_lines, k = 0;
    if (n > WORKLOAD_MAX_NODES) /* what a worker accepts in its part (trace_wire_decode) */
        return trace_lines_fail(l, l->lines[lines[0]].line, "session",
                                "session '%s' has %u requests; at most %u per session",
                                trace_lines_text(l, s->id), n, WORKLOAD_MAX_NODES);
    for (uint32_t pos = 0; pos < n; pos++) {
        const load_line_t *rec = &l->lines[lines[pos]];
        st->first[pos] = k;
        for (uint32_t p = 0; p < rec->n_parents; p++) {
            uint32_t id = l->refs[rec->refs_at + p];
            uint32_t line = trace_lines_find(l, si, id);
            if (line == UINT32_MAX)
                return trace_lines_fail(l, rec->line, "parents",
                                        "session '%s': node '%s': unknown parent '%s'",
                                        trace_lines_text(l, s->id), trace_lines_text(l, rec->id),
                                        trace_lines_text(l, id));
            st->parents[k++] = l->lines[line].position;
        }
    }
    st->first[n] = k;
    if (load_topo(l, s, st) != 0)
        return -1;
    uint32_t base = (uint32_t)out->n_nodes;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t pos = st->by_topo[t];
        const load_line_t *rec = &l->lines[lines[pos]];
        trace_node_t *node = &out->nodes[out->n_nodes++];
        node->parents_at = (uint32_t)out->n_edges;
        node->n_parents = rec->n_parents;
        for (uint32_t q = st->first[pos]; q < st->first[pos + 1]; q++)
            out->edges[out->n_edges++] = st->topo[st->parents[q]];
        node->history_parent = TRACE_NONE;
        int64_t fresh = rec->new_input_length;
        if (rec->history_parent != UINT32_MAX) {
            uint32_t line = trace_lines_find(l, si, rec->history_parent);
            const char *hp = trace_lines_text(l, rec->history_parent);
            if (line == UINT32_MAX)
                return trace_lines_fail(l, rec->line, "history_parent",
                                        "session '%s': node '%s': unknown history parent '%s'",
                                        trace_lines_text(l, s->id), trace_lines_text(l, rec->id),
                                        hp);
            uint32_t hpos = l->lines[line].position;
            if (!load_is_ancestor(st, hpos, pos, ++*stamp))
                return trace_lines_fail(
                    l, rec->line, "history_parent",
                    "session '%s': node '%s': history parent '%s' is not an ancestor "
                    "of it",
                    trace_lines_text(l, s->id), trace_lines_text(l, rec->id), hp);
            node->history_parent = st->topo[hpos];
            const load_line_t *h = &l->lines[line];
            /* only the whole prompt given: the fresh part is what the inherited turn lacks */
            if (fresh < 0 && h->input_length >= 0)
                fresh = rec->input_length -
                        (int64_t)(rec->history * (double)(h->input_length + h->output_length));
        }
        if (fresh < 0)
            fresh = rec->input_length;
        node->input_tokens = fresh < 1 ? 1 : (uint32_t)fresh;
        node->output_tokens = rec->output_length;
        node->role = rec->role;
        node->wait_ns = rec->wait_ns;
        node->history = rec->history;
        node->append_parent_replies = rec->append;
        node->hashes_at = rec->hashes_at;
        node->n_hashes = rec->n_hashes;
    }
    out->sessions[out->n_sessions++] =
        (trace_session_t){.n_nodes = n, .first_node = base, .arrival_ns = s->arrival_ns};
    return 0;
}

/* Session order: by arrival (timed), then integer ids numerically before other ids, then first
 * appearance. */
typedef struct session_sort {
    const loader_t *l;
    bool timed;
} session_sort_t;

static int compare_sessions(const void *a, const void *b, void *arg) {
    const session_sort_t *sort = arg;
    const load_session_t *x = &sort->l->sessions[*(const uint32_t *)a];
    const load_session_t *y = &sort->l->sessions[*(const uint32_t *)b];
    if (sort->timed && x->arrival_ns != y->arrival_ns)
        return x->arrival_ns < y->arrival_ns ? -1 : 1;
    if (x->id_is_number != y->id_is_number)
        return x->id_is_number ? -1 : 1;
    if (x->id_is_number && x->id_number != y->id_number)
        return x->id_number < y->id_number ? -1 : 1;
    return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

int trace_order_build(loader_t *l, trace_t *out, bool timed) {
    uint32_t max = 0;
    for (size_t s = 0; s < l->n_sessions; s++)
        if (l->sessions[s].n_lines > max)
            max = l->sessions[s].n_lines;
    size_t n1 = (size_t)max + 1;
    sort_state_t st = {
        .parents = malloc((l->n_refs + 1) * sizeof(uint32_t)),
        .first = malloc(n1 * sizeof(uint32_t)),
        .mark = malloc(n1),
        .stack = malloc(n1 * sizeof(uint32_t)),
        .next = malloc(n1 * sizeof(uint32_t)),
        .topo = malloc(n1 * sizeof(uint32_t)),
        .by_topo = malloc(n1 * sizeof(uint32_t)),
        .seen = calloc(n1, sizeof(uint32_t)),
        .walk = malloc(n1 * sizeof(uint32_t)),
    };
    uint32_t *order = malloc((l->n_sessions + 1) * sizeof *order);
    out->sessions = calloc(l->n_sessions + 1, sizeof *out->sessions);
    out->nodes = calloc(l->n_lines + 1, sizeof *out->nodes);
    out->edges = malloc((l->n_refs + 1) * sizeof *out->edges);
    out->hashes = malloc((l->n_hashes + 1) * sizeof *out->hashes);
    int rc = 0;
    if (!st.parents || !st.first || !st.mark || !st.stack || !st.next || !st.topo || !st.by_topo ||
        !st.seen || !st.walk || !order || !out->sessions || !out->nodes || !out->edges ||
        !out->hashes)
        rc = trace_lines_fail(l, 0, NULL, "out of memory");
    if (rc == 0) {
        if (l->n_hashes)
            memcpy(out->hashes, l->hashes, l->n_hashes * sizeof *out->hashes);
        out->n_hashes = l->n_hashes;
        for (size_t s = 0; s < l->n_sessions; s++)
            order[s] = (uint32_t)s;
        session_sort_t sort = {.l = l, .timed = timed};
        qsort_r(order, l->n_sessions, sizeof *order, compare_sessions, &sort);
    }
    uint32_t stamp = 0;
    for (size_t s = 0; rc == 0 && s < l->n_sessions; s++)
        rc = load_session_nodes(l, order[s], &st, out, &stamp);
    free(st.parents);
    free(st.first);
    free(st.mark);
    free(st.stack);
    free(st.next);
    free(st.topo);
    free(st.by_topo);
    free(st.seen);
    free(st.walk);
    free(order);
    return rc;
}

/* Arrivals from the first one; a timed replay needs one on every session. */
int trace_order_arrivals(loader_t *l, bool timed) {
    int64_t first = INT64_MAX;
    for (size_t s = 0; s < l->n_sessions; s++) {
        const load_session_t *session = &l->sessions[s];
        if (session->arrival_ns < 0 && timed)
            return trace_lines_fail(
                l, l->lines[session->first_line].line, "arrival",
                "session '%s' has no arrival time: a timed replay (scheduler.kind: "
                "rate) needs one on every session",
                trace_lines_text(l, session->id));
        if (session->arrival_ns >= 0 && session->arrival_ns < first)
            first = session->arrival_ns;
    }
    /* saturating at 2^62 as every loader time does (workload_seconds_to_ns): Azure's absolute
     * wall-clock times may span more */
    for (size_t s = 0; s < l->n_sessions && first != INT64_MAX; s++)
        if (l->sessions[s].arrival_ns >= 0 &&
            (l->sessions[s].arrival_ns -= first) > 0x4000000000000000LL)
            l->sessions[s].arrival_ns = 0x4000000000000000LL;
    return 0;
}
