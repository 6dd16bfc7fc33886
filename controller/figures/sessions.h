/* Per-session figures from the merged records: makespan, critical path, idle time and the share
 * of the critical path each role took (docs/metrics.md section 12), the prompt reuse ratio, and
 * whether sticky routing kept every session on one endpoint. A session is held (one small entry
 * per record) only while it is open: from its first record to the one flagged session_end (a
 * session's records all come from one worker, in order). Then its graph is regenerated from the
 * seed (workload_session_generate), it is folded into histograms and sums, and freed: memory is
 * bounded by the sessions in flight, not the run. A summarise request (workload.compaction, known
 * by its role) is counted as its session's compaction, and its time as part of the node it
 * preceded. Not thread-safe: one ingest loop. */
#ifndef STAMPEDE_SESSIONS_H
#define STAMPEDE_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "histogram.h"
#include "record.h"
#include "workload.h"

#define SESSIONS_MAX_ROLES 64

typedef struct sessions sessions_t;

/* What the closed sessions add up to. */
typedef struct sessions_stats {
    uint64_t closed;           /* sessions whose last record came in */
    uint64_t counted;          /* of those, complete and inside the measured window */
    histogram_t *makespan;     /* counted sessions: first send -> last end */
    histogram_t *critical;     /* counted sessions: critical path */
    histogram_t *idle;         /* counted sessions: makespan - critical path */
    histogram_t *sibling_wait; /* counted sessions: parents waiting for in-flight siblings */
    histogram_t *requests;     /* counted sessions: requests (a count, not ns) */
    uint64_t critical_ns;      /* counted sessions: critical paths added up */
    uint64_t role_critical_ns[SESSIONS_MAX_ROLES]; /* of which each role's requests */
    uint32_t n_roles;                              /* one more than the highest role seen */
    uint64_t reuse_shared;     /* ok requests of closed sessions: prompt tokens shared */
    uint64_t reuse_prompt;     /* their prompt tokens */
    uint64_t *endpoint_shared; /* the same per endpoint */
    uint64_t *endpoint_prompt;
    size_t n_endpoints;
    uint64_t affinity_checked; /* closed sessions with at least one request sent */
    uint64_t affinity_split;   /* of those, sessions that reached more than one endpoint */
    /* Replica affinity (target.replica_header): sessions with a replica named by at least one
     * endpoint's answers, and of those the ones an endpoint answered from two replicas or more;
     * the same per endpoint (a session counts at each endpoint that named a replica). */
    uint64_t replica_checked;
    uint64_t replica_moved;
    uint64_t *endpoint_replica_checked;
    uint64_t *endpoint_replica_moved;

    /* Closed sessions, complete or not, window or not: the longest first send -> last end seen.
     * A lower bound on how long a session takes when none was complete inside the window. */
    int64_t closed_span_max_ns;
    histogram_t *compactions;   /* counted sessions: summarise requests (a count, not ns) */
    uint64_t compactions_total; /* summarise requests of every closed session */
} sessions_stats_t;

/* Empty figures for n_endpoints endpoints (e.g. to pool repetitions into). 0 ok, -1 on no memory
 * (then freed). */
int sessions_stats_init(sessions_stats_t *s, size_t n_endpoints);
/* Frees the histograms and arrays and zeroes *s. */
void sessions_stats_free(sessions_stats_t *s);
/* Adds src into dst: histograms merged bucket by bucket, counts and sums added (the endpoints
 * both have), n_roles the larger. */
void sessions_stats_pool(sessions_stats_t *dst, const sessions_stats_t *src);

/* One session's figures (sessions_path). */
typedef struct sessions_path {
    int64_t makespan_ns;     /* first send -> last end */
    int64_t critical_ns;     /* request durations on the critical path */
    int64_t idle_ns;         /* makespan - critical path: the waits on the path */
    int64_t sibling_wait_ns; /* finished parents waiting for siblings still in flight */
    uint32_t length;         /* requests on the path */
} sessions_path_t;

/* A tracker for cfg's workload (cfg must outlive it; NULL: every session is left uncounted) and
 * n_endpoints endpoints. NULL on allocation failure; the caller destroys it. */
sessions_t *sessions_new(const config_t *cfg, size_t n_endpoints);
/* Frees *self_p (open sessions included) and sets it to NULL (NULL is fine). */
void sessions_destroy(sessions_t **self_p);
/* Sets the measured window a counted session must lie in: first send >= start_ns (0: no bound),
 * last end <= limit_ns (0: no bound). */
void sessions_set_window(sessions_t *self, int64_t start_ns, int64_t limit_ns);
/* Counts one record; closes its session when the record is flagged session_end. 0 ok, -1 on
 * allocation failure (the session is then dropped, uncounted). */
int sessions_add(sessions_t *self, const request_record_t *rec);
/* Sessions open now. */
size_t sessions_open(const sessions_t *self);
/* True when the workload routes each session to one endpoint (target.routing: sticky). */
bool sessions_sticky(const sessions_t *self);
/* True when a session can hold more than one request (a chat or a graph, not independent
 * requests): only then do the per-session figures say anything. */
bool sessions_multi_request(const sessions_t *self);
/* The figures so far. */
const sessions_stats_t *sessions_stats(const sessions_t *self);

/* The critical path of one session from its graph and each node's send and end (send[j] = 0:
 * node j was not sent; its descendants then start paths of their own): walking back from the
 * node that ended last, through each node's parent that ended last, down to a node with no sent
 * parent. role_ns (may be NULL) gets each node's duration on the path added at graph->nodes[j].role
 * (which must be < n_roles). sibling_wait_ns: at each node with several sent parents, each
 * parent's wait from its end to the last end among the parents that were in flight when it ended
 * (sent before it ended): parallel branches wait for each other, a chain of them does not. */
void sessions_path(const workload_session_t *graph, const int64_t *send, const int64_t *end,
                   uint64_t *role_ns, uint32_t n_roles, sessions_path_t *out);

#endif
