#include "session_alloc.h"

#include <stdio.h>
#include <stdlib.h>

#include "buffer.h"

void session_alloc_die(const char *what) {
    fprintf(stderr, "stampede: session executor: %s\n", what);
    abort();
}

/* The executor cannot go on without its runs and requests: no memory is fatal. */
void *session_alloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p)
        session_alloc_die("out of memory");
    return p;
}

void session_alloc_grow(void *array, size_t *cap, size_t need, size_t size) {
    if (buffer_grow_array(array, cap, need, size) < 0)
        session_alloc_die("out of memory");
}
