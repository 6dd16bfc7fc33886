#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "body.h"
#include "prompt.h"
#include "rng.h"
#include "workload.h"

enum { NODE_PENDING, NODE_WAITING, NODE_BLOCKED, NODE_INFLIGHT, NODE_DONE };

typedef struct session_run session_run_t;
typedef struct session_request session_request_t;

typedef struct session_node {
    session_run_t *run;
    uint32_t index;
    uint32_t parents_left;
    int state;
    uint32_t mark;  /* equals run->epoch when marked by the current ancestor walk */
    uint64_t timer; /* NODE_WAITING: the wait_after_ready timer */
    int64_t intended_ns;
    size_t user_off; /* fresh text in run->text, once sent */
    size_t user_len;
    size_t reply_off; /* the server's reply in run->text, once done */
    size_t reply_len;
    uint32_t reply_words;
    session_request_t *blocked; /* NODE_BLOCKED: its request in the blocked queue */
} session_node_t;

typedef struct session_slot {
    session_executor_t *owner;
    uint64_t next_session;
    int64_t first_ns; /* ramp-up instant of its first session */
    uint64_t timer;
    bool done;
} session_slot_t;

struct session_run {
    session_executor_t *owner;
    session_run_t *prev, *next; /* the active list; the free list uses next only */
    session_slot_t *slot;       /* concurrent mode; NULL in rate mode */
    workload_session_t shape;
    uint32_t n_nodes;          /* nodes that may be sent: max_requests may cut the session */
    uint64_t first_request;    /* global ordinal of node 0 */
    int64_t arrival_offset_ns; /* rate mode; -1 in concurrent mode */
    session_node_t *nodes;
    uint32_t *child_start; /* children of node j: children[child_start[j] .. child_start[j+1]) */
    uint32_t *children;
    uint32_t *stack; /* ancestor walk */
    uint32_t nodes_cap;
    uint32_t children_cap;
    uint32_t epoch;
    char *text; /* fresh texts and replies of this session's nodes */
    size_t text_len, text_cap;
    uint32_t inflight; /* nodes in flight */
    uint32_t waiting;  /* nodes waiting for their time or for a free transfer */
    uint32_t pinned;   /* on_record is running for it: it must not end underneath */
    bool ending;       /* a request failed: send nothing more */
    uint64_t reap_timer;
};

struct session_request {
    session_executor_t *owner;
    session_request_t *next; /* free list or blocked queue */
    session_run_t *run;
    uint32_t node;
    int64_t submit_ns;
    body_t body;
    request_record_t record;
    engine_request_t request;
    char session_id[24];
};

struct session_executor {
    loop_t *loop;
    const config_t *cfg;
    plan_share_t share;
    session_backend_t backend;
    session_record_fn on_record;
    session_finished_fn on_finished;
    void *arg;
    session_generate_fn generate;
    void *generate_arg;

    uint32_t n_endpoints;
    char **urls;
    char *system_text;
    size_t system_len;
    uint64_t system_hash;

    uint64_t prefix_base; /* prefix[i] = first request ordinal of session prefix_base + i */
    uint64_t *prefix;
    size_t prefix_len, prefix_cap;
    uint64_t prefix_total; /* first ordinal of session prefix_base + prefix_len */

    session_slot_t *slots;
    workload_arrivals_t arrivals;
    uint64_t next_arrival;
    uint64_t arrival_timer;
    uint32_t sources_left; /* slots (or the arrival stream) that may still start sessions */

    int64_t start_ns, end_ns, warmup_end_ns;
    uint64_t end_timer, finished_timer;
    bool started, stopped, issuing, finished, destroying;

    session_run_t *active, *free_runs;
    session_request_t *free_requests, *blocked_head, *blocked_tail;
    uint32_t inflight, active_sessions;
};

static void session_node_ready(session_node_t *node, int64_t ready_ns);
static void session_run_end(session_run_t *run);

static void session_die(const char *what) {
    fprintf(stderr, "stampede: session executor: %s\n", what);
    abort();
}

static void *session_grow(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q)
        session_die("out of memory");
    return q;
}

static char *session_url(const char *base, config_api_t api) {
    size_t len = strlen(base);
    while (len > 0 && base[len - 1] == '/')
        len--;
    int has_v1 = len >= 3 && memcmp(base + len - 3, "/v1", 3) == 0;
    const char *path = api == API_CHAT ? "/chat/completions" : "/completions";
    size_t cap = len + strlen(path) + 4;
    char *url = malloc(cap);
    if (url)
        snprintf(url, cap, "%.*s%s%s", (int)len, base, has_v1 ? "" : "/v1", path);
    return url;
}

static size_t session_count_words(const char *text, size_t len) {
    size_t words = 0;
    int in_word = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        int space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

static void session_check_finished(session_executor_t *self);

static void session_finished_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_t *self = arg;
    self->finished_timer = 0;
    self->on_finished(self->arg);
}

static void session_check_finished(session_executor_t *self) {
    if (self->finished || self->destroying || !(self->started || self->stopped))
        return;
    if (self->sources_left || self->active_sessions || self->inflight)
        return;
    self->finished = true;
    self->finished_timer = loop_timer_at(self->loop, loop_now_ns(), session_finished_fire, self);
}

/* Sessions a slot or the arrival stream may still ask about: the prefix below is droppable. */
static uint64_t session_prefix_low(const session_executor_t *self) {
    if (self->share.kind == PLAN_RATE)
        return self->next_arrival;
    uint64_t low = UINT64_MAX;
    for (uint32_t k = 0; k < self->share.slot_count; k++)
        if (!self->slots[k].done && self->slots[k].next_session < low)
            low = self->slots[k].next_session;
    return low;
}

static void session_prefix_make_room(session_executor_t *self, uint64_t asking) {
    uint64_t low = session_prefix_low(self);
    if (asking < low)
        low = asking;
    uint64_t drop = low > self->prefix_base ? low - self->prefix_base : 0;
    if (drop > self->prefix_len)
        drop = self->prefix_len;
    if (drop > 0 && drop * 2 >= self->prefix_cap) {
        memmove(self->prefix, self->prefix + drop,
                (self->prefix_len - drop) * sizeof *self->prefix);
        self->prefix_base += drop;
        self->prefix_len -= drop;
        return;
    }
    self->prefix_cap = self->prefix_cap ? self->prefix_cap * 2 : 64;
    self->prefix = session_grow(self->prefix, self->prefix_cap * sizeof *self->prefix);
}

/* Global ordinal of node 0 of session `index`: prefix sums extended on demand, because slots ask
 * for sessions out of order (workload_cursor only walks forward). */
static uint64_t session_first_request(session_executor_t *self, uint64_t index) {
    while (index >= self->prefix_base + self->prefix_len) {
        if (self->prefix_len == self->prefix_cap)
            session_prefix_make_room(self, index);
        uint64_t session = self->prefix_base + self->prefix_len;
        self->prefix[self->prefix_len++] = self->prefix_total;
        self->prefix_total += workload_session_size(self->cfg, session);
    }
    if (index < self->prefix_base)
        session_die("session ordinal asked below the prefix window");
    return self->prefix[index - self->prefix_base];
}

/* Whether session `index` may not start (max_sessions, max_requests, the end of the run); when it
 * may, *first is its first request ordinal. */
static bool session_limit_reached(session_executor_t *self, uint64_t index, uint64_t *first) {
    const config_limits_t *limits = &self->cfg->limits;
    if (!self->issuing || (self->end_ns && loop_now_ns() >= self->end_ns))
        return true;
    if (limits->max_sessions && index >= limits->max_sessions)
        return true;
    *first = session_first_request(self, index);
    return limits->max_requests && *first >= limits->max_requests;
}

static session_request_t *session_request_get(session_executor_t *self) {
    session_request_t *req = self->free_requests;
    if (req) {
        self->free_requests = req->next;
    } else {
        req = session_grow(NULL, sizeof *req);
        memset(req, 0, sizeof *req);
        body_init(&req->body);
        req->owner = self;
    }
    req->next = NULL;
    return req;
}

static void session_request_put(session_executor_t *self, session_request_t *req) {
    req->run = NULL;
    req->next = self->free_requests;
    self->free_requests = req;
}

static void session_text_reserve(session_run_t *run, size_t extra) {
    size_t need = run->text_len + extra + 1;
    if (need <= run->text_cap)
        return;
    size_t cap = run->text_cap ? run->text_cap : 4096;
    while (cap < need)
        cap *= 2;
    run->text = session_grow(run->text, cap);
    run->text_cap = cap;
}

/* Nothing more of this session is sent: waiting nodes are dropped, what is in flight finishes. */
static void session_run_abandon(session_run_t *run) {
    session_executor_t *self = run->owner;
    run->ending = true;
    for (uint32_t j = 0; j < run->n_nodes && run->waiting; j++) {
        session_node_t *node = &run->nodes[j];
        if (node->state == NODE_WAITING) {
            loop_timer_cancel(self->loop, node->timer);
            node->timer = 0;
        } else if (node->state == NODE_BLOCKED) {
            session_request_t **link = &self->blocked_head, *prev = NULL;
            while (*link != node->blocked) {
                prev = *link;
                link = &(*link)->next;
            }
            *link = node->blocked->next;
            if (self->blocked_tail == node->blocked)
                self->blocked_tail = prev;
            session_request_put(self, node->blocked);
            node->blocked = NULL;
        } else {
            continue;
        }
        node->state = NODE_PENDING;
        run->waiting--;
    }
}

static void session_run_settle(session_run_t *run) {
    if (run->inflight == 0 && run->waiting == 0 && run->pinned == 0)
        session_run_end(run);
}

static void session_reap_fire(loop_t *loop, uint64_t id, void *arg) {
    session_run_t *run = arg;
    run->reap_timer = 0;
    session_run_settle(run);
    session_check_finished(run->owner);
}

/* A request that could not be handed to the backend at all: recorded as failed, session ended. */
static void session_request_fail(session_executor_t *self, session_request_t *req) {
    session_run_t *run = req->run;
    request_record_t *rec = &req->record;
    int64_t now = loop_now_ns();
    rec->send_ns = now;
    rec->end_ns = now;
    rec->error = ERROR_CONNECT;
    snprintf(rec->error_message, sizeof rec->error_message,
             "request %llu: the request engine refused the transfer",
             (unsigned long long)rec->request_id);
    rec->warmup = now < self->warmup_end_ns;
    run->nodes[req->node].state = NODE_DONE;
    session_run_abandon(run);
    rec->session_end = run->inflight == 0 && run->waiting == 0;
    run->pinned++;
    self->on_record(self->arg, rec);
    run->pinned--;
    session_request_put(self, req);
}

static void session_request_done(void *arg, request_record_t *record, const char *reply,
                                 size_t reply_len);

static int session_backend_submit(session_executor_t *self, session_request_t *req) {
    if (self->backend.submit(self->backend.ctx, &req->request, session_request_done, req) != 0)
        return -1;
    req->run->nodes[req->node].state = NODE_INFLIGHT;
    req->run->inflight++;
    self->inflight++;
    return 0;
}

/* Requests that found no free transfer go out, in order, as ours finish. */
static void session_pump_blocked(session_executor_t *self) {
    while (self->blocked_head) {
        session_request_t *req = self->blocked_head;
        session_run_t *run = req->run;
        int rc = self->backend.submit(self->backend.ctx, &req->request, session_request_done, req);
        if (rc != 0 && self->inflight > 0)
            return;
        self->blocked_head = req->next;
        if (!self->blocked_head)
            self->blocked_tail = NULL;
        run->nodes[req->node].blocked = NULL;
        run->waiting--;
        if (rc == 0) {
            run->nodes[req->node].state = NODE_INFLIGHT;
            run->inflight++;
            self->inflight++;
        } else {
            session_request_fail(self, req);
            session_run_settle(run);
        }
    }
}

/* Marks the ancestors of node `index` with a fresh epoch; returns how many there are. */
static uint32_t session_mark_ancestors(session_run_t *run, uint32_t index) {
    if (++run->epoch == 0) {
        for (uint32_t j = 0; j < run->n_nodes; j++)
            run->nodes[j].mark = 0;
        run->epoch = 1;
    }
    uint32_t top = 0, count = 0;
    run->stack[top++] = index;
    while (top) {
        const workload_node_t *shape = &run->shape.nodes[run->stack[--top]];
        for (uint32_t p = 0; p < shape->n_parents; p++) {
            session_node_t *parent = &run->nodes[shape->parents[p]];
            if (parent->mark == run->epoch)
                continue;
            parent->mark = run->epoch;
            run->stack[top++] = parent->index;
            count++;
        }
    }
    return count;
}

/* Writes the node's body (system, inherited history, fresh text); returns the words sent. */
static uint64_t session_build_body(session_executor_t *self, session_run_t *run,
                                   session_node_t *node, body_t *body) {
    const config_t *cfg = self->cfg;
    const workload_node_t *shape = &run->shape.nodes[node->index];
    body_options_t options = {.api = cfg->target.api,
                              .model = cfg->target.model,
                              .max_tokens = shape->output_tokens,
                              .stream = cfg->target.stream,
                              .ignore_eos = cfg->target.ignore_eos};
    uint64_t words = 0;
    body_begin(body, &options);
    if (self->system_len) {
        body_add(body, "system", self->system_text, self->system_len);
        words += cfg->workload.system_prompt_tokens;
    }
    uint32_t ancestors = session_mark_ancestors(run, node->index);
    uint32_t keep = shape->inherit >= 1   ? ancestors
                    : shape->inherit <= 0 ? 0
                                          : (uint32_t)llround(shape->inherit * ancestors);
    uint32_t skip = ancestors - keep;
    for (uint32_t j = 0; j < node->index && keep; j++) {
        const session_node_t *a = &run->nodes[j];
        if (a->mark != run->epoch)
            continue;
        if (skip) {
            skip--;
            continue;
        }
        body_add(body, "user", run->text + a->user_off, a->user_len);
        body_add(body, "assistant", run->text + a->reply_off, a->reply_len);
        words += run->shape.nodes[j].input_tokens + a->reply_words;
        keep--;
    }
    body_add(body, "user", run->text + node->user_off, node->user_len);
    words += shape->input_tokens;
    if (body_end(body) != 0)
        session_die("out of memory building a request body");
    return words;
}

static uint32_t session_route(session_executor_t *self, const session_run_t *run, uint64_t g) {
    uint32_t endpoints = self->n_endpoints;
    switch (self->cfg->target.routing) {
    case ROUTING_STICKY:
        return (uint32_t)(run->shape.index % endpoints);
    case ROUTING_RANDOM: {
        rng_t rng;
        rng_init(&rng, self->cfg->seed, RNG_STREAM_ROUTING, g, 0, 0);
        return (uint32_t)rng_next_below(&rng, endpoints);
    }
    case ROUTING_LEAST_INFLIGHT: {
        uint32_t best = (uint32_t)(g % endpoints);
        uint32_t best_load = self->backend.inflight_to(self->backend.ctx, best);
        for (uint32_t k = 1; k < endpoints && best_load > 0; k++) {
            uint32_t e = (uint32_t)((g + k) % endpoints);
            uint32_t load = self->backend.inflight_to(self->backend.ctx, e);
            if (load < best_load) {
                best = e;
                best_load = load;
            }
        }
        return best;
    }
    case ROUTING_ROUND_ROBIN:
    default:
        return (uint32_t)(g % endpoints);
    }
}

/* Hash of what the workload generated for this request; never of anything the server did. */
static uint64_t session_workload_hash(const session_executor_t *self, const session_run_t *run,
                                      const session_node_t *node) {
    const workload_node_t *shape = &run->shape.nodes[node->index];
    uint64_t fields[12 + WORKLOAD_MAX_PARENTS];
    size_t n = 0;
    uint64_t inherit_bits;
    memcpy(&inherit_bits, &shape->inherit, sizeof inherit_bits);
    fields[n++] = run->shape.index;
    fields[n++] = node->index;
    fields[n++] = shape->role;
    fields[n++] = shape->input_tokens;
    fields[n++] = shape->output_tokens;
    fields[n++] = (uint64_t)shape->wait_after_ready_ns;
    fields[n++] = inherit_bits;
    fields[n++] = (uint64_t)run->arrival_offset_ns;
    fields[n++] = XXH3_64bits(run->text + node->user_off, node->user_len);
    fields[n++] = self->system_hash;
    fields[n++] = shape->n_parents;
    for (uint32_t p = 0; p < shape->n_parents && p < WORKLOAD_MAX_PARENTS; p++)
        fields[n++] = shape->parents[p];
    return XXH3_64bits(fields, n * sizeof fields[0]);
}

/* Builds and hands the node's request to the backend (or queues it, or records its failure). */
static void session_node_send(session_node_t *node) {
    session_run_t *run = node->run;
    session_executor_t *self = run->owner;
    const workload_node_t *shape = &run->shape.nodes[node->index];
    int64_t now = loop_now_ns();
    if (!self->issuing || (self->end_ns && now >= self->end_ns))
        return; /* stays pending: never sent */

    session_text_reserve(run, prompt_max_bytes(shape->input_tokens));
    long n = workload_fresh_text(self->cfg, run->shape.index, node->index, shape->input_tokens,
                                 run->text + run->text_len, run->text_cap - run->text_len);
    if (n < 0)
        session_die("fresh prompt text larger than prompt_max_bytes");
    node->user_off = run->text_len;
    node->user_len = (size_t)n;
    run->text_len += (size_t)n;

    session_request_t *req = session_request_get(self);
    req->run = run;
    req->node = node->index;
    req->submit_ns = now;
    uint64_t words = session_build_body(self, run, node, &req->body);
    uint64_t g = run->first_request + node->index;
    request_record_t *rec = &req->record;
    memset(rec, 0, sizeof *rec);
    rec->session = run->shape.index;
    rec->node = node->index;
    rec->role = shape->role;
    rec->endpoint = session_route(self, run, g);
    rec->request_id = g;
    rec->intended_ns = node->intended_ns;
    rec->requested_input_tokens = words > UINT32_MAX ? UINT32_MAX : (uint32_t)words;
    rec->requested_output_tokens = shape->output_tokens;
    rec->workload_hash = session_workload_hash(self, run, node);
    bool sticky = self->cfg->target.routing == ROUTING_STICKY;
    if (sticky)
        snprintf(req->session_id, sizeof req->session_id, "%llu",
                 (unsigned long long)run->shape.index);
    req->request = (engine_request_t){.url = self->urls[rec->endpoint],
                                      .body = req->body.data,
                                      .body_len = req->body.len,
                                      .session_header = sticky ? req->session_id : NULL,
                                      .record = rec};

    if (session_backend_submit(self, req) == 0)
        return;
    if (self->inflight > 0) {
        node->state = NODE_BLOCKED;
        node->blocked = req;
        run->waiting++;
        if (self->blocked_tail)
            self->blocked_tail->next = req;
        else
            self->blocked_head = req;
        self->blocked_tail = req;
        return;
    }
    session_request_fail(self, req);
}

static void session_node_fire(loop_t *loop, uint64_t id, void *arg) {
    session_node_t *node = arg;
    session_run_t *run = node->run;
    node->timer = 0;
    node->state = NODE_PENDING;
    run->waiting--;
    session_node_send(node);
    session_run_settle(run);
    session_check_finished(run->owner);
}

/* Whether node j, ready at ready_ns, will be sent. A node after the first whose time falls past
 * the end is dropped at once, so its session ends (and its slot moves on) now; a root waits, so a
 * slot never spins through sessions that could not start before the end. */
static bool session_node_sendable(const session_run_t *run, uint32_t j, int64_t ready_ns) {
    const session_executor_t *self = run->owner;
    const workload_node_t *shape = &run->shape.nodes[j];
    if (!self->issuing || run->ending)
        return false;
    return !self->end_ns || shape->n_parents == 0 ||
           ready_ns + shape->wait_after_ready_ns < self->end_ns;
}

static void session_node_ready(session_node_t *node, int64_t ready_ns) {
    session_run_t *run = node->run;
    session_executor_t *self = run->owner;
    if (!session_node_sendable(run, node->index, ready_ns))
        return; /* stays pending: never sent */
    node->intended_ns = ready_ns + run->shape.nodes[node->index].wait_after_ready_ns;
    if (node->intended_ns <= loop_now_ns()) {
        session_node_send(node);
        return;
    }
    node->state = NODE_WAITING;
    run->waiting++;
    node->timer = loop_timer_at(self->loop, node->intended_ns, session_node_fire, node);
}

static void session_request_done(void *arg, request_record_t *record, const char *reply,
                                 size_t reply_len) {
    session_request_t *req = arg;
    session_executor_t *self = req->owner;
    session_run_t *run = req->run;
    session_node_t *node = &run->nodes[req->node];
    self->inflight--;
    run->inflight--;
    node->state = NODE_DONE;
    if (self->destroying) {
        session_request_put(self, req);
        return;
    }
    int64_t now = loop_now_ns();
    record->warmup = (record->send_ns ? record->send_ns : req->submit_ns) < self->warmup_end_ns;

    uint32_t sendable = 0;
    bool ok = record->error == ERROR_NONE;
    if (ok) {
        session_text_reserve(run, reply_len);
        memcpy(run->text + run->text_len, reply, reply_len);
        node->reply_off = run->text_len;
        node->reply_len = reply_len;
        node->reply_words = (uint32_t)session_count_words(reply, reply_len);
        run->text_len += reply_len;
        for (uint32_t c = run->child_start[node->index]; c < run->child_start[node->index + 1];
             c++) {
            uint32_t j = run->children[c];
            if (--run->nodes[j].parents_left == 0 && session_node_sendable(run, j, now))
                sendable++;
        }
    } else {
        session_run_abandon(run);
    }
    record->session_end = run->inflight == 0 && run->waiting == 0 && sendable == 0;
    run->pinned++;
    self->on_record(self->arg, record);
    run->pinned--;
    session_request_put(self, req);

    if (ok)
        for (uint32_t c = run->child_start[node->index]; c < run->child_start[node->index + 1];
             c++) {
            session_node_t *child = &run->nodes[run->children[c]];
            if (child->parents_left == 0 && child->state == NODE_PENDING)
                session_node_ready(child, now);
        }
    session_run_settle(run);
    session_pump_blocked(self);
    session_check_finished(self);
}

/* Sizes the run's per-node arrays for the generated shape and links children to parents. */
static void session_run_prepare(session_run_t *run) {
    const workload_session_t *shape = &run->shape;
    uint32_t n = run->n_nodes;
    if (n + 1 > run->nodes_cap) {
        run->nodes_cap = n + 1;
        run->nodes = session_grow(run->nodes, run->nodes_cap * sizeof *run->nodes);
        run->child_start = session_grow(run->child_start, run->nodes_cap * sizeof(uint32_t));
        run->stack = session_grow(run->stack, run->nodes_cap * sizeof(uint32_t));
    }
    uint32_t edges = 0;
    memset(run->child_start, 0, (n + 1) * sizeof(uint32_t));
    for (uint32_t j = 0; j < n; j++) {
        const workload_node_t *w = &shape->nodes[j];
        if (w->n_parents > WORKLOAD_MAX_PARENTS)
            session_die("a workload node has more than WORKLOAD_MAX_PARENTS parents");
        for (uint32_t p = 0; p < w->n_parents; p++) {
            if (w->parents[p] >= j)
                session_die("a workload node's parent does not precede it");
            run->child_start[w->parents[p] + 1]++;
            edges++;
        }
        run->nodes[j] = (session_node_t){
            .run = run, .index = j, .parents_left = w->n_parents, .state = NODE_PENDING};
    }
    for (uint32_t j = 0; j < n; j++)
        run->child_start[j + 1] += run->child_start[j];
    if (edges > run->children_cap) {
        run->children_cap = edges;
        run->children = session_grow(run->children, edges * sizeof(uint32_t));
    }
    for (uint32_t j = 0; j < n; j++) /* mark serves as the fill cursor, then is reset */
        run->nodes[j].mark = run->child_start[j];
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t p = 0; p < shape->nodes[j].n_parents; p++)
            run->children[run->nodes[shape->nodes[j].parents[p]].mark++] = j;
    for (uint32_t j = 0; j < n; j++)
        run->nodes[j].mark = 0;
    run->epoch = 0;
}

static void session_run_start(session_executor_t *self, session_slot_t *slot, uint64_t index,
                              uint64_t first_request, int64_t intended_ns,
                              int64_t arrival_offset_ns) {
    session_run_t *run = self->free_runs;
    if (run) {
        self->free_runs = run->next;
    } else {
        run = session_grow(NULL, sizeof *run);
        memset(run, 0, sizeof *run);
        run->owner = self;
    }
    run->slot = slot;
    run->arrival_offset_ns = arrival_offset_ns;
    if (self->generate(self->generate_arg, self->cfg, index, &run->shape) != 0)
        session_die("out of memory generating a session");
    if (run->shape.n_nodes != workload_session_size(self->cfg, index))
        session_die("a generated session's size differs from workload_session_size");
    run->first_request = first_request;
    run->n_nodes = run->shape.n_nodes;
    uint64_t max_requests = self->cfg->limits.max_requests;
    if (max_requests && run->first_request + run->n_nodes > max_requests)
        run->n_nodes = (uint32_t)(max_requests - run->first_request);
    session_run_prepare(run);
    run->text_len = 0;
    run->inflight = 0;
    run->waiting = 0;
    run->pinned = 0;
    run->ending = false;
    run->reap_timer = 0;
    run->prev = NULL;
    run->next = self->active;
    if (self->active)
        self->active->prev = run;
    self->active = run;
    self->active_sessions++;

    for (uint32_t j = 0; j < run->n_nodes; j++)
        if (run->shape.nodes[j].n_parents == 0)
            session_node_ready(&run->nodes[j], intended_ns);
    /* A session over at once (its first request refused) ends from the loop, not recursively. */
    if (run->inflight == 0 && run->waiting == 0)
        run->reap_timer = loop_timer_at(self->loop, loop_now_ns(), session_reap_fire, run);
}

static void session_slot_next(session_slot_t *slot, int64_t intended_ns) {
    session_executor_t *self = slot->owner;
    if (slot->done)
        return;
    uint64_t index = slot->next_session, first = 0;
    if (session_limit_reached(self, index, &first)) {
        slot->done = true;
        self->sources_left--;
        session_check_finished(self);
        return;
    }
    slot->next_session += self->share.total_slots;
    session_run_start(self, slot, index, first, intended_ns, -1);
}

static void session_slot_fire(loop_t *loop, uint64_t id, void *arg) {
    session_slot_t *slot = arg;
    slot->timer = 0;
    session_slot_next(slot, slot->first_ns);
}

static void session_arrival_fire(loop_t *loop, uint64_t id, void *arg);

/* Rate mode: starts every owned arrival that is due, as far as the cap allows. */
static void session_rate_pump(session_executor_t *self) {
    while (self->issuing && self->sources_left) {
        uint64_t index = self->next_arrival, first = 0;
        if (session_limit_reached(self, index, &first)) {
            self->sources_left = 0;
            break;
        }
        int64_t offset = workload_arrivals_time_ns(&self->arrivals, index);
        int64_t intended = self->start_ns + offset;
        if (self->end_ns && intended >= self->end_ns) {
            self->sources_left = 0;
            break;
        }
        if (self->share.rate_cap && self->active_sessions >= self->share.rate_cap)
            return;
        if (intended > loop_now_ns()) {
            if (!self->arrival_timer)
                self->arrival_timer =
                    loop_timer_at(self->loop, intended, session_arrival_fire, self);
            return;
        }
        if (self->arrival_timer) { /* armed for this arrival but not fired yet */
            loop_timer_cancel(self->loop, self->arrival_timer);
            self->arrival_timer = 0;
        }
        self->next_arrival += self->share.n_workers;
        session_run_start(self, NULL, index, first, intended, offset);
    }
    session_check_finished(self);
}

static void session_arrival_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_t *self = arg;
    self->arrival_timer = 0;
    session_rate_pump(self);
}

static void session_run_end(session_run_t *run) {
    session_executor_t *self = run->owner;
    if (run->reap_timer) {
        loop_timer_cancel(self->loop, run->reap_timer);
        run->reap_timer = 0;
    }
    if (run->prev)
        run->prev->next = run->next;
    else
        self->active = run->next;
    if (run->next)
        run->next->prev = run->prev;
    self->active_sessions--;
    session_slot_t *slot = run->slot;
    run->next = self->free_runs;
    self->free_runs = run;
    if (slot)
        session_slot_next(slot, loop_now_ns());
    else
        session_rate_pump(self);
    session_check_finished(self);
}

/* The end of the run (duration reached, or stop): nothing more starts or is sent. */
static void session_stop_issuing(session_executor_t *self) {
    self->issuing = false;
    if (self->end_timer)
        loop_timer_cancel(self->loop, self->end_timer);
    if (self->arrival_timer)
        loop_timer_cancel(self->loop, self->arrival_timer);
    self->end_timer = self->arrival_timer = 0;
    for (uint32_t k = 0; self->slots && k < self->share.slot_count; k++) {
        if (self->slots[k].timer)
            loop_timer_cancel(self->loop, self->slots[k].timer);
        self->slots[k].timer = 0;
        self->slots[k].done = true;
    }
    self->sources_left = 0;
    session_run_t *run = self->active;
    while (run) {
        session_run_t *next = run->next;
        session_run_abandon(run);
        session_run_settle(run);
        run = next;
    }
    session_check_finished(self);
}

static void session_end_fire(loop_t *loop, uint64_t id, void *arg) {
    session_executor_t *self = arg;
    self->end_timer = 0;
    session_stop_issuing(self);
}

static int session_engine_submit(void *ctx, const engine_request_t *req, engine_done_fn done,
                                 void *arg) {
    return engine_submit(ctx, req, done, arg);
}

static uint32_t session_engine_inflight_to(void *ctx, uint32_t endpoint) {
    return engine_inflight_to(ctx, endpoint);
}

static void session_engine_cancel_all(void *ctx) {
    engine_cancel_all(ctx);
}

static int session_generate_workload(void *arg, const config_t *cfg, uint64_t index,
                                     workload_session_t *out) {
    return workload_session_generate(cfg, index, out);
}

session_backend_t session_backend_engine(engine_t *engine) {
    return (session_backend_t){.submit = session_engine_submit,
                               .inflight_to = session_engine_inflight_to,
                               .cancel_all = session_engine_cancel_all,
                               .ctx = engine};
}

session_executor_t *session_executor_new(loop_t *loop, const config_t *cfg,
                                         const plan_share_t *share, session_backend_t backend,
                                         session_record_fn on_record,
                                         session_finished_fn on_finished, void *arg) {
    if (cfg->target.n_endpoints == 0 || share->n_workers == 0)
        return NULL;
    session_executor_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    self->cfg = cfg;
    self->share = *share;
    self->backend = backend;
    self->on_record = on_record;
    self->on_finished = on_finished;
    self->arg = arg;
    self->generate = session_generate_workload;
    self->n_endpoints = (uint32_t)cfg->target.n_endpoints;
    self->urls = calloc(self->n_endpoints, sizeof *self->urls);
    size_t system_cap = prompt_max_bytes(cfg->workload.system_prompt_tokens);
    self->system_text = malloc(system_cap);
    if (share->kind == PLAN_CONCURRENT && share->slot_count)
        self->slots = calloc(share->slot_count, sizeof *self->slots);
    bool ok = self->urls && self->system_text &&
              (self->slots || share->kind == PLAN_RATE || share->slot_count == 0);
    for (uint32_t e = 0; ok && e < self->n_endpoints; e++)
        ok = (self->urls[e] = session_url(cfg->target.endpoints[e], cfg->target.api)) != NULL;
    long n = ok ? workload_system_text(cfg, self->system_text, system_cap) : -1;
    if (n < 0) {
        session_executor_destroy(&self);
        return NULL;
    }
    self->system_len = (size_t)n;
    self->system_hash = XXH3_64bits(self->system_text, self->system_len);
    return self;
}

void session_executor_set_generator(session_executor_t *self, session_generate_fn generate,
                                    void *arg) {
    self->generate = generate;
    self->generate_arg = arg;
}

int session_executor_start(session_executor_t *self, int64_t start_ns) {
    if (self->started || self->stopped)
        return -1;
    const config_t *cfg = self->cfg;
    self->started = true;
    self->issuing = true;
    self->start_ns = start_ns;
    self->end_ns = cfg->limits.duration_ns > 0 ? start_ns + cfg->limits.duration_ns : 0;
    self->warmup_end_ns = start_ns + (cfg->warmup_ns > 0 ? cfg->warmup_ns : 0);
    if (self->end_ns)
        self->end_timer = loop_timer_at(self->loop, self->end_ns, session_end_fire, self);
    if (self->share.kind == PLAN_CONCURRENT) {
        int64_t ramp = cfg->scheduler.ramp_up_ns > 0 ? cfg->scheduler.ramp_up_ns : 0;
        for (uint32_t k = 0; k < self->share.slot_count; k++) {
            session_slot_t *slot = &self->slots[k];
            uint64_t global = (uint64_t)self->share.slot_first + k;
            slot->owner = self;
            slot->next_session = global;
            slot->first_ns =
                start_ns + (int64_t)((__int128)global * ramp / self->share.total_slots);
            slot->timer = loop_timer_at(self->loop, slot->first_ns, session_slot_fire, slot);
        }
        self->sources_left = self->share.slot_count;
    } else {
        workload_arrivals_init(&self->arrivals, cfg);
        self->next_arrival = self->share.worker_index;
        self->sources_left = 1;
        self->arrival_timer = loop_timer_at(self->loop, start_ns, session_arrival_fire, self);
    }
    session_check_finished(self);
    return 0;
}

void session_executor_stop(session_executor_t *self, bool cancel_inflight) {
    self->stopped = true;
    session_stop_issuing(self);
    if (cancel_inflight && self->inflight > 0)
        self->backend.cancel_all(self->backend.ctx);
    session_check_finished(self);
}

uint32_t session_executor_inflight(const session_executor_t *self) {
    return self->inflight;
}

uint32_t session_executor_active_sessions(const session_executor_t *self) {
    return self->active_sessions;
}

static void session_run_free(session_executor_t *self, session_run_t *run) {
    for (uint32_t j = 0; j < run->n_nodes; j++)
        if (run->nodes[j].state == NODE_WAITING)
            loop_timer_cancel(self->loop, run->nodes[j].timer);
    if (run->reap_timer)
        loop_timer_cancel(self->loop, run->reap_timer);
    workload_session_free(&run->shape);
    free(run->nodes);
    free(run->child_start);
    free(run->children);
    free(run->stack);
    free(run->text);
    free(run);
}

static void session_request_free_list(session_request_t *req) {
    while (req) {
        session_request_t *next = req->next;
        body_free(&req->body);
        free(req);
        req = next;
    }
}

void session_executor_destroy(session_executor_t **self_p) {
    session_executor_t *self = *self_p;
    if (!self)
        return;
    self->destroying = true;
    if (self->inflight > 0)
        self->backend.cancel_all(self->backend.ctx);
    if (self->inflight > 0)
        session_die("the backend kept requests in flight after cancel_all");
    uint64_t timers[] = {self->end_timer, self->arrival_timer, self->finished_timer};
    for (size_t t = 0; t < sizeof timers / sizeof timers[0]; t++)
        if (timers[t])
            loop_timer_cancel(self->loop, timers[t]);
    for (uint32_t k = 0; self->slots && k < self->share.slot_count; k++)
        if (self->slots[k].timer)
            loop_timer_cancel(self->loop, self->slots[k].timer);
    session_run_t *lists[] = {self->active, self->free_runs};
    for (size_t l = 0; l < 2; l++)
        while (lists[l]) {
            session_run_t *next = lists[l]->next;
            session_run_free(self, lists[l]);
            lists[l] = next;
        }
    session_request_free_list(self->blocked_head);
    session_request_free_list(self->free_requests);
    for (uint32_t e = 0; self->urls && e < self->n_endpoints; e++)
        free(self->urls[e]);
    free(self->urls);
    free(self->system_text);
    free(self->prefix);
    free(self->slots);
    free(self);
    *self_p = NULL;
}
