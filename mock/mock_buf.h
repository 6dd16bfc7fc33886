/* A growable byte buffer with a read offset: a connection's pending input or output, or a
 * rendered /metrics page. Allocated once and reused; it only grows. */
#ifndef STAMPEDE_MOCK_BUF_H
#define STAMPEDE_MOCK_BUF_H

#include <stddef.h>

typedef struct mock_buf {
    char *data; /* owned */
    size_t off; /* consumed bytes at the front */
    size_t len; /* bytes stored, including the consumed ones */
    size_t cap;
} mock_buf_t;

/* Initialises an empty buffer (no allocation). */
void mock_buf_init(mock_buf_t *self);
/* Frees the storage. */
void mock_buf_clear(mock_buf_t *self);
/* Makes room for n more bytes at data + len (compacting consumed bytes first). 0 or -1. */
int mock_buf_reserve(mock_buf_t *self, size_t n);
/* Appends n bytes. 0 or -1 on allocation failure. */
int mock_buf_append(mock_buf_t *self, const void *bytes, size_t n);
/* Appends printf-formatted text. 0 or -1. */
int mock_buf_appendf(mock_buf_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks n bytes at the front as consumed; resets to empty when everything is. */
void mock_buf_consume(mock_buf_t *self, size_t n);
/* Unconsumed bytes. */
static inline size_t mock_buf_pending(const mock_buf_t *self) {
    return self->len - self->off;
}
/* The first unconsumed byte. */
static inline char *mock_buf_head(const mock_buf_t *self) {
    return self->data + self->off;
}

#endif
