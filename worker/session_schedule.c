#include "session_schedule.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "session_alloc.h"
#include "workload.h"

typedef struct session_slot {
    session_schedule_t *owner;
    uint64_t next_session;
    int64_t first_ns;   /* ramp-up instant of its first session, then of a session after a pause */
    int64_t backoff_ns; /* pause before the next session after connect failures (0: none) */
    uint64_t timer;
    uint64_t stride; /* between its sessions: the run's slots */
    bool done;
    bool held;          /* its next session is at or past the grant: waits for a raise */
    bool released;      /* given up to a joining worker: it starts no more sessions */
    int64_t held_since; /* the intended instant of that session */
} session_slot_t;

/* Rate mode: one residue class of the arrival sequence (this worker's own, or an adopted one). */
typedef struct session_stream {
    uint64_t next;
    uint64_t stride;
    uint64_t end; /* released from this index on (0: never) */
} session_stream_t;

struct session_schedule {
    loop_t *loop;
    const config_t *cfg;
    plan_share_t share;
    session_graph_t *graph;
    void (*settled)(void *arg);
    void *arg;

    uint64_t prefix_base; /* prefix[i] = first request ordinal of session prefix_base + i */
    uint64_t *prefix;
    size_t prefix_len, prefix_cap;
    uint64_t prefix_total; /* first ordinal of session prefix_base + prefix_len */

    session_slot_t *slots;
    session_slot_t **adopted; /* slots taken over from a lost worker, each its own allocation */
    size_t n_adopted, cap_adopted;
    session_stream_t *streams; /* rate mode: arrival streams; the next arrival is their least */
    size_t n_streams, cap_streams;
    uint64_t limit;    /* no session index at or past this starts (0: no grant in force) */
    uint64_t frontier; /* 1 + the highest session index started (0: none) */
    uint64_t started;  /* sessions started */
    uint32_t n_held;   /* slots waiting at the grant */
    workload_arrivals_t arrivals;
    uint64_t next_arrival;
    uint64_t arrival_timer;
    uint32_t sources_left; /* slots (or the arrival stream) that may still start sessions */
    bool awaiting;         /* a joining worker's: no load yet, its first adoption is coming */
    uint64_t arrivals_started;
    uint64_t cap_waits;        /* arrivals that were due while the cap was full */
    uint64_t cap_wait_counted; /* 1 + the arrival last counted in cap_waits (0: none) */
    int64_t start_ns, end_ns;
    bool issuing;
};

/* Sessions a slot or the arrival stream may still ask about: the prefix below is droppable. */
static uint64_t session_schedule_prefix_low(const session_schedule_t *self) {
    if (self->share.kind == PLAN_RATE)
        return self->next_arrival;
    uint64_t low = UINT64_MAX;
    for (uint32_t k = 0; k < self->share.slot_count; k++)
        if (!self->slots[k].done && self->slots[k].next_session < low)
            low = self->slots[k].next_session;
    for (size_t k = 0; k < self->n_adopted; k++)
        if (!self->adopted[k]->done && self->adopted[k]->next_session < low)
            low = self->adopted[k]->next_session;
    return low;
}

/* Room for one more prefix sum: drops what no one will ask for again, or grows. */
static void session_schedule_make_room(session_schedule_t *self, uint64_t asking) {
    uint64_t low = session_schedule_prefix_low(self);
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
    if (buffer_grow_array(&self->prefix, &self->prefix_cap, self->prefix_len + 1,
                          sizeof *self->prefix) < 0)
        session_alloc_die("out of memory");
}

/* Global ordinal of node 0 of session `index`: prefix sums extended on demand, because slots ask
 * for sessions out of order (a cursor walking only forward would restart from 0). */
static uint64_t session_schedule_first_request(session_schedule_t *self, uint64_t index) {
    if (index < self->prefix_base) {
        /* An adopted slot (a lost worker's, from the grant on) may start below the window the own
         * slots left: the window restarts at it, its first ordinal counted back from the base. */
        uint64_t ordinal = self->prefix_len ? self->prefix[0] : self->prefix_total;
        for (uint64_t s = self->prefix_base; s > index; s--)
            ordinal -= workload_session_size(self->cfg, s - 1);
        self->prefix_base = index;
        self->prefix_len = 0;
        self->prefix_total = ordinal;
    }
    while (index >= self->prefix_base + self->prefix_len) {
        if (self->prefix_len == self->prefix_cap)
            session_schedule_make_room(self, index);
        uint64_t session = self->prefix_base + self->prefix_len;
        self->prefix[self->prefix_len++] = self->prefix_total;
        self->prefix_total += workload_session_size(self->cfg, session);
    }
    if (index < self->prefix_base)
        session_alloc_die("session ordinal asked below the prefix window");
    return self->prefix[index - self->prefix_base];
}

/* Whether session `index` may not start (max_sessions, max_requests, the end of the run); when it
 * may, *first is its first request ordinal. */
static bool session_schedule_limit_reached(session_schedule_t *self, uint64_t index,
                                           uint64_t *first) {
    const config_limits_t *limits = &self->cfg->limits;
    if (!self->issuing || (self->end_ns && loop_now_ns() >= self->end_ns))
        return true;
    if (limits->max_sessions && index >= limits->max_sessions)
        return true;
    *first = session_schedule_first_request(self, index);
    return limits->max_requests && *first >= limits->max_requests;
}

/* Whether session `index` is past the controller's grant (it waits for a raise). */
static bool session_schedule_past_grant(const session_schedule_t *self, uint64_t index) {
    return self->limit && index >= self->limit;
}

/* A session starts: the frontier and the count the heartbeats report. */
static void session_schedule_count(session_schedule_t *self, uint64_t index) {
    if (index + 1 > self->frontier)
        self->frontier = index + 1;
    self->started++;
}

/* Starts the slot's next session, intended at intended_ns, or retires the slot at a limit. */
static void session_schedule_slot_next(session_slot_t *slot, int64_t intended_ns) {
    session_schedule_t *self = slot->owner;
    if (slot->done)
        return;
    uint64_t index = slot->next_session, first = 0;
    if (slot->released || session_schedule_limit_reached(self, index, &first)) {
        slot->done = true;
        self->n_held -= slot->held;
        slot->held = false;
        self->sources_left--;
        self->settled(self->arg);
        return;
    }
    if (session_schedule_past_grant(self, index)) {
        if (!slot->held) {
            slot->held_since = intended_ns;
            self->n_held++;
        }
        slot->held = true;
        return;
    }
    if (slot->held) {
        intended_ns = slot->held_since; /* the wait for the grant shows as schedule lag */
        self->n_held--;
    }
    slot->held = false;
    slot->next_session += slot->stride;
    session_schedule_count(self, index);
    session_graph_start(self->graph, slot, slot->backoff_ns, index, first, intended_ns, -1);
}

static void session_schedule_slot_fire(loop_t *loop, uint64_t id, void *arg) {
    session_slot_t *slot = arg;
    slot->timer = 0;
    session_schedule_slot_next(slot, slot->first_ns);
}

static void session_schedule_arrival_fire(loop_t *loop, uint64_t id, void *arg);

/* Rate mode: starts every owned arrival that is due, as far as the cap allows. */
/* Rate mode: the stream whose next arrival comes first (arrival times grow with the index). */
static session_stream_t *session_schedule_first_stream(session_schedule_t *self) {
    session_stream_t *best = NULL;
    for (size_t k = 0; k < self->n_streams; k++) {
        session_stream_t *s = &self->streams[k];
        if (s->end && s->next >= s->end) { /* released: drop it */
            *s = self->streams[--self->n_streams];
            k--;
            continue;
        }
        if (!best || s->next < best->next)
            best = s;
    }
    return best;
}

static void session_schedule_rate_pump(session_schedule_t *self) {
    while (self->issuing && self->sources_left) {
        session_stream_t *stream = session_schedule_first_stream(self);
        if (!stream) {
            self->sources_left = 0;
            break;
        }
        self->next_arrival = stream->next;
        uint64_t index = self->next_arrival, first = 0;
        if (session_schedule_limit_reached(self, index, &first)) {
            self->sources_left = 0;
            break;
        }
        if (session_schedule_past_grant(self, index))
            break; /* held until the controller raises the grant */
        int64_t offset = workload_arrivals_time_ns(&self->arrivals, index);
        int64_t intended = self->start_ns + offset;
        if (self->end_ns && intended >= self->end_ns) {
            self->sources_left = 0;
            break;
        }
        /* The timer is armed even when the cap is full, so an arrival held back is seen due. */
        if (intended > loop_now_ns()) {
            if (!self->arrival_timer)
                self->arrival_timer =
                    loop_timer_at(self->loop, intended, session_schedule_arrival_fire, self);
            return;
        }
        if (self->share.rate_cap && session_graph_active(self->graph) >= self->share.rate_cap) {
            if (self->cap_wait_counted != index + 1) {
                self->cap_waits++; /* due, held back until a session ends: counted once */
                self->cap_wait_counted = index + 1;
            }
            return;
        }
        if (self->arrival_timer) { /* armed for this arrival but not fired yet */
            loop_timer_cancel(self->loop, self->arrival_timer);
            self->arrival_timer = 0;
        }
        stream->next += stream->stride;
        self->next_arrival = stream->next;
        self->arrivals_started++;
        session_schedule_count(self, index);
        session_graph_start(self->graph, NULL, 0, index, first, intended, offset);
    }
    self->settled(self->arg);
}

static void session_schedule_arrival_fire(loop_t *loop, uint64_t id, void *arg) {
    session_schedule_t *self = arg;
    self->arrival_timer = 0;
    session_schedule_rate_pump(self);
}

session_schedule_t *session_schedule_new(loop_t *loop, const config_t *cfg,
                                         const plan_share_t *share, session_graph_t *graph,
                                         void (*settled)(void *arg), void *arg) {
    session_schedule_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    self->cfg = cfg;
    self->share = *share;
    self->graph = graph;
    self->settled = settled;
    self->arg = arg;
    if (share->kind == PLAN_CONCURRENT && share->slot_count) {
        self->slots = calloc(share->slot_count, sizeof *self->slots);
        if (!self->slots)
            session_schedule_destroy(&self);
    }
    return self;
}

static int session_schedule_add_stream(session_schedule_t *self, uint64_t next, uint64_t stride) {
    if (buffer_grow_array(&self->streams, &self->cap_streams, self->n_streams + 1,
                          sizeof *self->streams) < 0)
        return -1;
    self->streams[self->n_streams++] = (session_stream_t){.next = next, .stride = stride};
    return 0;
}

void session_schedule_start(session_schedule_t *self, int64_t start_ns, int64_t end_ns) {
    const config_t *cfg = self->cfg;
    self->start_ns = start_ns;
    self->end_ns = end_ns;
    self->issuing = true;
    if (self->share.kind == PLAN_CONCURRENT) {
        int64_t ramp = cfg->scheduler.ramp_up_ns > 0 ? cfg->scheduler.ramp_up_ns : 0;
        for (uint32_t k = 0; k < self->share.slot_count; k++) {
            session_slot_t *slot = &self->slots[k];
            uint64_t global = (uint64_t)self->share.slot_first + k;
            slot->owner = self;
            slot->stride = self->share.total_slots;
            slot->next_session = global;
            slot->first_ns =
                start_ns + (int64_t)((__int128)global * ramp / self->share.total_slots);
            slot->timer =
                loop_timer_at(self->loop, slot->first_ns, session_schedule_slot_fire, slot);
        }
        self->sources_left = self->share.slot_count + (self->awaiting ? 1 : 0);
    } else {
        workload_arrivals_init(&self->arrivals, cfg);
        self->next_arrival = self->share.worker_index;
        /* a worker beyond the cap's split owns no arrival: it finishes at the start */
        if (self->share.worker_index < self->share.arrival_workers &&
            session_schedule_add_stream(self, self->share.worker_index,
                                        self->share.arrival_workers) != 0)
            session_alloc_die("out of memory");
        self->sources_left = self->n_streams || self->awaiting ? 1 : 0;
        self->arrival_timer =
            loop_timer_at(self->loop, start_ns, session_schedule_arrival_fire, self);
    }
}

void session_schedule_next(session_schedule_t *self, void *source, int64_t backoff_ns) {
    session_slot_t *slot = source;
    if (slot)
        slot->backoff_ns = backoff_ns;
    if (slot && slot->backoff_ns && !slot->done) {
        /* The server refused connections: pause this slot rather than retry in a tight loop
         * against a server that may be restarting (a shared rig must not see a connect storm). */
        slot->first_ns = loop_now_ns() + slot->backoff_ns;
        slot->timer = loop_timer_at(self->loop, slot->first_ns, session_schedule_slot_fire, slot);
    } else if (slot)
        session_schedule_slot_next(slot, loop_now_ns());
    else
        session_schedule_rate_pump(self);
}

void session_schedule_stop(session_schedule_t *self) {
    self->issuing = false;
    loop_timer_cancel(self->loop, self->arrival_timer);
    self->arrival_timer = 0;
    for (uint32_t k = 0; self->slots && k < self->share.slot_count; k++) {
        loop_timer_cancel(self->loop, self->slots[k].timer);
        self->slots[k].timer = 0;
        self->slots[k].done = true;
    }
    for (size_t k = 0; k < self->n_adopted; k++) {
        loop_timer_cancel(self->loop, self->adopted[k]->timer);
        self->adopted[k]->timer = 0;
        self->adopted[k]->done = true;
    }
    self->sources_left = 0;
}

void session_schedule_set_limit(session_schedule_t *self, uint64_t limit) {
    if (limit <= self->limit)
        return;
    self->limit = limit;
    if (!self->issuing)
        return;
    if (self->share.kind == PLAN_RATE) {
        session_schedule_rate_pump(self);
        return;
    }
    for (uint32_t k = 0; k < self->share.slot_count; k++)
        if (self->slots[k].held)
            session_schedule_slot_next(&self->slots[k], self->slots[k].held_since);
    for (size_t k = 0; k < self->n_adopted; k++)
        if (self->adopted[k]->held)
            session_schedule_slot_next(self->adopted[k], self->adopted[k]->held_since);
}

uint64_t session_schedule_limit(const session_schedule_t *self) {
    return self->limit;
}

uint64_t session_schedule_frontier(const session_schedule_t *self) {
    return self->frontier;
}

uint64_t session_schedule_started(const session_schedule_t *self) {
    return self->started;
}

bool session_schedule_held(const session_schedule_t *self) {
    if (!self->issuing)
        return false;
    if (self->share.kind == PLAN_RATE) {
        const session_stream_t *first = NULL;
        for (size_t k = 0; k < self->n_streams; k++)
            if (!first || self->streams[k].next < first->next)
                first = &self->streams[k];
        return first && session_schedule_past_grant(self, first->next);
    }
    return self->n_held > 0;
}

int session_schedule_adopt(session_schedule_t *self, uint64_t residue, uint64_t modulus,
                           uint64_t first_session, uint32_t rate_cap_add) {
    if (!self->issuing || modulus == 0 || residue >= modulus)
        return -1;
    uint64_t first = plan_first_in_class(residue, modulus, first_session);
    if (self->awaiting) { /* the joining worker's first load: its placeholder source goes */
        self->awaiting = false;
        self->sources_left--;
    }
    if (self->share.kind == PLAN_RATE) {
        if (session_schedule_add_stream(self, first, modulus) != 0)
            return -1;
        if (rate_cap_add)
            self->share.rate_cap += rate_cap_add;
        self->sources_left = 1;
        session_schedule_rate_pump(self);
        return 0;
    }
    session_slot_t *slot = calloc(1, sizeof *slot);
    if (!slot || buffer_grow_array(&self->adopted, &self->cap_adopted, self->n_adopted + 1,
                                   sizeof *self->adopted) < 0) {
        free(slot);
        return -1;
    }
    self->adopted[self->n_adopted++] = slot;
    slot->owner = self;
    slot->stride = modulus;
    slot->next_session = first;
    slot->first_ns = loop_now_ns();
    self->sources_left++;
    slot->timer = loop_timer_at(self->loop, slot->first_ns, session_schedule_slot_fire, slot);
    return 0;
}

void session_schedule_await_adoption(session_schedule_t *self) {
    self->awaiting = true;
}

int session_schedule_release(session_schedule_t *self, uint64_t residue, uint64_t modulus,
                             uint64_t from_session) {
    if (modulus == 0)
        return -1;
    residue %= modulus;
    if (self->share.kind == PLAN_RATE) {
        for (size_t k = 0; k < self->n_streams; k++)
            if (self->streams[k].stride == modulus && self->streams[k].next % modulus == residue) {
                self->streams[k].end = from_session;
                return 0;
            }
        return -1;
    }
    for (uint32_t k = 0; k < self->share.slot_count + self->n_adopted; k++) {
        session_slot_t *slot = k < self->share.slot_count
                                   ? &self->slots[k]
                                   : self->adopted[k - self->share.slot_count];
        if (slot->done || slot->stride != modulus || slot->next_session % modulus != residue)
            continue;
        /* A slot is given up at its next session: the one in progress finishes here, and the
         * class goes on elsewhere from from_session, past anything this slot has started. */
        slot->released = true;
        if (slot->held) /* it waits at the grant: it may be past its end already */
            session_schedule_slot_next(slot, slot->held_since);
        return 0;
    }
    return -1;
}

uint32_t session_schedule_sources_left(const session_schedule_t *self) {
    return self->sources_left;
}

uint64_t session_schedule_arrivals(const session_schedule_t *self) {
    return self->arrivals_started;
}

uint64_t session_schedule_cap_waits(const session_schedule_t *self) {
    return self->cap_waits;
}

void session_schedule_destroy(session_schedule_t **self_p) {
    session_schedule_t *self = *self_p;
    if (!self)
        return;
    session_schedule_stop(self);
    free(self->prefix);
    free(self->slots);
    for (size_t k = 0; k < self->n_adopted; k++)
        free(self->adopted[k]);
    free(self->adopted);
    free(self->streams);
    free(self);
    *self_p = NULL;
}
