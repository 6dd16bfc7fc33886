/* The session executor's one fatal path: a broken invariant or no memory ends the worker, so the
 * executor's stages never return half-built state. */
#ifndef STAMPEDE_SESSION_ALLOC_H
#define STAMPEDE_SESSION_ALLOC_H

#include <stddef.h>

/* Prints what went wrong (a broken invariant or no memory) and aborts. */
void session_alloc_die(const char *what) __attribute__((noreturn));
/* n zeroed bytes, or dies when memory is short; never returns NULL. */
void *session_alloc(size_t n);
/* Grows *array (of *cap elements of size bytes) to hold at least need, or dies. */
void session_alloc_grow(void *array, size_t *cap, size_t need, size_t size);

#endif
