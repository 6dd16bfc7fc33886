/* A worker's part in one run: its index and share, its clock as probed before the run, the
 * go-back-N sequence of its batches, its Done, its heartbeats' progress and the classes of session
 * indexes it holds. The fleet keeps who the worker is (its routing id, host, when it was last
 * heard: controller/registry.h) and embeds one of these per worker; a run reads and writes only
 * this half, and `stampede merge` builds them with no fleet at all. */
#ifndef STAMPEDE_RUN_WORKER_H
#define STAMPEDE_RUN_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a worker stands with the run (and, outside one, whether it counts for the next). */
typedef enum {
    RUN_WORKER_REGISTERED, /* counted for the next run */
    RUN_WORKER_WAITING,    /* came after the start: used for the next run */
    RUN_WORKER_PROBING,
    RUN_WORKER_ASSIGNED,
    RUN_WORKER_READY,
    RUN_WORKER_RUNNING,
    RUN_WORKER_COMPLETE, /* Done received and every batch up to its last_seq merged */
    RUN_WORKER_LOST
} run_worker_state_t;

typedef struct run_worker {
    char name[128];             /* as its Hello said */
    uint64_t max_message_bytes; /* the largest control message it takes (its Hello) */
    run_worker_state_t state;
    int index;      /* in the run, -1 when not in it */
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
    uint32_t inflight;    /* its last heartbeat's */
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
    uint64_t refused;        /* its records and numbers outside the plan's bounds (bounds.h) */
    char refused_first[200]; /* the first of them, why */
} run_worker_t;

/* A worker known by name, out of any run (index -1, registered). */
void run_worker_init(run_worker_t *self, const char *name, uint64_t max_message_bytes);
/* Forgets everything of the last run (its classes freed), keeping the name and message size;
 * state is the one it starts the next run in. */
void run_worker_reset(run_worker_t *self, run_worker_state_t state);
/* Whether the worker was taken into the run (it has an index). */
bool run_worker_in_run(const run_worker_t *self);
/* Whether it has nothing more to give the run: complete or lost. */
bool run_worker_finished(const run_worker_t *self);

#endif
