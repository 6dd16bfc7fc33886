/* The workers a controller knows, from their first Hello until they go silent outside a run:
 * registration (a Welcome; a refusal for another protocol version; "wait for the next run" for
 * one that comes after --expect-workers or after the start), lookup by routing id, and liveness
 * (heartbeats both ways; a worker silent for 5 s is lost, and taken back if it returns during
 * the run). Each entry also carries the worker's clock probe result and its progress in the run.
 * The entries live in the controller's array (controller_internal.h). */
#ifndef STAMPEDE_REGISTRY_H
#define STAMPEDE_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller.h"
#include "stampede.pb-c.h"

/* The largest control message a worker takes when its Hello does not say (an older worker):
 * worker --max-message-size's default. */
#define REGISTRY_WORKER_MESSAGE_BYTES (64ULL << 20)

typedef enum {
    REGISTRY_REGISTERED, /* counted for the next run */
    REGISTRY_WAITING,    /* came after the start: used for the next run */
    REGISTRY_PROBING,
    REGISTRY_ASSIGNED,
    REGISTRY_READY,
    REGISTRY_RUNNING,
    REGISTRY_COMPLETE, /* Done received and every batch up to its last_seq merged */
    REGISTRY_LOST
} registry_state_t;

typedef struct registry_worker {
    uint8_t id[256]; /* routing id, the same on both sockets */
    size_t id_len;
    char name[128];
    char host[128];
    uint32_t pid;
    registry_state_t state;
    int index; /* in the run, -1 when not in it */
    int64_t last_rx_ns;
    uint32_t round; /* clock probe round in progress */
    int64_t probe_sent_ns;
    int64_t offset_ns; /* worker clock minus controller clock, from the best round */
    int64_t rtt_ns;
    uint32_t concurrency; /* its share, as the controller computed it */
    uint64_t acked_seq;
    bool done;
    uint64_t done_last_seq;
    uint64_t done_records;
    uint64_t done_dropped;
    uint64_t ingested;
    uint32_t inflight;
    bool release_pending; /* its release (Stop after Done) could not be sent yet */
    /* How its loop fared over the run, from its Done (docs/metrics.md "Run validity"). */
    bool has_stats;
    uint64_t write_callbacks;
    uint64_t sse_events;
    uint64_t token_events;
    int64_t loop_cpu_ns;
    int64_t loop_wall_ns;
    int64_t loop_wait_ns; /* -1 unknown */
    uint64_t arrivals;
    uint64_t cap_waits;
    int64_t job_index; /* its Hello's job_index (an Indexed Job's JOB_COMPLETION_INDEX); -1 none */
    uint32_t threads;  /* loops in its process (its Hello's threads, at least 1) */
    uint64_t max_message_bytes; /* the largest control message it takes (its Hello; 64 MiB when
                                   it does not say) */
    /* Worker loss and rebalancing (controller/rebalance.h). */
    uint64_t frontier;            /* its heartbeats: 1 + the highest session index it started */
    uint64_t sessions_started;    /* its heartbeats */
    uint64_t sessions_ended;      /* merged records that ended a session of its */
    struct rebalance_class *held; /* the classes of session indexes it runs now */
    bool classes_changed;         /* it adopted or gave up a class since the start */
    size_t n_held, cap_held;
    uint32_t rate_cap;       /* rate mode: its share of scheduler.concurrency now (0: none) */
    bool taken_over;         /* lost, and its share given to the survivors */
    uint64_t lost_sessions;  /* its sessions started and never ended, counted at the loss */
    int64_t abandon_sent_ns; /* when it was last told to drop the run (it woke up) */
    bool back_said;          /* "is back, but its share was taken over" was said */
    uint64_t undecodable;    /* its messages that did not unpack (collect_undecodable) */
    uint64_t refused;        /* its records and numbers outside the plan's bounds (bounds.h) */
    char refused_first[200]; /* the first of them, why */
} registry_worker_t;

/* Answers a Hello: refuses another protocol version, welcomes a known worker again (taking a
 * lost one back during the run), or adds a new one, counted for the run or told to wait. */
void registry_hello(controller_t *self, const uint8_t *id, size_t id_len,
                    const Stampede__Envelope *env);
/* The worker with this routing id, or NULL. Valid until the next Hello or silence check. */
registry_worker_t *registry_find(controller_t *self, const void *id, size_t id_len);
/* How many workers are in state. */
uint32_t registry_count(const controller_t *self, registry_state_t state);
/* Whether w was taken into the run (it has an index). */
bool registry_in_run(const registry_worker_t *w);
/* Whether w has nothing more to give the run: complete or lost. */
bool registry_finished(const registry_worker_t *w);
/* Why registration is short, for the timeout's message, into buf: "only N of M workers
 * registered ...", naming the Indexed Job indexes missing (from the registered workers' job_index
 * and thread count) and the workers that did register. */
void registry_describe_missing(const controller_t *self, char *buf, size_t len);
/* Requests in flight on the run's unfinished workers, as their last heartbeats said; a silent
 * worker's (registry_silent) is left out, being stale. */
uint32_t registry_inflight(const controller_t *self);
/* Workers of the run, neither finished nor lost, silent for 1.5 heartbeats at now:
 * their last in-flight count is stale, so the live line names them instead of counting it. */
uint32_t registry_silent(const controller_t *self, int64_t now);
/* Sends a heartbeat to every worker not lost. */
void registry_send_heartbeats(controller_t *self, int64_t now);
/* Workers silent for 5 s: forgotten outside the run, lost during it, and before the start the
 * run is aborted. */
void registry_check_silence(controller_t *self, int64_t now);
/* Excuses every worker's silence over gap_ns during which the controller itself did not run. */
void registry_excuse_stall(controller_t *self, int64_t gap_ns);
/* Marks w lost (its delivered records count; the results become partial). abandon also tells it
 * to drop the run (it may be alive but too late); otherwise it is taken back if it reappears. */
void registry_mark_lost(controller_t *self, registry_worker_t *w, const char *why, bool abandon);
/* Between runs: every worker still heard from is made ready for the next run (registered, up
 * to --expect-workers; waiting beyond), with nothing left of the last run; a worker lost in it
 * and silent since is forgotten. */
void registry_next_run(controller_t *self);
/* Before the start of a run after the fleet's first (a level, a later file): w went silent or
 * left (what says which, for the message). It is forgotten and the run is prepared again from
 * registration with the workers still registered (a new run id once shares were assigned). */
void registry_forget_before_start(controller_t *self, registry_worker_t *w, const char *what);
/* The run's workers, for its level in results.json: {"expected" (--expect-workers), "started"
 * (taken in at the start), "joined" (during the run), "lost" (losses during it), "carried_by"
 * (in the run and not lost at its end)}. The caller owns the object. */
json_t *registry_run_json(const controller_t *self);
/* A lost worker of the run spoke again: it is running, and its Done and batches still count;
 * one whose share was taken over is told (again, at most once a heartbeat) to drop the run. */
void registry_mark_back(controller_t *self, registry_worker_t *w);

#endif
