/* What every fuzz target shares: the libFuzzer entry point they define, and FUZZ_CHECK, an
 * invariant that aborts with the file, line and condition (libFuzzer then saves the input as a
 * crash), kept in release builds where assert() would vanish. */
#ifndef STAMPEDE_FUZZ_H
#define STAMPEDE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs one input through the parser under test; returns 0 (libFuzzer's convention). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
