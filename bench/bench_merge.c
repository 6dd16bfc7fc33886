/* The controller's merge rate: merge_add over realistic records (~200 token chunks each, 3
 * endpoints, 4 roles, usage present), reported as records/s and ITL samples/s (the goal
 * is >= 2 M ITL samples/s). Prints numbers; never passes or fails on time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge.h"
#include "rng.h"

#define DISTINCT 1024
#define CHUNKS 200
#define MS 1000000LL

/* Samples come from the project's own counter-based generator, seeded per benchmark. */
static rng_t rng = {.key = 99, .counter = 0};

static uint64_t next_u64(void) {
    return rng_next_u64(&rng);
}

static double uniform(void) {
    return rng_next_open(&rng);
}

static double lognormal(double median, double sigma) {
    return median * exp(sigma * sqrt(-2.0 * log(uniform())) * cos(2.0 * M_PI * uniform()));
}

static double now_s(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Record i: TTFT ~ 170 ms, ITL ~ 45 ms with jitter, 180..220 chunks, one in 8 carrying 2 tokens
 * when multi is set. */
static void build(request_record_t *rec, int64_t *chunk_ns, uint16_t *tokens, uint64_t i,
                  int multi) {
    memset(rec, 0, sizeof *rec);
    uint32_t n = CHUNKS - 20 + (uint32_t)(next_u64() % 41);
    int64_t t = 10000 * MS + (int64_t)i * 50 * MS;
    rec->request_id = i;
    rec->session = i / 4;
    rec->node = (uint32_t)(i % 4);
    rec->role = (uint32_t)(i % 4);
    rec->endpoint = (uint32_t)(i % 3);
    rec->intended_ns = t;
    rec->send_ns = t + 50000;
    rec->headers_ns = rec->send_ns + 5 * MS;
    int64_t at = rec->send_ns + (int64_t)lognormal(170e6, 0.3);
    uint32_t total = 0;
    for (uint32_t c = 0; c < n; c++) {
        chunk_ns[c] = at;
        tokens[c] = multi && c % 8 == 7 ? 2 : 1;
        total += tokens[c];
        at += (int64_t)lognormal(45e6, 0.2);
    }
    rec->n_chunks = n;
    rec->chunk_ns = chunk_ns;
    rec->chunk_tokens = multi ? tokens : NULL;
    rec->first_token_ns = rec->first_content_ns = chunk_ns[0];
    rec->end_ns = chunk_ns[n - 1] + 1 * MS;
    rec->http_status = 200;
    rec->has_usage = true;
    rec->completion_tokens = total;
    rec->prompt_tokens = 800;
    rec->cached_tokens = 512;
    rec->requested_output_tokens = total;
    rec->workload_hash = next_u64();
    rec->session_end = rec->node == 3;
}

static void run(const char *name, int multi) {
    static char *urls[] = {"http://10.0.0.1:8000", "http://10.0.0.2:8000", "http://10.0.0.3:8000"};
    config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.target.endpoints = urls;
    cfg.target.n_endpoints = 3;
    request_record_t *recs = calloc(DISTINCT, sizeof *recs);
    int64_t *chunks = calloc((size_t)DISTINCT * CHUNKS * 2, sizeof *chunks);
    uint16_t *tokens = calloc((size_t)DISTINCT * CHUNKS * 2, sizeof *tokens);
    if (!recs || !chunks || !tokens)
        exit(1);
    for (uint64_t i = 0; i < DISTINCT; i++)
        build(&recs[i], chunks + i * CHUNKS * 2, tokens + i * CHUNKS * 2, i, multi);
    merge_t *m = merge_new(&cfg);
    const uint64_t total = 200000;
    double wall = now_s(CLOCK_MONOTONIC), cpu = now_s(CLOCK_PROCESS_CPUTIME_ID);
    for (uint64_t i = 0; i < total; i++)
        merge_add(m, &recs[i % DISTINCT]);
    wall = now_s(CLOCK_MONOTONIC) - wall;
    cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    uint64_t samples = histogram_count(merge_overall(m)->latency[METRIC_ITL]);
    printf("merge_add %-26s %7.0f records/s   %6.2f M ITL samples/s   %6.2f us/record (cpu %.2f "
           "us)   %.1f ITL samples/record\n",
           name, (double)total / wall, (double)samples / wall / 1e6, wall / (double)total * 1e6,
           cpu / (double)total * 1e6, (double)samples / (double)total);
    live_t live;
    merge_live(m, recs[DISTINCT - 1].end_ns, 0, &live);
    merge_destroy(&m);
    free(recs);
    free(chunks);
    free(tokens);
}

int main(void) {
    run("(1 token per chunk)", 0);
    run("(1 in 8 chunks 2 tokens)", 1);
    return 0;
}
