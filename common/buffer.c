#include "buffer.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buffer_init(buffer_t *self) {
    self->data = NULL;
    self->off = self->len = self->cap = 0;
}

void buffer_clear(buffer_t *self) {
    free(self->data);
    buffer_init(self);
}

int buffer_reserve(buffer_t *self, size_t n) {
    if (self->len + n <= self->cap)
        return 0;
    if (self->off > 0) {
        memmove(self->data, self->data + self->off, self->len - self->off);
        self->len -= self->off;
        self->off = 0;
        if (self->len + n <= self->cap)
            return 0;
    }
    size_t need = self->len + n;
    return buffer_grow_array(&self->data, &self->cap, need < 1024 ? 1024 : need, 1);
}

int buffer_append(buffer_t *self, const void *bytes, size_t n) {
    if (buffer_reserve(self, n) < 0)
        return -1;
    memcpy(self->data + self->len, bytes, n);
    self->len += n;
    return 0;
}

int buffer_appendf(buffer_t *self, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buffer_reserve(self, (size_t)n + 1) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(self->data + self->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    self->len += (size_t)n;
    return 0;
}

void buffer_consume(buffer_t *self, size_t n) {
    self->off += n;
    if (self->off >= self->len)
        self->off = self->len = 0;
}

int buffer_resize_array(void *items_p, size_t *cap, size_t new_cap, size_t item_size) {
    if (new_cap > SIZE_MAX / item_size)
        return -1;
    void *items;
    memcpy(&items, items_p, sizeof(items)); /* items_p points to a T *, not to a void * */
    char *grown = realloc(items, new_cap * item_size);
    if (!grown)
        return -1;
    if (new_cap > *cap)
        memset(grown + *cap * item_size, 0, (new_cap - *cap) * item_size);
    memcpy(items_p, &grown, sizeof(grown));
    *cap = new_cap;
    return 0;
}

int buffer_grow_array(void *items_p, size_t *cap, size_t need, size_t item_size) {
    if (need <= *cap)
        return 0;
    size_t grown_cap = *cap ? *cap : 16;
    while (grown_cap < need) {
        if (grown_cap > SIZE_MAX / 2)
            return -1;
        grown_cap *= 2;
    }
    return buffer_resize_array(items_p, cap, grown_cap, item_size);
}

int buffer_grow_pair(void *first_p, size_t first_size, void *second_p, size_t second_size,
                     size_t *cap, size_t need) {
    size_t first_cap = *cap, second_cap = *cap;
    if (buffer_grow_array(first_p, &first_cap, need, first_size) < 0 ||
        buffer_grow_array(second_p, &second_cap, need, second_size) < 0)
        return -1;
    *cap = first_cap;
    return 0;
}
