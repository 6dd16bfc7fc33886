#include "memtrim.h"

#include <limits.h>
#include <stdlib.h> /* defines __GLIBC__ on glibc */
#ifdef __GLIBC__
#include <malloc.h>
#endif

bool memtrim_map_large(size_t min_bytes) {
#ifdef __GLIBC__
    return min_bytes <= INT_MAX && mallopt(M_MMAP_THRESHOLD, (int)min_bytes) == 1;
#else
    (void)min_bytes;
    return false;
#endif
}

bool memtrim_release(void) {
#ifdef __GLIBC__
    return malloc_trim(0) != 0;
#else
    return false;
#endif
}
