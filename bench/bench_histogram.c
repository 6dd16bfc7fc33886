/* Histogram costs: record (ns/op), merge of full histograms, percentile queries, wire size and
 * serialize/parse times. Prints numbers; never passes or fails on time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "histogram.h"
#include "rng.h"

#define VALUES (1 << 20)

/* Samples come from the project's own counter-based generator, seeded per benchmark. */
static rng_t rng = {.key = 12345, .counter = 0};

static double uniform(void) {
    return rng_next_open(&rng);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lognormal latencies around 30 ms, as ITL/TTFT look. */
static void lognormal_values(uint64_t *values) {
    for (size_t i = 0; i < VALUES; i++) {
        double normal = sqrt(-2.0 * log(uniform())) * cos(2.0 * M_PI * uniform());
        values[i] = (uint64_t)(30e6 * exp(normal));
    }
}

/* A histogram with every bucket from 1 µs to 1 h in use: the worst case for merge and wire. */
static histogram_t *full_histogram(void) {
    histogram_t *h = histogram_new();
    for (uint64_t v = 1000; v < HISTOGRAM_MAX_NS; v += v / 2048 + 1)
        histogram_record_n(h, v, 1 + v % 5);
    return h;
}

static void bench_record(const uint64_t *values) {
    histogram_t *h = histogram_new();
    const int rounds = 50;
    double start = now_s();
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < VALUES; i++)
            histogram_record(h, values[i]);
    double elapsed = now_s() - start;
    double ops = (double)rounds * VALUES;
    printf("histogram_record            %8.2f ns/op   %8.1f M values/s\n", elapsed / ops * 1e9,
           ops / elapsed / 1e6);
    start = now_s();
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < VALUES; i++)
            histogram_record_n(h, values[i], 3);
    elapsed = now_s() - start;
    printf("histogram_record_n          %8.2f ns/op\n", elapsed / ops * 1e9);
    histogram_destroy(&h);
}

static void bench_merge(histogram_t *full, histogram_t *typical) {
    histogram_t *dst = histogram_new();
    const int rounds = 2000;
    double start = now_s();
    for (int r = 0; r < rounds; r++)
        histogram_merge(dst, full);
    double elapsed = now_s() - start;
    printf("histogram_merge (full)      %8.2f us/merge (every bucket 1 us..1 h in use)\n",
           elapsed / rounds * 1e6);
    start = now_s();
    for (int r = 0; r < rounds; r++)
        histogram_merge(dst, typical);
    elapsed = now_s() - start;
    printf("histogram_merge (lognormal) %8.2f us/merge\n", elapsed / rounds * 1e6);
    volatile uint64_t sink = 0;
    start = now_s();
    for (int r = 0; r < rounds; r++)
        sink += histogram_percentile(dst, 99.0);
    elapsed = now_s() - start;
    printf("histogram_percentile (p99)  %8.2f us/query\n", elapsed / rounds * 1e6);
    histogram_destroy(&dst);
}

static void bench_wire(const char *name, const histogram_t *h) {
    size_t len = histogram_serialized_size(h);
    uint8_t *buf = malloc(len);
    if (!buf)
        return;
    const int rounds = 500;
    double start = now_s();
    for (int r = 0; r < rounds; r++)
        histogram_write(h, buf, len);
    double serialize = (now_s() - start) / rounds;
    histogram_t *back = histogram_new();
    start = now_s();
    for (int r = 0; r < rounds; r++)
        histogram_read(back, buf, len);
    double parse = (now_s() - start) / rounds;
    printf("wire %-22s %8zu bytes   serialize %7.1f us   parse %7.1f us   round trip %s\n", name,
           len, serialize * 1e6, parse * 1e6, histogram_equal(h, back) ? "equal" : "DIFFERS");
    histogram_destroy(&back);
    free(buf);
}

int main(void) {
    uint64_t *values = malloc(VALUES * sizeof *values);
    if (!values)
        return 1;
    lognormal_values(values);
    bench_record(values);
    histogram_t *full = full_histogram(), *typical = histogram_new();
    for (size_t i = 0; i < VALUES; i++)
        histogram_record(typical, values[i]);
    bench_merge(full, typical);
    bench_wire("(lognormal, 1M values)", typical);
    bench_wire("(full)", full);
    histogram_destroy(&full);
    histogram_destroy(&typical);
    free(values);
    return 0;
}
