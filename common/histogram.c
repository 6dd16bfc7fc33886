/* HdrHistogram's bucket indexing (unit 1 ns, 3 significant digits, highest 1 hour), written from
 * the published algorithm: bucket b holds 1024 sub-buckets of width 2^b above 2^(b+10), and bucket
 * 0 also holds the exact values 0..1023. Keeping the same indexing keeps the door open to the HDR
 * V2 log format. */
#include "histogram.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "varint.h"

#define SUB_BUCKET_HALF_MAGNITUDE 10
#define SUB_BUCKET_HALF_COUNT (1u << SUB_BUCKET_HALF_MAGNITUDE)
#define SUB_BUCKET_MASK ((uint64_t)(2 * SUB_BUCKET_HALF_COUNT - 1))
/* Smallest n with 2048 << (n - 1) > HISTOGRAM_MAX_NS. */
#define BUCKET_COUNT 32
#define COUNTS_LEN ((BUCKET_COUNT + 1) * SUB_BUCKET_HALF_COUNT)
#define WIRE_VERSION 1
#define CHECKSUM_BYTES 4

struct histogram {
    uint64_t count;
    uint64_t sum;
    uint64_t min; /* UINT64_MAX when empty */
    uint64_t max;
    uint64_t clamped;
    uint64_t counts[COUNTS_LEN];
};

static inline uint32_t index_of(uint64_t value) {
    if (value > HISTOGRAM_MAX_NS)
        value = HISTOGRAM_MAX_NS;
    uint32_t bucket =
        64 - __builtin_clzll(value | SUB_BUCKET_MASK) - (SUB_BUCKET_HALF_MAGNITUDE + 1);
    uint32_t sub_bucket = (uint32_t)(value >> bucket);
    return ((bucket + 1) << SUB_BUCKET_HALF_MAGNITUDE) + sub_bucket - SUB_BUCKET_HALF_COUNT;
}

static inline uint64_t lowest_of(uint32_t index, uint64_t *width) {
    int bucket = (int)(index >> SUB_BUCKET_HALF_MAGNITUDE) - 1;
    uint64_t sub_bucket = (index & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
    if (bucket < 0) {
        sub_bucket -= SUB_BUCKET_HALF_COUNT;
        bucket = 0;
    }
    *width = 1ULL << bucket;
    return sub_bucket << bucket;
}

histogram_t *histogram_new(void) {
    histogram_t *self = calloc(1, sizeof *self);
    if (self)
        self->min = UINT64_MAX;
    return self;
}

void histogram_destroy(histogram_t **self_p) {
    assert(self_p);
    free(*self_p);
    *self_p = NULL;
}

void histogram_reset(histogram_t *self) {
    if (self->count > 0) {
        uint32_t lo = index_of(self->min), hi = index_of(self->max);
        memset(&self->counts[lo], 0, (hi - lo + 1) * sizeof self->counts[0]);
    }
    self->count = self->sum = self->max = self->clamped = 0;
    self->min = UINT64_MAX;
}

void histogram_record_n(histogram_t *self, uint64_t value_ns, uint64_t n) {
    if (n == 0)
        return;
    self->counts[index_of(value_ns)] += n;
    self->count += n;
    self->sum += value_ns * n;
    if (value_ns < self->min)
        self->min = value_ns;
    if (value_ns > self->max)
        self->max = value_ns;
    if (value_ns > HISTOGRAM_MAX_NS)
        self->clamped += n;
}

void histogram_record(histogram_t *self, uint64_t value_ns) {
    histogram_record_n(self, value_ns, 1);
}

void histogram_merge(histogram_t *dst, const histogram_t *src) {
    if (src->count == 0)
        return;
    uint32_t lo = index_of(src->min), hi = index_of(src->max);
    for (uint32_t i = lo; i <= hi; i++)
        dst->counts[i] += src->counts[i];
    dst->count += src->count;
    dst->sum += src->sum;
    dst->clamped += src->clamped;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t histogram_count(const histogram_t *self) {
    return self->count;
}

uint64_t histogram_min(const histogram_t *self) {
    return self->count ? self->min : 0;
}

uint64_t histogram_max(const histogram_t *self) {
    return self->max;
}

double histogram_mean(const histogram_t *self) {
    return self->count ? (double)self->sum / (double)self->count : 0.0;
}

uint64_t histogram_clamped(const histogram_t *self) {
    return self->clamped;
}

uint64_t histogram_percentile(const histogram_t *self, double p) {
    if (self->count == 0)
        return 0;
    if (!(p > 0.0))
        return self->min;
    if (p >= 100.0)
        return self->max;
    /* ceil(p% of count), shaved so that e.g. 90 % of 10 is 9 and not 9.000000000000002 -> 10 */
    double exact = p / 100.0 * (double)self->count;
    uint64_t target = (uint64_t)ceil(exact - exact * 1e-12);
    if (target < 1)
        target = 1;
    uint64_t cumulative = 0;
    uint32_t hi = index_of(self->max);
    for (uint32_t i = index_of(self->min); i <= hi; i++) {
        cumulative += self->counts[i];
        if (cumulative >= target) {
            uint64_t width, value = lowest_of(i, &width);
            value += width / 2;
            if (value < self->min)
                value = self->min;
            if (value > self->max)
                value = self->max;
            return value;
        }
    }
    return self->max;
}

uint64_t histogram_count_at_or_below(const histogram_t *self, uint64_t value_ns) {
    if (self->count == 0 || value_ns < self->min)
        return 0;
    if (value_ns >= self->max)
        return self->count;
    uint64_t cumulative = 0;
    uint32_t hi = index_of(value_ns);
    for (uint32_t i = index_of(self->min); i <= hi; i++)
        cumulative += self->counts[i];
    return cumulative;
}

bool histogram_next(const histogram_t *self, histogram_iter_t *iter, histogram_bucket_t *out) {
    if (self->count == 0)
        return false;
    uint32_t i = iter->index, lo = index_of(self->min), hi = index_of(self->max);
    if (i < lo)
        i = lo;
    for (; i <= hi; i++) {
        if (self->counts[i] == 0)
            continue;
        uint64_t width;
        out->lowest_ns = lowest_of(i, &width);
        out->highest_ns = out->lowest_ns + width - 1;
        out->count = self->counts[i];
        iter->index = i + 1;
        return true;
    }
    iter->index = hi + 1;
    return false;
}

bool histogram_equal(const histogram_t *a, const histogram_t *b) {
    if (a->count != b->count || a->sum != b->sum || a->clamped != b->clamped || a->max != b->max ||
        histogram_min(a) != histogram_min(b))
        return false;
    if (a->count == 0)
        return true;
    uint32_t lo = index_of(a->min), hi = index_of(a->max);
    return memcmp(&a->counts[lo], &b->counts[lo], (hi - lo + 1) * sizeof a->counts[0]) == 0;
}

/* The wire form ends with the XXH32 of everything before it, little-endian, so that corrupt bytes
 * are refused even where they would still decode to a plausible histogram. */
static void put_checksum(uint8_t *buf, size_t body) {
    uint32_t sum = XXH32(buf, body, 0);
    for (int i = 0; i < CHECKSUM_BYTES; i++)
        buf[body + i] = (uint8_t)(sum >> (8 * i));
}

static bool checksum_valid(const uint8_t *buf, size_t len) {
    if (len < CHECKSUM_BYTES)
        return false;
    uint32_t sum = XXH32(buf, len - CHECKSUM_BYTES, 0), stored = 0;
    for (int i = 0; i < CHECKSUM_BYTES; i++)
        stored |= (uint32_t)buf[len - CHECKSUM_BYTES + i] << (8 * i);
    return sum == stored;
}

/* Walks the non-empty buckets in order for the wire form: index gaps (the first from 0) and
 * counts. With out == NULL it only measures; returns the size of that part and sets *buckets. */
static size_t write_buckets(const histogram_t *self, uint8_t *out, uint64_t *buckets) {
    size_t size = 0;
    *buckets = 0;
    if (self->count == 0)
        return 0;
    uint32_t previous = 0, hi = index_of(self->max);
    for (uint32_t i = index_of(self->min); i <= hi; i++) {
        if (self->counts[i] == 0)
            continue;
        size += varint_size(i - previous) + varint_size(self->counts[i]);
        if (out) {
            out += varint_put(out, i - previous);
            out += varint_put(out, self->counts[i]);
        }
        previous = i;
        ++*buckets;
    }
    return size;
}

size_t histogram_serialized_size(const histogram_t *self) {
    uint64_t buckets;
    size_t size = write_buckets(self, NULL, &buckets);
    return size + 1 + varint_size(self->count) + varint_size(self->clamped) +
           varint_size(histogram_min(self)) + varint_size(self->max) + varint_size(self->sum) +
           varint_size(buckets) + CHECKSUM_BYTES;
}

size_t histogram_write(const histogram_t *self, uint8_t *buf, size_t cap) {
    size_t size = histogram_serialized_size(self);
    if (size > cap)
        return 0;
    uint64_t buckets;
    write_buckets(self, NULL, &buckets);
    uint8_t *p = buf;
    *p++ = WIRE_VERSION;
    p += varint_put(p, self->count);
    p += varint_put(p, self->clamped);
    p += varint_put(p, histogram_min(self));
    p += varint_put(p, self->max);
    p += varint_put(p, self->sum);
    p += varint_put(p, buckets);
    write_buckets(self, p, &buckets);
    put_checksum(buf, size - CHECKSUM_BYTES);
    return size;
}

typedef struct wire_header {
    uint64_t count, clamped, min, max, sum, buckets;
} wire_header_t;

static bool header_valid(const wire_header_t *h) {
    if (h->count == 0)
        return h->clamped == 0 && h->min == 0 && h->max == 0 && h->sum == 0 && h->buckets == 0;
    if (h->min > h->max || h->clamped > h->count || h->buckets == 0 || h->buckets > COUNTS_LEN)
        return false;
    if ((h->max > HISTOGRAM_MAX_NS) != (h->clamped > 0))
        return false;
    if (h->min > HISTOGRAM_MAX_NS && h->clamped != h->count)
        return false;
    /* The true sum lies in [count * min, count * max]; the wire carries it modulo 2^64 (the sum
     * wraps, as histogram.h says), so the smallest true sum it can stand for must not pass high.
     */
    const unsigned __int128 wrap = (unsigned __int128)1 << 64;
    unsigned __int128 low = (unsigned __int128)h->count * h->min;
    unsigned __int128 high = (unsigned __int128)h->count * h->max;
    unsigned __int128 sum = h->sum;
    if (sum < low)
        sum += (low - sum + wrap - 1) / wrap * wrap;
    return sum <= high;
}

/* Checks buf is one valid encoding; when into is given (and only then) stores it there. */
static int decode(const uint8_t *buf, size_t len, histogram_t *into) {
    if (!checksum_valid(buf, len))
        return -1;
    const uint8_t *p = buf, *end = buf + len - CHECKSUM_BYTES;
    wire_header_t h;
    if (p >= end || *p++ != WIRE_VERSION)
        return -1;
    if (!varint_get(&p, end, &h.count) || !varint_get(&p, end, &h.clamped) ||
        !varint_get(&p, end, &h.min) || !varint_get(&p, end, &h.max) ||
        !varint_get(&p, end, &h.sum) || !varint_get(&p, end, &h.buckets) || !header_valid(&h))
        return -1;
    uint64_t index = 0, total = 0, count = 0;
    for (uint64_t b = 0; b < h.buckets; b++) {
        uint64_t delta;
        if (!varint_get(&p, end, &delta) || !varint_get(&p, end, &count) || count == 0)
            return -1;
        if ((b > 0 && delta == 0) || delta >= COUNTS_LEN || index + delta >= COUNTS_LEN)
            return -1;
        index += delta;
        if (b == 0 && index != index_of(h.min))
            return -1;
        if (__builtin_add_overflow(total, count, &total))
            return -1;
        if (into)
            into->counts[index] = count;
    }
    if (p != end || total != h.count || (h.count > 0 && index != index_of(h.max)))
        return -1;
    if (count < h.clamped) /* clamped values all sit in the top bucket, the last one */
        return -1;
    if (into) {
        into->count = h.count;
        into->clamped = h.clamped;
        into->min = h.count ? h.min : UINT64_MAX;
        into->max = h.max;
        into->sum = h.sum;
    }
    return 0;
}

int histogram_read(histogram_t *self, const uint8_t *buf, size_t len) {
    if (decode(buf, len, NULL) != 0)
        return -1;
    histogram_reset(self);
    return decode(buf, len, self);
}
