#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffer.h"
#include "clock_probe.h"
#include "console.h"
#include "controller_internal.h"
#include "envelope.h"
#include "loop.h"
#include "rebalance.h"
#include "version.h"

/* The run a message to w belongs to: 0 while w is not (yet) assigned a part of it. */
static uint64_t run_of(const controller_t *self, const registry_worker_t *w) {
    return w->index >= 0 && self->run->phase >= PHASE_ASSIGN ? self->run->id : 0;
}

static void refuse(controller_t *self, const uint8_t *id, size_t len, const Stampede__Hello *h,
                   uint32_t version) {
    char reason[512];
    snprintf(reason, sizeof reason,
             "protocol version mismatch: this worker speaks protocol version %u, the controller "
             "(stampede %s) speaks version %u; run the same stampede version on both sides",
             version, STAMPEDE_VERSION, PROTOCOL_VERSION);
    console_say(self,
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

static void welcome(controller_t *self, registry_worker_t *w) {
    char host[256] = "controller";
    gethostname(host, sizeof host - 1);
    char who[320];
    snprintf(who, sizeof who, "controller %s (stampede %s)", host, STAMPEDE_VERSION);
    Stampede__Welcome welcome = STAMPEDE__WELCOME__INIT;
    welcome.accepted = true;
    welcome.proto_version = PROTOCOL_VERSION;
    welcome.data_port = transport_data_port(self->transport);
    welcome.heartbeat_ms = (uint32_t)(controller_heartbeat_ns(self) / 1000000);
    welcome.liveness = (uint32_t)(controller_silence_ns(self) / controller_heartbeat_ns(self));
    welcome.controller = who;
    welcome.wait = w->state == REGISTRY_WAITING;
    welcome.message = welcome.wait ? "a run is in progress on this controller; this worker waits "
                                     "and is used for the next run"
                                   : "";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_WELCOME;
    env.welcome = &welcome;
    env.run_id = run_of(self, w);
    controller_send(self, w, &env);
}

/* A new entry for a worker that said Hello, or NULL when there is no memory for it. */
static registry_worker_t *add(controller_t *self, const uint8_t *id, size_t len,
                              const Stampede__Hello *h) {
    if (buffer_grow_array(&self->workers, &self->cap_workers, self->n_workers + 1,
                          sizeof *self->workers) < 0)
        return NULL;
    registry_worker_t *w = &self->workers[self->n_workers++];
    memset(w, 0, sizeof *w);
    memcpy(w->id, id, len);
    w->id_len = len;
    snprintf(w->name, sizeof w->name, "%s", h->name ? h->name : "?");
    snprintf(w->host, sizeof w->host, "%s", h->host ? h->host : "?");
    w->pid = h->pid;
    w->index = -1;
    w->last_rx_ns = loop_now_ns();
    w->job_index =
        h->_job_index_case == STAMPEDE__HELLO___JOB_INDEX_JOB_INDEX ? (int64_t)h->job_index : -1;
    w->threads = h->threads ? h->threads : 1;
    w->max_message_bytes =
        h->max_message_size ? h->max_message_size : REGISTRY_WORKER_MESSAGE_BYTES;
    return w;
}

static void remove_worker(controller_t *self, registry_worker_t *w) {
    size_t i = (size_t)(w - self->workers);
    rebalance_free_worker(w);
    memmove(w, w + 1, (self->n_workers - i - 1) * sizeof *w);
    self->n_workers--;
}

void registry_hello(controller_t *self, const uint8_t *id, size_t id_len,
                    const Stampede__Envelope *env) {
    const Stampede__Hello *h = env->hello;
    uint32_t version =
        env->proto_version != PROTOCOL_VERSION ? env->proto_version : h->proto_version;
    if (version != PROTOCOL_VERSION) {
        refuse(self, id, id_len, h, version);
        return;
    }
    registry_worker_t *w = registry_find(self, id, id_len);
    if (w) {
        w->last_rx_ns = loop_now_ns(); /* a Hello is a sign of life too */
        /* Back from a network cut: its Done and batches still count, unless its share was taken
         * over (then it is told to drop the run and waits for the next one). */
        if (w->state == REGISTRY_LOST && self->run->phase == PHASE_RUN && registry_in_run(w)) {
            registry_mark_back(self, w);
        }
        welcome(self, w);
        return;
    }
    if (id_len > sizeof w->id)
        return;
    bool counted = self->run->phase == PHASE_REGISTER &&
                   registry_count(self, REGISTRY_REGISTERED) < self->options.expect_workers;
    w = add(self, id, id_len, h);
    if (!w)
        return;
    if (!counted && rebalance_join_begin(self, w)) { /* fleet.rebalance_on_join */
        console_say(self, "worker %s (host %s, pid %u) connected during the run: it joins it",
                    w->name, w->host, w->pid);
        w->state = REGISTRY_PROBING;
        welcome(self, w);
        clock_probe_one(self, w);
        return;
    }
    w->state = counted ? REGISTRY_REGISTERED : REGISTRY_WAITING;
    if (counted)
        console_say(self, "worker %s (host %s, pid %u) registered (%u of %u)", w->name, w->host,
                    w->pid, registry_count(self, REGISTRY_REGISTERED),
                    self->options.expect_workers);
    else
        console_say(self,
                    "worker %s (host %s) connected after the start: told to wait for the next run",
                    w->name, w->host);
    welcome(self, w);
}

registry_worker_t *registry_find(controller_t *self, const void *id, size_t id_len) {
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].id_len == id_len && memcmp(self->workers[i].id, id, id_len) == 0)
            return &self->workers[i];
    return NULL;
}

uint32_t registry_count(const controller_t *self, registry_state_t state) {
    uint32_t n = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        n += self->workers[i].state == state;
    return n;
}

bool registry_in_run(const registry_worker_t *w) {
    return w->index >= 0;
}

bool registry_finished(const registry_worker_t *w) {
    return w->state == REGISTRY_COMPLETE || w->state == REGISTRY_LOST;
}

static bool registry_is_silent(const controller_t *self, const registry_worker_t *w, int64_t now);

uint32_t registry_inflight(const controller_t *self) {
    uint64_t inflight = 0; /* each is a worker's word, up to 2^32 - 1: the sum must not wrap */
    int64_t now = loop_now_ns();
    for (size_t i = 0; i < self->n_workers; i++)
        if (registry_in_run(&self->workers[i]) && !registry_finished(&self->workers[i]) &&
            !registry_is_silent(self, &self->workers[i], now))
            inflight += self->workers[i].inflight;
    return inflight > UINT32_MAX ? UINT32_MAX : (uint32_t)inflight;
}

/* Whether w is in the run, still owes its work and missed a heartbeat (1.5 intervals quiet: the
 * live line, once a second, names it at least once before a 3-heartbeat liveness loses it). */
static bool registry_is_silent(const controller_t *self, const registry_worker_t *w, int64_t now) {
    return registry_in_run(w) && !registry_finished(w) && w->state != REGISTRY_LOST &&
           now - w->last_rx_ns > controller_heartbeat_ns(self) * 3 / 2;
}

uint32_t registry_silent(const controller_t *self, int64_t now) {
    uint32_t silent = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        silent += registry_is_silent(self, &self->workers[i], now);
    return silent;
}

void registry_send_heartbeats(controller_t *self, int64_t now) {
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (w->state == REGISTRY_LOST)
            continue;
        Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
        hb.sent_ns = now;
        if (self->run->phase == PHASE_RUN && registry_in_run(w))
            hb.session_limit = self->run->session_limit;
        Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
        env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
        env.heartbeat = &hb;
        env.run_id = run_of(self, w);
        controller_send(self, w, &env);
    }
}

void registry_check_silence(controller_t *self, int64_t now) {
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (now - w->last_rx_ns <= controller_silence_ns(self) || registry_finished(w))
            continue;
        if (!registry_in_run(w)) {
            console_say(self, "worker %s went silent; forgotten", w->name);
            remove_worker(self, w);
            i--;
        } else if (self->run->phase == PHASE_RUN) {
            char why[128];
            snprintf(why, sizeof why, "no heartbeat for %.1f s", controller_silence_ns(self) / 1e9);
            registry_mark_lost(self, w, why, false);
        } else if (self->started_once) {
            registry_forget_before_start(self, w, "went silent");
            i = (size_t)-1; /* the array changed: look at every worker again */
        } else {
            controller_abort(self, "worker %s went silent before the start", w->name);
        }
    }
}

void registry_excuse_stall(controller_t *self, int64_t gap_ns) {
    for (size_t i = 0; i < self->n_workers; i++)
        self->workers[i].last_rx_ns += gap_ns;
}

void registry_mark_lost(controller_t *self, registry_worker_t *w, const char *why, bool abandon) {
    char msg[512];
    snprintf(msg, sizeof msg, "worker %s lost: %s", w->name, why);
    console_say(self, "%s", msg);
    w->state = REGISTRY_LOST;
    /* During the run its share goes to the survivors; a loss that cannot be taken over leaves the
     * run short of load, and the results partial. */
    bool taken_over = self->run->phase == PHASE_RUN && rebalance_lost(self, w, why);
    if (!taken_over)
        merge_mark_partial(self->run->merge, msg);
    if (abandon && !taken_over)
        controller_send_stop(self, w, why, true, true);
}

void registry_next_run(controller_t *self) {
    int64_t now = loop_now_ns();
    uint32_t registered = 0;
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *w = &self->workers[i];
        if (w->state == REGISTRY_LOST && now - w->last_rx_ns > controller_silence_ns(self)) {
            console_say(self, "worker %s was lost and is silent; forgotten", w->name);
            remove_worker(self, w);
            i--;
            continue;
        }
        registry_worker_t kept = *w;
        rebalance_free_worker(w);
        memset(w, 0, sizeof *w);
        memcpy(w->id, kept.id, kept.id_len);
        w->id_len = kept.id_len;
        memcpy(w->name, kept.name, sizeof w->name);
        memcpy(w->host, kept.host, sizeof w->host);
        w->pid = kept.pid;
        w->last_rx_ns = kept.last_rx_ns;
        w->job_index = kept.job_index;
        w->threads = kept.threads;
        w->max_message_bytes = kept.max_message_bytes;
        w->index = -1;
        w->state =
            registered < self->options.expect_workers ? REGISTRY_REGISTERED : REGISTRY_WAITING;
        registered += w->state == REGISTRY_REGISTERED;
    }
}

void registry_forget_before_start(controller_t *self, registry_worker_t *w, const char *what) {
    measurement_t *run = self->run;
    console_say(self,
                "worker %s %s before the start: forgotten; the run is prepared again with the "
                "workers still registered",
                w->name, what);
    remove_worker(self, w);
    /* Shares were computed for the old count: whatever was assigned under the old id is void. */
    if (run->phase >= PHASE_ASSIGN)
        measurement_renew_id(run);
    free(run->window_starts);
    run->window_starts = NULL;
    run->in_run = 0;
    uint32_t registered = 0;
    for (size_t i = 0; i < self->n_workers; i++) {
        registry_worker_t *o = &self->workers[i];
        o->index = -1;
        o->state =
            registered < self->options.expect_workers ? REGISTRY_REGISTERED : REGISTRY_WAITING;
        registered += o->state == REGISTRY_REGISTERED;
    }
    run->phase = PHASE_REGISTER;
    run->deadline_ns = loop_now_ns() + self->options.register_timeout_ns;
}

json_t *registry_run_json(const controller_t *self) {
    const measurement_t *run = self->run;
    uint32_t carried = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        carried += registry_in_run(&self->workers[i]) && self->workers[i].state != REGISTRY_LOST;
    return json_pack("{s:i, s:i, s:i, s:i, s:i}", "expected", (int)self->options.expect_workers,
                     "started", (int)run->started_with, "joined",
                     (int)(run->in_run - run->started_with), "lost", (int)run->n_losses,
                     "carried_by", (int)carried);
}

void registry_mark_back(controller_t *self, registry_worker_t *w) {
    if (!w->taken_over) {
        console_say(self, "worker %s is back", w->name);
        w->state = REGISTRY_RUNNING;
        return;
    }
    /* Its sessions run elsewhere now: it must not keep running its old load. */
    int64_t now = loop_now_ns();
    if (w->abandon_sent_ns && now - w->abandon_sent_ns < controller_heartbeat_ns(self))
        return;
    w->abandon_sent_ns = now;
    controller_send_stop(self, w, "lost: its share was taken over by the other workers", true,
                         true);
    if (rebalance_rejoin(self, w)) /* fleet.rebalance_on_join */
        console_say(self,
                    "worker %s is back, its old share taken over: told to drop its old load, it "
                    "joins the run again",
                    w->name);
    else if (!w->back_said)
        console_say(self,
                    "worker %s is back, but its share was taken over: told to drop the run; it "
                    "waits for the next run",
                    w->name);
    w->back_said = true;
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

void registry_describe_missing(const controller_t *self, char *buf, size_t len) {
    uint32_t have = registry_count(self, REGISTRY_REGISTERED);
    uint32_t expect = self->options.expect_workers;
    buffer_t b;
    buffer_init(&b);
    buffer_appendf(&b, "only %u of %u workers registered within %g s", have, expect,
                   self->options.register_timeout_ns / 1e9);
    /* An Indexed Job's pods: expect / threads of them, indexes 0..pods-1. */
    uint32_t threads = 0;
    bool indexed = false;
    for (size_t i = 0; i < self->n_workers; i++) {
        const registry_worker_t *w = &self->workers[i];
        if (w->state != REGISTRY_REGISTERED || w->job_index < 0)
            continue;
        indexed = true;
        if (w->threads > threads)
            threads = w->threads;
    }
    size_t pods = indexed && threads ? (expect + threads - 1) / threads : 0;
    size_t span = pods;
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].state == REGISTRY_REGISTERED &&
            self->workers[i].job_index >= (int64_t)span)
            span = (size_t)self->workers[i].job_index + 1;
    bool *seen = span ? calloc(span, sizeof *seen) : NULL;
    if (seen) {
        size_t missing = 0;
        for (size_t i = 0; i < self->n_workers; i++)
            if (self->workers[i].state == REGISTRY_REGISTERED && self->workers[i].job_index >= 0)
                seen[self->workers[i].job_index] = true;
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
    for (size_t i = 0; i < self->n_workers && named < 8; i++) {
        if (self->workers[i].state != REGISTRY_REGISTERED)
            continue;
        buffer_appendf(&b, "%s%s", named ? ", " : "; registered: ", self->workers[i].name);
        named++;
    }
    if (have > named)
        buffer_appendf(&b, " and %u more", have - (uint32_t)named);
    snprintf(buf, len, "%s", buffer_pending(&b) ? (const char *)buffer_head(&b) : "");
    buffer_clear(&b);
}
