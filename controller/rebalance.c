#include "rebalance.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "clock_probe.h"
#include "collect.h"
#include "console.h"
#include "controller_internal.h"
#include "launch.h"
#include "loop.h"
#include "plan.h"
#include "workload.h"

/* The least headroom, in strides of session indexes (one stride: a session on every slot). */
#define REBALANCE_MIN_STRIDES 8

static bool rate_mode(const controller_t *self) {
    return self->run->cfg.scheduler.kind == SCHEDULER_RATE;
}

/* Session indexes one round of the whole run spans: its slots, or its arrival workers. */
static uint64_t stride(const controller_t *self) {
    const measurement_t *run = self->run;
    if (run->class_stride) /* fixed at the start: a worker joining later does not change it */
        return run->class_stride;
    uint64_t s =
        rate_mode(self) ? plan_arrival_workers(&run->cfg, run->in_run) : plan_slots(&run->cfg);
    return s ? s : 1;
}

static uint64_t min_headroom(const controller_t *self) {
    uint64_t h = REBALANCE_MIN_STRIDES * stride(self);
    if (rate_mode(self)) { /* four heartbeats of arrivals */
        double per_beat = self->run->cfg.scheduler.rate * controller_heartbeat_ns(self) / 1e9;
        if (4 * per_beat > (double)h)
            h = (uint64_t)(4 * per_beat);
    }
    return h;
}

/* The run's full load: its concurrency, or its rate. */
static double full_load(const controller_t *self) {
    return rate_mode(self) ? self->run->cfg.scheduler.rate
                           : (double)self->run->cfg.scheduler.concurrency;
}

static int hold(registry_worker_t *w, uint64_t residue, uint64_t modulus) {
    if (buffer_grow_array(&w->held, &w->cap_held, w->n_held + 1, sizeof *w->held) < 0)
        return -1;
    w->held[w->n_held++] = (rebalance_class_t){residue, modulus};
    w->classes_changed = true;
    return 0;
}

void rebalance_free_worker(registry_worker_t *w) {
    free(w->held);
    w->held = NULL;
    w->n_held = w->cap_held = 0;
}

uint64_t rebalance_start(controller_t *self) {
    measurement_t *run = self->run;
    run->class_stride = 0;
    run->class_stride = stride(self);
    run->session_headroom = min_headroom(self);
    run->session_limit = run->session_headroom;
    run->frontier_at_tick = 0;
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (!registry_in_run(w))
            continue;
        rebalance_free_worker(w);
        plan_share_t share;
        if (plan_share_for(&run->cfg, run->in_run, (uint32_t)w->index, &share) != 0)
            continue;
        if (share.kind == PLAN_CONCURRENT)
            for (uint32_t k = 0; k < share.slot_count; k++)
                hold(w, share.slot_first + k, share.total_slots);
        else if (share.worker_index < share.arrival_workers)
            hold(w, share.worker_index, share.arrival_workers);
        w->rate_cap = share.rate_cap;
        w->classes_changed = false; /* it runs its share as planned */
    }
    return run->session_limit;
}

double rebalance_share(const controller_t *self, const registry_worker_t *w) {
    double share = 0;
    if (!rate_mode(self)) {
        uint32_t slots = plan_slots(&self->run->cfg);
        return slots ? (double)w->n_held / slots : 0;
    }
    for (size_t i = 0; i < w->n_held; i++)
        share += 1.0 / (double)w->held[i].modulus;
    return share;
}

static uint64_t max_frontier(const controller_t *self) {
    uint64_t f = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        if (registry_in_run(&self->workers[i]) && self->workers[i].frontier > f)
            f = self->workers[i].frontier;
    return f;
}

static void send_grant(controller_t *self, registry_worker_t *w) {
    Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
    hb.sent_ns = loop_now_ns();
    hb.session_limit = self->run->session_limit;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    env.run_id = self->run->id;
    controller_send(self, w, &env);
}

void rebalance_heartbeat(controller_t *self, registry_worker_t *w, const Stampede__Heartbeat *hb) {
    measurement_t *run = self->run;
    if (run->phase != PHASE_RUN || !registry_in_run(w) || w->taken_over)
        return;
    /* No worker starts a session at or past the grant: a frontier or a count beyond it is refused
     * (it would raise the grant for everyone, wrap it around, or count sessions never run). */
    if (hb->session_frontier > run->session_limit || hb->sessions_started > run->session_limit) {
        char why[160];
        snprintf(why, sizeof why,
                 "session frontier %" PRIu64 " and %" PRIu64
                 " sessions started, past the grant %" PRIu64,
                 hb->session_frontier, hb->sessions_started, run->session_limit);
        collect_refuse_number(self, w, "a heartbeat", why);
        return;
    }
    if (hb->session_frontier > w->frontier)
        w->frontier = hb->session_frontier;
    if (hb->sessions_started > w->sessions_started)
        w->sessions_started = hb->sessions_started;
    uint64_t top = max_frontier(self);
    uint64_t moved = top > run->frontier_at_tick ? top - run->frontier_at_tick : 0;
    if (2 * moved > run->session_headroom) /* faster than the headroom allows: widen it now */
        run->session_headroom = 2 * moved;
    if (top + run->session_headroom / 2 > run->session_limit) {
        run->session_limit = top + run->session_headroom;
        send_grant(self, w);
    }
}

void rebalance_tick(controller_t *self) {
    measurement_t *run = self->run;
    uint64_t top = max_frontier(self);
    uint64_t moved = top > run->frontier_at_tick ? top - run->frontier_at_tick : 0;
    run->frontier_at_tick = top;
    run->session_headroom = min_headroom(self);
    if (4 * moved > run->session_headroom)
        run->session_headroom = 4 * moved;
    if (top + run->session_headroom / 2 > run->session_limit)
        run->session_limit = top + run->session_headroom;
}

/* Rate mode: the first arrival index >= floor that is not yet due (its time after now). */
static uint64_t first_not_due(const controller_t *self, uint64_t floor) {
    const measurement_t *run = self->run;
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, &run->cfg);
    int64_t now = loop_now_ns() - run->start_ns;
    uint64_t i = floor;
    while (workload_arrivals_time_ns(&arrivals, i) < now)
        i++;
    return i;
}

static rebalance_loss_t *add_loss(controller_t *self, registry_worker_t *w) {
    measurement_t *run = self->run;
    if (buffer_grow_array(&run->losses, &run->cap_losses, run->n_losses + 1, sizeof *run->losses) <
        0)
        return NULL;
    rebalance_loss_t *loss = &run->losses[run->n_losses++];
    memset(loss, 0, sizeof *loss);
    snprintf(loss->worker, sizeof loss->worker, "%s", w->name);
    loss->index = (uint32_t)w->index;
    loss->from_ns = w->last_rx_ns > run->start_ns ? w->last_rx_ns : run->start_ns;
    loss->declared_ns = loop_now_ns();
    loss->share = rebalance_share(self, w);
    loss->lost_sessions =
        w->sessions_started > w->sessions_ended ? w->sessions_started - w->sessions_ended : 0;
    return loss;
}

/* Drops class c from w's classes. */
static void unhold(registry_worker_t *w, rebalance_class_t c) {
    for (size_t i = 0; i < w->n_held; i++)
        if (w->held[i].residue == c.residue && w->held[i].modulus == c.modulus) {
            memmove(w->held + i, w->held + i + 1, (w->n_held - i - 1) * sizeof *w->held);
            w->n_held--;
            w->classes_changed = true;
            return;
        }
}

/* Sends s a Rebalance: it gives up the classes release[0..n_release) and runs adopt[0..n), both
 * from first on, with cap_add more of the cap; its classes on record follow. */
static void send_rebalance2(controller_t *self, registry_worker_t *s,
                            const rebalance_class_t *adopt, size_t n,
                            const rebalance_class_t *release, size_t n_release, uint64_t first,
                            uint32_t cap_add, const char *reason) {
    size_t total = n + n_release;
    Stampede__Adoption *items = calloc(total ? total : 1, sizeof *items);
    Stampede__Adoption **ptrs = calloc(total ? total : 1, sizeof *ptrs);
    if (!items || !ptrs) {
        free(items);
        free(ptrs);
        console_say(self, "out of memory rebalancing onto worker %s", s->name);
        return;
    }
    for (size_t i = 0; i < total; i++) {
        const rebalance_class_t *c = i < n ? &adopt[i] : &release[i - n];
        stampede__adoption__init(&items[i]);
        items[i].residue = c->residue;
        items[i].modulus = c->modulus;
        items[i].first_session = first;
        ptrs[i] = &items[i];
    }
    for (size_t i = 0; i < n_release; i++)
        unhold(s, release[i]);
    for (size_t i = 0; i < n; i++)
        hold(s, adopt[i].residue, adopt[i].modulus);
    Stampede__Rebalance r = STAMPEDE__REBALANCE__INIT;
    r.n_adopt = n;
    r.adopt = ptrs;
    r.n_release = n_release;
    r.release = ptrs + n;
    r.session_limit = self->run->session_limit;
    r.rate_cap_add = cap_add;
    r.reason = (char *)reason;
    s->rate_cap += cap_add;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_REBALANCE;
    env.rebalance = &r;
    env.run_id = self->run->id;
    controller_send(self, s, &env);
    free(items);
    free(ptrs);
}

static void send_rebalance(controller_t *self, registry_worker_t *s, const rebalance_class_t *adopt,
                           size_t n, uint64_t first, uint32_t cap_add, const char *reason) {
    send_rebalance2(self, s, adopt, n, NULL, 0, first, cap_add, reason);
}

/* The abort threshold: true when the run was ended because of this loss. */
static bool over_threshold(controller_t *self, registry_worker_t *w, const char *why) {
    measurement_t *run = self->run;
    double pct = run->cfg.fleet.abort_on_worker_loss_pct;
    if (pct < 0 || run->lost_share * 100 <= pct + 1e-9 || run->stopping)
        return false;
    snprintf(run->loss_abort, sizeof run->loss_abort,
             "worker %s lost (%s): %.1f %% of the load lost, above "
             "fleet.abort_on_worker_loss_pct = %g %%",
             w->name, why, run->lost_share * 100, pct);
    console_say(self, "ending the run: %s", run->loss_abort);
    merge_mark_partial(run->merge, run->loss_abort);
    collect_stop(self, run->loss_abort);
    return true;
}

bool rebalance_lost(controller_t *self, registry_worker_t *w, const char *why) {
    measurement_t *run = self->run;
    if (w->taken_over)
        return true;
    rebalance_loss_t *loss = add_loss(self, w);
    if (!loss)
        return false;
    w->lost_sessions = loss->lost_sessions;
    run->lost_share += loss->share;
    if (over_threshold(self, w, why))
        return false;
    if (w->n_held == 0) { /* it held no load (beyond the cap's split): nothing is missing */
        w->taken_over = loss->taken_over = true;
        loss->to_ns = loss->declared_ns;
        return true;
    }
    if (run->stopping || config_replays(&run->cfg))
        return false; /* a trace part lives on its worker only */
    registry_worker_t **survivors = calloc(self->n_workers, sizeof *survivors);
    uint32_t n = 0;
    for (size_t i = 0; survivors && i < self->n_workers; i++) {
        registry_worker_t *s = &self->workers[i];
        if (s != w && registry_in_run(s) && s->state == REGISTRY_RUNNING && !s->done)
            survivors[n++] = s;
    }
    if (n == 0) {
        free(survivors);
        return false;
    }
    /* Nothing of the lost worker's is at or past the grant; rate mode also skips what is due. */
    uint64_t first = run->session_limit;
    if (rate_mode(self))
        first = first_not_due(self, first);
    uint64_t widest = 0;
    for (size_t i = 0; i < w->n_held; i++)
        if (w->held[i].modulus * n > widest)
            widest = w->held[i].modulus * n;
    run->session_limit = first + run->session_headroom + widest;
    char reason[256];
    snprintf(reason, sizeof reason, "worker %s was lost", w->name);
    rebalance_class_t *mine = calloc(w->n_held, sizeof *mine);
    for (uint32_t j = 0; mine && j < n; j++) {
        size_t count = 0;
        uint64_t part_first, part_count, cap_first, cap_count = 0;
        if (!rate_mode(self)) { /* whole slots: +1 to the first k survivors */
            plan_partition(w->n_held, n, j, &part_first, &part_count);
            memcpy(mine, w->held + part_first, part_count * sizeof *mine);
            count = part_count;
        } else { /* every arrival class split n ways */
            for (size_t i = 0; i < w->n_held; i++, count++)
                plan_split_class(w->held[i].residue, w->held[i].modulus, n, j, &mine[count].residue,
                                 &mine[count].modulus);
            if (w->rate_cap)
                plan_partition(w->rate_cap, n, j, &cap_first, &cap_count);
        }
        if (count)
            send_rebalance(self, survivors[j], mine, count, first, (uint32_t)cap_count, reason);
    }
    free(mine);
    free(survivors);
    console_say(self,
                "worker %s's share (%.1f %% of the load) taken over by %u worker%s from session "
                "%" PRIu64 "; %" PRIu64 " of its sessions lost",
                w->name, loss->share * 100, n, n == 1 ? "" : "s", first, loss->lost_sessions);
    loss->to_ns = loop_now_ns();
    loss->taken_over = w->taken_over = true;
    w->n_held = 0;
    w->rate_cap = 0;
    w->abandon_sent_ns = loop_now_ns();
    controller_send_stop(self, w, "lost: its share was taken over by the other workers", true,
                         true);
    return true;
}

uint64_t rebalance_lost_sessions(const controller_t *self) {
    uint64_t n = 0;
    for (size_t i = 0; i < self->run->n_losses; i++)
        n += self->run->losses[i].lost_sessions;
    return n;
}

/* The end of loss i's shortfall. */
static int64_t loss_end(const rebalance_loss_t *loss, int64_t end_ns) {
    int64_t to = loss->taken_over ? loss->to_ns : end_ns;
    return to < end_ns ? to : end_ns;
}

/* The share of the load missing at instant t. */
static double missing_at(const controller_t *self, int64_t t, int64_t end_ns) {
    double missing = 0;
    for (size_t i = 0; i < self->run->n_losses; i++) {
        const rebalance_loss_t *loss = &self->run->losses[i];
        if (loss->from_ns <= t && t < loss_end(loss, end_ns))
            missing += loss->share;
    }
    return missing > 1 ? 1 : missing;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The load held at instant t (concurrency rounded to a whole slot). */
static double held_at(const controller_t *self, int64_t t, int64_t end_ns) {
    double held = full_load(self) * (1 - missing_at(self, t, end_ns));
    return rate_mode(self) ? held : round(held);
}

/* Calls fn for each stretch [from, to) of constant load from the start to end_ns. */
static void each_stretch(const controller_t *self, int64_t end_ns,
                         void (*fn)(void *arg, int64_t from, int64_t to, double load), void *arg) {
    const measurement_t *run = self->run;
    size_t n = 0;
    int64_t *edges = calloc(2 * run->n_losses + 2, sizeof *edges);
    if (!edges)
        return;
    edges[n++] = run->start_ns;
    edges[n++] = end_ns;
    for (size_t i = 0; i < run->n_losses; i++) {
        edges[n++] = run->losses[i].from_ns;
        edges[n++] = loss_end(&run->losses[i], end_ns);
    }
    qsort(edges, n, sizeof *edges, cmp_i64);
    int64_t from = run->start_ns;
    double load = held_at(self, from, end_ns);
    for (size_t i = 0; i < n; i++) {
        int64_t t = edges[i];
        if (t <= from || t > end_ns)
            continue;
        double next = t < end_ns ? held_at(self, t, end_ns) : NAN;
        if (t == end_ns || next != load) {
            fn(arg, from, t, load);
            from = t;
            load = next;
        }
    }
    free(edges);
}

typedef struct shortfall {
    double lowest;
    int64_t short_ns;
    double full;
} shortfall_t;

static void add_shortfall(void *arg, int64_t from, int64_t to, double load) {
    shortfall_t *s = arg;
    if (load >= s->full)
        return;
    s->short_ns += to - from;
    if (load < s->lowest)
        s->lowest = load;
}

void rebalance_label(const controller_t *self, int64_t end_ns, char *buf, size_t len) {
    shortfall_t s = {.lowest = full_load(self), .full = full_load(self)};
    buf[0] = '\0';
    if (!self->run->n_losses || end_ns <= self->run->start_ns)
        return;
    each_stretch(self, end_ns, add_shortfall, &s);
    if (s.short_ns <= 0)
        return;
    if (rate_mode(self))
        snprintf(buf, len, "held %.3g/s for %.1f s", s.lowest, s.short_ns / 1e9);
    else
        snprintf(buf, len, "held %.0f for %.1f s", s.lowest, s.short_ns / 1e9);
}

typedef struct stretch_json {
    const controller_t *self;
    json_t *array;
} stretch_json_t;

static void add_stretch_json(void *arg, int64_t from, int64_t to, double load) {
    stretch_json_t *s = arg;
    int64_t start = s->self->run->start_ns;
    bool rate = rate_mode(s->self);
    json_array_append_new(s->array,
                          json_pack("{s:f, s:f, s:o}", "from_s", (from - start) / 1e9, "to_s",
                                    (to - start) / 1e9, rate ? "rate" : "concurrency",
                                    rate ? json_real(load) : json_integer((json_int_t)load)));
}

void rebalance_json(const controller_t *self, int64_t end_ns, json_t *level) {
    const measurement_t *run = self->run;
    json_t *losses = json_array();
    bool degraded = false;
    for (size_t i = 0; i < run->n_losses; i++) {
        const rebalance_loss_t *l = &run->losses[i];
        degraded |= l->taken_over && l->share > 0;
        json_array_append_new(
            losses,
            json_pack("{s:s, s:i, s:f, s:f, s:o, s:b, s:f, s:I}", "worker", l->worker, "index",
                      (int)l->index, "from_s", (l->from_ns - run->start_ns) / 1e9, "declared_s",
                      (l->declared_ns - run->start_ns) / 1e9, "to_s",
                      l->taken_over ? json_real((l->to_ns - run->start_ns) / 1e9) : json_null(),
                      "taken_over", l->taken_over, "share", l->share, "lost_sessions",
                      (json_int_t)l->lost_sessions));
    }
    json_object_set_new(level, "degraded", json_boolean(degraded));
    json_object_set_new(level, "ended_on_worker_loss",
                        run->loss_abort[0] ? json_string(run->loss_abort) : json_null());
    json_object_set_new(level, "worker_losses", losses);
    json_object_set_new(level, "lost_sessions",
                        json_integer((json_int_t)rebalance_lost_sessions(self)));
    stretch_json_t s = {self, json_array()};
    if (end_ns > run->start_ns)
        each_stretch(self, end_ns, add_stretch_json, &s);
    json_object_set_new(level, "load_held", s.array);
    json_object_set_new(level, "workers", registry_run_json(self));
}

void rebalance_print(const controller_t *self, FILE *out) {
    const measurement_t *run = self->run;
    for (size_t i = 0; i < run->n_losses; i++) {
        const rebalance_loss_t *l = &run->losses[i];
        fprintf(out, "Worker lost: %s (worker %u, %.1f %% of the load) silent from %.1f s, ",
                l->worker, l->index, l->share * 100, (l->from_ns - run->start_ns) / 1e9);
        if (l->taken_over)
            fprintf(out, "its share taken over at %.1f s (DEGRADED for %.1f s)",
                    (l->to_ns - run->start_ns) / 1e9, (l->to_ns - l->from_ns) / 1e9);
        else
            fprintf(out, "its share NOT taken over");
        fprintf(out, "; %" PRIu64 " session%s lost\n", l->lost_sessions,
                l->lost_sessions == 1 ? "" : "s");
    }
    if (run->loss_abort[0])
        fprintf(out, "Run ended early: %s\n", run->loss_abort);
}

/* Whether a worker may join the run in progress (fleet.rebalance_on_join and a run that can
 * give it a share). */
static bool may_join(const controller_t *self) {
    const measurement_t *run = self->run;
    return run->cfg.fleet.rebalance_on_join && run->phase == PHASE_RUN && !run->stopping &&
           !run->loss_abort[0] && !config_replays(&run->cfg) &&
           run->cfg.scheduler.kind != SCHEDULER_SEQUENTIAL &&
           !(rate_mode(self) && run->cfg.scheduler.concurrency > 0);
}

bool rebalance_rejoin(controller_t *self, registry_worker_t *w) {
    if (!may_join(self) || w->state != REGISTRY_LOST || !w->taken_over)
        return false;
    /* A new incarnation in the run: its batches start again from 1 (the old ones, told to be
     * dropped, are never merged), and it holds nothing until it is given a share. */
    w->taken_over = false;
    w->acked_seq = 0;
    w->ingested = 0;
    w->done = false;
    w->done_last_seq = w->done_records = w->done_dropped = 0;
    w->has_stats = false;
    w->inflight = 0;
    w->frontier = w->sessions_started = w->sessions_ended = 0;
    w->release_pending = false;
    w->n_held = 0;
    w->classes_changed = true; /* it holds only what it is given from now on */
    w->rate_cap = 0;
    w->back_said = false;
    clock_probe_one(self, w);
    return true;
}

bool rebalance_join_begin(controller_t *self, registry_worker_t *w) {
    measurement_t *run = self->run;
    if (!may_join(self))
        return false;
    uint64_t *starts = realloc(run->window_starts, (run->in_run + 1) * sizeof *starts);
    if (!starts)
        return false;
    starts[run->in_run] = 0;
    run->window_starts = starts;
    w->index = (int)run->in_run++;
    w->classes_changed = true; /* no share of its own: only what it is given */
    return true;
}

void rebalance_join_step(controller_t *self, int64_t now) {
    bool probing = false;
    for (size_t i = 0; i < self->n_workers; i++)
        probing |= registry_in_run(&self->workers[i]) && self->workers[i].state == REGISTRY_PROBING;
    if (probing)
        clock_probe_step(self, now); /* a measured joiner is back in REGISTRY_REGISTERED */
    bool running = false; /* a started worker still has load: a joiner can still get some */
    for (size_t i = 0; i < self->n_workers; i++) {
        const registry_worker_t *w = &self->workers[i];
        running |= registry_in_run(w) && w->state == REGISTRY_RUNNING && !w->done;
    }
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (!registry_in_run(w) ||
            (w->state != REGISTRY_PROBING && w->state != REGISTRY_REGISTERED &&
             w->state != REGISTRY_ASSIGNED))
            continue;
        if (!running || self->run->stopping) { /* the run ends before it could join */
            w->state = REGISTRY_LOST;
            w->taken_over = true; /* it held nothing */
            controller_send_stop(self, w, "the run ended before this worker could join it", true,
                                 true);
        } else if (w->state == REGISTRY_REGISTERED) {
            launch_assign_join(self, w);
        }
    }
}

/* Concurrent: whole slots to the joiner, one at a time from the donor holding the most, until it
 * holds C / (donors + 1) or would hold more than the donor. Each donor stops the slot at its next
 * session; the joiner runs it from `first`. */
static void join_slots(controller_t *self, registry_worker_t *w, registry_worker_t **donors,
                       uint32_t n, uint64_t first, const char *reason) {
    uint32_t target = plan_slots(&self->run->cfg) / (n + 1);
    size_t *given = calloc(n, sizeof *given);
    rebalance_class_t *take = calloc(target ? target : 1, sizeof *take);
    size_t taken = 0;
    while (given && take && taken < target) {
        uint32_t best = n;
        for (uint32_t d = 0; d < n; d++)
            if (best == n || donors[d]->n_held - given[d] > donors[best]->n_held - given[best])
                best = d;
        if (best == n || donors[best]->n_held - given[best] <= taken + 1)
            break; /* the joiner would hold as much as the biggest donor */
        registry_worker_t *d = donors[best];
        take[taken++] = d->held[d->n_held - 1 - given[best]++];
    }
    for (uint32_t d = 0; given && d < n; d++) {
        if (!given[d])
            continue;
        rebalance_class_t *release = calloc(given[d], sizeof *release);
        if (!release)
            continue;
        memcpy(release, donors[d]->held + donors[d]->n_held - given[d], given[d] * sizeof *release);
        send_rebalance2(self, donors[d], NULL, 0, release, given[d], first, 0, reason);
        free(release);
    }
    if (taken)
        send_rebalance(self, w, take, taken, first, 0, reason);
    console_say(self, "worker %s joined the run: %zu slot%s from session %" PRIu64, w->name, taken,
                taken == 1 ? "" : "s", first);
    free(given);
    free(take);
}

/* Rate mode (no cap): every donor's arrival classes split n + 1 ways; the donor keeps n parts and
 * gives the last to the joiner, from `first` on (the donor's arrivals before it stay its own). */
static void join_arrivals(controller_t *self, registry_worker_t *w, registry_worker_t **donors,
                          uint32_t n, uint64_t first, const char *reason) {
    size_t given = 0;
    for (uint32_t d = 0; d < n; d++) {
        registry_worker_t *donor = donors[d];
        size_t k = donor->n_held;
        rebalance_class_t *release = calloc(k ? k : 1, sizeof *release);
        rebalance_class_t *keep = calloc(k * n + 1, sizeof *keep);
        rebalance_class_t *give = calloc(k + 1, sizeof *give);
        if (!release || !keep || !give) {
            free(release), free(keep), free(give);
            continue;
        }
        memcpy(release, donor->held, k * sizeof *release);
        for (size_t i = 0; i < k; i++) {
            for (uint32_t j = 0; j < n; j++)
                plan_split_class(release[i].residue, release[i].modulus, n + 1, j,
                                 &keep[i * n + j].residue, &keep[i * n + j].modulus);
            plan_split_class(release[i].residue, release[i].modulus, n + 1, n, &give[i].residue,
                             &give[i].modulus);
        }
        send_rebalance2(self, donor, keep, k * n, release, k, first, 0, reason);
        send_rebalance(self, w, give, k, first, 0, reason);
        given += k;
        free(release), free(keep), free(give);
    }
    console_say(self,
                "worker %s joined the run: a part of %zu arrival stream%s from session %" PRIu64,
                w->name, given, given == 1 ? "" : "s", first);
}

void rebalance_join_ready(controller_t *self, registry_worker_t *w, const Stampede__Ready *ready) {
    measurement_t *run = self->run;
    if (w->state != REGISTRY_ASSIGNED)
        return;
    if (!ready->ok || run->stopping) {
        console_say(self, "worker %s could not join the run: %s", w->name,
                    !ready->ok && ready->error && *ready->error ? ready->error
                                                                : "the run is ending");
        w->state = REGISTRY_LOST;
        w->taken_over = true; /* it holds nothing: nothing is missing */
        controller_send_stop(self, w, "could not join the run", true, true);
        return;
    }
    launch_send_start(self, w);
    registry_worker_t **donors = calloc(self->n_workers, sizeof *donors);
    uint32_t n = 0;
    for (size_t i = 0; donors && i < self->n_workers; i++) {
        registry_worker_t *d = &self->workers[i];
        if (d != w && registry_in_run(d) && d->state == REGISTRY_RUNNING && !d->done &&
            !d->taken_over && d->n_held)
            donors[n++] = d;
    }
    uint64_t first = run->session_limit;
    if (rate_mode(self))
        first = first_not_due(self, first);
    uint64_t widest = stride(self) * (n + 1);
    run->session_limit = first + run->session_headroom + widest;
    char reason[256];
    snprintf(reason, sizeof reason, "worker %s joined the run (fleet.rebalance_on_join)", w->name);
    if (n == 0)
        console_say(self, "worker %s joined the run, but no worker has load to share", w->name);
    else if (rate_mode(self))
        join_arrivals(self, w, donors, n, first, reason);
    else
        join_slots(self, w, donors, n, first, reason);
    free(donors);
}
