/* The histogram wire form (common/histogram.c) from both sides. The first byte picks the mode:
 * even, the rest is a wire body given its checksum (so the fuzzer gets past the XXH32 and into
 * the decoder); odd, the rest is values to record, whose wire form must read back equal. A
 * histogram that decodes is consistent (its buckets add up to its count, percentiles lie within
 * [min, max]) and writes back to bytes that decode to an equal one; bytes that do not decode leave
 * the histogram read into unchanged. */
#include <string.h>
#include <xxhash.h>

#include "fuzz.h"
#include "histogram.h"

/* Histograms kept across inputs (each is 270 KB: a new one per input would cost more than the
 * read); histogram_reset and histogram_read empty or replace them. */
enum {
    FUZZ_HISTOGRAM_READ,
    FUZZ_HISTOGRAM_BACK,
    FUZZ_HISTOGRAM_ALL,
    FUZZ_HISTOGRAM_HALF0,
    FUZZ_HISTOGRAM_HALF1,
    FUZZ_HISTOGRAM_COUNT
};
static histogram_t *fuzz_histograms[FUZZ_HISTOGRAM_COUNT];

static histogram_t *fuzz_histogram(int which) {
    if (!fuzz_histograms[which])
        fuzz_histograms[which] = histogram_new();
    FUZZ_CHECK(fuzz_histograms[which] != NULL);
    return fuzz_histograms[which];
}

/* The wire form's checksum, appended as the writer does (XXH32, seed 0, little-endian). */
static uint8_t *fuzz_histogram_with_checksum(const uint8_t *body, size_t len) {
    uint8_t *buf = malloc(len + 4);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, body, len);
    uint32_t sum = XXH32(body, len, 0);
    for (int i = 0; i < 4; i++)
        buf[len + i] = (uint8_t)(sum >> (8 * i));
    return buf;
}

static void fuzz_histogram_check_consistent(const histogram_t *h) {
    uint64_t total = 0, last_high = 0;
    histogram_iter_t it = HISTOGRAM_ITER_INIT;
    histogram_bucket_t b;
    bool first = true;
    while (histogram_next(h, &it, &b)) {
        FUZZ_CHECK(b.count > 0 && b.lowest_ns <= b.highest_ns);
        FUZZ_CHECK(first || b.lowest_ns > last_high);
        FUZZ_CHECK(!__builtin_add_overflow(total, b.count, &total));
        last_high = b.highest_ns;
        first = false;
    }
    FUZZ_CHECK(total == histogram_count(h));
    FUZZ_CHECK(histogram_clamped(h) <= histogram_count(h));
    FUZZ_CHECK(histogram_min(h) <= histogram_max(h));
    if (histogram_count(h) == 0)
        return;
    /* Each of these walks the buckets in use (up to 135,000): two keep the target fast. */
    uint64_t p50 = histogram_percentile(h, 50), p999 = histogram_percentile(h, 99.9);
    FUZZ_CHECK(histogram_min(h) <= p50 && p50 <= p999 && p999 <= histogram_max(h));
}

/* Writes h and reads it back into a histogram holding other values: both must be equal. */
static void fuzz_histogram_check_round_trip(const histogram_t *h) {
    size_t size = histogram_serialized_size(h);
    uint8_t *wire = malloc(size);
    FUZZ_CHECK(wire != NULL);
    size_t len = histogram_write(h, wire, size);
    FUZZ_CHECK(len == size);
    histogram_t *back = fuzz_histogram(FUZZ_HISTOGRAM_BACK);
    histogram_reset(back);
    histogram_record(back, 12345);
    FUZZ_CHECK(histogram_read(back, wire, len) == 0);
    FUZZ_CHECK(histogram_equal(h, back));
    FUZZ_CHECK(len < 1 || histogram_read(back, wire, len - 1) < 0);
    FUZZ_CHECK(histogram_equal(h, back)); /* a refused read changed nothing */
    free(wire);
}

static void fuzz_histogram_decode(const uint8_t *body, size_t len) {
    uint8_t *wire = fuzz_histogram_with_checksum(body, len);
    histogram_t *h = fuzz_histogram(FUZZ_HISTOGRAM_READ);
    int rc = histogram_read(h, wire, len + 4);
    free(wire);
    if (rc < 0)
        return;
    fuzz_histogram_check_consistent(h);
    fuzz_histogram_check_round_trip(h);
}

/* Values of up to 8 bytes each, shifted by a byte of the input so every magnitude is reached;
 * the two halves merged must equal the whole. */
static void fuzz_histogram_record(const uint8_t *bytes, size_t len) {
    histogram_t *all = fuzz_histogram(FUZZ_HISTOGRAM_ALL);
    histogram_t *half[2] = {fuzz_histogram(FUZZ_HISTOGRAM_HALF0),
                            fuzz_histogram(FUZZ_HISTOGRAM_HALF1)};
    histogram_reset(all);
    histogram_reset(half[0]);
    histogram_reset(half[1]);
    size_t n = 0;
    for (size_t at = 0; at + 9 <= len; at += 9, n++) {
        uint64_t v;
        memcpy(&v, bytes + at + 1, sizeof v);
        v >>= bytes[at] % 64;
        histogram_record(all, v);
        histogram_record_n(half[n % 2], v, 1);
    }
    histogram_merge(half[0], half[1]);
    FUZZ_CHECK(histogram_equal(all, half[0]));
    FUZZ_CHECK(histogram_count(all) == n);
    fuzz_histogram_check_consistent(all);
    fuzz_histogram_check_round_trip(all);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    if (data[0] % 2 == 0)
        fuzz_histogram_decode(data + 1, size - 1);
    else
        fuzz_histogram_record(data + 1, size - 1);
    /* The bytes as they came, checksum and all, must be refused or decode consistently. */
    histogram_t *h = fuzz_histogram(FUZZ_HISTOGRAM_READ);
    if (histogram_read(h, data, size) == 0)
        fuzz_histogram_check_consistent(h);
    return 0;
}
