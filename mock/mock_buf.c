#include "mock_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mock_buf_init(mock_buf_t *self) {
    self->data = NULL;
    self->off = self->len = self->cap = 0;
}

void mock_buf_clear(mock_buf_t *self) {
    free(self->data);
    mock_buf_init(self);
}

int mock_buf_reserve(mock_buf_t *self, size_t n) {
    if (self->len + n <= self->cap)
        return 0;
    if (self->off > 0) {
        memmove(self->data, self->data + self->off, self->len - self->off);
        self->len -= self->off;
        self->off = 0;
        if (self->len + n <= self->cap)
            return 0;
    }
    size_t cap = self->cap ? self->cap : 1024;
    while (cap < self->len + n)
        cap *= 2;
    char *data = realloc(self->data, cap);
    if (!data)
        return -1;
    self->data = data;
    self->cap = cap;
    return 0;
}

int mock_buf_append(mock_buf_t *self, const void *bytes, size_t n) {
    if (mock_buf_reserve(self, n) < 0)
        return -1;
    memcpy(self->data + self->len, bytes, n);
    self->len += n;
    return 0;
}

int mock_buf_appendf(mock_buf_t *self, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || mock_buf_reserve(self, (size_t)n + 1) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(self->data + self->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    self->len += (size_t)n;
    return 0;
}

void mock_buf_consume(mock_buf_t *self, size_t n) {
    self->off += n;
    if (self->off >= self->len)
        self->off = self->len = 0;
}
