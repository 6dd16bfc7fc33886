/* Unsigned LEB128 varints, the integers of protobuf's wire format and of the histogram wire form:
 * 7 bits per byte, low bits first, the high bit set on every byte but the last. Header-only: the
 * worker packs batches and the histograms with them on the hot path. */
#ifndef STAMPEDE_VARINT_H
#define STAMPEDE_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest varint of a 64-bit value. */
#define VARINT_MAX_BYTES 10

/* Bytes v takes as a varint (1 to VARINT_MAX_BYTES). */
static inline size_t varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes v at p (varint_size(v) bytes of room); returns the bytes written. */
static inline size_t varint_put(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads one varint from *p (advanced past it), never past end; false on truncation or a value that
 * does not fit 64 bits. */
static inline bool varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0; i < VARINT_MAX_BYTES; i++) {
        if (*p >= end)
            return false;
        uint8_t byte = *(*p)++;
        if (i == VARINT_MAX_BYTES - 1 && byte > 1)
            return false;
        v |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

#endif
