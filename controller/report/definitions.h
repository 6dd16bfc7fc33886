/* `stampede report DIR --definitions vllm,aiperf,guidellm,sglang`: TTFT, TPOT, ITL and output
 * throughput as each of those tools defines them, recomputed from the same per-chunk receive
 * times of DIR/requests.jsonl (--trace). The tools differ in what the first token is (reasoning
 * or content), in how a chunk of k tokens counts (one gap or k) and in whether ITL is a sample
 * per gap or one average per request: docs/metrics.md section 15. */
#ifndef STAMPEDE_DEFINITIONS_H
#define STAMPEDE_DEFINITIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    DEFINITIONS_VLLM,
    DEFINITIONS_AIPERF,
    DEFINITIONS_GUIDELLM,
    DEFINITIONS_SGLANG,
    DEFINITIONS__COUNT
} definitions_tool_t;

/* One ok, measured request of the trace; times in microseconds, the arrays the caller's. */
typedef struct {
    double send_us;
    double end_us;           /* end of the transfer */
    double first_content_us; /* first non-reasoning chunk; NAN when every chunk was reasoning */
    const double *chunks_us; /* every token chunk's receive instant, ascending */
    const uint32_t *chunk_tokens; /* tokens per chunk; NULL: one each */
    size_t n_chunks;
    uint64_t output_tokens; /* the request's count (usage, else chunks): reasoning included */
} definitions_request_t;

/* Distribution of one metric: NAN figures when count is 0. */
typedef struct {
    size_t count;
    double mean, p50, p90, p99;
} definitions_stat_t;

typedef struct {
    definitions_stat_t ttft_ms;
    definitions_stat_t ttfo_ms; /* first non-reasoning token (AIPerf only; count 0 otherwise) */
    definitions_stat_t tpot_ms; /* count 0 where the tool has no TPOT (AIPerf) */
    definitions_stat_t itl_ms;  /* the tool's ITL: per gap, per token or per request */
    double output_tokens_per_s; /* the requests' output tokens / (last end − first send) */
} definitions_summary_t;

typedef struct definitions definitions_t;

/* The tool named name ("vllm", "aiperf", "guidellm", "sglang"); -1 when none is. */
int definitions_tool(const char *name);
/* An empty accumulator for tool; NULL on allocation failure. The caller destroys it. */
definitions_t *definitions_new(definitions_tool_t tool);
/* Frees *self_p and sets it to NULL. NULL-safe. */
void definitions_destroy(definitions_t **self_p);
/* Adds one request as the tool would measure it. 0, or -1 when memory is short. */
int definitions_add(definitions_t *self, const definitions_request_t *request);
/* The figures over the requests added (sorts the samples kept). */
void definitions_summary(definitions_t *self, definitions_summary_t *out);

/* Checks a comma-separated list of tools: 0, or -1 with err naming the one not known. */
int definitions_check(const char *tools, char *err, size_t err_len);
/* Reads dir/requests.jsonl and prints one table per tool of the comma-separated list to out.
 * 0 ok; -1 with the reason in err (no trace, a tool not known, a line not readable: the file,
 * the line and the key). */
int definitions_report(const char *dir, const char *tools, FILE *out, char *err, size_t err_len);

#endif
