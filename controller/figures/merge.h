/* The controller's accumulator: every request record of a run (already on the controller's clock)
 * goes through merge_add, which turns it into metrics (common/metrics) and counts them into
 * histograms for the whole run, per endpoint and per role, plus a short sliding window for the
 * live status line. Warm-up records are counted apart and kept out of the latency statistics;
 * failed ones count by error class and stay out of the latency histograms. Rates count what
 * happened inside the measured window, from every record (docs/metrics.md section 5). No
 * allocation per record (a role's statistics are allocated the first time that role is seen).
 * Not thread-safe: one ingest loop. */
#ifndef STAMPEDE_MERGE_H
#define STAMPEDE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "histogram.h"
#include "metrics.h"
#include "overlap.h"
#include "record.h"
#include "sessions.h"

#define MERGE_MAX_ROLES 64
#define MERGE_LIVE_WINDOW_S 5

typedef struct merge merge_t;

/* Statistics of one slice of the run (all of it, one endpoint or one role), warm-up excluded. */
typedef struct merge_stats {
    histogram_t *latency[METRIC__COUNT]; /* ok requests only; ITL holds every per-token sample */
    uint64_t requests;                   /* ok + failed + cancelled */
    uint64_t ok;
    uint64_t failed;
    uint64_t cancelled;              /* stopped by the run ending: neither ok nor failed */
    uint64_t errors[ERROR__COUNT];   /* by class (ERROR_CANCELLED too; ERROR_NONE stays 0) */
    uint64_t output_tokens;          /* ok requests; source below */
    uint64_t input_tokens;           /* ok requests: usage.prompt_tokens, else words sent */
    uint64_t cached_tokens;          /* ok requests: usage...cached_tokens */
    uint64_t usage_prompt_tokens;    /* ok requests with usage: prompt tokens (cache rate) */
    uint64_t output_from_usage;      /* ok requests whose token counts came from usage */
    uint64_t output_from_chunks;     /* ok requests whose counts came from the chunks */
    uint64_t output_from_tokenizer;  /* ok requests without usage counted in target.tokenizer */
    uint64_t usage_chunks_differ;    /* ok requests with usage whose chunk count differs */
    uint64_t usage_tokenizer_differ; /* ok requests whose usage and tokenizer counts differ */
    /* ok requests with usage: the server's prompt_tokens less the prompt tokens intended (the
     * target's tokenizer's, or words without one): a chat template's tokens, or a mismatch */
    uint64_t prompt_checked;
    int64_t prompt_extra_sum, prompt_extra_min, prompt_extra_max;
    uint64_t requested_checked;       /* ok requests that asked for a number of output tokens */
    uint64_t requested_output_tokens; /* what those asked for, summed */
    uint64_t received_output_tokens;  /* what those received, summed */
    uint64_t output_mismatched;       /* those that received a different number */
    uint64_t stopped_early; /* of those, the ones the server ended with `stop` short of it */
    uint64_t finish_reasons[FINISH__COUNT]; /* ok requests by the reply's finish_reason */
    uint64_t refusals;                      /* ok requests whose reply was a refusal */
    uint64_t sessions_ended;                /* records flagged session_end (any outcome) */
    /* What the rates count: inside the measured window, from every record (warm-up included). */
    uint64_t window_output_tokens; /* tokens of chunks received in the window, any outcome */
    uint64_t window_requests;      /* ok requests that ended in the window */
    uint64_t window_input_tokens;  /* input tokens of those */
    uint64_t window_sessions; /* records flagged session_end, not cancelled, ended in the window */
    /* HTTP phases of the ok requests whose record has them (docs/metrics.md section 2) */
    histogram_t *phase[RECORD_PHASE__COUNT];
    uint64_t phases_measured;   /* those requests */
    uint64_t connection_reused; /* of those, the ones sent on a reused connection */
    uint64_t tls_version[4];    /* of those, by their connection's TLS: 1.0, 1.1, 1.2, 1.3 */
    uint64_t tls_connections;   /* of those, the ones that opened a TLS connection */
    uint64_t tls_resumed;       /* of those, the ones whose TLS session was resumed */
    /* Resends, whatever the outcome (docs/metrics.md section 3). */
    uint64_t retries;          /* after a 429, target.retry_on_429: honour */
    uint64_t retried_requests; /* requests resent after a 429 at least once */
    uint64_t retry_wait_ns;    /* waited out before those retries, summed */
    uint64_t resends;          /* libcurl's resends after a reused connection died unanswered */
} merge_stats_t;

/* A slice's statistics on their own, empty (NULL on no memory), e.g. to pool repetitions into;
 * destroyed with merge_stats_destroy (NULL-safe, sets *stats_p to NULL). */
merge_stats_t *merge_stats_new(void);
void merge_stats_destroy(merge_stats_t **stats_p);
/* Adds src into dst: every histogram merged bucket by bucket and every count summed, so the
 * pooled percentiles are those of every sample together (never an average of percentiles). */
void merge_stats_pool(merge_stats_t *dst, const merge_stats_t *src);

/* What the live status line shows. */
typedef struct live {
    double elapsed_s;           /* since the earlier of the window start and the first send */
    uint32_t in_flight;         /* as the caller passed it */
    uint32_t silent;            /* workers silent past 1.5 heartbeats (set by the caller) */
    double duration_s;          /* the run's limits.duration, 0 none (set by the caller) */
    uint64_t requests_ok;       /* since the start, warm-up included */
    uint64_t requests_failed;   /* since the start, warm-up included */
    double requests_per_s;      /* ok requests finished over the last ~5 s */
    double output_tokens_per_s; /* output tokens of those */
    double ttft_p50_ms;         /* TTFT p50 of those; negative when there is none */
} live_t;

/* A new accumulator for cfg's endpoints (URLs copied; cfg may be NULL: no endpoints). The caller
 * destroys it; NULL on allocation failure. */
merge_t *merge_new(const config_t *cfg);
/* Frees *self_p and sets it to NULL. */
void merge_destroy(merge_t **self_p);
/* Counts one finished request. Its chunk arrays are only read during the call. */
void merge_add(merge_t *self, const request_record_t *rec);
/* Same, with m = metrics_compute(rec) already done by the caller (who also traces it). */
void merge_add_metrics(merge_t *self, const request_record_t *rec, const metrics_t *m);
/* Opens the measured window (controller clock) before the first record: it starts at start_ns
 * (run start + warmup) and cannot run past end_ns (run start + duration; 0 = no duration limit).
 * Records merged before this call are counted as if the window were unbounded. Without a call the
 * window runs from the first send to the last end of any record. */
void merge_set_run_window(merge_t *self, int64_t start_ns, int64_t end_ns);
/* Closes the window once every record is in. It ends at its limit when the load was offered until
 * then (load_until_limit: the duration ran out), else at the last end of any record, no later
 * than the limit (a count limit reached, an interrupt: the cancelled requests end at the stop). */
void merge_close_run_window(merge_t *self, bool load_until_limit);
/* Marks the results partial (interrupted, a worker lost...); reason is copied. */
void merge_mark_partial(merge_t *self, const char *reason);
/* Fills *out for the live line at controller instant now_ns. */
void merge_live(merge_t *self, int64_t now_ns, uint32_t in_flight, live_t *out);

/* The whole run's statistics. */
const merge_stats_t *merge_overall(const merge_t *self);
/* Number of configured endpoints, and each one's URL and statistics (i < merge_endpoint_count). */
size_t merge_endpoint_count(const merge_t *self);
const char *merge_endpoint_url(const merge_t *self, size_t i);
const merge_stats_t *merge_endpoint(const merge_t *self, size_t i);
/* Requests sent to endpoint i over the whole run, warm-up included (the routing balance). */
uint64_t merge_endpoint_sent(const merge_t *self, size_t i);
/* One more than the highest role index seen; merge_role is NULL for a role never seen. */
uint32_t merge_role_count(const merge_t *self);
const merge_stats_t *merge_role(const merge_t *self, uint32_t role);
/* Warm-up records (all outcomes), and how many of them failed. */
uint64_t merge_warmup(const merge_t *self);
uint64_t merge_warmup_failed(const merge_t *self);
/* Every record merged, warm-up included. */
uint64_t merge_records(const merge_t *self);
/* Records whose endpoint or role index had no slot (counted in the whole run only), warm-up
 * included. */
uint64_t merge_unplaced(const merge_t *self);
/* Wrapping sum of every record's workload_hash (warm-up, failed and cancelled included). */
uint64_t merge_digest(const merge_t *self);
/* Length of the measured window in seconds (0 when nothing was measured); while it is open, up to
 * the last end seen. */
double merge_duration_s(const merge_t *self);
/* True when marked partial; *reason (may be NULL) gets the reason. */
bool merge_partial(const merge_t *self, const char **reason);

/* The per-session figures (sessions that closed so far). */
const sessions_t *merge_sessions(const merge_t *self);
/* The decode intervals (first token -> end) of the ok requests outside the warm-up, for the decode
 * overlap (overlap_shares reorders them, nothing else changes them). */
overlap_t *merge_decode(const merge_t *self);
/* First send -> last end of any record (warm-up included) in seconds; 0 before two timestamps. */
double merge_wall_clock_s(const merge_t *self);

#endif
