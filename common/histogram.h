/* A log-linear histogram of nanosecond values in the HdrHistogram layout (2048 sub-buckets per
 * power of two, i.e. 3 significant digits): O(1) recording with no allocation, every percentile
 * within 0.05 % of the exact sample value, exact count/min/max/sum, and merging by adding counts,
 * so the merge of per-worker histograms equals the histogram of all samples, bucket for bucket.
 * Values up to 2047 ns are exact; values above HISTOGRAM_MAX_NS (1 hour) are counted in the top
 * bucket (histogram_clamped tells how many) while min/max/sum keep their true values. */
#ifndef STAMPEDE_HISTOGRAM_H
#define STAMPEDE_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HISTOGRAM_MAX_NS 3600000000000ULL

typedef struct histogram histogram_t;

/* One non-empty bucket: every value in [lowest_ns, highest_ns] was counted `count` times. */
typedef struct histogram_bucket {
    uint64_t lowest_ns;
    uint64_t highest_ns;
    uint64_t count;
} histogram_bucket_t;

/* Position of an iteration over the non-empty buckets; start from HISTOGRAM_ITER_INIT. */
typedef struct histogram_iter {
    uint32_t index;
} histogram_iter_t;
#define HISTOGRAM_ITER_INIT                                                                        \
    { 0 }

/* A new empty histogram (about 270 KB of lazily-touched memory); the caller destroys it. */
histogram_t *histogram_new(void);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void histogram_destroy(histogram_t **self_p);
/* Empties it; costs only the range of buckets in use. */
void histogram_reset(histogram_t *self);

/* Counts one value. O(1), no allocation. */
void histogram_record(histogram_t *self, uint64_t value_ns);
/* Counts the same value n times (n = 0 does nothing). */
void histogram_record_n(histogram_t *self, uint64_t value_ns, uint64_t n);
/* Adds every count of src into dst (dst then equals a histogram of both sample sets). */
void histogram_merge(histogram_t *dst, const histogram_t *src);

/* Number of values recorded. */
uint64_t histogram_count(const histogram_t *self);
/* Smallest and largest value recorded, exact (0 when empty). */
uint64_t histogram_min(const histogram_t *self);
uint64_t histogram_max(const histogram_t *self);
/* Exact mean in ns (0 when empty): the sum of every value recorded, kept exact (it wraps after
 * 584 years of total latency), over the count. */
double histogram_mean(const histogram_t *self);
/* How many values were above HISTOGRAM_MAX_NS and counted in the top bucket. */
uint64_t histogram_clamped(const histogram_t *self);
/* The value at which the cumulative count first reaches p % of the total (p in [0, 100]):
 * the midpoint of that bucket, kept within [min, max]; p = 0 gives min, 100 gives max;
 * 0 when empty. */
uint64_t histogram_percentile(const histogram_t *self, double p);
/* How many recorded values are <= value_ns, to bucket resolution (for SLOs and Prometheus le). */
uint64_t histogram_count_at_or_below(const histogram_t *self, uint64_t value_ns);
/* Next non-empty bucket in increasing value order into *out; false when there is none left. */
bool histogram_next(const histogram_t *self, histogram_iter_t *iter, histogram_bucket_t *out);
/* True when both hold the same counts in every bucket and the same count/min/max/sum. */
bool histogram_equal(const histogram_t *a, const histogram_t *b);

/* The compact wire form (version, count/clamped/min/max/sum, the non-empty buckets as varint index
 * gaps and counts, then an XXH32 checksum: docs/metrics.md section 7). No product path calls it
 * yet: it is kept, tested and fuzzed for the sub-controller design of docs/architecture.md, which
 * would send merged histograms upward instead of records. Bytes histogram_write needs: */
size_t histogram_serialized_size(const histogram_t *self);
/* Writes the wire form into buf; returns the bytes written, or 0 when cap is too small. */
size_t histogram_write(const histogram_t *self, uint8_t *buf, size_t cap);
/* Replaces self's contents with the histogram encoded in buf. 0 ok; -1 when the bytes are not a
 * valid encoding (self is then left unchanged). */
int histogram_read(histogram_t *self, const uint8_t *buf, size_t len);

#endif
