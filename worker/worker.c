#include "worker.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "agent.h"
#include "config.h"
#include "engine.h"
#include "events.h"
#include "keys.h"
#include "loop.h"
#include "memtrim.h"
#include "plan.h"
#include "preflight.h"
#include "prompt.h"
#include "resolver.h"
#include "rlimit.h"
#include "session.h"
#include "spool_file.h"
#include "tokenizer.h"
#include "trace_wire.h"
#include "units.h"

/* Streams one loop accepts when the share sets no bound (rate mode without a cap). */
#define WORKER_MAX_STREAMS 10000
#define WORKER_FD_RESERVE                                                                          \
    64 /* descriptors a worker holds besides its streams (ZeroMQ, epoll, spool) */
/* The preflight of every endpoint ends within this, inside the controller's 30 s wait for Ready. */
#define WORKER_PREFLIGHT_NS 20000000000LL
#define WORKER_BATCH_NS 50000000LL
/* With --once, how long a loop waits for a lost controller to come back before giving up. */
#define WORKER_ONCE_LOST_NS 60000000000LL
/* How long a long-lived loop holds a run's unacknowledged batches once its controller is lost: no
 * controller took them over by then (docs/protocol.md "Hand-over"), so the run is dropped (its
 * spool file stays for stampede merge). */
#define WORKER_HOLD_NS 600000000000LL
/* On SIGTERM, how long a loop waits for the acknowledgement of its last batches before it spools
 * them and leaves; a control connection that is down is not waited for beyond the first 200 ms. */
#define WORKER_LEAVE_NS 5000000000LL
#define WORKER_LEAVE_LINK_NS 200000000LL
/* How often a running loop hands freed heap pages back (memtrim.h). */
#define WORKER_TRIM_NS 10000000000LL
/* Blocks this large get their own mapping: curl's 64 KiB transfer buffers, batch buffers. */
#define WORKER_MAP_LARGE_BYTES ((size_t)64 * 1024)

/* One loop: everything a logical worker owns. Only its own thread touches it. */
typedef struct worker_loop {
    const worker_options_t *settings;
    uint32_t thread;
    char name[128];
    void *zmq_ctx;
    int wake_fd; /* eventfd: the main thread asks the loop to stop */
    pthread_t tid;
    bool started;
    bool finished; /* the thread has returned */

    loop_t *loop;
    events_t *events;
    agent_t *agent;

    agent_state_t state;
    uint64_t run_id;
    config_t cfg;
    bool cfg_loaded;
    curl_net_t net;        /* the run's TLS and proxy, read from cfg and this host; the engine's */
    preflight_t preflight; /* worker 0's check of each endpoint, on the resolver's thread */
    plan_share_t share;
    engine_t *engine;
    const tokenizer_t *tokenizer; /* target.tokenizer (shared by the process's threads), or NULL */
    prompt_words_t *prompt_words; /* the prompt words one token each in it */
    resolver_t *resolver;         /* looking the endpoint hosts up; Ready waits for it */
    session_executor_t *exec;
    uint64_t requests_done;
    uint64_t batch_timer;
    uint64_t cleanup_timer;
    int64_t trimmed_ns;    /* when freed heap pages were last handed back (memtrim.h) */
    int64_t lost_since_ns; /* --once: when the controller went silent (0 = not lost) */
    bool done_sent;        /* Done announced (every record of the run is in a sealed batch) */
    char *done_error;
    uint64_t stats_timer;
    int64_t stats_begin_cpu_ns;  /* the loop thread's CPU clock at the start instant */
    int64_t stats_begin_ns;      /* the start instant, once reached (0 before) */
    int64_t stats_begin_wait_ns; /* the loop thread's run-queue wait then (-1 unknown) */
    bool have_stats;
    Stampede__WorkerStats stats; /* measured when the run ends, sent with every Done */
    bool waiting_told;
    uint64_t grant_asked;  /* the grant in force when a raise was last asked for (0: none) */
    uint64_t grant_from;   /* the frontier when that grant arrived: the headroom is measured from */
    uint64_t started_told; /* sessions started as the last heartbeat said */
    int exit_code;

    /* The run as a spool describes it (spool_file.h), kept from its Assign and Start. */
    char *spool_yaml; /* the run's config, redacted */
    uint32_t worker_index, worker_count;
    int64_t offset_ns, rtt_ns;
    int64_t ctl_start_ns, start_unix_ns;
    char spool_path[4096];                /* the spool written for the current run ("" none) */
    uint64_t spooled_last, spooled_acked; /* what it held */
    uint64_t exit_run_id;                 /* the last run, for the exit line */
    char exit_abandoned[200];             /* why that run was abandoned ("" it was not) */
    /* SIGTERM: the signals seen, and the orderly leave in progress. */
    uint64_t signals;
    bool leaving;
    int64_t leave_since_ns;
    uint64_t leave_timer;
} worker_loop_t;

static void log_line(const worker_loop_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void log_line(const worker_loop_t *w, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "worker %s: %s\n", w->name, msg);
}

/* Whether some record of the run is not acknowledged yet (sealed or not). */
static bool has_unacked(const worker_loop_t *w) {
    return events_open_records(w->events) ||
           events_acked_seq(w->events) < events_last_seq(w->events);
}

/* Writes the run's unacknowledged batches to the spool (every record sealed first, when the ring
 * has room); said once per change. 0 written or nothing to write, -1 failed (said). */
static int spool_now(worker_loop_t *w) {
    if (w->state == AGENT_IDLE || !w->run_id || !w->spool_yaml)
        return 0;
    events_seal(w->events);
    if (!has_unacked(w))
        return 0;
    uint64_t last = events_last_seq(w->events), acked = events_acked_seq(w->events);
    if (w->spool_path[0] && w->spooled_last == last && w->spooled_acked == acked &&
        !events_open_records(w->events))
        return 0;
    char path[4096], err[4400];
    spool_file_path(w->settings->spool_dir, w->name, w->run_id, path, sizeof path);
    spool_file_run_t run = {
        .run_id = w->run_id,
        .config_yaml = w->spool_yaml,
        .start_ns = w->ctl_start_ns,
        .start_unix_ns = w->start_unix_ns,
        .name = w->name,
        .index = w->worker_index,
        .count = w->worker_count,
        .offset_ns = w->offset_ns,
        .rtt_ns = w->rtt_ns,
        .requests_done = w->requests_done,
        .done = w->state == AGENT_FINISHING && w->done_sent,
    };
    if (spool_file_write(path, &run, w->events, err, sizeof err) != 0) {
        log_line(w, "cannot spool the unacknowledged batches: %s", err);
        return -1;
    }
    snprintf(w->spool_path, sizeof w->spool_path, "%s", path);
    w->spooled_last = last;
    w->spooled_acked = acked;
    log_line(w,
             "spooled batches %" PRIu64 "-%" PRIu64 " (not acknowledged) of run %016" PRIx64
             " to %s (stampede merge)",
             acked + 1, last, w->run_id, path);
    return 0;
}

/* Every batch of the spool reached the controller after all: the file goes. */
static void spool_discard(worker_loop_t *w) {
    if (w->spool_path[0] && unlink(w->spool_path) == 0)
        log_line(w, "every spooled batch was acknowledged after all; removed %s", w->spool_path);
    w->spool_path[0] = '\0';
}

static void free_run(worker_loop_t *w) {
    resolver_destroy(&w->resolver);
    json_decref(w->preflight.said);
    w->preflight.said = NULL;
    session_executor_destroy(&w->exec);
    engine_destroy(&w->engine);
    curl_net_free(&w->net);
    prompt_use_words(NULL);
    prompt_words_destroy(&w->prompt_words);
    tokenizer_release(&w->tokenizer);
    if (w->cfg_loaded) {
        config_free(&w->cfg);
        w->cfg_loaded = false;
    }
    memtrim_release(); /* an idle worker keeps none of the run's pages */
}

static void cleanup_now(loop_t *loop, uint64_t id, void *arg) {
    worker_loop_t *w = arg;
    w->cleanup_timer = 0;
    if (w->state == AGENT_FINISHING || w->state == AGENT_IDLE)
        free_run(w);
}

/* Done goes out only once every record sits in a sealed batch, so its last_seq covers them all
 * (with a full ring the last batch waits for acks to make room). */
static void try_done(worker_loop_t *w) {
    if (w->done_sent || events_seal(w->events) < 0)
        return;
    agent_flush(w->agent);
    /* Sending drains the socket, which may deliver the controller's release and end the run (its
     * id, counters and events) before the send returns: what the log line says is read first. */
    uint64_t run_id = w->run_id, requests = w->requests_done, batches = events_last_seq(w->events);
    w->done_sent = true;
    agent_send_done(w->agent, w->done_error, w->have_stats ? &w->stats : NULL);
    log_line(w, "run %016" PRIx64 " finished: %" PRIu64 " requests, %" PRIu64 " batches", run_id,
             requests, batches);
}

static void release_run(worker_loop_t *w, const char *why);

/* Every record acknowledged and the controller silent: it has the whole run, only our release
 * was lost (it went away right after the last ack). Releases the run; true when it did. */
static bool delivered_while_silent(worker_loop_t *w) {
    if (w->state != AGENT_FINISHING || !w->done_sent || agent_connected(w->agent) ||
        events_open_records(w->events) || events_acked_seq(w->events) != events_last_seq(w->events))
        return false;
    spool_discard(w);
    release_run(w, "the controller went silent after acknowledging every record of the run");
    return true;
}

static void check_grant(worker_loop_t *w);

static void batch_tick(loop_t *loop, uint64_t id, void *arg) {
    worker_loop_t *w = arg;
    w->batch_timer = 0;
    if (delivered_while_silent(w))
        return;
    events_seal(w->events);
    agent_flush(w->agent);
    check_grant(w);
    if (w->state == AGENT_RUNNING && w->exec) {
        /* Sessions started, with each flush that follows new ones: should this worker be lost,
         * the controller counts its unfinished sessions from a count at most a tick old. */
        session_progress_t p;
        session_executor_progress(w->exec, &p);
        if (p.started != w->started_told)
            agent_heartbeat_now(w->agent);
    }
    if (w->state == AGENT_FINISHING)
        try_done(w);
    if (!agent_connected(w->agent))
        spool_now(w); /* the controller is unreachable: what it has not acknowledged goes to disk */
    int64_t now_ns = loop_now_ns();
    if (now_ns - w->trimmed_ns >= WORKER_TRIM_NS) {
        /* the free pages between the blocks still on the heap (memtrim.h) */
        w->trimmed_ns = now_ns;
        memtrim_release();
    }
    if (w->state == AGENT_RUNNING || w->state == AGENT_FINISHING)
        w->batch_timer = loop_timer_at(w->loop, loop_now_ns() + WORKER_BATCH_NS, batch_tick, w);
}

/* Asks the controller for more of the session grant (an early heartbeat with the frontier) once
 * half the headroom it gave is used, or a slot already waits for it: once per grant. */
static void check_grant(worker_loop_t *w) {
    if (w->state != AGENT_RUNNING || !w->exec)
        return;
    session_progress_t p;
    session_executor_progress(w->exec, &p);
    if (!p.limit || w->grant_asked == p.limit)
        return;
    uint64_t half = p.limit > w->grant_from ? (p.limit - w->grant_from) / 2 : 0;
    if (p.held || p.frontier >= p.limit - half) {
        w->grant_asked = p.limit;
        agent_heartbeat_now(w->agent);
    }
}

static void on_record(void *arg, const request_record_t *rec) {
    worker_loop_t *w = arg;
    w->requests_done++;
    if (events_add(w->events, rec) == 1)
        agent_flush(w->agent);
    check_grant(w);
}

/* The loop thread's CPU time, not a wall clock: loop_now_ns (CLOCK_MONOTONIC) cannot stand in. */
static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Time this thread spent runnable but waiting for a CPU (the second field of
 * /proc/thread-self/schedstat), -1 when the kernel does not say. Read twice per run. */
static int64_t thread_wait_ns(void) {
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    long long running, waiting;
    int n = f ? fscanf(f, "%lld %lld", &running, &waiting) : 0;
    if (f)
        fclose(f);
    return n == 2 ? (int64_t)waiting : -1;
}

/* The start instant: the loop's CPU share is measured from here. */
static void stats_begin(loop_t *loop, uint64_t id, void *arg) {
    worker_loop_t *w = arg;
    w->stats_timer = 0;
    w->stats_begin_ns = loop_now_ns();
    w->stats_begin_cpu_ns = thread_cpu_ns();
    w->stats_begin_wait_ns = thread_wait_ns();
}

/* What the run cost this loop, from the start instant to now (the end of the run). */
static void stats_end(worker_loop_t *w) {
    w->stats = (Stampede__WorkerStats)STAMPEDE__WORKER_STATS__INIT;
    w->have_stats = w->engine && w->exec;
    if (!w->have_stats)
        return;
    engine_stats_t engine;
    engine_stats(w->engine, &engine);
    w->stats.write_callbacks = engine.write_callbacks;
    w->stats.sse_events = engine.sse_events;
    w->stats.token_events = engine.token_chunks;
    w->stats.loop_wait_ns = -1;
    if (w->stats_begin_ns) {
        w->stats.loop_cpu_ns = thread_cpu_ns() - w->stats_begin_cpu_ns;
        w->stats.loop_wall_ns = loop_now_ns() - w->stats_begin_ns;
        int64_t wait = thread_wait_ns();
        if (wait >= 0 && w->stats_begin_wait_ns >= 0)
            w->stats.loop_wait_ns = wait - w->stats_begin_wait_ns;
    }
    w->stats.arrivals = session_executor_arrivals(w->exec);
    w->stats.cap_waits = session_executor_cap_waits(w->exec);
}

static void stats_reset(worker_loop_t *w) {
    loop_timer_cancel(w->loop, w->stats_timer);
    w->stats_timer = 0;
    w->stats_begin_ns = 0;
    w->have_stats = false;
}

/* Nothing more will be sent: ship the last batch and report Done (repeated until released). */
static void finish_run(worker_loop_t *w, const char *error) {
    if (w->state == AGENT_FINISHING || w->state == AGENT_IDLE)
        return;
    w->state = AGENT_FINISHING;
    stats_end(w);
    free(w->done_error);
    w->done_error = error ? strdup(error) : NULL;
    w->done_sent = false;
    try_done(w);
    if (!w->cleanup_timer)
        w->cleanup_timer = loop_timer_at(w->loop, loop_now_ns(), cleanup_now, w);
    if (!w->batch_timer)
        w->batch_timer = loop_timer_at(w->loop, loop_now_ns() + WORKER_BATCH_NS, batch_tick, w);
}

static void on_finished(void *arg) {
    finish_run(arg, NULL);
}

/* Back to idle: the controller has everything of this run (or abandoned it); why is logged. */
static void release_run(worker_loop_t *w, const char *why) {
    loop_timer_cancel(w->loop, w->cleanup_timer);
    w->cleanup_timer = 0;
    loop_timer_cancel(w->loop, w->batch_timer);
    w->batch_timer = 0;
    free_run(w);
    stats_reset(w);
    agent_clear_done(w->agent);
    agent_set_run(w->agent, 0);
    w->state = AGENT_IDLE;
    w->run_id = 0;
    w->spool_path[0] = '\0'; /* a spool left behind (an abandoned run) is kept for merge */
    free(w->spool_yaml);
    w->spool_yaml = NULL;
    w->waiting_told = false;
    w->done_sent = false;
    if (w->settings->once) {
        log_line(w, "%s; exiting (--once)", why);
        loop_stop(w->loop);
    } else {
        log_line(w, "%s; idle, waiting for the next run", why);
    }
}

/* Abandons a run the controller no longer counts this worker in: nothing is kept. */
static void abandon_run(worker_loop_t *w, const char *why) {
    if (w->state == AGENT_IDLE)
        return;
    log_line(w, "abandoning run %016" PRIx64 ": %s", w->run_id, why);
    snprintf(w->exit_abandoned, sizeof w->exit_abandoned, "%s", why);
    if (w->exec)
        session_executor_stop(w->exec, true);
    events_begin_run(w->events, 0, 0);
    if (w->settings->once)
        w->exit_code = 1; /* release_run exits under --once; an abandoned run is a failure */
    release_run(w, "run abandoned");
}

static void free_lines(char **lines) {
    for (size_t i = 0; lines && lines[i]; i++) {
        explicit_bzero(lines[i], strlen(lines[i])); /* header values may be secrets */
        free(lines[i]);
    }
    free(lines);
}

/* target.headers as "Name: value" lines, NULL-terminated, values read from their environment
 * variable or file where the file says so; NULL with the reason in err. */
static char **header_lines(const config_t *cfg, char *err, size_t errlen) {
    char **lines = calloc(cfg->target.n_headers + 1, sizeof *lines);
    for (size_t i = 0; lines && i < cfg->target.n_headers; i++) {
        const config_header_t *h = &cfg->target.headers[i];
        char *value = NULL;
        config_error_t cerr;
        if (config_header_value(cfg, h, &value, &cerr) != 0) {
            config_error_format(&cerr, err, errlen);
            free_lines(lines);
            return NULL;
        }
        size_t len = strlen(h->name) + strlen(value) + 3;
        lines[i] = malloc(len);
        if (lines[i])
            snprintf(lines[i], len, "%s: %s", h->name, value);
        explicit_bzero(value, strlen(value));
        free(value);
        if (!lines[i]) {
            free_lines(lines);
            lines = NULL;
        }
    }
    if (!lines)
        snprintf(err, errlen, "out of memory building the %zu target.headers",
                 cfg->target.n_headers);
    return lines;
}

/* Streams the share may have in flight at once: its slots, or its rate mode's cap (0: none). */
static uint32_t share_concurrency(const plan_share_t *share) {
    return share->kind == PLAN_CONCURRENT ? share->slot_count : share->rate_cap;
}

/* target.tokenizer: loaded before Ready (it takes a second or two), and the prompt words this
 * thread draws from narrowed to those that are one token each in it (docs/workloads.md). */
static int load_tokenizer(worker_loop_t *w, char *err, size_t errlen) {
    char msg[600];
    if (tokenizer_acquire(w->cfg.target.tokenizer, &w->tokenizer, msg, sizeof msg) < 0) {
        snprintf(err, errlen, "target.tokenizer: %s", msg);
        return -1;
    }
    tokenizer_scratch_t *scratch = tokenizer_scratch_new();
    if (scratch)
        w->prompt_words = prompt_words_new(w->tokenizer, scratch, msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "out of memory");
    tokenizer_scratch_destroy(&scratch);
    if (!w->prompt_words) {
        snprintf(err, errlen, "target.tokenizer %s: %s", w->cfg.target.tokenizer, msg);
        return -1;
    }
    prompt_use_words(w->prompt_words);
    return 0;
}

/* Prepares the engine and executor for an Assign; 0 ok, -1 with a message in err. */
static int prepare_run(worker_loop_t *w, const Stampede__Assign *a, char *err, size_t errlen) {
    config_error_t cerr;
    if (config_load_string(&w->cfg, a->config_yaml, strlen(a->config_yaml), "assigned config",
                           &cerr) != 0) {
        char msg[768];
        config_error_format(&cerr, msg, sizeof msg);
        snprintf(err, errlen, "cannot load the assigned config: %s", msg);
        return -1;
    }
    w->cfg_loaded = true;
    if (config_replays(&w->cfg) &&
        !(w->cfg.workload.replay = trace_wire_decode(a->trace_part.data, a->trace_part.len))) {
        snprintf(err, errlen, "the assigned trace part (%zu bytes) does not decode",
                 a->trace_part.len);
        return -1;
    }
    if (plan_share_for(&w->cfg, a->worker_count, a->worker_index, &w->share) != 0) {
        snprintf(err, errlen, "worker index %u is outside %u workers", a->worker_index,
                 a->worker_count);
        return -1;
    }
    if (a->join) { /* joining a run in progress: no load of its own, its share comes later */
        w->share.slot_count = 0;
        w->share.rate_cap = 0;
        w->share.worker_index = w->share.arrival_workers;
    }
    if (share_concurrency(&w->share) > WORKER_MAX_STREAMS) {
        snprintf(err, errlen,
                 "its share of scheduler.concurrency %u over %u workers is %u streams, more than "
                 "the %d one worker loop holds: run more workers (or worker --threads), or lower "
                 "scheduler.concurrency",
                 w->cfg.scheduler.concurrency, a->worker_count, share_concurrency(&w->share),
                 WORKER_MAX_STREAMS);
        return -1;
    }
    /* the TLS files are read here, on the worker's host, as api_key_file is */
    if (curl_net_init(&w->net, &w->cfg.target, err, errlen) != 0)
        return -1;
    if (w->cfg.target.tokenizer && load_tokenizer(w, err, errlen) < 0)
        return -1;
    char *api_key = NULL;
    if (config_api_key(&w->cfg, &api_key, &cerr) != 0) {
        char msg[768];
        config_error_format(&cerr, msg, sizeof msg);
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    char header_err[768] = "";
    char **headers = header_lines(&w->cfg, header_err, sizeof header_err);
    if (headers) {
        /* Room for the whole run's concurrency, not only this share: a worker that takes over a
         * lost worker's share (docs/protocol.md "Worker loss") runs more slots than assigned. */
        uint32_t streams =
            w->share.kind == PLAN_CONCURRENT ? plan_slots(&w->cfg) : w->cfg.scheduler.concurrency;
        if (config_replays(&w->cfg)) /* a trace part cannot be taken over */
            streams = share_concurrency(&w->share);
        uint64_t wide = (uint64_t)streams * workload_max_parallel(&w->cfg); /* a graph's fan */
        streams = wide < WORKER_MAX_STREAMS ? (uint32_t)wide : WORKER_MAX_STREAMS;
        /* Its own share must fit under the open-file limit, one socket a stream, or the run is
         * refused now (a hot loop of failed connects mid-run would measure nothing). */
        uint64_t own = (uint64_t)share_concurrency(&w->share) * workload_max_parallel(&w->cfg);
        char fd_why[256];
        if (own && rlimit_fit_nofile(own + WORKER_FD_RESERVE, fd_why, sizeof fd_why) != 0) {
            free_lines(headers);
            if (api_key) {
                explicit_bzero(api_key, strlen(api_key));
                free(api_key);
            }
            snprintf(err, errlen,
                     "this worker's share needs %" PRIu64 " streams, one socket each, plus %d "
                     "for itself: %s; or add workers",
                     own, WORKER_FD_RESERVE, fd_why);
            return -1;
        }
        engine_options_t opt = {
            .max_streams = streams ? streams : WORKER_MAX_STREAMS,
            .timeout_ns = w->cfg.target.timeout_ns,
            .connect_timeout_ns = w->cfg.target.connect_timeout_ns,
            .headers = (const char *const *)headers,
            .api_key = api_key,
            .reasoning_open = w->cfg.target.reasoning_open,
            .reasoning_close = w->cfg.target.reasoning_close,
            .net = &w->net,
            .tokenizer = w->tokenizer,
            .api = w->cfg.target.api,
            .session_header = w->cfg.target.session_header,
            .replica_header = w->cfg.target.replica_header,
        };
        w->engine = engine_new(w->loop, &opt);
        free_lines(headers);
    }
    if (api_key) {
        explicit_bzero(api_key, strlen(api_key));
        free(api_key);
    }
    if (!headers) {
        /* a run without the user's headers (an auth or routing header) would test the wrong
         * thing: refuse it */
        snprintf(err, errlen, "%s", header_err);
        return -1;
    }
    if (!w->engine) {
        snprintf(err, errlen, "cannot create the request engine");
        return -1;
    }
    w->exec = session_executor_new(w->loop, &w->cfg, &w->share, session_backend_engine(w->engine),
                                   on_record, on_finished, w);
    if (!w->exec) {
        snprintf(err, errlen, "cannot create the session executor (no endpoint, or out of memory)");
        return -1;
    }
    if (a->join)
        session_executor_await_adoption(w->exec);
    return 0;
}

/* The run cannot be prepared: Ready says why, and Done follows (repeated until released). */
static void refuse_run(worker_loop_t *w, const char *err) {
    log_line(w, "cannot prepare run %016" PRIx64 " assigned by the controller at %s: %s", w->run_id,
             w->settings->endpoint, err);
    free_run(w);
    agent_send_ready(w->agent, false, err, 0, NULL);
    w->state = AGENT_FINISHING;
    agent_send_done(w->agent, err, NULL);
}

/* Ready for a prepared run (ok false: it could not be), with what the endpoints said about
 * themselves at the preflight, for the results' served_by. */
static void send_ready_ok(worker_loop_t *w, bool ok) {
    char *said =
        json_array_size(w->preflight.said) ? json_dumps(w->preflight.said, JSON_COMPACT) : NULL;
    agent_send_ready(w->agent, ok, NULL, share_concurrency(&w->share), said);
    free(said);
}

/* Every endpoint host was looked up (off the loop): pins the addresses so that no lookup runs
 * once the run starts, then answers Ready, or refuses the run naming the host. */
static void on_resolved(void *arg, resolver_t *resolver) {
    worker_loop_t *w = arg;
    char err[2048] = "";
    const char *failed = resolver_error(resolver);
    if (failed)
        snprintf(err, sizeof err, "%s", failed);
    for (size_t e = 0; !failed && e < w->cfg.target.n_endpoints; e++) {
        const char *line = resolver_line(resolver, e);
        if (line && engine_pin(w->engine, line, err, sizeof err) != 0)
            failed = err;
    }
    resolver_destroy(&w->resolver);
    if (failed) {
        refuse_run(w, err);
        return;
    }
    send_ready_ok(w, true);
}

/* The resolver thread's check of endpoint i (worker 0, target.preflight): reads only
 * w->preflight and what it points to, which the loop leaves alone until the resolver ends. */
static int on_preflight(void *arg, size_t i, const char *pin, char *why, size_t len) {
    worker_loop_t *w = arg;
    return preflight_endpoint(&w->preflight, i, pin, why, len);
}

static void on_assign(void *arg, uint64_t run_id, const Stampede__Assign *a) {
    worker_loop_t *w = arg;
    if (w->state != AGENT_IDLE && run_id == w->run_id) {
        if (!w->resolver) /* else Ready goes out once the names are resolved */
            send_ready_ok(w, w->exec != NULL);
        return;
    }
    if (w->state != AGENT_IDLE)
        abandon_run(w, "a new run was assigned");
    free_run(w);
    w->run_id = run_id;
    w->exit_run_id = run_id;
    w->exit_abandoned[0] = '\0';
    w->requests_done = 0;
    w->worker_index = a->worker_index;
    w->worker_count = a->worker_count;
    w->offset_ns = a->offset_ns;
    w->rtt_ns = a->rtt_ns;
    w->ctl_start_ns = w->start_unix_ns = 0;
    w->grant_asked = w->grant_from = w->started_told = 0;
    agent_set_run(w->agent, run_id);
    events_begin_run(w->events, run_id, a->worker_index);
    w->state = AGENT_ASSIGNED;
    char err[1024] = "";
    if (prepare_run(w, a, err, sizeof err) != 0) {
        refuse_run(w, err);
        return;
    }
    free(w->spool_yaml);
    w->spool_yaml = config_to_yaml(&w->cfg); /* redacted: a spool holds no secret */
    log_line(w,
             "assigned run %016" PRIx64 " as worker %u of %u (concurrency %u), clock offset "
             "%.3f ms, rtt %.3f ms; resolving the endpoint hosts",
             run_id, a->worker_index, a->worker_count, share_concurrency(&w->share),
             a->offset_ns / 1e6, a->rtt_ns / 1e6);
    /* Names are looked up now, before Ready, on a thread: the loop keeps its heartbeats during
     * a slow lookup, and nothing blocks it once the run starts. */
    bool check = w->cfg.target.preflight && a->worker_index == 0 && !a->join;
    json_decref(w->preflight.said);
    w->preflight = (preflight_t){.cfg = &w->cfg,
                                 .net = &w->net,
                                 .headers = engine_headers(w->engine),
                                 .deadline_ns = loop_now_ns() + WORKER_PREFLIGHT_NS,
                                 .said = check ? json_array() : NULL};
    w->resolver = resolver_new(w->loop, w->cfg.target.endpoints, w->cfg.target.n_endpoints,
                               check ? on_preflight : NULL, w, on_resolved, w);
    if (!w->resolver)
        refuse_run(w, "cannot start the thread that resolves the endpoint hosts");
}

static void on_start(void *arg, uint64_t run_id, int64_t start_ns) {
    worker_loop_t *w = arg;
    if (w->state != AGENT_ASSIGNED || run_id != w->run_id || !w->exec || w->resolver)
        return;
    if (session_executor_start(w->exec, start_ns) != 0)
        return;
    w->state = AGENT_RUNNING;
    /* The start on the controller's clock (start_ns is on ours), and as a wall-clock time. */
    w->ctl_start_ns = start_ns + w->settings->clock_shift_ns - w->offset_ns;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    w->start_unix_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec + (start_ns - loop_now_ns());
    stats_reset(w);
    w->stats_timer = loop_timer_at(w->loop, start_ns, stats_begin, w);
    log_line(w, "starting in %.0f ms", (start_ns - loop_now_ns()) / 1e6);
    if (!w->batch_timer)
        w->batch_timer = loop_timer_at(w->loop, loop_now_ns() + WORKER_BATCH_NS, batch_tick, w);
}

static void on_stop(void *arg, uint64_t run_id, const Stampede__Stop *stop) {
    worker_loop_t *w = arg;
    if (w->state == AGENT_IDLE || run_id != w->run_id)
        return;
    if (stop->abandon) {
        abandon_run(w,
                    stop->reason && *stop->reason ? stop->reason : "abandoned by the controller");
        return;
    }
    if (w->state == AGENT_FINISHING) {
        spool_discard(w);
        release_run(w, "released by the controller");
        return;
    }
    log_line(w, "stop: %s", stop->reason && *stop->reason ? stop->reason : "asked by controller");
    if (w->state == AGENT_ASSIGNED) {
        finish_run(w, NULL);
        return;
    }
    session_executor_stop(w->exec, stop->cancel);
}

static void on_welcome(void *arg, uint64_t run_id, const Stampede__Welcome *welcome) {
    worker_loop_t *w = arg;
    w->lost_since_ns = 0;
    log_line(w, "registered with %s (protocol %u)",
             welcome->controller && *welcome->controller ? welcome->controller : "the controller",
             welcome->proto_version);
    if (w->state != AGENT_IDLE && run_id != w->run_id)
        abandon_run(w, "the controller no longer counts this worker in it");
    else if (w->state != AGENT_IDLE && has_unacked(w))
        log_line(w,
                 "the controller counts this worker in run %016" PRIx64
                 " still: sending its unacknowledged batches from %" PRIu64,
                 w->run_id, events_acked_seq(w->events) + 1);
    if (welcome->wait && !w->waiting_told) {
        w->waiting_told = true;
        log_line(w, "%s",
                 welcome->message && *welcome->message
                     ? welcome->message
                     : "a run is in progress; waiting for the next one");
    }
}

static void on_lost(void *arg) {
    worker_loop_t *w = arg;
    w->lost_since_ns = loop_now_ns();
    if (delivered_while_silent(w))
        return;
    if (w->state == AGENT_RUNNING && w->exec) {
        log_line(w, "stopping the load: a shared server is never left under orphaned load");
        session_executor_stop(w->exec, true);
    } else if (w->state == AGENT_ASSIGNED)
        finish_run(w, "controller lost before the start");
}

static void on_refused(void *arg, const char *reason) {
    worker_loop_t *w = arg;
    log_line(w, "refused by the controller: %s", reason);
    w->exit_code = 3;
    loop_stop(w->loop);
}

/* The controller's session-index grant for the run. */
static void on_limit(void *arg, uint64_t run_id, uint64_t limit) {
    worker_loop_t *w = arg;
    if (run_id != w->run_id || !w->exec ||
        (w->state != AGENT_ASSIGNED && w->state != AGENT_RUNNING))
        return;
    session_progress_t p;
    session_executor_progress(w->exec, &p);
    if (limit <= p.limit)
        return;
    w->grant_from = p.frontier;
    session_executor_set_limit(w->exec, limit);
}

/* Takes over part of a lost worker's load: each adoption a slot (or an arrival stream). */
static void on_rebalance(void *arg, uint64_t run_id, const Stampede__Rebalance *r) {
    worker_loop_t *w = arg;
    if (run_id != w->run_id || w->state != AGENT_RUNNING || !w->exec)
        return;
    if (r->session_limit)
        on_limit(w, run_id, r->session_limit);
    size_t released = 0, taken = 0;
    for (size_t i = 0; i < r->n_release; i++)
        released +=
            session_executor_release(w->exec, r->release[i]->residue, r->release[i]->modulus,
                                     r->release[i]->first_session) == 0;
    if (r->n_release)
        log_line(w, "gave up %zu of %zu %s from session %" PRIu64 ": %s", released, r->n_release,
                 w->share.kind == PLAN_CONCURRENT ? "slots" : "arrival streams",
                 r->release[0]->first_session,
                 r->reason && *r->reason ? r->reason : "asked by the controller");
    for (size_t i = 0; i < r->n_adopt; i++) {
        const Stampede__Adoption *a = r->adopt[i];
        if (session_executor_adopt(w->exec, a->residue, a->modulus, a->first_session,
                                   i == 0 ? r->rate_cap_add : 0) == 0)
            taken++;
    }
    if (r->n_adopt)
        log_line(w, "took over %zu of %zu %s from session %" PRIu64 ": %s", taken, r->n_adopt,
                 w->share.kind == PLAN_CONCURRENT ? "slots" : "arrival streams",
                 r->n_adopt ? r->adopt[0]->first_session : 0,
                 r->reason && *r->reason ? r->reason : "asked by the controller");
    agent_heartbeat_now(w->agent); /* the controller sees the new frontier at once */
}

static void on_status(void *arg, agent_status_t *out) {
    worker_loop_t *w = arg;
    out->state = w->state;
    out->inflight = w->exec ? session_executor_inflight(w->exec) : 0;
    if (w->exec) {
        session_progress_t p;
        session_executor_progress(w->exec, &p);
        out->session_frontier = p.frontier;
        out->sessions_started = p.started;
        w->started_told = p.started;
    }
    out->requests_done = w->requests_done;
    const worker_options_t *s = w->settings;
    int64_t gone = w->lost_since_ns ? loop_now_ns() - w->lost_since_ns : 0;
    if (s->idle_exit_ns && w->state == AGENT_IDLE && gone > s->idle_exit_ns) {
        char d[32];
        units_format_duration(s->idle_exit_ns, d, sizeof d);
        log_line(w,
                 "idle, the controller gone for over %s: its runs are over; exiting "
                 "(--idle-exit)",
                 d);
        loop_stop(w->loop);
    } else if ((s->once || s->idle_exit_ns) && gone > WORKER_ONCE_LOST_NS) {
        log_line(w, "the controller did not come back within %lld s; giving up (%s)",
                 (long long)(WORKER_ONCE_LOST_NS / 1000000000LL),
                 s->once ? "--once" : "--idle-exit");
        w->exit_code = 1;
        loop_stop(w->loop);
    } else if (w->state != AGENT_IDLE && gone > WORKER_HOLD_NS) {
        char d[32], why[160];
        units_format_duration(WORKER_HOLD_NS, d, sizeof d);
        snprintf(why, sizeof why, "no controller took its unacknowledged batches within %s", d);
        abandon_run(w, why);
    }
}

/* What the Hello says this loop holds: the run's batches not acknowledged yet, which a restarted
 * controller that knows the run takes over (docs/protocol.md "Hand-over"). */
static bool on_held(void *arg, Stampede__HeldRun *out) {
    worker_loop_t *w = arg;
    if (w->state == AGENT_IDLE || !w->run_id || !has_unacked(w))
        return false;
    out->run_id = w->run_id;
    out->worker_index = w->worker_index;
    out->acked_seq = events_acked_seq(w->events);
    out->last_seq = events_last_seq(w->events);
    out->records = events_records(w->events);
    out->requests_done = w->requests_done;
    out->state = (uint32_t)w->state;
    return true;
}

/* The orderly leave (SIGTERM): out once the run's batches are acknowledged (or the controller
 * released the run), or when the bound passes, or the control connection is down. */
static void leave_tick(loop_t *loop, uint64_t id, void *arg) {
    worker_loop_t *w = arg;
    w->leave_timer = 0;
    int64_t now = loop_now_ns();
    bool delivered = w->state == AGENT_IDLE || (w->done_sent && !has_unacked(w));
    bool link_down = !agent_link_up(w->agent) && now - w->leave_since_ns > WORKER_LEAVE_LINK_NS;
    if (delivered || link_down || now - w->leave_since_ns > WORKER_LEAVE_NS) {
        loop_stop(loop);
        return;
    }
    w->leave_timer = loop_timer_at(loop, now + WORKER_BATCH_NS, leave_tick, w);
}

static void begin_leave(worker_loop_t *w) {
    w->leaving = true;
    w->leave_since_ns = loop_now_ns();
    if (w->state == AGENT_RUNNING && w->exec) {
        log_line(w, "stopping the load, sending the last batches and leaving (a second signal "
                    "quits at once)");
        session_executor_stop(w->exec, true);
    } else if (w->state == AGENT_ASSIGNED) {
        finish_run(w, "the worker was stopped by a signal before the start");
    }
    if (!w->leave_timer)
        w->leave_timer = loop_timer_at(w->loop, loop_now_ns(), leave_tick, w);
}

/* The main thread's signals: the first is an orderly leave, a second (or a wake with 2, when the
 * worker cannot start all its loops) stops at once. */
static void on_wake(loop_t *loop, int fd, int mask, void *arg) {
    worker_loop_t *w = arg;
    uint64_t v = 0;
    if (read(fd, &v, sizeof v) < 0 && errno != EAGAIN)
        return;
    w->signals += v;
    if (w->signals == 1 && !w->leaving) {
        begin_leave(w);
        return;
    }
    if (w->exec)
        session_executor_stop(w->exec, true);
    loop_stop(loop);
}

/* On the way out: what is not acknowledged is spooled, a leaving loop says goodbye, and the loop
 * says what it completed (for an operator or a test to check a merge against). */
static void exit_report(worker_loop_t *w) {
    if (!w->agent || !w->events)
        return;
    int spooled = has_unacked(w) ? spool_now(w) : 0;
    bool unacked = has_unacked(w);
    if (w->leaving) {
        agent_send_goodbye(w->agent, "the worker was stopped (SIGTERM)",
                           unacked && spooled == 0 ? w->spool_path : NULL);
        if (unacked && spooled != 0 && w->exit_code == 0)
            w->exit_code = 1;
    }
    if (!w->exit_run_id)
        return;
    if (w->exit_abandoned[0]) { /* its records were dropped with the run: none to count */
        log_line(w,
                 "exiting: run %016" PRIx64 " was abandoned (%s): %" PRIu64
                 " requests completed, their records discarded",
                 w->exit_run_id, w->exit_abandoned, w->requests_done);
        return;
    }
    uint64_t last = events_last_seq(w->events), acked = events_acked_seq(w->events);
    char rest[4300] = "";
    if (unacked && spooled == 0 && w->spool_path[0])
        snprintf(rest, sizeof rest, "; batches %" PRIu64 "-%" PRIu64 " spooled to %s", acked + 1,
                 last, w->spool_path);
    else if (unacked)
        snprintf(rest, sizeof rest,
                 "; batches %" PRIu64 "-%" PRIu64 " not acknowledged, NOT spooled", acked + 1,
                 last);
    log_line(w,
             "exiting: run %016" PRIx64 ": %" PRIu64 " requests completed, %" PRIu64
             " records in %" PRIu64 " batches, %" PRIu64 " acknowledged%s",
             w->exit_run_id, w->requests_done, events_records(w->events), last, acked, rest);
}

static void *loop_thread(void *arg) {
    worker_loop_t *w = arg;
    const worker_options_t *s = w->settings;
    events_options_t eopt = {.proto_version = s->proto_version,
                             .clock_shift_ns = s->clock_shift_ns};
    agent_options_t aopt = {
        .endpoint = s->endpoint,
        .name = w->name,
        .thread = w->thread,
        .threads = s->threads,
        .capacity = WORKER_MAX_STREAMS,
        .proto_version = s->proto_version,
        .clock_shift_ns = s->clock_shift_ns,
        .server_key = s->server_key_file ? s->server_key : NULL,
        .public_key = s->public_key,
        .secret_key = s->secret_key,
        .max_control_bytes = s->max_control_bytes,
        .has_job_index = s->has_job_index,
        .job_index = s->job_index,
    };
    agent_callbacks_t cb = {
        .assign = on_assign,
        .start = on_start,
        .stop = on_stop,
        .welcome = on_welcome,
        .lost = on_lost,
        .refused = on_refused,
        .status = on_status,
        .limit = on_limit,
        .rebalance = on_rebalance,
        .held = on_held,
    };
    w->loop = loop_new();
    w->events = w->loop ? events_new(&eopt) : NULL;
    if (!w->loop || !w->events || loop_watch(w->loop, w->wake_fd, LOOP_READABLE, 0, on_wake, w)) {
        log_line(w, "cannot set up the event loop");
        w->exit_code = 1;
        goto out;
    }
    w->agent = agent_new(w->zmq_ctx, w->loop, w->events, &aopt, &cb, w);
    if (!w->agent) {
        w->exit_code = 1;
        goto out;
    }
    log_line(w, "connecting to %s", s->endpoint);
    loop_run(w->loop);
    exit_report(w);
out:
    free_run(w);
    free(w->done_error);
    free(w->spool_yaml);
    agent_destroy(&w->agent);
    events_destroy(&w->events);
    if (w->loop)
        loop_unwatch(w->loop, w->wake_fd);
    loop_destroy(&w->loop);
    __atomic_store_n(&w->finished, true, __ATOMIC_RELEASE);
    return NULL;
}

/* Signals every started loop: 1 starts its orderly leave (a second 1 stops it at once), 2 stops it
 * at once. */
static void wake_loops(worker_loop_t *loops, uint32_t n, uint64_t how) {
    for (uint32_t i = 0; i < n; i++)
        if (loops[i].started && write(loops[i].wake_fd, &how, sizeof how) < 0)
            fprintf(stderr, "worker %s: cannot wake its loop: %s\n", loops[i].name,
                    strerror(errno));
}

int worker_serve(const worker_options_t *options) {
    worker_options_t s = *options; /* the loops point at it until they are joined below */
    int rc = 0;
    rlimit_raise_nofile();
    /* Before any loop allocates: a resident set that stays what is in use (memtrim.h). */
    memtrim_map_large(WORKER_MAP_LARGE_BYTES);
    if (s.clock_shift_ns)
        fprintf(stderr, "worker %s: TEST HOOK: clock readings shifted by %" PRId64 " ns\n", s.name,
                s.clock_shift_ns);
    if (s.proto_version != PROTOCOL_VERSION)
        fprintf(stderr, "worker %s: TEST HOOK: announcing protocol version %u\n", s.name,
                s.proto_version);
    if (getenv("STAMPEDE_TEST_LOOKUP_DELAY_MS"))
        fprintf(stderr, "worker %s: TEST HOOK: host name lookups slowed by %s ms\n", s.name,
                getenv("STAMPEDE_TEST_LOOKUP_DELAY_MS"));

    /* Loops never see SIGINT/SIGTERM; this thread waits for them and wakes each loop. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    void *ctx = zmq_ctx_new();
    worker_loop_t *loops = calloc(s.threads, sizeof *loops);
    if (!ctx || !loops) {
        fprintf(stderr, "stampede worker: out of memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < s.threads; i++) {
        worker_loop_t *w = &loops[i];
        w->settings = &s;
        w->thread = i;
        w->zmq_ctx = ctx;
        if (s.threads > 1)
            snprintf(w->name, sizeof w->name, "%.100s.%u", s.name, i);
        else
            snprintf(w->name, sizeof w->name, "%.120s", s.name);
        w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        int err = w->wake_fd < 0 ? errno : pthread_create(&w->tid, NULL, loop_thread, w);
        if (err) {
            fprintf(stderr, "stampede worker: cannot start loop %u: %s\n", i, strerror(err));
            rc = 1;
            break;
        }
        w->started = true;
    }
    /* A worker short of loops must not run a partial load: the ones already started stop now. */
    if (rc)
        wake_loops(loops, s.threads, 2);
    int signals = 0;
    for (;;) {
        bool all_done = true;
        for (uint32_t i = 0; i < s.threads; i++)
            if (loops[i].started && !__atomic_load_n(&loops[i].finished, __ATOMIC_ACQUIRE))
                all_done = false;
        if (all_done)
            break;
        struct timespec tick = {0, 200000000};
        int sig = sigtimedwait(&sigs, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM) {
            if (++signals == 1)
                fprintf(stderr,
                        "worker %s: %s: finishing the batches and leaving (again to quit now)\n",
                        s.name, strsignal(sig));
            else
                fprintf(stderr, "worker %s: %s again: stopping now\n", s.name, strsignal(sig));
            wake_loops(loops, s.threads, 1);
        }
    }
    for (uint32_t i = 0; i < s.threads; i++) {
        if (loops[i].started) {
            pthread_join(loops[i].tid, NULL);
            if (loops[i].exit_code > rc)
                rc = loops[i].exit_code;
        }
        if (loops[i].wake_fd > 0)
            close(loops[i].wake_fd);
    }
    free(loops);
    zmq_ctx_term(ctx);
    return rc;
}
