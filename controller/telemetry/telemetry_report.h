/* The server side of a run in results.json and on the terminal: `server` (each page and the
 * total: requests, token rates, prefix-cache hit rate, TTFT / ITL / TPOT / E2E / queue / prefill
 * percentiles from bucket deltas, running / waiting / KV-usage gauges and series, GPU figures and
 * joules per output token) and `gap` (the client's figures next to the server's per endpoint,
 * and the TTFT attributed: client queue + network + server queue + prefill + the rest).
 * docs/metrics.md "Server metrics" defines each figure. Absent figures are JSON null, "—". */
#ifndef STAMPEDE_TELEMETRY_REPORT_H
#define STAMPEDE_TELEMETRY_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "merge.h"
#include "telemetry.h"
#include "telemetry_stats.h"

/* One latency, the client's against the server's: the gap is between means, exact on both sides
 * (the server's are _sum/_count deltas); the server's p50 is an estimate from its buckets, with
 * the bucket it fell in. */
typedef struct telemetry_gap_latency {
    double client_p50_ms, server_p50_ms, server_p50_bounds_ms[2];
    double client_mean_ms, server_mean_ms, gap_ms, gap_pct;
} telemetry_gap_latency_t;

/* The client against the server on one endpoint (or all): NAN where either side is absent. */
typedef struct telemetry_gap {
    telemetry_gap_latency_t ttft, tpot;
    const char *server_tpot_from; /* "tpot" (per request) or "itl" (per token); NULL when absent */
    double client_requests, server_requests;
    double client_output_tokens, server_output_tokens, output_tokens_gap_pct;
    double client_prompt_tokens, server_prompt_tokens;
    /* The client's TTFT from the intended send, by means: client queue (intended -> send) +
     * network (client TTFT - server TTFT) + server queue + prefill + server other (server TTFT -
     * queue - prefill). */
    double ttft_from_intended_ms, client_queue_ms, network_ms, server_queue_ms, prefill_ms,
        server_other_ms;
} telemetry_gap_t;

/* The gap from one endpoint's (or the total's) server delta, client counts between the marks
 * and client statistics (NULL: none). */
void telemetry_report_gap(const telemetry_delta_t *server, const telemetry_client_counts_t *counts,
                          const merge_stats_t *client, telemetry_gap_t *out);
/* results.json's "server" object between marks a and b (new reference). */
json_t *telemetry_report_server_json(const telemetry_t *t, const telemetry_stats_t *s,
                                     telemetry_mark_t a, telemetry_mark_t b,
                                     const char *const *endpoint_urls);
/* results.json's "gap" object: per endpoint (merge's endpoint statistics) and total. */
json_t *telemetry_report_gap_json(const telemetry_stats_t *s, const merge_t *merge);
/* The terminal table of both. */
void telemetry_report_print(FILE *out, const telemetry_stats_t *s, const merge_t *merge);

#endif
