#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock_probe.h"
#include "collect.h"
#include "fleet_internal.h"
#include "launch.h"
#include "loop.h"
#include "rebalance.h"
#include "version.h"

int64_t fleet_heartbeat_ns(const fleet_t *self) {
    return self->run ? measurement_heartbeat_ns(self->run) : MEASUREMENT_HEARTBEAT_NS;
}

int64_t fleet_silence_ns(const fleet_t *self) {
    return self->run ? measurement_silence_ns(self->run)
                     : MEASUREMENT_HEARTBEAT_NS * MEASUREMENT_LIVENESS;
}

void fleet_workers_changed(fleet_t *self) {
    if (!self->run)
        return;
    self->run->workers = registry_runs(self->registry);
    self->run->n_workers = registry_size(self->registry);
}

/* The run a message to w belongs to: 0 while w is not (yet) assigned a part of it. */
static uint64_t run_of(const fleet_t *self, const registry_worker_t *w) {
    return self->run && w->run.index >= 0 && self->run->phase >= PHASE_ASSIGN ? self->run->id : 0;
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
    welcome.heartbeat_ms = (uint32_t)(fleet_heartbeat_ns(self) / 1000000);
    welcome.liveness = (uint32_t)(fleet_silence_ns(self) / fleet_heartbeat_ns(self));
    welcome.controller = who;
    welcome.wait = w->run.state == RUN_WORKER_WAITING;
    welcome.message = welcome.wait ? "a run is in progress on this controller; this worker waits "
                                     "and is used for the next run"
                                   : "";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_WELCOME;
    env.welcome = &welcome;
    env.run_id = run_of(self, w);
    send_to(self, w, &env);
}

/* A new entry for a worker that said Hello, or NULL (an id too long, or no memory). */
static registry_worker_t *add(fleet_t *self, const uint8_t *id, size_t len,
                              const Stampede__Hello *h) {
    registry_worker_t *w = registry_add(self->registry, id, len, h->name, loop_now_ns());
    if (!w)
        return NULL;
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
    registry_remove(self->registry, w);
    fleet_workers_changed(self);
}

/* A lost worker of the run spoke again. */
static void back(fleet_t *self, registry_worker_t *w) {
    self->next_silence_ns = 0;
    rebalance_worker_back(self->run, &w->run);
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
        if (w->run.state == RUN_WORKER_LOST && self->run && self->run->phase == PHASE_RUN &&
            run_worker_in_run(&w->run))
            back(self, w);
        welcome(self, w);
        return;
    }
    /* Between runs (fleet_idle) every worker is counted: the next run takes them as they are. */
    bool counted = !self->run || (self->run->phase == PHASE_REGISTER &&
                                  registry_count(self->registry, RUN_WORKER_REGISTERED) <
                                      self->options.expect_workers);
    if (!(w = add(self, id, id_len, h)))
        return;
    if (!counted && rebalance_join_begin(self->run, &w->run)) { /* fleet.rebalance_on_join */
        console_say(&self->console,
                    "worker %s (host %s, pid %u) connected during the run: it joins it",
                    w->run.name, w->host, w->pid);
        w->run.state = RUN_WORKER_PROBING;
        welcome(self, w);
        clock_probe_one(self->run, &w->run);
        return;
    }
    w->run.state = counted ? RUN_WORKER_REGISTERED : RUN_WORKER_WAITING;
    if (counted)
        console_say(&self->console, "worker %s (host %s, pid %u) registered (%u of %u)",
                    w->run.name, w->host, w->pid,
                    registry_count(self->registry, RUN_WORKER_REGISTERED),
                    self->options.expect_workers);
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
    measurement_t *run = self->run;
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
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        run_worker_t *o = &registry_at(self->registry, i)->run;
        o->index = -1;
        o->state =
            registered < self->options.expect_workers ? RUN_WORKER_REGISTERED : RUN_WORKER_WAITING;
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
    measurement_t *run = self->run;
    char msg[1200];
    int n = snprintf(msg, sizeof msg, "worker %s left: %s", w->run.name,
                     bye->reason && *bye->reason ? bye->reason : "goodbye");
    /* Leaving before a later run started (a --once worker after its level): that run goes on
     * without it. */
    if (run_worker_in_run(&w->run) && run->phase < PHASE_RUN && self->started_once) {
        console_say(&self->console, "%s", msg);
        forget_before_start(self, w, "left");
        return;
    }
    /* A worker released by the run says goodbye outside it (run id 0): it is still the run's. */
    if (!run_worker_in_run(&w->run) || run->phase != PHASE_RUN) {
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
    measurement_t *run = self->run;
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
    if (!run) { /* between runs (fleet_idle): a sign of life, a heartbeat's figure, a goodbye */
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
    measurement_t *run = self->run;
    registry_worker_t *fw = registry_find(self->registry, id, id_len);
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
        if (self->run && self->run->phase == PHASE_RUN && run_worker_in_run(&w->run))
            hb.session_limit = self->run->session_limit;
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
    int64_t silence = fleet_silence_ns(self);
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        if (now - w->last_rx_ns <= silence || run_worker_finished(&w->run))
            continue;
        if (!self->run || !run_worker_in_run(&w->run)) {
            console_say(&self->console, "worker %s went silent; forgotten", w->run.name);
            forget(self, w);
            i--;
        } else if (self->run->phase == PHASE_RUN) {
            char why[128];
            snprintf(why, sizeof why, "no heartbeat for %.1f s", silence / 1e9);
            fleet_workers_lost(self, w, why, false);
        } else if (self->started_once) {
            forget_before_start(self, w, "went silent");
            i = (size_t)-1; /* the table changed: look at every worker again */
        } else {
            measurement_abort(self->run, "worker %s went silent before the start", w->run.name);
        }
    }
    self->next_silence_ns = registry_next_silence(self->registry, silence);
}

void fleet_workers_lost(fleet_t *self, registry_worker_t *w, const char *why, bool abandon) {
    rebalance_worker_lost(self->run, &w->run, why, abandon, w->last_rx_ns);
}

void fleet_workers_next_run(fleet_t *self) {
    int64_t now = loop_now_ns();
    uint32_t registered = 0;
    for (size_t i = 0; i < registry_size(self->registry); i++) {
        registry_worker_t *w = registry_at(self->registry, i);
        if (w->run.state == RUN_WORKER_LOST && now - w->last_rx_ns > fleet_silence_ns(self)) {
            console_say(&self->console, "worker %s was lost and is silent; forgotten", w->run.name);
            forget(self, w);
            i--;
            continue;
        }
        run_worker_reset(&w->run, registered < self->options.expect_workers ? RUN_WORKER_REGISTERED
                                                                            : RUN_WORKER_WAITING);
        registered += w->run.state == RUN_WORKER_REGISTERED;
    }
    self->next_silence_ns = 0;
}
