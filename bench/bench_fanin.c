/* One controller's ceiling: this process speaks the worker side of the protocol as N workers at
 * once (one control and one data DEALER per fake worker, each with its own routing id: the
 * controller tells workers apart by routing id, so that is the fewest sockets the protocol
 * allows) against a real `stampede controller --expect-workers N` started here.
 *
 * Each fake worker registers (Hello until Welcome), answers the eight clock probes, answers
 * Assign with Ready, heartbeats every second, and from the Start on replays finished requests at
 * RATE tokens/s of its own (default 10,000: 100 streams at a 10 ms ITL, 128-384 tokens per
 * request): records recorded once at start-up from a seeded generator, re-stamped at replay time
 * so that each one ends now, and packed, sealed every 50 ms and kept until acknowledged by the
 * worker's own batcher (worker/events.c, protobuf-c through proto/). After the run's duration it
 * sends Done until released. So the controller does, per worker, exactly what it does for a real
 * worker, while nothing here runs HTTP.
 *
 * Measured over the steady window (from the first records + 1 s to the end of the replay), per
 * worker count:
 *   - the controller's CPU (all its threads, and its main thread alone) from /proc/PID/stat and
 *     /proc/PID/task/PID/stat, as cores and as CPU seconds per million tokens merged, and how
 *     long its main thread waited for a CPU (schedstat: the machine's other load);
 *   - ack latency: a batch handed to ZeroMQ -> the Ack that covers it read here (p50/p99/max);
 *   - heartbeat jitter: |inter-arrival of the controller's heartbeats at one worker - 1 s|;
 *   - merged/offered: tokens acknowledged over tokens sent in the window, and the largest number
 *     of unacknowledged batches one worker held.
 * The controller saturates when its main thread is busy >= 90 % of the window or acks fall
 * behind (merged < 95 % of offered, ack p99 above 1 s, or workers still unreleased 30 s after
 * the replay: dropped for silence, or a backlog not merged); the first worker count where that
 * happens is printed as the ceiling, with the token rate one core merges (1e6 / CPU s per Mtok).
 * At the end the controller's results.json must count exactly the records sent.
 *
 *   bench_fanin [--workers 64,256,1024] [--rate TOKENS_PER_S] [--duration S] [--no-pin]
 *
 * STAMPEDE_BIN names the binary (default build/stampede). The controller is pinned to CPU 1 and
 * this process to CPU 0 when there are two CPUs. Prints RESULT/RATIO/NOTE lines; never passes or
 * fails on a figure, only when it could not run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "bench_cpu.h"
#include "buffer.h"
#include "envelope.h"
#include "events.h"
#include "histogram.h"
#include "loop.h"
#include "plan.h"
#include "record.h"
#include "rlimit.h"
#include "rng.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define TICK_NS (50 * MS) /* a worker seals its open batch every 50 ms (worker/worker.c) */
#define TEMPLATES 256
#define MIN_CHUNKS 128
#define MAX_CHUNKS 384
#define STREAMS_PER_WORKER 100 /* at a 10 ms ITL: 10,000 tokens/s */
#define MAX_WORKERS 4096
#define DRAIN_NS (30 * SEC) /* after the replay, for the controller to merge its backlog */

typedef enum { FW_NEW, FW_WELCOMED, FW_ASSIGNED, FW_RUNNING, FW_DONE, FW_RELEASED } fw_state_t;

typedef struct fanin fanin_t;

/* One recorded request: chunk times relative to its send instant. */
typedef struct template {
    uint32_t n;
    int64_t headers_rel;
    int64_t rel[MAX_CHUNKS];
    int64_t end_rel;
}
template_t;

typedef struct fw {
    fanin_t *b;
    int number;
    char name[32];
    char rid[48];
    void *ctl, *data;
    int ctl_fd, data_fd;
    int ctl_draining, data_draining;
    fw_state_t state;
    bool data_connected;
    uint64_t run_id;
    uint32_t worker_index, concurrency;
    uint64_t slot_first, total_slots; /* its share: slots slot_first.. +concurrency of C */
    uint64_t frontier;                /* 1 + the highest session index replayed */
    int64_t offset_ns;
    uint64_t seq; /* envelope counter on the control socket */
    events_t *ev;
    int64_t start_ns, replay_from_ns, end_ns; /* our clock */
    int64_t last_tick_ns;
    double credit; /* tokens due but not yet replayed */
    uint32_t next_template;
    uint64_t requests;
    uint64_t open_tokens;   /* tokens in the open batch */
    uint64_t sent_upto;     /* batches handed to ZeroMQ */
    uint64_t acked;         /* batches acknowledged */
    int64_t *sent_ns;       /* per seq */
    uint32_t *batch_tokens; /* per seq */
    size_t cap_seq;
    int64_t last_hb_ns;   /* the controller's last heartbeat, read here */
    int64_t next_beat_ns; /* our own heartbeat (and Hello / Done repeats) */
    uint64_t timer;
    uint8_t *buf;
    size_t buf_cap;
} fw_t;

struct fanin {
    loop_t *loop;
    void *ctx;
    fw_t *w;
    int n;
    char endpoint[128];
    double rate;
    int64_t duration_ns;
    template_t *templates;
    uint32_t max_template_ns;
    envelope_arena_t *arena;
    int64_t scratch_ns[MAX_CHUNKS];
    /* the window */
    int64_t win_from, win_to;
    bool win_open, win_closed;
    uint64_t tokens_sent, tokens_acked, records_sent, bytes_sent, win_bytes0, win_bytes;
    uint64_t win_tokens_sent0, win_tokens_acked0, win_tokens_sent, win_tokens_acked;
    double ctl_cpu0, ctl_main0, bench_cpu0, ctl_cpu, ctl_main, bench_cpu;
    double ctl_run0, ctl_wait0, ctl_wait, bench_run0, bench_wait0, bench_wait;
    int64_t win_wall0, win_wall;
    histogram_t *ack;
    histogram_t *jitter;
    size_t unacked_max;
    uint64_t send_refused;
    int released, failed;
    char failure[256];
    pid_t controller;
    int status;        /* the controller's, once it exited */
    int64_t exited_ns; /* when it was seen gone (0: running) */
    int64_t deadline_ns;
    int unfinished; /* workers not released when the bench gave up waiting (see on_watch) */
    long hwm_kb;    /* the controller's peak RSS at the window's end */
};

/* ---- the controller process ---- */

static double proc_cpu_s(pid_t pid, pid_t tid) {
    char path[64], data[1024];
    if (tid)
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    else
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t len = fread(data, 1, sizeof data - 1, f);
    fclose(f);
    data[len] = 0;
    char *p = strrchr(data, ')');
    if (!p)
        return -1;
    unsigned long utime = 0, stime = 0;
    /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Seconds a thread spent on a CPU and waiting on a run queue (/proc/PID/task/TID/schedstat):
 * wait is the time it was runnable but another task held the CPU, the machine's load. */
static int proc_sched_s(pid_t pid, double *run_s, double *wait_s) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long run = 0, wait = 0;
    int n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    if (n != 2)
        return -1;
    *run_s = (double)run / 1e9;
    *wait_s = (double)wait / 1e9;
    return 0;
}

static long proc_rss_kb(pid_t pid, const char *key) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kb = -1;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == ':')
            kb = strtol(line + klen + 1, NULL, 10);
    fclose(f);
    return kb;
}

static double self_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return bench_cpu_seconds(&ru);
}

static void load_avg(char *out, size_t len) {
    FILE *f = fopen("/proc/loadavg", "r");
    double a = 0, b = 0, c = 0;
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3)
            a = b = c = 0;
        fclose(f);
    }
    snprintf(out, len, "%.2f/%.2f/%.2f", a, b, c);
}

/* ---- the recorded requests ---- */

static double lognormal(rng_t *r, double median, double sigma) {
    double u1 = rng_next_open(r), u2 = rng_next_open(r);
    return median * exp(sigma * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

/* TEMPLATES requests, recorded once: TTFT ~ 100 ms, ITL ~ 10 ms, 128-384 tokens. */
static template_t *record_templates(uint32_t *max_ns) {
    template_t *t = calloc(TEMPLATES, sizeof *t);
    if (!t)
        return NULL;
    rng_t r;
    rng_init(&r, 12, RNG_STREAM_TEST, 0, 0, 0);
    *max_ns = 0;
    for (int i = 0; i < TEMPLATES; i++) {
        t[i].n = MIN_CHUNKS + (uint32_t)(rng_next_u64(&r) % (MAX_CHUNKS - MIN_CHUNKS + 1));
        t[i].headers_rel = (int64_t)lognormal(&r, 20e6, 0.2);
        int64_t at = t[i].headers_rel + (int64_t)lognormal(&r, 80e6, 0.3);
        for (uint32_t c = 0; c < t[i].n; c++) {
            t[i].rel[c] = at;
            at += (int64_t)lognormal(&r, 10e6, 0.25);
        }
        t[i].end_rel = t[i].rel[t[i].n - 1] + 200000;
        if ((uint64_t)t[i].end_rel > *max_ns)
            *max_ns = (uint32_t)t[i].end_rel;
    }
    return t;
}

/* ---- one fake worker ---- */

static void drain(fw_t *w, bool data);

static int send_env(fw_t *w, bool data, Stampede__Envelope *env) {
    env->proto_version = PROTOCOL_VERSION;
    env->seq = ++w->seq;
    size_t len = envelope_pack(env, &w->buf, &w->buf_cap);
    if (!len)
        return -1;
    int rc = zmq_send(data ? w->data : w->ctl, w->buf, len, ZMQ_DONTWAIT);
    drain(w, data);
    return rc < 0 ? -1 : 0;
}

static void send_hello(fw_t *w) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    Stampede__Hello h = STAMPEDE__HELLO__INIT;
    h.proto_version = PROTOCOL_VERSION;
    h.name = w->name;
    h.host = host;
    h.pid = (uint32_t)getpid();
    h.thread = 0;
    h.threads = 1;
    h.capacity = STREAMS_PER_WORKER;
    h.version = "bench_fanin";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HELLO;
    env.hello = &h;
    send_env(w, false, &env);
}

static void send_heartbeat(fw_t *w, int64_t now) {
    Stampede__Heartbeat hb = STAMPEDE__HEARTBEAT__INIT;
    hb.sent_ns = now;
    hb.inflight = w->state == FW_RUNNING ? STREAMS_PER_WORKER : 0;
    hb.requests_done = w->requests;
    hb.session_frontier = w->frontier; /* so that the controller raises its grant */
    hb.sessions_started = w->requests;
    hb.unacked = events_unacked(w->ev);
    hb.state = w->state == FW_RUNNING    ? ENVELOPE_WORKER_RUNNING
               : w->state == FW_DONE     ? ENVELOPE_WORKER_FINISHING
               : w->state == FW_ASSIGNED ? ENVELOPE_WORKER_ASSIGNED
                                         : ENVELOPE_WORKER_IDLE;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    env.run_id = w->run_id;
    send_env(w, false, &env);
}

static void send_done(fw_t *w) {
    Stampede__Done d = STAMPEDE__DONE__INIT;
    d.last_seq = events_last_seq(w->ev);
    d.records = events_records(w->ev);
    d.dropped = events_dropped(w->ev);
    d.error = "";
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_DONE;
    env.done = &d;
    env.run_id = w->run_id;
    send_env(w, false, &env);
}

static int send_batch(void *arg, const uint8_t *data, size_t len) {
    fw_t *w = arg;
    if (zmq_send(w->data, data, len, ZMQ_DONTWAIT) < 0)
        return -1;
    w->b->bytes_sent += len;
    return 0;
}

/* Hands sealed batches to ZeroMQ and stamps each one's send instant. */
static void flush(fw_t *w, int64_t now) {
    if (!w->data_connected)
        return;
    size_t went = events_flush(w->ev, send_batch, w);
    if (went > 0)
        drain(w, true);
    uint64_t sent = w->sent_upto + went; /* the bench never rewinds: batches go once, in order */
    for (uint64_t s = w->sent_upto + 1; s <= sent; s++)
        w->sent_ns[s] = now;
    w->sent_upto = sent;
    if (events_last_seq(w->ev) > sent)
        w->b->send_refused++;
    size_t unacked = events_unacked(w->ev);
    if (unacked > w->b->unacked_max && w->b->win_open && !w->b->win_closed)
        w->b->unacked_max = unacked;
}

/* The open batch was sealed as seq: its tokens belong to it. */
static int note_sealed(fw_t *w) {
    uint64_t seq = events_last_seq(w->ev);
    if (buffer_grow_pair(&w->sent_ns, sizeof *w->sent_ns, &w->batch_tokens, sizeof *w->batch_tokens,
                         &w->cap_seq, seq + 1) < 0)
        return -1;
    w->batch_tokens[seq] = (uint32_t)w->open_tokens;
    w->open_tokens = 0;
    return 0;
}

/* Replays the requests that finished since the last tick (one every template's tokens of
 * credit), each ending now. */
static void replay(fw_t *w, int64_t now) {
    fanin_t *b = w->b;
    int64_t from = w->last_tick_ns > w->replay_from_ns ? w->last_tick_ns : w->replay_from_ns;
    int64_t to = now < w->end_ns ? now : w->end_ns;
    if (to > from)
        w->credit += b->rate * (double)(to - from) / 1e9;
    w->last_tick_ns = now;
    for (;;) {
        const template_t *t = &b->templates[w->next_template % TEMPLATES];
        if (w->credit < t->n)
            break;
        w->credit -= t->n;
        w->next_template++;
        request_record_t rec;
        memset(&rec, 0, sizeof rec);
        int64_t send = now - t->end_rel;
        for (uint32_t c = 0; c < t->n; c++)
            b->scratch_ns[c] = send + t->rel[c];
        rec.request_id = ((uint64_t)w->worker_index << 32) | w->requests;
        /* A session its share could run (the controller refuses others,
         * controller/figures/bounds.h): its slots in turn, each session after the last of the same
         * slot. */
        uint64_t slots = w->concurrency ? w->concurrency : 1;
        rec.session = w->slot_first + w->requests % slots + w->requests / slots * w->total_slots;
        if (rec.session + 1 > w->frontier)
            w->frontier = rec.session + 1;
        rec.intended_ns = send;
        rec.send_ns = send;
        rec.headers_ns = send + t->headers_rel;
        rec.first_token_ns = b->scratch_ns[0];
        rec.first_content_ns = b->scratch_ns[0];
        rec.end_ns = send + t->end_rel;
        rec.http_status = 200;
        rec.has_usage = true;
        rec.prompt_tokens = 32;
        rec.completion_tokens = t->n;
        rec.requested_input_tokens = 32;
        rec.requested_output_tokens = t->n;
        rec.n_chunks = t->n;
        rec.chunk_ns = b->scratch_ns;
        rec.content_chunks = t->n;
        rec.content_bytes = (uint64_t)t->n * 5;
        rec.workload_hash = rec.request_id * 0x9E3779B97F4A7C15ULL;
        rec.has_phases = true;
        rec.phase_ns[RECORD_PHASE_BLOCKED] = 20000;
        rec.phase_ns[RECORD_PHASE_SENDING] = 15000;
        rec.phase_ns[RECORD_PHASE_WAITING] = t->rel[0];
        rec.phase_ns[RECORD_PHASE_RECEIVING] = t->end_rel - t->rel[0];
        rec.connection_reused = true;
        rec.session_end = true;
        int rc = events_add(w->ev, &rec);
        if (rc < 0)
            continue; /* dropped, counted by events_dropped and reported in Done */
        w->open_tokens += t->n;
        w->requests++;
        b->records_sent++;
        b->tokens_sent += t->n;
        if (rc == 1 && note_sealed(w) < 0) {
            snprintf(b->failure, sizeof b->failure, "out of memory");
            b->failed = 1;
        }
    }
    if (events_open_records(w->ev) && events_seal(w->ev) == 1 && note_sealed(w) < 0) {
        snprintf(b->failure, sizeof b->failure, "out of memory");
        b->failed = 1;
    }
    flush(w, now);
}

static void on_tick(loop_t *loop, uint64_t id, void *arg) {
    fw_t *w = arg;
    int64_t now = loop_now_ns();
    if (w->state == FW_RUNNING && now >= w->replay_from_ns)
        replay(w, now);
    if (w->state == FW_RUNNING && now >= w->end_ns) {
        w->state = FW_DONE;
        send_done(w);
    }
    if (w->state == FW_DONE)
        flush(w, now);
    if (now >= w->next_beat_ns) {
        w->next_beat_ns += SEC;
        if (w->state == FW_NEW) {
            send_hello(w);
        } else {
            send_heartbeat(w, now);
            if (w->state == FW_DONE)
                send_done(w);
        }
    }
    w->timer = w->state == FW_RELEASED ? 0 : loop_timer_at(loop, now + TICK_NS, on_tick, w);
}

static void on_welcome(fw_t *w, const Stampede__Welcome *wel) {
    fanin_t *b = w->b;
    if (!wel->accepted) {
        snprintf(b->failure, sizeof b->failure, "worker %s refused: %s", w->name,
                 wel->refusal ? wel->refusal : "?");
        b->failed = 1;
        return;
    }
    if (w->state != FW_NEW)
        return;
    w->state = FW_WELCOMED;
    if (!w->data_connected && wel->data_port) {
        char ep[64];
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%u", wel->data_port);
        if (zmq_connect(w->data, ep) == 0)
            w->data_connected = true;
        drain(w, true);
    }
}

static void on_probe(fw_t *w, const Stampede__Envelope *env, int64_t rx) {
    Stampede__ClockProbe p = *env->probe;
    p.t2 = rx;
    Stampede__Envelope reply = STAMPEDE__ENVELOPE__INIT;
    reply.body_case = STAMPEDE__ENVELOPE__BODY_PROBE;
    reply.probe = &p;
    reply.run_id = env->run_id;
    p.t3 = loop_now_ns();
    send_env(w, false, &reply);
}

static void on_assign(fw_t *w, uint64_t run_id, const Stampede__Assign *a) {
    w->run_id = run_id;
    w->worker_index = a->worker_index;
    w->concurrency = a->concurrency;
    uint64_t first, count; /* the config's concurrency is STREAMS_PER_WORKER a worker */
    w->total_slots = (uint64_t)a->worker_count * STREAMS_PER_WORKER;
    plan_partition(w->total_slots, a->worker_count, a->worker_index, &first, &count);
    w->slot_first = first;
    w->frontier = 0;
    w->offset_ns = a->offset_ns;
    w->state = FW_ASSIGNED;
    events_begin_run(w->ev, run_id, a->worker_index);
    w->sent_upto = w->acked = 0;
    Stampede__Ready r = STAMPEDE__READY__INIT;
    r.ok = true;
    r.error = "";
    r.concurrency = a->concurrency;
    Stampede__Envelope env = STAMPEDE__ENVELOPE__INIT;
    env.body_case = STAMPEDE__ENVELOPE__BODY_READY;
    env.ready = &r;
    env.run_id = run_id;
    send_env(w, false, &env);
}

static void on_start(fw_t *w, const Stampede__Start *s) {
    fanin_t *b = w->b;
    if (w->state != FW_ASSIGNED)
        return;
    w->state = FW_RUNNING;
    w->start_ns = s->start_ns + s->offset_ns;
    /* The first requests finish one request's duration after the start: no record starts before
     * it. */
    w->replay_from_ns = w->start_ns + b->max_template_ns;
    w->end_ns = w->start_ns + b->duration_ns;
    w->last_tick_ns = w->replay_from_ns;
}

static void on_heartbeat(fw_t *w, int64_t rx) {
    fanin_t *b = w->b;
    if (w->last_hb_ns && b->win_open && !b->win_closed && w->state == FW_RUNNING) {
        int64_t d = rx - w->last_hb_ns - SEC;
        histogram_record(b->jitter, (uint64_t)(d < 0 ? -d : d));
    }
    w->last_hb_ns = rx;
}

static void on_ack(fw_t *w, uint64_t up_to, int64_t rx) {
    fanin_t *b = w->b;
    if (up_to > w->sent_upto)
        up_to = w->sent_upto;
    for (uint64_t s = w->acked + 1; s <= up_to; s++) {
        b->tokens_acked += w->batch_tokens[s];
        if (b->win_open && !b->win_closed && w->sent_ns[s] >= b->win_from)
            histogram_record(b->ack, (uint64_t)(rx - w->sent_ns[s]));
    }
    if (up_to > w->acked)
        w->acked = up_to;
    events_ack(w->ev, up_to);
}

static void handle(fw_t *w, bool data, const uint8_t *bytes, size_t len, int64_t rx) {
    fanin_t *b = w->b;
    Stampede__Envelope *env = envelope_unpack(b->arena, bytes, len);
    if (!env)
        return;
    switch (env->body_case) {
    case STAMPEDE__ENVELOPE__BODY_WELCOME:
        on_welcome(w, env->welcome);
        break;
    case STAMPEDE__ENVELOPE__BODY_PROBE:
        on_probe(w, env, rx);
        break;
    case STAMPEDE__ENVELOPE__BODY_ASSIGN:
        on_assign(w, env->run_id, env->assign);
        break;
    case STAMPEDE__ENVELOPE__BODY_START:
        if (env->run_id == w->run_id)
            on_start(w, env->start);
        break;
    case STAMPEDE__ENVELOPE__BODY_HEARTBEAT:
        on_heartbeat(w, rx);
        break;
    case STAMPEDE__ENVELOPE__BODY_ACK:
        if (env->run_id == w->run_id)
            on_ack(w, env->ack->up_to_seq, rx);
        break;
    case STAMPEDE__ENVELOPE__BODY_STOP:
        if (env->run_id != w->run_id || w->state == FW_RELEASED)
            break;
        if (w->state != FW_DONE || env->stop->abandon) {
            snprintf(b->failure, sizeof b->failure, "worker %s stopped by the controller: %s",
                     w->name, env->stop->reason ? env->stop->reason : "?");
            b->failed = 1;
        }
        w->state = FW_RELEASED;
        b->released++;
        if (b->released == b->n)
            loop_stop(b->loop);
        break;
    default:
        break;
    }
}

static void drain(fw_t *w, bool data) {
    int *draining = data ? &w->data_draining : &w->ctl_draining;
    if (*draining)
        return;
    *draining = 1;
    void *sock = data ? w->data : w->ctl;
    for (;;) {
        int events = 0;
        size_t size = sizeof events;
        if (zmq_getsockopt(sock, ZMQ_EVENTS, &events, &size) != 0 || !(events & ZMQ_POLLIN))
            break;
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&msg);
            break;
        }
        handle(w, data, zmq_msg_data(&msg), zmq_msg_size(&msg), loop_now_ns());
        zmq_msg_close(&msg);
    }
    *draining = 0;
}

static void on_ctl(loop_t *loop, int fd, int mask, void *arg) {
    drain(arg, false);
}

static void on_data(loop_t *loop, int fd, int mask, void *arg) {
    drain(arg, true);
}

static void *dealer(fanin_t *b, const char *rid, int linger) {
    void *s = zmq_socket(b->ctx, ZMQ_DEALER);
    if (!s)
        return NULL;
    zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid));
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    int ivl = 100, ivl_max = 2000;
    zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(s, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max);
    return s;
}

static int fw_open(fanin_t *b, fw_t *w, int number, uint32_t salt) {
    w->b = b;
    w->number = number;
    snprintf(w->name, sizeof w->name, "fanin-%04d", number);
    snprintf(w->rid, sizeof w->rid, "%s-%08x", w->name, salt);
    events_options_t eo = {.proto_version = PROTOCOL_VERSION};
    if (!(w->ev = events_new(&eo)) || !(w->ctl = dealer(b, w->rid, 0)) ||
        !(w->data = dealer(b, w->rid, 0)))
        return -1;
    size_t size = sizeof w->ctl_fd;
    if (zmq_getsockopt(w->ctl, ZMQ_FD, &w->ctl_fd, &size) != 0 ||
        zmq_getsockopt(w->data, ZMQ_FD, &w->data_fd, &size) != 0 ||
        loop_watch(b->loop, w->ctl_fd, LOOP_READABLE, 1, on_ctl, w) != 0 ||
        loop_watch(b->loop, w->data_fd, LOOP_READABLE, 1, on_data, w) != 0)
        return -1;
    if (zmq_connect(w->ctl, b->endpoint) != 0)
        return -1;
    drain(w, false);
    drain(w, true);
    /* Ticks (and heartbeats) spread over the period, as independent workers' are. */
    int64_t now = loop_now_ns();
    int64_t phase = (int64_t)((uint64_t)number * 7919 * MS % (uint64_t)TICK_NS);
    w->next_beat_ns = now + (int64_t)((uint64_t)number * 104729 * MS % (uint64_t)SEC);
    send_hello(w);
    w->timer = loop_timer_at(b->loop, now + phase, on_tick, w);
    return 0;
}

static void fw_close(fanin_t *b, fw_t *w) {
    loop_timer_cancel(b->loop, w->timer);
    if (w->ctl) {
        loop_unwatch(b->loop, w->ctl_fd);
        zmq_close(w->ctl);
    }
    if (w->data) {
        loop_unwatch(b->loop, w->data_fd);
        zmq_close(w->data);
    }
    events_destroy(&w->ev);
    free(w->sent_ns);
    free(w->batch_tokens);
    free(w->buf);
}

/* ---- the window and the controller's clock ---- */

static void on_window(loop_t *loop, uint64_t id, void *arg);

static void on_watch(loop_t *loop, uint64_t id, void *arg) {
    fanin_t *b = arg;
    int64_t now = loop_now_ns();
    int status;
    if (!b->exited_ns && waitpid(b->controller, &status, WNOHANG) == b->controller) {
        b->exited_ns = now;
        b->status = status;
    }
    /* Its last releases may still be on their way: give them 2 s. A controller that gave up
     * on workers (no heartbeat for 5 s: it fell that far behind) or has not merged everything
     * DRAIN_NS after the replay ended is past its ceiling: measured, not a failure. */
    bool gone = b->exited_ns && now - b->exited_ns > 2 * SEC;
    if (b->win_closed && (gone || now > b->win_to + DRAIN_NS)) {
        b->unfinished = b->n - b->released;
        loop_stop(loop);
        return;
    }
    if (gone && !b->failed) {
        snprintf(b->failure, sizeof b->failure,
                 "the controller exited (status %d) with %d of %d workers released",
                 WIFEXITED(b->status) ? WEXITSTATUS(b->status) : 128 + WTERMSIG(b->status),
                 b->released, b->n);
        b->failed = 1;
    }
    if (!b->win_from) {
        /* The window opens once every worker runs: 1 s after the first records. */
        int64_t start = 0;
        for (int i = 0; i < b->n; i++) {
            if (b->w[i].state < FW_RUNNING) {
                start = 0;
                break;
            }
            if (b->w[i].replay_from_ns > start)
                start = b->w[i].replay_from_ns;
        }
        if (start) {
            b->win_from = start + SEC;
            b->win_to = start - b->max_template_ns + b->duration_ns;
            loop_timer_at(loop, b->win_from, on_window, b);
            loop_timer_at(loop, b->win_to, on_window, b);
        }
    }
    if (b->failed || (!b->win_closed && now > b->deadline_ns)) {
        if (!b->failed) {
            snprintf(b->failure, sizeof b->failure,
                     "the run did not end within its deadline (%d of %d workers released)",
                     b->released, b->n);
            b->failed = 1;
        }
        loop_stop(loop);
        return;
    }
    loop_timer_at(loop, now + 100 * MS, on_watch, b);
}

static void on_window(loop_t *loop, uint64_t id, void *arg) {
    fanin_t *b = arg;
    int64_t now = loop_now_ns();
    double cpu = proc_cpu_s(b->controller, 0), main_cpu = proc_cpu_s(b->controller, b->controller);
    double run = 0, wait = 0, brun = 0, bwait = 0;
    proc_sched_s(b->controller, &run, &wait);
    proc_sched_s(getpid(), &brun, &bwait);
    if (!b->win_open) {
        b->ctl_wait0 = wait;
        b->bench_wait0 = bwait;
        b->win_open = true;
        b->ctl_cpu0 = cpu;
        b->ctl_main0 = main_cpu;
        b->bench_cpu0 = self_cpu_s();
        b->win_tokens_sent0 = b->tokens_sent;
        b->win_tokens_acked0 = b->tokens_acked;
        b->win_bytes0 = b->bytes_sent;
        b->win_wall0 = now;
    } else if (!b->win_closed) {
        b->win_closed = true;
        b->ctl_cpu = cpu - b->ctl_cpu0;
        b->ctl_main = main_cpu - b->ctl_main0;
        b->bench_cpu = self_cpu_s() - b->bench_cpu0;
        b->ctl_wait = wait - b->ctl_wait0;
        b->bench_wait = bwait - b->bench_wait0;
        b->win_tokens_sent = b->tokens_sent - b->win_tokens_sent0;
        b->win_tokens_acked = b->tokens_acked - b->win_tokens_acked0;
        b->win_bytes = b->bytes_sent - b->win_bytes0;
        b->win_wall = now - b->win_wall0;
        b->hwm_kb = proc_rss_kb(b->controller, "VmHWM");
    }
}

/* ---- one run ---- */

static const char *stampede_bin(void) {
    const char *bin = getenv("STAMPEDE_BIN");
    return bin && *bin ? bin : "build/stampede";
}

static int write_config(const char *path, int workers, double duration_s) {
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f,
            "# bench_fanin: the controller's side of %d fake workers (no HTTP is sent)\n"
            "seed: 12\n"
            "target:\n  api: chat\n  model: fanin\n"
            "workload:\n  kind: requests\n  input_tokens: 32\n  output_tokens: 256\n"
            "scheduler:\n  kind: concurrent\n  concurrency: %d\n"
            "limits:\n  duration: %.0fs\n"
            "warmup: 0s\n",
            workers, workers * STREAMS_PER_WORKER, duration_s);
    return fclose(f);
}

/* Waits until the controller's log says where it listens: "listening on tcp://H:P". */
static int read_endpoint(const char *log, pid_t pid, char *out, size_t len) {
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(log, "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f)) {
            char *p = strstr(line, "listening on tcp://");
            if (p) {
                p += strlen("listening on ");
                size_t n = strcspn(p, " \n");
                snprintf(out, len, "%.*s", (int)n, p);
                fclose(f);
                return 0;
            }
        }
        if (f)
            fclose(f);
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        usleep(50000);
    }
    return -1;
}

static void tail_log(const char *log) {
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size > 2000 ? size - 2000 : 0, SEEK_SET);
    char buf[2001];
    size_t n = fread(buf, 1, 2000, f);
    buf[n] = 0;
    fclose(f);
    fprintf(stderr, "--- controller log (end):\n%s\n", buf);
}

typedef struct figures {
    int workers;
    double ctl_cores, main_cores, main_wait, cpu_s_per_mtok, merged_ratio, ack_p99_ms;
    bool saturated, starved;
} figures_t;

static int run_one(int workers, double rate, double duration_s, bool pin, figures_t *fig) {
    char dir[] = "/tmp/stampede-fanin-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_fanin: mkdtemp");
        return -1;
    }
    char config[300], log[300], out[300];
    snprintf(config, sizeof config, "%s/fanin.yaml", dir);
    snprintf(log, sizeof log, "%s/controller.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    if (write_config(config, workers, duration_s) != 0) {
        perror("bench_fanin: config");
        return -1;
    }
    char expect[16];
    snprintf(expect, sizeof expect, "%d", workers);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        if (pin)
            bench_cpu_pin(0, 1);
        execl(stampede_bin(), stampede_bin(), "controller", config, "--bind", "tcp://127.0.0.1:*",
              "--expect-workers", expect, "--target", "http://127.0.0.1:9", "--out", out,
              "--register-timeout", "60", (char *)NULL);
        _exit(127);
    }
    if (pid < 0) {
        perror("bench_fanin: fork");
        return -1;
    }
    fanin_t b = {.n = workers, .rate = rate, .duration_ns = (int64_t)(duration_s * 1e9)};
    b.controller = pid;
    int rc = -1;
    if (read_endpoint(log, pid, b.endpoint, sizeof b.endpoint) != 0) {
        fprintf(stderr, "bench_fanin: the controller (%s) printed no 'listening on' line\n",
                stampede_bin());
        tail_log(log);
        goto reap;
    }
    b.loop = loop_new();
    b.ctx = zmq_ctx_new();
    b.arena = envelope_arena_new();
    b.ack = histogram_new();
    b.jitter = histogram_new();
    b.templates = record_templates(&b.max_template_ns);
    b.w = calloc((size_t)workers, sizeof *b.w);
    if (!b.loop || !b.ctx || !b.arena || !b.ack || !b.jitter || !b.templates || !b.w) {
        fprintf(stderr, "bench_fanin: out of memory\n");
        goto done;
    }
    zmq_ctx_set(b.ctx, ZMQ_MAX_SOCKETS, 2 * workers + 64);
    uint32_t salt = 0;
    if (getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt)
        salt = (uint32_t)getpid();
    for (int i = 0; i < workers; i++)
        if (fw_open(&b, &b.w[i], i, salt) != 0) {
            fprintf(stderr, "bench_fanin: cannot open fake worker %d: %s\n", i,
                    zmq_strerror(errno));
            goto done;
        }
    /* registration + probes + the run + the controller's drain, generously */
    b.deadline_ns = loop_now_ns() + b.duration_ns + 90 * SEC;
    loop_timer_at(b.loop, loop_now_ns() + 100 * MS, on_watch, &b);
    loop_run(b.loop);
    if (b.failed) {
        fprintf(stderr, "bench_fanin: %d workers: %s\n", workers, b.failure);
        tail_log(log);
        goto done;
    }
    if (!b.win_closed) {
        fprintf(stderr, "bench_fanin: %d workers: the measurement window never closed\n", workers);
        goto done;
    }
    rc = 0;
done:
    for (int i = 0; b.w && i < workers; i++)
        fw_close(&b, &b.w[i]);
    if (b.ctx)
        zmq_ctx_term(b.ctx);
reap:;
    /* The controller writes its results and exits once every worker is released. */
    int status = b.status;
    long hwm_kb = b.hwm_kb;
    if (b.unfinished && !b.exited_ns) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        b.exited_ns = 1;
    }
    for (int i = 0; !b.exited_ns && i < 600; i++) {
        long kb = proc_rss_kb(pid, "VmHWM");
        if (kb > 0)
            hwm_kb = kb;
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        if (i == 599 || rc != 0) {
            kill(pid, rc != 0 ? SIGKILL : SIGTERM);
            waitpid(pid, &status, 0);
            break;
        }
        usleep(50000);
    }
    if (rc == 0 && !b.unfinished && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        fprintf(stderr, "bench_fanin: %d workers: the controller exited with status %d\n", workers,
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        tail_log(log);
        rc = -1;
    }
    if (rc == 0) {
        /* totals: what the controller merged = what was sent */
        char results[320];
        snprintf(results, sizeof results, "%s/results.json", out);
        json_error_t jerr;
        json_t *root = b.unfinished ? NULL : json_load_file(results, 0, &jerr);
        json_t *level = root ? json_array_get(json_object_get(root, "levels"), 0) : NULL;
        json_int_t ok = level ? json_integer_value(json_object_get(level, "requests_ok")) : -1;
        json_int_t tokens =
            level ? json_integer_value(json_object_get(level, "output_tokens")) : -1;
        json_decref(root);
        bool exact = ok == (json_int_t)b.records_sent && tokens == (json_int_t)b.tokens_sent;
        double win_s = (double)b.win_wall / 1e9;
        double mtok = (double)b.win_tokens_acked / 1e6;
        char load[48];
        load_avg(load, sizeof load);
        fig->workers = workers;
        fig->ctl_cores = b.ctl_cpu / win_s;
        fig->main_cores = b.ctl_main / win_s;
        fig->cpu_s_per_mtok = mtok > 0 ? b.ctl_cpu / mtok : NAN;
        fig->merged_ratio =
            b.win_tokens_sent ? (double)b.win_tokens_acked / (double)b.win_tokens_sent : NAN;
        fig->ack_p99_ms = histogram_percentile(b.ack, 99) / 1e6;
        fig->main_wait = b.ctl_wait / win_s;
        fig->starved = fig->main_wait > 0.2;
        fig->saturated = fig->main_cores >= 0.9 || fig->merged_ratio < 0.95 ||
                         fig->ack_p99_ms > 1000 || b.unfinished;
        printf("RESULT name=fanin workers=%d rate_per_worker=%.0f window_s=%.1f "
               "offered_tok_s=%.0f merged_tok_s=%.0f merged_ratio=%.3f "
               "wire_mb_s=%.1f controller_cores=%.3f controller_main_cores=%.3f "
               "controller_other_cores=%.3f controller_main_wait=%.3f "
               "cpu_s_per_mtok=%.3f "
               "ack_p50_ms=%.3f ack_p99_ms=%.3f ack_max_ms=%.3f "
               "hb_jitter_p50_ms=%.3f hb_jitter_p99_ms=%.3f hb_jitter_max_ms=%.3f "
               "unacked_max=%zu send_refused=%" PRIu64 " controller_rss_hwm_kb=%ld "
               "bench_cores=%.3f bench_main_wait=%.3f records=%" PRIu64 " tokens=%" PRIu64
               " merged_records=%lld "
               "merged_tokens=%lld released=%d totals_exact=%s saturated=%s starved=%s load=%s\n",
               workers, rate, win_s, (double)b.win_tokens_sent / win_s,
               (double)b.win_tokens_acked / win_s, fig->merged_ratio,
               (double)b.win_bytes / win_s / 1e6, fig->ctl_cores, fig->main_cores,
               fig->ctl_cores - fig->main_cores, fig->main_wait, fig->cpu_s_per_mtok,
               histogram_percentile(b.ack, 50) / 1e6, fig->ack_p99_ms, histogram_max(b.ack) / 1e6,
               histogram_percentile(b.jitter, 50) / 1e6, histogram_percentile(b.jitter, 99) / 1e6,
               histogram_max(b.jitter) / 1e6, b.unacked_max, b.send_refused, hwm_kb,
               b.bench_cpu / win_s, b.bench_wait / win_s, b.records_sent, b.tokens_sent,
               (long long)ok, (long long)tokens, b.released,
               b.unfinished ? "unchecked"
               : exact      ? "yes"
                            : "no",
               fig->saturated ? "yes" : "no", fig->starved ? "yes" : "no", load);
        fflush(stdout);
        if (b.unfinished)
            printf("NOTE fanin %d workers: %d workers were not released %.0f s after the replay "
                   "(the controller lost them, no heartbeat for 5 s, or had not merged their "
                   "batches yet): past the ceiling\n",
                   workers, b.unfinished, DRAIN_NS / 1e9);
        else if (!exact) {
            fprintf(stderr,
                    "bench_fanin: %d workers: the controller merged %lld records / %lld tokens, "
                    "%" PRIu64 " / %" PRIu64 " were sent (%s)\n",
                    workers, (long long)ok, (long long)tokens, b.records_sent, b.tokens_sent,
                    results);
            rc = -1;
        }
    }
    free(b.w);
    free(b.templates);
    histogram_destroy(&b.ack);
    histogram_destroy(&b.jitter);
    envelope_arena_destroy(&b.arena);
    loop_destroy(&b.loop);
    if (rc == 0) {
        /* keep the directory of a failed run for a look */
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_fanin: could not remove %s\n", dir);
    } else {
        fprintf(stderr, "bench_fanin: outputs kept in %s\n", dir);
    }
    return rc;
}

static void usage(void) {
    fprintf(stderr, "usage: bench_fanin [--workers 64,256,1024] [--rate TOKENS_PER_S_PER_WORKER]\n"
                    "                   [--duration SECONDS] [--no-pin]\n");
}

int main(int argc, char **argv) {
    const char *list = "64,256,1024";
    double rate = 10000, duration = 15;
    bool pin = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    static const struct option opts[] = {
        {"workers", required_argument, NULL, 'w'},  {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'}, {"no-pin", no_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            list = optarg;
            break;
        case 'r':
            rate = strtod(optarg, NULL);
            break;
        case 'd':
            duration = strtod(optarg, NULL);
            break;
        case 'p':
            pin = false;
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }
    if (rate <= 0 || duration < 6) {
        fprintf(stderr, "bench_fanin: --rate must be > 0 and --duration >= 6 s\n");
        return 2;
    }
    if (access(stampede_bin(), X_OK) != 0) {
        fprintf(stderr, "bench_fanin: no stampede binary at %s (set STAMPEDE_BIN)\n",
                stampede_bin());
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    rlimit_raise_nofile();
    if (pin)
        bench_cpu_pin(0, 0);
    printf("# %s controller%s against fake workers in this process%s; each replays %.0f tokens/s "
           "(%d streams at a ~10 ms ITL, 128-384 tokens a request)\n",
           stampede_bin(), pin ? " (pinned to CPU 1)" : "", pin ? " (CPU 0)" : "", rate,
           STREAMS_PER_WORKER);
    figures_t figs[32];
    int n = 0, failed = 0;
    char *copy = strdup(list);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && n < 32;
         tok = strtok_r(NULL, ",", &save)) {
        int workers = atoi(tok);
        if (workers < 1 || workers > MAX_WORKERS) {
            fprintf(stderr, "bench_fanin: --workers: %s is not in 1..%d\n", tok, MAX_WORKERS);
            free(copy);
            return 2;
        }
        if (run_one(workers, rate, duration, pin, &figs[n]) == 0)
            n++;
        else
            failed = 1;
    }
    free(copy);
    /* Ratios against the smallest fleet of the same run, and the ceiling. */
    for (int i = 1; i < n; i++)
        printf("RATIO fanin cpu_s_per_mtok %d/%d workers = %.2f\n", figs[i].workers,
               figs[0].workers, figs[i].cpu_s_per_mtok / figs[0].cpu_s_per_mtok);
    int ceiling = -1;
    for (int i = 0; i < n && ceiling < 0; i++)
        if (figs[i].saturated)
            ceiling = i;
    for (int i = 0; i < n; i++) {
        double per_core = 1e6 / figs[i].cpu_s_per_mtok;
        printf("NOTE fanin %d workers: the controller (all its threads) spends %.3f CPU s per "
               "million tokens: one core merges %.1f M tokens/s = %.0f workers at %.0f tokens/s\n",
               figs[i].workers, figs[i].cpu_s_per_mtok, per_core / 1e6, per_core / rate, rate);
    }
    if (ceiling >= 0)
        printf(
            "NOTE fanin ceiling: saturated at %d workers (main thread %.0f %% busy, merged %.0f %% "
            "of offered, ack p99 %.0f ms)%s\n",
            figs[ceiling].workers, 100 * figs[ceiling].main_cores, 100 * figs[ceiling].merged_ratio,
            figs[ceiling].ack_p99_ms,
            figs[ceiling].starved ? "; but its main thread waited for a CPU "
                                    "> 20 % of the window: the machine's other load took "
                                    "the core, so trust the CPU-per-token ceiling above"
                                  : "");
    else if (n)
        printf("NOTE fanin ceiling: not reached at %d workers\n", figs[n - 1].workers);
    return failed;
}
