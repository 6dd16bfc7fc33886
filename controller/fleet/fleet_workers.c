#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buffer.h"
#include "clock_probe.h"
#include "collect.h"
#include "fleet_internal.h"
#include "launch.h"
#include "loop.h"
#include "rebalance.h"
#include "version.h"

fleet_slot_t *fleet_slot_of(fleet_t *self, const registry_worker_t *w) {
    return w->slot >= 0 && self->slots[w->slot].run ? &self->slots[w->slot] : NULL;
}

fleet_slot_t *fleet_slot_of_run(fleet_t *self, const measurement_t *run) {
    for (size_t i = 0; run && i < FLEET_MAX_RUNS; i++)
        if (self->slots[i].run == run)
            return &self->slots[i];
    return NULL;
}

/* The run w belongs to, or NULL. */
static measurement_t *run_of_worker(fleet_t *self, const registry_worker_t *w) {
    fleet_slot_t *slot = fleet_slot_of(self, w);
    return slot ? slot->run : NULL;
}

int64_t fleet_heartbeat_ns(const fleet_t *self) {
    int64_t shortest = 0;
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++) {
        int64_t ns = self->slots[i].run ? measurement_heartbeat_ns(self->slots[i].run) : 0;
        if (ns && (!shortest || ns < shortest))
            shortest = ns;
    }
    return shortest ? shortest : MEASUREMENT_HEARTBEAT_NS;
}

int64_t fleet_silence_ns(const fleet_t *self) {
    int64_t shortest = 0;
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++) {
        int64_t ns = self->slots[i].run ? measurement_silence_ns(self->slots[i].run) : 0;
        if (ns && (!shortest || ns < shortest))
            shortest = ns;
    }
    return shortest ? shortest : MEASUREMENT_HEARTBEAT_NS * MEASUREMENT_LIVENESS;
}

int64_t fleet_worker_silence_ns(fleet_t *self, const registry_worker_t *w) {
    measurement_t *run = run_of_worker(self, w);
    return run ? measurement_silence_ns(run) : MEASUREMENT_HEARTBEAT_NS * MEASUREMENT_LIVENESS;
}

/* The heartbeat interval w is told: its run's, else the fleet's. */
static int64_t worker_heartbeat_ns(fleet_t *self, const registry_worker_t *w) {
    measurement_t *run = run_of_worker(self, w);
    return run ? measurement_heartbeat_ns(run) : fleet_heartbeat_ns(self);
}

void fleet_workers_changed(fleet_t *self) {
    size_t n = registry_size(self->registry);
    for (int s = 0; s < FLEET_MAX_RUNS; s++) {
        fleet_slot_t *slot = &self->slots[s];
        if (!slot->run)
            continue;
        /* Out of memory: the run keeps the workers that fit. */
        buffer_grow_array(&slot->workers, &slot->cap_workers, n ? n : 1, sizeof *slot->workers);
        slot->n_workers = 0;
        for (size_t i = 0; i < n && slot->n_workers < slot->cap_workers; i++) {
            registry_worker_t *w = registry_at(self->registry, i);
            if (w->slot == s)
                slot->workers[slot->n_workers++] = &w->run;
        }
        slot->run->workers = slot->workers;
        slot->run->n_workers = slot->n_workers;
    }
}

uint32_t fleet_slot_count(const fleet_slot_t *slot, run_worker_state_t state) {
    uint32_t n = 0;
    for (size_t i = 0; i < slot->n_workers; i++)
        n += slot->workers[i]->state == state;
    return n;
}

/* The run a message to w belongs to: 0 while w is not (yet) assigned a part of it. */
static uint64_t run_of(fleet_t *self, const registry_worker_t *w) {
    if (w->handover.held.run_id) /* handing over a held run: it speaks of that one */
        return w->handover.held.run_id;
    measurement_t *run = run_of_worker(self, w);
    return run && w->run.index >= 0 && run->phase >= PHASE_ASSIGN ? run->id : 0;
}

static int send_to(fleet_t *self, registry_worker_t *w, Stampede__Envelope *env) {
    return transport_send(self->transport, TRANSPORT_CONTROL, w->id, w->id_len, env);
}

static void refuse(fleet_t *self, const uint8_t *id, size_t len, const Stampede__Hello *h,
                   uint32_t version) {
    char reason[512];
    snprintf(reason, sizeof reason,
             "protocol version mismatch: this worker speaks protocol version %u, the controller "
             "(stampede %s) speaks version %u; run the same stampede version on both sides",
             version, STAMPEDE_VERSION, PROTOCOL_VERSION);
    console_say(&self->console,
                "refused worker %s (host %s, pid %u): it speaks protocol version %u, this "
                "controller speaks %u",
                h && h->name ? h->name : "?", h && h->host ? h->host : "?", h ? h->pid : 0, version,
                PROTOCOL_VERSION);
    Stampede__Welcome welcome = STAMPEDE__WELCOME__INIT;
    welcome.accepted = false;
    welcome.refusal = reason;
    welcome.proto_version = PROTOCOL_VERSION;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_WELCOME;
    env.welcome = &welcome;
    transport_send(self->transport, TRANSPORT_CONTROL, id, len, &env);
}

static void welcome(fleet_t *self, registry_worker_t *w) {
    char host[256] = "controller";
    gethostname(host, sizeof host - 1);
    char who[320];
    snprintf(who, sizeof who, "controller %s (stampede %s)", host, STAMPEDE_VERSION);
    Stampede__Welcome welcome = STAMPEDE__WELCOME__INIT;
    welcome.accepted = true;
    welcome.proto_version = PROTOCOL_VERSION;
    welcome.data_port = transport_data_port(self->transport);
    welcome.heartbeat_ms = (uint32_t)(worker_heartbeat_ns(self, w) / 1000000);
    welcome.liveness = (uint32_t)(fleet_worker_silence_ns(self, w) / worker_heartbeat_ns(self, w));
    welcome.controller = who;
    welcome.wait = w->run.state == RUN_WORKER_WAITING && !w->handover.held.run_id;
    welcome.message = welcome.wait ? "a run is in progress on this controller; this worker waits "
                                     "and is used for the next run"
                                   : "";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_WELCOME;
    env.welcome = &welcome;
    env.run_id = run_of(self, w);
    send_to(self, w, &env);
}

/* A new entry for a worker that said Hello, in slot's run (NULL: none), or NULL (an id too long,
 * or no memory). */
static registry_worker_t *add(fleet_t *self, const uint8_t *id, size_t len,
                              const Stampede__Hello *h, const fleet_slot_t *slot) {
    registry_worker_t *w = registry_add(self->registry, id, len, h->name, loop_now_ns());
    if (!w)
        return NULL;
    w->slot = slot ? (int)(slot - self->slots) : -1;
    snprintf(w->host, sizeof w->host, "%s", h->host ? h->host : "?");
    w->pid = h->pid;
    w->job_index =
        h->_job_index_case == STAMPEDE__HELLO___JOB_INDEX_JOB_INDEX ? (int64_t)h->job_index : -1;
    w->threads = h->threads ? h->threads : 1;
    w->run.max_message_bytes =
        h->max_message_size ? h->max_message_size : REGISTRY_WORKER_MESSAGE_BYTES;
    self->next_silence_ns = 0;
    fleet_workers_changed(self);
    return w;
}

static void forget(fleet_t *self, registry_worker_t *w) {
    if (w->handover.held.run_id)
        fleet_handover_end(self, w, "it went silent");
    registry_remove(self->registry, w);
    fleet_workers_changed(self);
}

/* A lost worker of its run spoke again. */
static void back(fleet_t *self, registry_worker_t *w) {
    self->next_silence_ns = 0;
    rebalance_worker_back(run_of_worker(self, w), &w->run);
}

/* The run a new worker goes to: the one that takes every worker, else the first still
 * registering that has fewer than it expects; NULL: none (it stays free). */
static fleet_slot_t *slot_for_new(fleet_t *self) {
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++)
        if (self->slots[i].run && self->slots[i].takes_all)
            return &self->slots[i];
    for (size_t i = 0; i < FLEET_MAX_RUNS; i++) {
        fleet_slot_t *slot = &self->slots[i];
        if (slot->run && slot->run->phase == PHASE_REGISTER &&
            fleet_slot_count(slot, RUN_WORKER_REGISTERED) < slot->expect)
            return slot;
    }
    return NULL;
}

/* Answers a Hello: refuses another protocol version, welcomes a known worker again (taking a
 * lost one back during the run), or adds a new one, counted for the run or told to wait. */
static void hello(fleet_t *self, const uint8_t *id, size_t id_len, const Stampede__Envelope *env) {
    const Stampede__Hello *h = env->hello;
    uint32_t version =
        env->proto_version != PROTOCOL_VERSION ? env->proto_version : h->proto_version;
    if (version != PROTOCOL_VERSION) {
        refuse(self, id, id_len, h, version);
        return;
    }
    registry_worker_t *w = registry_find(self->registry, id, id_len);
    if (w) {
        w->last_rx_ns = loop_now_ns(); /* a Hello is a sign of life too */
        /* Back from a network cut: its Done and batches still count, unless its share was taken
         * over (then it is told to drop the run and waits for the next one). */
        measurement_t *run = run_of_worker(self, w);
        if (w->run.state == RUN_WORKER_LOST && run && run->phase == PHASE_RUN &&
            run_worker_in_run(&w->run))
            back(self, w);
        welcome(self, w);
        return;
    }
    /* One that holds batches of a run of the driver's earlier life hands them over first. */
    if (fleet_handover_offered(self, h) && (w = add(self, id, id_len, h, NULL))) {
        fleet_handover_begin(self, w, h->held);
        welcome(self, w);
        fleet_handover_stop_load(self, w);
        return;
    }
    /* Outside a run (between runs, or free beside others) every worker is counted: the next run
     * takes them as they are. */
    fleet_slot_t *slot = slot_for_new(self);
    measurement_t *run = slot ? slot->run : NULL;
    bool counted = !run || (run->phase == PHASE_REGISTER &&
                            fleet_slot_count(slot, RUN_WORKER_REGISTERED) < slot->expect);
    if (!(w = add(self, id, id_len, h, slot)))
        return;
    if (!counted && rebalance_join_begin(run, &w->run)) { /* fleet.rebalance_on_join */
        console_say(&self->console,
                    "worker %s (host %s, pid %u) connected during the run: it joins it",
                    w->run.name, w->host, w->pid);
        w->run.state = RUN_WORKER_PROBING;
        welcome(self, w);
        clock_probe_one(run, &w->run);
        return;
    }
    w->run.state = counted ? RUN_WORKER_REGISTERED : RUN_WORKER_WAITING;
    if (counted)
        console_say(&self->console, "worker %s (host %s, pid %u) registered (%u of %u)",
                    w->run.name, w->host, w->pid,
                    slot ? fleet_slot_count(slot, RUN_WORKER_REGISTERED)
                         : registry_count(self->registry, RUN_WORKER_REGISTERED),
                    slot ? slot->expect : self->options.expect_workers);
    else
        console_say(&self->console,
                    "worker %s (host %s) connected after the start: told to wait for the next run",
                    w->run.name, w->host);
    welcome(self, w);
}

/* Before the start of a run after the fleet's first (a level, a later file): w went silent or
 * left (what says which). It is forgotten and the run is prepared again from registration with the
 * workers still registered (a new run id once shares were assigned). */
static void forget_before_start(fleet_t *self, registry_worker_t *w, const char *what) {
    fleet_slot_t *slot = fleet_slot_of(self, w);
    measurement_t *run = slot->run;
    console_say(&self->console,
                "worker %s %s before the start: forgotten; the run is prepared again with the "
                "workers still registered",
                w->run.name, what);
    forget(self, w);
    /* Shares were computed for the old count: whatever was assigned under the old id is void. */
    if (run->phase >= PHASE_ASSIGN)
        measurement_renew_id(run);
    free(run->window_starts);
    run->window_starts = NULL;
    run->in_run = 0;
    uint32_t registered = 0;
    for (size_t i = 0; i < slot->n_workers; i++) {
        run_worker_t *o = slot->workers[i];
        o->index = -1;
        o->state = registered < slot->expect ? RUN_WORKER_REGISTERED : RUN_WORKER_WAITING;
        registered += o->state == RUN_WORKER_REGISTERED;
    }
    run->phase = PHASE_REGISTER;
    run->deadline_ns = loop_now_ns() + self->options.register_timeout_ns;
}

/* A worker leaving in order (SIGTERM on it): said, not counted as a loss. One that leaves a run
 * still going takes its share of the load with it, and one whose last batches were not
 * acknowledged has spooled them: the results say both. */
static void goodbye(fleet_t *self, registry_worker_t *w, const Stampede__Envelope *env) {
    const Stampede__Goodbye *bye = env->goodbye;
    measurement_t *run = run_of_worker(self, w);
    char msg[1200];
    int n = snprintf(msg, sizeof msg, "worker %s left: %s", w->run.name,
                     bye->reason && *bye->reason ? bye->reason : "goodbye");
    /* Leaving before a later run started (a --once worker after its level): that run goes on
     * without it. */
    if (run && run_worker_in_run(&w->run) && run->phase < PHASE_RUN && self->started_once) {
        console_say(&self->console, "%s", msg);
        forget_before_start(self, w, "left");
        return;
    }
    /* A worker released by the run says goodbye outside it (run id 0): it is still the run's. */
    if (!run || !run_worker_in_run(&w->run) || run->phase != PHASE_RUN) {
        console_say(&self->console, "%s", msg);
        if (!run_worker_in_run(&w->run))
            w->last_rx_ns = 0; /* forgotten at the next check, not waited for */
        self->next_silence_ns = 0;
        return;
    }
    bool was_finished = run_worker_finished(&w->run);
    if (w->run.acked_seq < bye->last_seq && n > 0 && (size_t)n < sizeof msg)
        snprintf(msg + n, sizeof msg - (size_t)n,
                 "; batches %" PRIu64 "-%" PRIu64 " not acknowledged%s%s", w->run.acked_seq + 1,
                 bye->last_seq, bye->spool && *bye->spool ? ", spooled to " : "",
                 bye->spool && *bye->spool ? bye->spool : "");
    console_say(&self->console, "%s", msg);
    /* Leaving a run still going takes the worker's share of the load with it. */
    if (w->run.acked_seq < bye->last_seq || !run->stopping)
        merge_mark_partial(run->merge, msg);
    if (!was_finished)
        w->run.state = RUN_WORKER_COMPLETE; /* gone in order: nothing more to wait for, not lost */
}

/* Logs a message of len bytes from peer id on socket ("control", "data") that did not unpack,
 * naming the peer and why (the arena says), the first few and then every 1000th: counted per
 * worker, and for all strangers together, so a peer flooding garbage cannot use up the log lines
 * another peer's refusals need. */
static void undecodable(fleet_t *self, const uint8_t *id, size_t id_len, size_t len,
                        const char *socket) {
    registry_worker_t *w = registry_find(self->registry, id, id_len);
    uint64_t failures = w ? ++w->undecodable : ++self->undecodable_strangers;
    if (!measurement_logged(failures))
        return;
    char peer[160];
    registry_peer_name(w, id, id_len, peer, sizeof peer);
    const char *addr = transport_peer_address(self->transport);
    console_say(&self->console,
                "refused a %zu-byte message on the %s socket from %s%s%s: %s (%" PRIu64
                " from %s so far)",
                len, socket, peer, *addr ? " at " : "", addr, envelope_arena_error(self->arena),
                failures, w ? "this worker" : "unregistered peers");
}

void fleet_workers_control(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
                           size_t len, int64_t rx_ns) {
    fleet_t *self = arg;
    Stampede__Envelope *env = envelope_unpack(self->arena, data, len);
    if (!env) {
        undecodable(self, id, id_len, len, "control");
        return;
    }
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_HELLO) {
        hello(self, id, id_len, env);
        return;
    }
    registry_worker_t *fw = registry_find(self->registry, id, id_len);
    if (!fw)
        return;
    run_worker_t *w = &fw->run;
    fw->last_rx_ns = rx_ns;
    if (fw->handover.held.run_id) {
        fleet_handover_control(self, fw, env);
        return;
    }
    measurement_t *run = run_of_worker(self, fw);
    if (!run) { /* in no run (free): a sign of life, a heartbeat's figure, a goodbye */
        if (env->body_case == STAMPEDE__ENVELOPE__BODY_HEARTBEAT)
            w->inflight = env->heartbeat->inflight;
        else if (env->body_case == STAMPEDE__ENVELOPE__BODY_GOODBYE)
            goodbye(self, fw, env);
        return;
    }
    bool this_run = env->run_id == run->id && run_worker_in_run(w);
    if (this_run && w->state == RUN_WORKER_LOST && run->phase == PHASE_RUN)
        back(self, fw);
    switch (env->body_case) {
    case STAMPEDE__ENVELOPE__BODY_PROBE:
        clock_probe_answer(run, w, env->probe, rx_ns);
        break;
    case STAMPEDE__ENVELOPE__BODY_READY:
        if (this_run && run->phase == PHASE_RUN)
            rebalance_join_ready(run, w, env->ready); /* a worker joining the run */
        else if (this_run)
            launch_ready(run, w, env->ready);
        break;
    case STAMPEDE__ENVELOPE__BODY_HEARTBEAT:
        w->inflight = env->heartbeat->inflight;
        if (this_run)
            rebalance_heartbeat(run, w, env->heartbeat);
        /* An idle worker outside our run no longer holds a part of it (it dropped the run). */
        if (run_worker_in_run(w) && run->phase == PHASE_RUN && w->state == RUN_WORKER_RUNNING &&
            env->run_id != run->id &&
            env->heartbeat->state == ENVELOPE_WORKER_IDLE) /* (a joiner is idle until assigned) */
            fleet_workers_lost(self, fw, "it left the run", false);
        break;
    case STAMPEDE__ENVELOPE__BODY_DONE:
        if (this_run && (run->phase == PHASE_RUN || w->state == RUN_WORKER_COMPLETE))
            collect_done(run, w, env->done);
        break;
    case STAMPEDE__ENVELOPE__BODY_GOODBYE:
        goodbye(self, fw, env);
        break;
    default:
        break;
    }
}

void fleet_workers_data(void *arg, const uint8_t *id, size_t id_len, const uint8_t *data,
                        size_t len, int64_t rx_ns) {
    fleet_t *self = arg;
    registry_worker_t *fw = registry_find(self->registry, id, id_len);
    if (fw && fw->handover.held.run_id) {
        fw->last_rx_ns = rx_ns;
        fleet_handover_data(self, fw, data, len);
        return;
    }
    measurement_t *run = fw ? run_of_worker(self, fw) : NULL;
    if (!run || !fw || !run_worker_in_run(&fw->run) || run->phase != PHASE_RUN)
        return;
    Stampede__Envelope *env = envelope_unpack(self->arena, data, len);
    if (!env) {
        undecodable(self, id, id_len, len, "data");
        return;
    }
    fw->last_rx_ns = rx_ns;
    if (fw->run.state == RUN_WORKER_LOST && env->run_id == run->id)
        back(self, fw);
    collect_data(run, &fw->run, env, data, len);
}

void fleet_workers_heartbeats(fleet_t *self, int64_t now) {
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        if (w->run.state == RUN_WORKER_LOST)
            continue;
        Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
        hb.sent_ns = now;
        measurement_t *run = run_of_worker(self, w);
        if (run && run->phase == PHASE_RUN && run_worker_in_run(&w->run))
            hb.session_limit = run->session_limit;
        Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
        env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
        env.heartbeat = &hb;
        env.run_id = run_of(self, w);
        send_to(self, w, &env);
    }
}

void fleet_workers_check_silence(fleet_t *self, int64_t now) {
    if (now < self->next_silence_ns)
        return;
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        int64_t silence = fleet_worker_silence_ns(self, w);
        measurement_t *run = run_of_worker(self, w);
        if (now - w->last_rx_ns <= silence || run_worker_finished(&w->run))
            continue;
        if (!run || !run_worker_in_run(&w->run)) {
            console_say(&self->console, "worker %s went silent; forgotten", w->run.name);
            forget(self, w);
            i--;
        } else if (run->phase == PHASE_RUN) {
            char why[128];
            snprintf(why, sizeof why, "no heartbeat for %.1f s", silence / 1e9);
            fleet_workers_lost(self, w, why, false);
        } else if (self->started_once) {
            forget_before_start(self, w, "went silent");
            i = (size_t)-1; /* the table changed: look at every worker again */
        } else {
            measurement_abort(run, "worker %s went silent before the start", w->run.name);
        }
    }
    /* The shortest silence of any run: a check too early is only a walk for nothing. */
    self->next_silence_ns = registry_next_silence(self->registry, fleet_silence_ns(self));
}

void fleet_workers_lost(fleet_t *self, registry_worker_t *w, const char *why, bool abandon) {
    measurement_t *run = run_of_worker(self, w);
    if (run)
        rebalance_worker_lost(run, &w->run, why, abandon, w->last_rx_ns);
}

/* Whether w was lost and is silent since: forgotten (said) when so. */
static bool forget_if_gone(fleet_t *self, registry_worker_t *w, int64_t now) {
    if (w->run.state != RUN_WORKER_LOST || now - w->last_rx_ns <= fleet_worker_silence_ns(self, w))
        return false;
    console_say(&self->console, "worker %s was lost and is silent; forgotten", w->run.name);
    forget(self, w);
    return true;
}

void fleet_workers_next_run(fleet_t *self, fleet_slot_t *slot) {
    int64_t now = loop_now_ns();
    int s = (int)(slot - self->slots);
    uint32_t registered = 0;
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        if (w->slot >= 0 && w->slot != s)
            continue; /* another run's */
        if (forget_if_gone(self, w, now)) {
            i--;
            continue;
        }
        bool room = registered < slot->expect;
        if (!slot->takes_all && (!room || w->run.state != RUN_WORKER_REGISTERED))
            continue; /* stays free */
        w->slot = s;
        run_worker_reset(&w->run, room ? RUN_WORKER_REGISTERED : RUN_WORKER_WAITING);
        registered += w->run.state == RUN_WORKER_REGISTERED;
    }
    fleet_workers_changed(self);
    self->next_silence_ns = 0;
}

void fleet_workers_release(fleet_t *self, fleet_slot_t *slot) {
    int64_t now = loop_now_ns();
    int s = (int)(slot - self->slots);
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        if (w->slot != s)
            continue;
        if (forget_if_gone(self, w, now)) {
            i--;
            continue;
        }
        w->slot = -1;
        run_worker_reset(&w->run, RUN_WORKER_REGISTERED);
    }
    fleet_workers_changed(self);
    self->next_silence_ns = 0;
}
