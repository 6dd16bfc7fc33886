#include "rebalance.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "clock_probe.h"
#include "drain.h"
#include "launch.h"
#include "loop.h"
#include "losses.h"
#include "plan.h"
#include "workload.h"

/* The least headroom, in strides of session indexes (one stride: a session on every slot). */
#define REBALANCE_MIN_STRIDES 8

static bool rate_mode(const measurement_t *run) {
    return run->cfg.scheduler.kind == SCHEDULER_RATE;
}

/* Session indexes one round of the whole run spans: its slots, or its arrival workers. */
static uint64_t stride(const measurement_t *run) {
    if (run->class_stride) /* fixed at the start: a worker joining later does not change it */
        return run->class_stride;
    uint64_t s =
        rate_mode(run) ? plan_arrival_workers(&run->cfg, run->in_run) : plan_slots(&run->cfg);
    return s ? s : 1;
}

static uint64_t min_headroom(const measurement_t *run) {
    uint64_t h = REBALANCE_MIN_STRIDES * stride(run);
    if (rate_mode(run)) { /* four heartbeats of arrivals */
        double per_beat = run->cfg.scheduler.rate * measurement_heartbeat_ns(run) / 1e9;
        if (4 * per_beat > (double)h)
            h = (uint64_t)(4 * per_beat);
    }
    return h;
}

static int hold(run_worker_t *w, uint64_t residue, uint64_t modulus) {
    if (buffer_grow_array(&w->held, &w->cap_held, w->n_held + 1, sizeof *w->held) < 0)
        return -1;
    w->held[w->n_held++] = (rebalance_class_t){residue, modulus};
    w->classes_changed = true;
    return 0;
}

uint64_t rebalance_start(measurement_t *run) {
    run->class_stride = 0;
    run->class_stride = stride(run);
    run->session_headroom = min_headroom(run);
    run->session_limit = run->session_headroom;
    run->frontier_at_tick = 0;
    for (size_t i = 0; i < run->n_workers; i++) {
        run_worker_t *w = run->workers[i];
        if (!run_worker_in_run(w))
            continue;
        free(w->held);
        w->held = NULL;
        w->n_held = w->cap_held = 0;
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

/* w's share of the run's load now (0..1). */
static double rebalance_share(const measurement_t *run, const run_worker_t *w) {
    double share = 0;
    if (!rate_mode(run)) {
        uint32_t slots = plan_slots(&run->cfg);
        return slots ? (double)w->n_held / slots : 0;
    }
    for (size_t i = 0; i < w->n_held; i++)
        share += 1.0 / (double)w->held[i].modulus;
    return share;
}

static uint64_t max_frontier(const measurement_t *run) {
    uint64_t f = 0;
    for (size_t i = 0; i < run->n_workers; i++)
        if (run_worker_in_run(run->workers[i]) && run->workers[i]->frontier > f)
            f = run->workers[i]->frontier;
    return f;
}

static void send_grant(measurement_t *run, run_worker_t *w) {
    Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
    hb.sent_ns = loop_now_ns();
    hb.session_limit = run->session_limit;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    env.run_id = run->id;
    measurement_send(run, w, &env);
}

void rebalance_heartbeat(measurement_t *run, run_worker_t *w, const Stampede__Heartbeat *hb) {
    if (run->phase != PHASE_RUN || !run_worker_in_run(w) || w->taken_over)
        return;
    /* No worker starts a session at or past the grant: a frontier or a count beyond it is refused
     * (it would raise the grant for everyone, wrap it around, or count sessions never run). */
    if (hb->session_frontier > run->session_limit || hb->sessions_started > run->session_limit) {
        char why[160];
        snprintf(why, sizeof why,
                 "session frontier %" PRIu64 " and %" PRIu64
                 " sessions started, past the grant %" PRIu64,
                 hb->session_frontier, hb->sessions_started, run->session_limit);
        measurement_refuse_number(run, w, "a heartbeat", why);
        return;
    }
    if (hb->session_frontier > w->frontier)
        w->frontier = hb->session_frontier;
    if (hb->sessions_started > w->sessions_started)
        w->sessions_started = hb->sessions_started;
    uint64_t top = max_frontier(run);
    uint64_t moved = top > run->frontier_at_tick ? top - run->frontier_at_tick : 0;
    if (2 * moved > run->session_headroom) /* faster than the headroom allows: widen it now */
        run->session_headroom = 2 * moved;
    if (top + run->session_headroom / 2 > run->session_limit) {
        run->session_limit = top + run->session_headroom;
        send_grant(run, w);
    }
}

void rebalance_tick(measurement_t *run) {
    uint64_t top = max_frontier(run);
    uint64_t moved = top > run->frontier_at_tick ? top - run->frontier_at_tick : 0;
    run->frontier_at_tick = top;
    run->session_headroom = min_headroom(run);
    if (4 * moved > run->session_headroom)
        run->session_headroom = 4 * moved;
    if (top + run->session_headroom / 2 > run->session_limit)
        run->session_limit = top + run->session_headroom;
}

/* Rate mode: the first arrival index >= floor that is not yet due (its time after now). */
static uint64_t first_not_due(const measurement_t *run, uint64_t floor) {
    workload_arrivals_t arrivals;
    workload_arrivals_init(&arrivals, &run->cfg);
    int64_t now = loop_now_ns() - run->start_ns;
    uint64_t i = floor;
    while (workload_arrivals_time_ns(&arrivals, i) < now)
        i++;
    return i;
}

static run_loss_t *add_loss(measurement_t *run, run_worker_t *w, int64_t last_word_ns) {
    if (buffer_grow_array(&run->losses, &run->cap_losses, run->n_losses + 1, sizeof *run->losses) <
        0)
        return NULL;
    run_loss_t *loss = &run->losses[run->n_losses++];
    memset(loss, 0, sizeof *loss);
    snprintf(loss->worker, sizeof loss->worker, "%s", w->name);
    loss->index = (uint32_t)w->index;
    loss->from_ns = last_word_ns > run->start_ns ? last_word_ns : run->start_ns;
    loss->declared_ns = loop_now_ns();
    loss->share = rebalance_share(run, w);
    loss->lost_sessions =
        w->sessions_started > w->sessions_ended ? w->sessions_started - w->sessions_ended : 0;
    return loss;
}

/* Drops class c from w's classes. */
static void unhold(run_worker_t *w, rebalance_class_t c) {
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
static void send_rebalance2(measurement_t *run, run_worker_t *s, const rebalance_class_t *adopt,
                            size_t n, const rebalance_class_t *release, size_t n_release,
                            uint64_t first, uint32_t cap_add, const char *reason) {
    size_t total = n + n_release;
    Stampede__Adoption *items = calloc(total ? total : 1, sizeof *items);
    Stampede__Adoption **ptrs = calloc(total ? total : 1, sizeof *ptrs);
    if (!items || !ptrs) {
        free(items);
        free(ptrs);
        measurement_say(run, "out of memory rebalancing onto worker %s", s->name);
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
    r.session_limit = run->session_limit;
    r.rate_cap_add = cap_add;
    r.reason = (char *)reason;
    s->rate_cap += cap_add;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_REBALANCE;
    env.rebalance = &r;
    env.run_id = run->id;
    measurement_send(run, s, &env);
    free(items);
    free(ptrs);
}

static void send_rebalance(measurement_t *run, run_worker_t *s, const rebalance_class_t *adopt,
                           size_t n, uint64_t first, uint32_t cap_add, const char *reason) {
    send_rebalance2(run, s, adopt, n, NULL, 0, first, cap_add, reason);
}

/* The abort threshold: true when the run was ended because of this loss. */
static bool over_threshold(measurement_t *run, run_worker_t *w, const char *why) {
    double pct = run->cfg.fleet.abort_on_worker_loss_pct;
    if (pct < 0 || run->lost_share * 100 <= pct + 1e-9 || run->stopping)
        return false;
    snprintf(run->loss_abort, sizeof run->loss_abort,
             "worker %s lost (%s): %.1f %% of the load lost, above "
             "fleet.abort_on_worker_loss_pct = %g %%",
             w->name, why, run->lost_share * 100, pct);
    measurement_say(run, "ending the run: %s", run->loss_abort);
    merge_mark_partial(run->merge, run->loss_abort);
    drain_stop(run, run->loss_abort);
    return true;
}

static bool rebalance_lost(measurement_t *run, run_worker_t *w, const char *why,
                           int64_t last_word_ns) {
    if (w->taken_over)
        return true;
    run_loss_t *loss = add_loss(run, w, last_word_ns);
    if (!loss)
        return false;
    w->lost_sessions = loss->lost_sessions;
    run->lost_share += loss->share;
    if (over_threshold(run, w, why))
        return false;
    if (w->n_held == 0) { /* it held no load (beyond the cap's split): nothing is missing */
        w->taken_over = loss->taken_over = true;
        loss->to_ns = loss->declared_ns;
        return true;
    }
    if (run->stopping || config_replays(&run->cfg))
        return false; /* a trace part lives on its worker only */
    run_worker_t **survivors = calloc(run->n_workers, sizeof *survivors);
    uint32_t n = 0;
    for (size_t i = 0; survivors && i < run->n_workers; i++) {
        run_worker_t *s = run->workers[i];
        if (s != w && run_worker_in_run(s) && s->state == RUN_WORKER_RUNNING && !s->done)
            survivors[n++] = s;
    }
    if (n == 0) {
        free(survivors);
        return false;
    }
    /* Nothing of the lost worker's is at or past the grant; rate mode also skips what is due. */
    uint64_t first = run->session_limit;
    if (rate_mode(run))
        first = first_not_due(run, first);
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
        if (!rate_mode(run)) { /* whole slots: +1 to the first k survivors */
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
            send_rebalance(run, survivors[j], mine, count, first, (uint32_t)cap_count, reason);
    }
    free(mine);
    free(survivors);
    measurement_say(
        run,
        "worker %s's share (%.1f %% of the load) taken over by %u worker%s from session "
        "%" PRIu64 "; %" PRIu64 " of its sessions lost",
        w->name, loss->share * 100, n, n == 1 ? "" : "s", first, loss->lost_sessions);
    loss->to_ns = loop_now_ns();
    loss->taken_over = w->taken_over = true;
    w->n_held = 0;
    w->rate_cap = 0;
    w->abandon_sent_ns = loop_now_ns();
    measurement_send_stop(run, w, "lost: its share was taken over by the other workers", true,
                          true);
    return true;
}

static bool may_join(const measurement_t *run) {
    return run->cfg.fleet.rebalance_on_join && run->phase == PHASE_RUN && !run->stopping &&
           !run->loss_abort[0] && !config_replays(&run->cfg) &&
           run->cfg.scheduler.kind != SCHEDULER_SEQUENTIAL &&
           !(rate_mode(run) && run->cfg.scheduler.concurrency > 0);
}

/* fleet.rebalance_on_join: w, lost with its share taken over, spoke again (and was just told to
 * drop its old load): it joins the run again, as a new incarnation under its index, to be probed.
 * False: it waits for the next run. */
static bool rebalance_rejoin(measurement_t *run, run_worker_t *w) {
    if (!may_join(run) || w->state != RUN_WORKER_LOST || !w->taken_over)
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
    clock_probe_one(run, w);
    return true;
}

bool rebalance_join_begin(measurement_t *run, run_worker_t *w) {
    if (!may_join(run))
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

void rebalance_join_step(measurement_t *run, int64_t now) {
    bool probing = false;
    for (size_t i = 0; i < run->n_workers; i++)
        probing |=
            run_worker_in_run(run->workers[i]) && run->workers[i]->state == RUN_WORKER_PROBING;
    if (probing)
        clock_probe_step(run, now); /* a measured joiner is back in RUN_WORKER_REGISTERED */
    bool running = false; /* a started worker still has load: a joiner can still get some */
    for (size_t i = 0; i < run->n_workers; i++) {
        const run_worker_t *w = run->workers[i];
        running |= run_worker_in_run(w) && w->state == RUN_WORKER_RUNNING && !w->done;
    }
    for (size_t i = 0; i < run->n_workers; i++) {
        run_worker_t *w = run->workers[i];
        if (!run_worker_in_run(w) ||
            (w->state != RUN_WORKER_PROBING && w->state != RUN_WORKER_REGISTERED &&
             w->state != RUN_WORKER_ASSIGNED))
            continue;
        if (!running || run->stopping) { /* the run ends before it could join */
            w->state = RUN_WORKER_LOST;
            w->taken_over = true; /* it held nothing */
            measurement_send_stop(run, w, "the run ended before this worker could join it", true,
                                  true);
        } else if (w->state == RUN_WORKER_REGISTERED) {
            launch_assign_join(run, w);
        }
    }
}

/* Concurrent: whole slots to the joiner, one at a time from the donor holding the most, until it
 * holds C / (donors + 1) or would hold more than the donor. Each donor stops the slot at its next
 * session; the joiner runs it from `first`. */
static void join_slots(measurement_t *run, run_worker_t *w, run_worker_t **donors, uint32_t n,
                       uint64_t first, const char *reason) {
    uint32_t target = plan_slots(&run->cfg) / (n + 1);
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
        run_worker_t *d = donors[best];
        take[taken++] = d->held[d->n_held - 1 - given[best]++];
    }
    for (uint32_t d = 0; given && d < n; d++) {
        if (!given[d])
            continue;
        rebalance_class_t *release = calloc(given[d], sizeof *release);
        if (!release)
            continue;
        memcpy(release, donors[d]->held + donors[d]->n_held - given[d], given[d] * sizeof *release);
        send_rebalance2(run, donors[d], NULL, 0, release, given[d], first, 0, reason);
        free(release);
    }
    if (taken)
        send_rebalance(run, w, take, taken, first, 0, reason);
    measurement_say(run, "worker %s joined the run: %zu slot%s from session %" PRIu64, w->name,
                    taken, taken == 1 ? "" : "s", first);
    free(given);
    free(take);
}

/* Rate mode (no cap): every donor's arrival classes split n + 1 ways; the donor keeps n parts and
 * gives the last to the joiner, from `first` on (the donor's arrivals before it stay its own). */
static void join_arrivals(measurement_t *run, run_worker_t *w, run_worker_t **donors, uint32_t n,
                          uint64_t first, const char *reason) {
    size_t given = 0;
    for (uint32_t d = 0; d < n; d++) {
        run_worker_t *donor = donors[d];
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
        send_rebalance2(run, donor, keep, k * n, release, k, first, 0, reason);
        send_rebalance(run, w, give, k, first, 0, reason);
        given += k;
        free(release), free(keep), free(give);
    }
    measurement_say(
        run, "worker %s joined the run: a part of %zu arrival stream%s from session %" PRIu64,
        w->name, given, given == 1 ? "" : "s", first);
}

void rebalance_join_ready(measurement_t *run, run_worker_t *w, const Stampede__Ready *ready) {
    if (w->state != RUN_WORKER_ASSIGNED)
        return;
    if (!ready->ok || run->stopping) {
        measurement_say(run, "worker %s could not join the run: %s", w->name,
                        !ready->ok && ready->error && *ready->error ? ready->error
                                                                    : "the run is ending");
        w->state = RUN_WORKER_LOST;
        w->taken_over = true; /* it holds nothing: nothing is missing */
        measurement_send_stop(run, w, "could not join the run", true, true);
        return;
    }
    launch_send_start(run, w);
    run_worker_t **donors = calloc(run->n_workers, sizeof *donors);
    uint32_t n = 0;
    for (size_t i = 0; donors && i < run->n_workers; i++) {
        run_worker_t *d = run->workers[i];
        if (d != w && run_worker_in_run(d) && d->state == RUN_WORKER_RUNNING && !d->done &&
            !d->taken_over && d->n_held)
            donors[n++] = d;
    }
    uint64_t first = run->session_limit;
    if (rate_mode(run))
        first = first_not_due(run, first);
    uint64_t widest = stride(run) * (n + 1);
    run->session_limit = first + run->session_headroom + widest;
    char reason[256];
    snprintf(reason, sizeof reason, "worker %s joined the run (fleet.rebalance_on_join)", w->name);
    if (n == 0)
        measurement_say(run, "worker %s joined the run, but no worker has load to share", w->name);
    else if (rate_mode(run))
        join_arrivals(run, w, donors, n, first, reason);
    else
        join_slots(run, w, donors, n, first, reason);
    free(donors);
}

void rebalance_worker_lost(measurement_t *run, run_worker_t *w, const char *why, bool abandon,
                           int64_t last_word_ns) {
    char msg[512];
    snprintf(msg, sizeof msg, "worker %s lost: %s", w->name, why);
    measurement_say(run, "%s", msg);
    w->state = RUN_WORKER_LOST;
    /* During the run its share goes to the survivors; a loss that cannot be taken over leaves the
     * run short of load, and the results partial. */
    bool taken_over = run->phase == PHASE_RUN && rebalance_lost(run, w, why, last_word_ns);
    if (!taken_over)
        merge_mark_partial(run->merge, msg);
    if (abandon && !taken_over)
        measurement_send_stop(run, w, why, true, true);
}

void rebalance_worker_back(measurement_t *run, run_worker_t *w) {
    if (!w->taken_over) {
        measurement_say(run, "worker %s is back", w->name);
        w->state = RUN_WORKER_RUNNING;
        return;
    }
    /* Its sessions run elsewhere now: it must not keep running its old load. */
    int64_t now = loop_now_ns();
    if (w->abandon_sent_ns && now - w->abandon_sent_ns < measurement_heartbeat_ns(run))
        return;
    w->abandon_sent_ns = now;
    measurement_send_stop(run, w, "lost: its share was taken over by the other workers", true,
                          true);
    if (rebalance_rejoin(run, w)) /* fleet.rebalance_on_join */
        measurement_say(run,
                        "worker %s is back, its old share taken over: told to drop its old load, "
                        "it joins the run again",
                        w->name);
    else if (!w->back_said)
        measurement_say(run,
                        "worker %s is back, but its share was taken over: told to drop the run; "
                        "it waits for the next run",
                        w->name);
    w->back_said = true;
}
