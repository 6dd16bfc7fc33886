#include "controller.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "agent.h"
#include "config.h"
#include "ingest.h"
#include "merge.h"
#include "plan.h"
#include "report.h"
#include "stampede.pb-c.h"

#ifndef STAMPEDE_VERSION
#define STAMPEDE_VERSION "0.1.0"
#endif

#define PROBE_ROUNDS 8
#define PROBE_RESEND_NS 1000000000LL
#define HEARTBEAT_NS 1000000000LL
#define WORKER_SILENCE_NS 5000000000LL
#define READY_TIMEOUT_NS 30000000000LL
#define START_LEAD_NS 750000000LL
#define DRAIN_NS 15000000000LL
#define DATA_BURST 32 /* data messages per iteration before control is looked at again */

typedef enum {
    CW_REGISTERED, /* counted for the next run */
    CW_WAITING,    /* came after the start: used for the next run */
    CW_PROBING,
    CW_ASSIGNED,
    CW_READY,
    CW_RUNNING,
    CW_COMPLETE, /* Done received and every batch up to its last_seq merged */
    CW_LOST
} cw_state_t;

typedef struct cworker {
    uint8_t id[256];
    size_t id_len;
    char name[128];
    char host[128];
    uint32_t pid;
    cw_state_t state;
    int index; /* in the run, -1 when not in it */
    int64_t last_rx_ns;
    uint32_t round;
    int64_t probe_sent_ns;
    int64_t offset_ns;
    int64_t rtt_ns;
    uint32_t concurrency;
    uint64_t acked_seq;
    bool done;
    uint64_t done_last_seq;
    uint64_t done_records;
    uint64_t done_dropped;
    uint64_t ingested;
    uint32_t inflight;
    bool release_pending; /* its release (Stop after Done) could not be sent yet */
} cworker_t;

typedef enum { PHASE_REGISTER, PHASE_PROBE, PHASE_ASSIGN, PHASE_RUN, PHASE_OVER } phase_t;

struct controller {
    controller_options_t options;
    const char *name;
    config_t cfg;
    bool cfg_loaded;
    char *config_yaml;
    char *out_dir;
    bool trace;

    void *ctx;
    void *ctl;
    void *data;
    char endpoint[256];
    uint32_t data_port;

    cworker_t *workers;
    size_t n_workers;
    size_t cap_workers;
    uint32_t in_run;

    phase_t phase;
    int64_t deadline_ns;
    bool stopping; /* Stop sent to the run's workers (interrupt) */
    uint64_t run_id;
    int64_t start_ns;
    int64_t start_unix_ns;
    merge_t *merge;
    ingest_t *ingest;
    report_trace_t *trace_out;
    const cworker_t *ingesting; /* the worker whose batch is being merged */

    uint64_t seq;
    int64_t next_heartbeat_ns;
    int64_t next_live_ns;
    bool tty;
    bool live_shown;
    char abort_reason[1024];
    char first_error[200];
    uint32_t first_error_endpoint;
    bool have_first_error;
    uint8_t *buf;
    size_t buf_cap;
};

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig) {
    signals_seen++;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void say(controller_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(controller_t *self, const char *fmt, ...) {
    if (self->live_shown) {
        fputs("\r\033[K", stderr);
        self->live_shown = false;
    }
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", self->name, msg);
}

static void set_abort(controller_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_abort(controller_t *self, const char *fmt, ...) {
    if (self->abort_reason[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(self->abort_reason, sizeof self->abort_reason, fmt, ap);
    va_end(ap);
    self->phase = PHASE_OVER;
}

static int send_to(controller_t *self, void *sock, const uint8_t *id, size_t id_len,
                   Stampede__Envelope *env) {
    env->proto_version = PROTOCOL_VERSION;
    env->seq = ++self->seq;
    size_t len = stampede__envelope__get_packed_size(env);
    if (len > self->buf_cap) {
        uint8_t *p = realloc(self->buf, len);
        if (!p)
            return -1;
        self->buf = p;
        self->buf_cap = len;
    }
    stampede__envelope__pack(env, self->buf);
    /* ROUTER_MANDATORY: an unknown or full peer fails here instead of dropping silently. */
    if (zmq_send(sock, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return -1;
    return zmq_send(sock, self->buf, len, ZMQ_DONTWAIT) < 0 ? -1 : 0;
}

static int send_ctl(controller_t *self, cworker_t *w, Stampede__Envelope *env) {
    return send_to(self, self->ctl, w->id, w->id_len, env);
}

static uint64_t run_of(const controller_t *self, const cworker_t *w) {
    return w->index >= 0 && self->phase >= PHASE_ASSIGN ? self->run_id : 0;
}

static int send_stop(controller_t *self, cworker_t *w, const char *reason, bool cancel,
                     bool abandon) {
    Stampede__Stop stop = STAMPEDE__STOP__INIT;
    stop.reason = (char *)reason;
    stop.cancel = cancel;
    stop.abandon = abandon;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_STOP;
    env.stop = &stop;
    env.run_id = self->run_id;
    return send_ctl(self, w, &env);
}

static void send_probe(controller_t *self, cworker_t *w) {
    Stampede__ClockProbe probe = STAMPEDE__CLOCK_PROBE__INIT;
    probe.round = w->round;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_PROBE;
    env.probe = &probe;
    w->probe_sent_ns = now_ns();
    probe.t1 = w->probe_sent_ns;
    send_ctl(self, w, &env);
}

static bool in_run(const cworker_t *w) {
    return w->index >= 0;
}

static bool finished(const cworker_t *w) {
    return w->state == CW_COMPLETE || w->state == CW_LOST;
}

static cworker_t *find_worker(controller_t *self, const void *id, size_t len) {
    for (size_t i = 0; i < self->n_workers; i++)
        if (self->workers[i].id_len == len && memcmp(self->workers[i].id, id, len) == 0)
            return &self->workers[i];
    return NULL;
}

static uint32_t count_state(const controller_t *self, cw_state_t state) {
    uint32_t n = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        n += self->workers[i].state == state;
    return n;
}

static void remove_worker(controller_t *self, cworker_t *w) {
    size_t i = (size_t)(w - self->workers);
    memmove(w, w + 1, (self->n_workers - i - 1) * sizeof *w);
    self->n_workers--;
}

static void refuse(controller_t *self, const uint8_t *id, size_t len, const Stampede__Hello *h,
                   uint32_t version) {
    char reason[512];
    snprintf(reason, sizeof reason,
             "protocol version mismatch: this worker speaks protocol version %u, the controller "
             "(stampede %s) speaks version %u; run the same stampede version on both sides",
             version, STAMPEDE_VERSION, PROTOCOL_VERSION);
    say(self,
        "refused worker %s (host %s, pid %u): it speaks protocol version %u, this controller "
        "speaks %u",
        h && h->name ? h->name : "?", h && h->host ? h->host : "?", h ? h->pid : 0, version,
        PROTOCOL_VERSION);
    Stampede__Welcome welcome = STAMPEDE__WELCOME__INIT;
    welcome.accepted = false;
    welcome.refusal = reason;
    welcome.proto_version = PROTOCOL_VERSION;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_WELCOME;
    env.welcome = &welcome;
    send_to(self, self->ctl, id, len, &env);
}

static void welcome(controller_t *self, cworker_t *w) {
    char host[256] = "controller";
    gethostname(host, sizeof host - 1);
    char who[320];
    snprintf(who, sizeof who, "controller %s (stampede %s)", host, STAMPEDE_VERSION);
    Stampede__Welcome welcome = STAMPEDE__WELCOME__INIT;
    welcome.accepted = true;
    welcome.proto_version = PROTOCOL_VERSION;
    welcome.data_port = self->data_port;
    welcome.heartbeat_ms = HEARTBEAT_NS / 1000000;
    welcome.controller = who;
    welcome.wait = w->state == CW_WAITING;
    welcome.message = welcome.wait ? "a run is in progress on this controller; this worker waits "
                                     "and is used for the next run"
                                   : "";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_WELCOME;
    env.welcome = &welcome;
    env.run_id = run_of(self, w);
    send_ctl(self, w, &env);
}

static void handle_hello(controller_t *self, const uint8_t *id, size_t len,
                         const Stampede__Envelope *env) {
    const Stampede__Hello *h = env->hello;
    uint32_t version =
        env->proto_version != PROTOCOL_VERSION ? env->proto_version : h->proto_version;
    if (version != PROTOCOL_VERSION) {
        refuse(self, id, len, h, version);
        return;
    }
    cworker_t *w = find_worker(self, id, len);
    if (w) {
        if (w->state == CW_LOST && self->phase == PHASE_RUN)
            w->state = CW_RUNNING; /* back from a network cut: its Done and batches still count */
        welcome(self, w);
        return;
    }
    if (len > sizeof w->id)
        return;
    bool counted = self->phase == PHASE_REGISTER &&
                   count_state(self, CW_REGISTERED) < self->options.expect_workers;
    if (self->n_workers == self->cap_workers) {
        size_t cap = self->cap_workers ? self->cap_workers * 2 : 16;
        cworker_t *p = realloc(self->workers, cap * sizeof *p);
        if (!p)
            return;
        self->workers = p;
        self->cap_workers = cap;
    }
    w = &self->workers[self->n_workers++];
    memset(w, 0, sizeof *w);
    memcpy(w->id, id, len);
    w->id_len = len;
    snprintf(w->name, sizeof w->name, "%s", h->name ? h->name : "?");
    snprintf(w->host, sizeof w->host, "%s", h->host ? h->host : "?");
    w->pid = h->pid;
    w->index = -1;
    w->last_rx_ns = now_ns();
    w->state = counted ? CW_REGISTERED : CW_WAITING;
    if (counted)
        say(self, "worker %s (host %s, pid %u) registered (%u of %u)", w->name, w->host, w->pid,
            count_state(self, CW_REGISTERED), self->options.expect_workers);
    else
        say(self, "worker %s (host %s) connected after the start: told to wait for the next run",
            w->name, w->host);
    welcome(self, w);
}

static void handle_probe(controller_t *self, cworker_t *w, const Stampede__ClockProbe *p,
                         int64_t t4) {
    if (w->state != CW_PROBING || p->round != w->round)
        return;
    /* NTP: offset = ((t2 - t1) + (t3 - t4)) / 2, rtt = (t4 - t1) - (t3 - t2). */
    int64_t rtt = (t4 - p->t1) - (p->t3 - p->t2);
    int64_t offset = ((p->t2 - p->t1) + (p->t3 - t4)) / 2;
    if (w->round == 0 || rtt < w->rtt_ns) {
        w->rtt_ns = rtt;
        w->offset_ns = offset;
    }
    w->round++;
    if (w->round < PROBE_ROUNDS)
        send_probe(self, w);
}

static void check_complete(controller_t *self, cworker_t *w) {
    if (w->state != CW_RUNNING || !w->done || w->acked_seq < w->done_last_seq)
        return;
    w->state = CW_COMPLETE;
    if (w->ingested != w->done_records) {
        char why[256];
        snprintf(why, sizeof why, "worker %s: %" PRIu64 " records announced, %" PRIu64 " merged",
                 w->name, w->done_records, w->ingested);
        merge_mark_partial(self->merge, why);
        say(self, "%s", why);
    }
    if (w->done_dropped) {
        char why[256];
        snprintf(why, sizeof why, "worker %s dropped %" PRIu64 " records (its queue was full)",
                 w->name, w->done_dropped);
        merge_mark_partial(self->merge, why);
        say(self, "%s", why);
    }
    w->release_pending = send_stop(self, w, "run complete", false, false) != 0;
}

static void handle_done(controller_t *self, cworker_t *w, const Stampede__Done *d) {
    if (w->state == CW_COMPLETE) {
        /* our release was lost: again */
        w->release_pending = send_stop(self, w, "run complete", false, false) != 0;
        return;
    }
    if (!w->done && d->error && *d->error)
        say(self, "worker %s: %s", w->name, d->error);
    w->done = true;
    w->done_last_seq = d->last_seq;
    w->done_records = d->records;
    w->done_dropped = d->dropped;
    if (w->state == CW_LOST)
        w->state = CW_RUNNING;
    check_complete(self, w);
}

static void mark_lost(controller_t *self, cworker_t *w, const char *why, bool abandon);

static void handle_control(controller_t *self, const uint8_t *id, size_t id_len,
                           const uint8_t *data, size_t len, int64_t rx_ns) {
    Stampede__Envelope *env = stampede__envelope__unpack(NULL, len, data);
    if (!env)
        return;
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_HELLO) {
        handle_hello(self, id, id_len, env);
        stampede__envelope__free_unpacked(env, NULL);
        return;
    }
    cworker_t *w = find_worker(self, id, id_len);
    if (!w) {
        stampede__envelope__free_unpacked(env, NULL);
        return;
    }
    w->last_rx_ns = rx_ns;
    bool this_run = env->run_id == self->run_id && in_run(w);
    if (this_run && w->state == CW_LOST && self->phase == PHASE_RUN) {
        say(self, "worker %s is back", w->name);
        w->state = CW_RUNNING;
    }
    switch (env->body_case) {
    case STAMPEDE__ENVELOPE__BODY_PROBE:
        handle_probe(self, w, env->probe, rx_ns);
        break;
    case STAMPEDE__ENVELOPE__BODY_READY:
        if (!this_run || w->state != CW_ASSIGNED)
            break;
        if (!env->ready->ok)
            set_abort(self, "worker %s could not prepare the run: %s", w->name,
                      env->ready->error && *env->ready->error ? env->ready->error : "no reason");
        else if (env->ready->concurrency != w->concurrency)
            /* Both sides partition the same YAML; a difference means they disagree on it. */
            set_abort(self,
                      "worker %s computed a concurrency share of %u, the controller %u: the "
                      "config reads differently on the two sides (different stampede versions?)",
                      w->name, env->ready->concurrency, w->concurrency);
        else
            w->state = CW_READY;
        break;
    case STAMPEDE__ENVELOPE__BODY_HEARTBEAT:
        w->inflight = env->heartbeat->inflight;
        /* An idle worker outside our run no longer holds a part of it (it dropped the run). */
        if (in_run(w) && self->phase == PHASE_RUN && !finished(w) && env->run_id != self->run_id &&
            env->heartbeat->state == AGENT_IDLE)
            mark_lost(self, w, "it left the run", false);
        break;
    case STAMPEDE__ENVELOPE__BODY_DONE:
        if (this_run && (self->phase == PHASE_RUN || w->state == CW_COMPLETE))
            handle_done(self, w, env->done);
        break;
    default:
        break;
    }
    stampede__envelope__free_unpacked(env, NULL);
}

static void on_record(void *arg, request_record_t *rec) {
    controller_t *self = arg;
    merge_add(self->merge, rec);
    if (self->trace_out && report_trace_write(self->trace_out, rec) != 0) {
        say(self, "cannot write the trace: %s; tracing stops", strerror(errno));
        report_trace_close(&self->trace_out);
    }
    if (!self->have_first_error && rec->error != ERROR_NONE && rec->error != ERROR_CANCELLED) {
        self->have_first_error = true;
        self->first_error_endpoint = rec->endpoint;
        snprintf(self->first_error, sizeof self->first_error, "%s%s%s",
                 error_class_name(rec->error), rec->error_message[0] ? ": " : "",
                 rec->error_message);
    }
}

static void send_ack(controller_t *self, cworker_t *w) {
    Stampede__Ack ack = STAMPEDE__ACK__INIT;
    ack.up_to_seq = w->acked_seq;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    env.run_id = self->run_id;
    send_to(self, self->data, w->id, w->id_len, &env);
}

static void handle_data(controller_t *self, const uint8_t *id, size_t id_len, const uint8_t *data,
                        size_t len, int64_t rx_ns) {
    cworker_t *w = find_worker(self, id, id_len);
    if (!w || !in_run(w) || self->phase != PHASE_RUN)
        return;
    Stampede__Envelope *env = stampede__envelope__unpack(NULL, len, data);
    if (!env)
        return;
    w->last_rx_ns = rx_ns;
    if (w->state == CW_LOST && env->run_id == self->run_id) {
        say(self, "worker %s is back", w->name);
        w->state = CW_RUNNING;
    }
    if (env->body_case == STAMPEDE__ENVELOPE__BODY_BATCH && env->run_id == self->run_id &&
        !finished(w)) {
        /* Go-back-N: only the next batch in sequence is merged; a duplicate (resent after a
         * reconnect) or one past a gap is answered with the cumulative ack. */
        if (env->batch->seq == w->acked_seq + 1) {
            long n = ingest_batch(self->ingest, env->batch, w->offset_ns, (uint32_t)w->index,
                                  on_record, self);
            if (n >= 0) {
                w->ingested += (uint64_t)n;
                w->acked_seq = env->batch->seq;
            }
        }
        send_ack(self, w);
        check_complete(self, w);
    }
    stampede__envelope__free_unpacked(env, NULL);
}

/* Receives one [routing id][payload] message without blocking; 1 got one, 0 none. */
static int receive(controller_t *self, void *sock, bool control) {
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    if (zmq_msg_recv(&id, sock, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&id);
        return 0;
    }
    int64_t rx_ns = now_ns();
    zmq_msg_init(&body);
    if (zmq_msg_more(&id) && zmq_msg_recv(&body, sock, ZMQ_DONTWAIT) >= 0) {
        if (control)
            handle_control(self, zmq_msg_data(&id), zmq_msg_size(&id), zmq_msg_data(&body),
                           zmq_msg_size(&body), rx_ns);
        else
            handle_data(self, zmq_msg_data(&id), zmq_msg_size(&id), zmq_msg_data(&body),
                        zmq_msg_size(&body), rx_ns);
        while (zmq_msg_more(&body)) { /* extra frames are not ours: discard */
            zmq_msg_close(&body);
            zmq_msg_init(&body);
            if (zmq_msg_recv(&body, sock, ZMQ_DONTWAIT) < 0)
                break;
        }
    }
    zmq_msg_close(&body);
    zmq_msg_close(&id);
    return 1;
}

static void begin_probe(controller_t *self) {
    self->phase = PHASE_PROBE;
    self->deadline_ns = now_ns() + READY_TIMEOUT_NS;
    uint32_t index = 0;
    for (size_t i = 0; i < self->n_workers; i++) {
        cworker_t *w = &self->workers[i];
        if (w->state != CW_REGISTERED)
            continue;
        w->index = (int)index++;
        w->state = CW_PROBING;
        w->round = 0;
        send_probe(self, w);
    }
    self->in_run = index;
    say(self, "all %u workers registered; measuring clocks", index);
}

static void begin_assign(controller_t *self) {
    self->phase = PHASE_ASSIGN;
    self->deadline_ns = now_ns() + READY_TIMEOUT_NS;
    for (size_t i = 0; i < self->n_workers; i++) {
        cworker_t *w = &self->workers[i];
        if (!in_run(w))
            continue;
        plan_share_t share;
        plan_share_for(&self->cfg, self->in_run, (uint32_t)w->index, &share);
        w->concurrency = share.kind == PLAN_CONCURRENT ? share.slot_count : share.rate_cap;
        Stampede__Assign a = STAMPEDE__ASSIGN__INIT;
        a.config_yaml = self->config_yaml;
        a.worker_index = (uint32_t)w->index;
        a.worker_count = self->in_run;
        a.concurrency = w->concurrency;
        a.offset_ns = w->offset_ns;
        a.rtt_ns = w->rtt_ns;
        a.trace = self->trace;
        Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
        env.body_case = STAMPEDE__ENVELOPE__BODY_ASSIGN;
        env.assign = &a;
        env.run_id = self->run_id;
        w->state = CW_ASSIGNED;
        send_ctl(self, w, &env);
        say(self, "worker %u = %s: concurrency %u, clock offset %+.3f ms (rtt %.3f ms)", w->index,
            w->name, w->concurrency, w->offset_ns / 1e6, w->rtt_ns / 1e6);
    }
}

static void begin_run(controller_t *self) {
    int64_t max_rtt = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        if (in_run(&self->workers[i]) && self->workers[i].rtt_ns > max_rtt)
            max_rtt = self->workers[i].rtt_ns;
    self->start_ns = now_ns() + START_LEAD_NS + 2 * max_rtt;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    self->start_unix_ns =
        (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec + (self->start_ns - now_ns());
    self->phase = PHASE_RUN;
    if (self->trace) {
        char path[4096];
        snprintf(path, sizeof path, "%s/requests.jsonl", self->out_dir);
        self->trace_out = report_trace_open(path, self->start_ns);
        if (!self->trace_out)
            say(self, "cannot write %s: %s; no trace", path, strerror(errno));
    }
    for (size_t i = 0; i < self->n_workers; i++) {
        cworker_t *w = &self->workers[i];
        if (!in_run(w))
            continue;
        Stampede__Start start = STAMPEDE__START__INIT;
        start.start_ns = self->start_ns;
        start.offset_ns = w->offset_ns;
        Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
        env.body_case = STAMPEDE__ENVELOPE__BODY_START;
        env.start = &start;
        env.run_id = self->run_id;
        w->state = CW_RUNNING;
        send_ctl(self, w, &env);
    }
    say(self, "all workers ready; start in %.0f ms (max clock-probe error ±%.3f ms)",
        (self->start_ns - now_ns()) / 1e6, max_rtt / 2e6);
    self->next_live_ns = self->start_ns + 1000000000LL;
}

static void stop_workers(controller_t *self, const char *reason) {
    self->stopping = true;
    self->deadline_ns = now_ns() + DRAIN_NS;
    for (size_t i = 0; i < self->n_workers; i++)
        if (in_run(&self->workers[i]) && !finished(&self->workers[i]))
            send_stop(self, &self->workers[i], reason, true, false);
}

/* A lost worker's delivered records count; abandon also tells it to drop the run (it may be
 * alive but too late), otherwise it is taken back if it reappears before the end. */
static void mark_lost(controller_t *self, cworker_t *w, const char *why, bool abandon) {
    char msg[512];
    snprintf(msg, sizeof msg, "worker %s lost: %s", w->name, why);
    say(self, "%s", msg);
    merge_mark_partial(self->merge, msg);
    w->state = CW_LOST;
    if (abandon)
        send_stop(self, w, why, true, true);
}

static void check_silence(controller_t *self, int64_t now) {
    for (size_t i = 0; i < self->n_workers; i++) {
        cworker_t *w = &self->workers[i];
        if (now - w->last_rx_ns <= WORKER_SILENCE_NS || finished(w))
            continue;
        if (!in_run(w)) {
            say(self, "worker %s went silent; forgotten", w->name);
            remove_worker(self, w);
            i--;
        } else if (self->phase == PHASE_RUN) {
            mark_lost(self, w, "no heartbeat for 5 s", false);
        } else {
            set_abort(self, "worker %s went silent before the start", w->name);
        }
    }
}

static void send_heartbeats(controller_t *self, int64_t now) {
    for (size_t i = 0; i < self->n_workers; i++) {
        cworker_t *w = &self->workers[i];
        if (w->state == CW_LOST)
            continue;
        Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
        hb.sent_ns = now;
        Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
        env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
        env.heartbeat = &hb;
        env.run_id = run_of(self, w);
        send_ctl(self, w, &env);
    }
}

static void show_live(controller_t *self, int64_t now) {
    uint32_t inflight = 0;
    for (size_t i = 0; i < self->n_workers; i++)
        if (in_run(&self->workers[i]) && !finished(&self->workers[i]))
            inflight += self->workers[i].inflight;
    live_t live;
    merge_live(self->merge, now, inflight, &live);
    char line[512];
    report_live_line(&live, line, sizeof line);
    if (self->tty) {
        fprintf(stderr, "\r\033[K%s", line);
        self->live_shown = true;
    } else {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        fprintf(stderr, "[%02d:%02d:%02d] %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, line);
    }
}

/* Phase changes, deadlines and periodic work; called on every loop iteration. */
static void step(controller_t *self, int64_t now) {
    if (now >= self->next_heartbeat_ns) {
        send_heartbeats(self, now);
        check_silence(self, now);
        self->next_heartbeat_ns = now + HEARTBEAT_NS;
    }
    switch (self->phase) {
    case PHASE_REGISTER: {
        uint32_t n = count_state(self, CW_REGISTERED);
        if (n >= self->options.expect_workers)
            begin_probe(self);
        else if (now >= self->deadline_ns && n == 0)
            set_abort(self, "no worker came within %.0f s (expected %u at %s)",
                      self->options.register_timeout_ns / 1e9, self->options.expect_workers,
                      self->endpoint);
        else if (now >= self->deadline_ns)
            set_abort(self, "only %u of %u workers registered within %.0f s", n,
                      self->options.expect_workers, self->options.register_timeout_ns / 1e9);
        break;
    }
    case PHASE_PROBE: {
        bool all = true;
        for (size_t i = 0; i < self->n_workers; i++) {
            cworker_t *w = &self->workers[i];
            if (w->state != CW_PROBING)
                continue;
            if (w->round < PROBE_ROUNDS) {
                all = false;
                if (now - w->probe_sent_ns > PROBE_RESEND_NS)
                    send_probe(self, w);
            } else {
                w->state = CW_REGISTERED; /* measured; assigned next */
            }
        }
        if (all)
            begin_assign(self);
        else if (now >= self->deadline_ns)
            set_abort(self, "clock probes unanswered within %.0f s", READY_TIMEOUT_NS / 1e9);
        break;
    }
    case PHASE_ASSIGN:
        if (count_state(self, CW_READY) == self->in_run)
            begin_run(self);
        else if (now >= self->deadline_ns)
            set_abort(self, "not every worker was ready within %.0f s", READY_TIMEOUT_NS / 1e9);
        break;
    case PHASE_RUN: {
        bool all = true;
        for (size_t i = 0; i < self->n_workers; i++)
            if (in_run(&self->workers[i]) && !finished(&self->workers[i]))
                all = false;
        if (all) {
            self->phase = PHASE_OVER;
        } else if (self->stopping && now >= self->deadline_ns) {
            for (size_t i = 0; i < self->n_workers; i++)
                if (in_run(&self->workers[i]) && !finished(&self->workers[i]))
                    mark_lost(self, &self->workers[i], "did not finish within 15 s of the stop",
                              true);
            self->phase = PHASE_OVER;
        }
        if (now >= self->next_live_ns) {
            show_live(self, now);
            self->next_live_ns += 1000000000LL;
            if (self->next_live_ns < now)
                self->next_live_ns = now + 1000000000LL;
        }
        break;
    }
    case PHASE_OVER:
        break;
    }
}

static void handle_signal(controller_t *self, int count) {
    if (self->phase != PHASE_RUN) {
        set_abort(self, "interrupted before the start");
        return;
    }
    if (count == 1 && !self->stopping) {
        say(self, "interrupted: stopping the workers and draining (Ctrl-C again to quit now)");
        merge_mark_partial(self->merge, "interrupted");
        stop_workers(self, "interrupted at the controller");
    } else {
        say(self, "interrupted again: writing what arrived");
        for (size_t i = 0; i < self->n_workers; i++)
            if (in_run(&self->workers[i]) && !finished(&self->workers[i]))
                self->workers[i].state = CW_LOST;
        self->phase = PHASE_OVER;
    }
}

/* The event loop: control drained first on every iteration, then a bounded burst of data. */
static void run_loop(controller_t *self) {
    int seen = 0;
    int64_t last_iteration = now_ns();
    while (self->phase != PHASE_OVER) {
        zmq_pollitem_t items[2] = {{self->ctl, 0, ZMQ_POLLIN, 0}, {self->data, 0, ZMQ_POLLIN, 0}};
        int64_t now = now_ns();
        int64_t wait_ms = (self->next_heartbeat_ns - now) / 1000000;
        if (wait_ms > 100)
            wait_ms = 100;
        if (wait_ms < 0)
            wait_ms = 0;
        zmq_poll(items, 2, (long)wait_ms);
        int64_t gap = now_ns() - last_iteration;
        if (gap > 2 * HEARTBEAT_NS) {
            /* This process was not running (stopped, swapped out): the workers' silence over that
             * gap is ours, not theirs. */
            say(self, "the controller itself stalled for %.1f s", gap / 1e9);
            for (size_t i = 0; i < self->n_workers; i++)
                self->workers[i].last_rx_ns += gap;
        }
        while (receive(self, self->ctl, true))
            ;
        for (int i = 0; i < DATA_BURST && receive(self, self->data, false); i++)
            ;
        if (signals_seen != seen) {
            seen = signals_seen;
            handle_signal(self, seen);
        }
        char why[512];
        if (self->options.hook && self->phase != PHASE_OVER &&
            self->options.hook(self->options.hook_arg, why, sizeof why)) {
            if (self->phase == PHASE_RUN) {
                say(self, "%s", why);
                merge_mark_partial(self->merge, why);
                if (!self->stopping)
                    stop_workers(self, why);
            } else {
                set_abort(self, "%s", why);
            }
        }
        step(self, now_ns());
        last_iteration = now_ns();
    }
}

/* Workers released while their connection was down are told when they repeat their Done (every
 * heartbeat), for a bounded time. */
static void deliver_releases(controller_t *self) {
    int64_t end = now_ns() + 5 * HEARTBEAT_NS / 2;
    for (;;) {
        bool pending = false;
        for (size_t i = 0; i < self->n_workers; i++)
            if (self->workers[i].state == CW_COMPLETE && self->workers[i].release_pending)
                pending = true;
        if (!pending || now_ns() >= end)
            return;
        zmq_pollitem_t item = {self->ctl, 0, ZMQ_POLLIN, 0};
        zmq_poll(&item, 1, 100);
        while (receive(self, self->ctl, true))
            ;
    }
}

static int make_dirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int write_outputs(controller_t *self, const report_meta_t *meta) {
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", self->out_dir);
    if (report_write_json(self->merge, path, meta) != 0) {
        say(self, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/config.yaml", self->out_dir);
    FILE *f = fopen(path, "w");
    if (!f || config_write_yaml(&self->cfg, f) != 0) {
        say(self, "cannot write %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

/* Prints the table, writes the files and decides the exit status. */
static int finish(controller_t *self) {
    if (self->live_shown) {
        fputs("\r\033[K", stderr);
        self->live_shown = false;
    }
    merge_set_run_window(self->merge, self->start_ns + self->cfg.warmup_ns, 0);
    report_worker_clock_t *clocks = calloc(self->in_run ? self->in_run : 1, sizeof *clocks);
    size_t n_clocks = 0;
    for (size_t i = 0; clocks && i < self->n_workers; i++) {
        const cworker_t *w = &self->workers[i];
        if (in_run(w))
            clocks[n_clocks++] =
                (report_worker_clock_t){(uint32_t)w->index, w->offset_ns, w->rtt_ns};
    }
    const char *partial = NULL;
    bool is_partial = merge_partial(self->merge, &partial);
    bool rate = self->cfg.scheduler.kind == SCHEDULER_RATE;
    report_meta_t meta = {
        .level_kind = rate ? "rate" : "concurrency",
        .level_value = rate ? self->cfg.scheduler.rate : (double)self->cfg.scheduler.concurrency,
        .workers = self->in_run,
        .clocks = clocks,
        .n_clocks = n_clocks,
        .start_unix_ns = self->start_unix_ns,
        .stop_reason = signals_seen ? "interrupted" : (is_partial ? partial : "completed"),
        .config_file = self->options.config_path,
        .seed = self->cfg.seed,
    };
    report_print(self->merge, &meta, stdout);
    fflush(stdout);
    int rc = 0;
    if (report_trace_close(&self->trace_out) != 0)
        say(self, "the trace %s/requests.jsonl is incomplete (write error)", self->out_dir);
    if (write_outputs(self, &meta) != 0)
        rc = 1;
    else
        say(self, "results in %s/results.json%s", self->out_dir, is_partial ? " (partial)" : "");
    free(clocks);

    const merge_stats_t *all = merge_overall(self->merge);
    uint64_t ok = all->ok + merge_warmup(self->merge) - merge_warmup_failed(self->merge);
    uint64_t failed = all->failed + merge_warmup_failed(self->merge);
    if (ok == 0 && failed > 0) {
        const char *url = self->first_error_endpoint < self->cfg.target.n_endpoints
                              ? self->cfg.target.endpoints[self->first_error_endpoint]
                              : "?";
        say(self, "every request failed (%" PRIu64 " of %" PRIu64 "): first error: %s (%s)", failed,
            failed, self->first_error, url);
        rc = 1;
    } else if (ok == 0 && !signals_seen) {
        say(self, "no request completed");
        rc = 1;
    }
    if (signals_seen)
        rc = 130;
    return rc;
}

static int resolve_config(controller_t *self) {
    const controller_options_t *o = &self->options;
    config_error_t err;
    if (config_load_file(&self->cfg, o->config_path, &err) != 0) {
        char msg[1024];
        config_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", self->name, msg);
        return -1;
    }
    self->cfg_loaded = true;
    if (o->n_targets && config_set_endpoints(&self->cfg, (char **)o->targets, o->n_targets) != 0) {
        fprintf(stderr, "%s: cannot use the --target URLs\n", self->name);
        return -1;
    }
    if (self->cfg.target.n_endpoints == 0) {
        fprintf(stderr, "%s: %s names no endpoint (target.endpoints) and no --target was given\n",
                self->name, o->config_path);
        return -1;
    }
    self->out_dir = strdup(o->out_dir             ? o->out_dir
                           : self->cfg.output.dir ? self->cfg.output.dir
                                                  : "results");
    self->trace = o->trace || self->cfg.output.trace;
    if (o->out_dir) {
        free(self->cfg.output.dir);
        self->cfg.output.dir = strdup(o->out_dir);
    }
    self->cfg.output.trace = self->trace;
    /* Headers travel unredacted to the workers (they send them); files get the redacted form. */
    self->config_yaml = config_to_yaml_unredacted(&self->cfg);
    if (!self->out_dir || !self->config_yaml)
        return -1;
    if (make_dirs(self->out_dir) != 0) {
        fprintf(stderr, "%s: cannot create the output directory %s: %s\n", self->name,
                self->out_dir, strerror(errno));
        return -1;
    }
    return 0;
}

static void *bind_router(controller_t *self, const char *endpoint, int rcvhwm, char *bound,
                         size_t bound_len) {
    void *sock = zmq_socket(self->ctx, ZMQ_ROUTER);
    if (!sock)
        return NULL;
    int one = 1, linger = 1000, ivl = 1000, timeout = 3000;
    zmq_setsockopt(sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
    zmq_setsockopt(sock, ZMQ_ROUTER_HANDOVER, &one, sizeof one);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout);
    zmq_setsockopt(sock, ZMQ_HEARTBEAT_TTL, &timeout, sizeof timeout);
    if (rcvhwm)
        zmq_setsockopt(sock, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
    if (zmq_bind(sock, endpoint) != 0) {
        fprintf(stderr, "%s: cannot bind %s: %s\n", self->name, endpoint, zmq_strerror(errno));
        zmq_close(sock);
        return NULL;
    }
    size_t len = bound_len;
    zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, bound, &len);
    return sock;
}

static uint32_t endpoint_port(const char *endpoint) {
    const char *colon = strrchr(endpoint, ':');
    return colon ? (uint32_t)strtoul(colon + 1, NULL, 10) : 0;
}

static int bind_sockets(controller_t *self) {
    const char *bind = self->options.bind;
    const char *colon = strrchr(bind, ':');
    if (strncmp(bind, "tcp://", 6) != 0 || !colon || colon < bind + 6) {
        fprintf(stderr, "%s: --bind %s: expected tcp://HOST:PORT (PORT may be *)\n", self->name,
                bind);
        return -1;
    }
    self->ctl = bind_router(self, bind, 0, self->endpoint, sizeof self->endpoint);
    if (!self->ctl)
        return -1;
    bool any_port = !strcmp(colon + 1, "*") || !strcmp(colon + 1, "0");
    char data_ep[300], bound[256];
    if (self->options.data_port)
        snprintf(data_ep, sizeof data_ep, "%.*s:%u", (int)(colon - bind), bind,
                 self->options.data_port);
    else if (any_port)
        snprintf(data_ep, sizeof data_ep, "%.*s:*", (int)(colon - bind), bind);
    else
        snprintf(data_ep, sizeof data_ep, "%.*s:%u", (int)(colon - bind), bind,
                 endpoint_port(self->endpoint) + 1);
    self->data = bind_router(self, data_ep, 100000, bound, sizeof bound);
    if (!self->data)
        return -1;
    self->data_port = endpoint_port(bound);
    return 0;
}

controller_t *controller_new(const controller_options_t *options) {
    controller_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->options = *options;
    self->name = options->name ? options->name : "controller";
    if (!self->options.register_timeout_ns)
        self->options.register_timeout_ns = 60000000000LL;
    if (!self->options.expect_workers)
        self->options.expect_workers = 1;
    self->ctx = zmq_ctx_new();
    if (!self->ctx || resolve_config(self) != 0 || bind_sockets(self) != 0) {
        controller_destroy(&self);
        return NULL;
    }
    self->merge = merge_new(&self->cfg);
    self->ingest = ingest_new();
    if (!self->merge || !self->ingest) {
        controller_destroy(&self);
        return NULL;
    }
    return self;
}

const char *controller_endpoint(const controller_t *self) {
    return self->endpoint;
}

int controller_run(controller_t *self) {
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signals_seen = 0;
    self->tty = isatty(STDERR_FILENO);
    uint64_t run_id = 0;
    while (!run_id) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&run_id, sizeof run_id, 1, f) != 1)
            run_id = (uint64_t)now_ns() * 0x9e3779b97f4a7c15ULL;
        if (f)
            fclose(f);
    }
    self->run_id = run_id;
    self->phase = PHASE_REGISTER;
    self->deadline_ns = now_ns() + self->options.register_timeout_ns;
    say(self, "listening on %s (data port %u); waiting for %u worker%s", self->endpoint,
        self->data_port, self->options.expect_workers,
        self->options.expect_workers == 1 ? "" : "s");
    run_loop(self);
    deliver_releases(self);

    int rc;
    if (self->abort_reason[0]) {
        say(self, "cannot run: %s", self->abort_reason);
        for (size_t i = 0; i < self->n_workers; i++)
            if (in_run(&self->workers[i]))
                send_stop(self, &self->workers[i], self->abort_reason, true, true);
        rc = signals_seen ? 130 : 1;
    } else {
        rc = finish(self);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

void controller_destroy(controller_t **self_p) {
    controller_t *self = *self_p;
    if (!self)
        return;
    report_trace_close(&self->trace_out);
    if (self->ctl)
        zmq_close(self->ctl);
    if (self->data)
        zmq_close(self->data);
    if (self->ctx)
        zmq_ctx_term(self->ctx); /* delivers what is queued (Stops), bounded by the linger */
    merge_destroy(&self->merge);
    ingest_destroy(&self->ingest);
    if (self->cfg_loaded)
        config_free(&self->cfg);
    free(self->config_yaml);
    free(self->out_dir);
    free(self->workers);
    free(self->buf);
    free(self);
    *self_p = NULL;
}

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede controller FILE --bind tcp://*:PORT --expect-workers N\n"
        "                           [--target URL]... [--out DIR] [--trace]\n"
        "                           [--data-port P] [--register-timeout SECONDS]\n"
        "  --bind EP              control endpoint; the data socket binds PORT+1 (or\n"
        "                         --data-port); workers connect with --connect tcp://HOST:PORT\n"
        "  --expect-workers N     logical workers to wait for (worker --threads T counts T)\n"
        "  --target URL           endpoint base URL, repeatable; overrides the file\n"
        "  --out DIR              results directory (default: the file's output.dir)\n"
        "  --trace                also write DIR/requests.jsonl with every chunk time\n"
        "  --register-timeout S   give up when the workers are not all there (default 60)\n");
}

int controller_main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"bind", required_argument, NULL, 'b'},
        {"expect-workers", required_argument, NULL, 'n'},
        {"target", required_argument, NULL, 't'},
        {"out", required_argument, NULL, 'o'},
        {"trace", no_argument, NULL, 'T'},
        {"data-port", required_argument, NULL, 'd'},
        {"register-timeout", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    controller_options_t o = {.name = "controller"};
    const char **targets = calloc((size_t)argc + 1, sizeof *targets);
    if (!targets)
        return 1;
    optind = 1;
    int c, rc = 1;
    while ((c = getopt_long(argc, argv, "b:n:t:o:Td:r:h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'b':
            o.bind = optarg;
            break;
        case 'n':
            o.expect_workers = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || o.expect_workers == 0) {
                fprintf(stderr, "controller: --expect-workers wants a number >= 1, got '%s'\n",
                        optarg);
                goto out;
            }
            break;
        case 't':
            targets[o.n_targets++] = optarg;
            break;
        case 'o':
            o.out_dir = optarg;
            break;
        case 'T':
            o.trace = true;
            break;
        case 'd':
            o.data_port = (uint32_t)strtoul(optarg, &end, 10);
            if (*end || o.data_port == 0 || o.data_port > 65535) {
                fprintf(stderr, "controller: --data-port wants a port number, got '%s'\n", optarg);
                goto out;
            }
            break;
        case 'r': {
            double s = strtod(optarg, &end);
            if (*end || s <= 0) {
                fprintf(stderr, "controller: --register-timeout wants seconds > 0, got '%s'\n",
                        optarg);
                goto out;
            }
            o.register_timeout_ns = (int64_t)(s * 1e9);
            break;
        }
        case 'h':
            usage(stdout);
            rc = 0;
            goto out;
        default:
            usage(stderr);
            goto out;
        }
    }
    if (optind != argc - 1 || !o.bind || !o.expect_workers) {
        fprintf(stderr, "controller: %s\n",
                optind >= argc      ? "a workload FILE is required"
                : optind < argc - 1 ? "only one workload FILE is accepted"
                : !o.bind           ? "--bind tcp://*:PORT is required"
                                    : "--expect-workers N is required");
        usage(stderr);
        goto out;
    }
    o.config_path = argv[optind];
    o.targets = targets;
    controller_t *ctl = controller_new(&o);
    if (!ctl)
        goto out;
    rc = controller_run(ctl);
    controller_destroy(&ctl);
out:
    free(targets);
    return rc;
}
