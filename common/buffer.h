/* Growable memory, the one way stampede grows it: a byte buffer with a read offset (a
 * connection's pending input or output, a rendered page), and a doubling array grower for
 * tables of any element type. Both are allocated once and reused; they only grow. */
#ifndef STAMPEDE_BUFFER_H
#define STAMPEDE_BUFFER_H

#include <stddef.h>

typedef struct buffer {
    char *data; /* owned */
    size_t off; /* consumed bytes at the front */
    size_t len; /* bytes stored, including the consumed ones */
    size_t cap;
} buffer_t;

/* Initialises an empty buffer (no allocation). */
void buffer_init(buffer_t *self);
/* Frees the storage and leaves the buffer empty. */
void buffer_clear(buffer_t *self);
/* Forgets the contents, keeping the storage. */
static inline void buffer_reset(buffer_t *self) {
    self->off = self->len = 0;
}
/* Makes room for n more bytes at data + len (compacting consumed bytes first). 0 or -1. */
int buffer_reserve(buffer_t *self, size_t n);
/* Appends n bytes. 0 or -1 on allocation failure. */
int buffer_append(buffer_t *self, const void *bytes, size_t n);
/* Appends printf-formatted text (data + len stays NUL-terminated). 0 or -1. */
int buffer_appendf(buffer_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks n bytes at the front as consumed; resets to empty when everything is. */
void buffer_consume(buffer_t *self, size_t n);
/* Unconsumed bytes. */
static inline size_t buffer_pending(const buffer_t *self) {
    return self->len - self->off;
}
/* The first unconsumed byte. */
static inline char *buffer_head(const buffer_t *self) {
    return self->data + self->off;
}

/* Grows the array *items_p (a pointer to a T *, *cap elements of item_size bytes) to hold at
 * least need elements, doubling from 16; the new elements are zeroed. On failure (-1) the
 * array and *cap are unchanged. 0 when it already fits. */
int buffer_grow_array(void *items_p, size_t *cap, size_t need, size_t item_size);
/* Sets the array *items_p to exactly new_cap elements (at least 1), for a caller that knows the
 * size it needs; new elements are zeroed. On failure (-1) the array and *cap are unchanged. */
int buffer_resize_array(void *items_p, size_t *cap, size_t new_cap, size_t item_size);
/* Grows two parallel arrays that share one capacity *cap, as buffer_grow_array does each. On
 * failure (-1) *cap is unchanged (the first array may be larger than it says, which is harmless).
 */
int buffer_grow_pair(void *first_p, size_t first_size, void *second_p, size_t second_size,
                     size_t *cap, size_t need);

#endif
