#include "overlap.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

struct overlap {
    int64_t *starts;
    int64_t *ends;
    size_t n, cap;
};

overlap_t *overlap_new(void) {
    return calloc(1, sizeof(overlap_t));
}

void overlap_destroy(overlap_t **self_p) {
    assert(self_p);
    overlap_t *self = *self_p;
    if (!self)
        return;
    free(self->starts);
    free(self->ends);
    free(self);
    *self_p = NULL;
}

int overlap_add(overlap_t *self, int64_t start_ns, int64_t end_ns) {
    if (end_ns <= start_ns)
        return 0;
    if (buffer_grow_pair(&self->starts, sizeof *self->starts, &self->ends, sizeof *self->ends,
                         &self->cap, self->n + 1) != 0)
        return -1;
    self->starts[self->n] = start_ns;
    self->ends[self->n] = end_ns;
    self->n++;
    return 0;
}

int overlap_pool(overlap_t *dst, const overlap_t *src) {
    if (src->n == 0)
        return 0;
    if (buffer_grow_pair(&dst->starts, sizeof *dst->starts, &dst->ends, sizeof *dst->ends,
                         &dst->cap, dst->n + src->n) != 0)
        return -1;
    memcpy(dst->starts + dst->n, src->starts, src->n * sizeof *src->starts);
    memcpy(dst->ends + dst->n, src->ends, src->n * sizeof *src->ends);
    dst->n += src->n;
    return 0;
}

static int overlap_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

long overlap_shares(overlap_t *self, double **share) {
    *share = NULL;
    if (self->n == 0)
        return 0;
    /* Sorted apart, the starts and the ends are two event streams merged in one pass: between two
     * consecutive events the number open is constant, and that stretch counts at that level. */
    qsort(self->starts, self->n, sizeof *self->starts, overlap_cmp);
    qsort(self->ends, self->n, sizeof *self->ends, overlap_cmp);
    uint64_t *at = calloc(self->n + 1, sizeof *at); /* at[c]: time with exactly c open */
    if (!at)
        return -1;
    size_t i = 0, j = 0, open = 0, most = 0;
    int64_t prev = self->starts[0];
    while (j < self->n) {
        bool start = i < self->n && self->starts[i] < self->ends[j];
        int64_t t = start ? self->starts[i] : self->ends[j];
        if (open)
            at[open] += (uint64_t)(t - prev);
        prev = t;
        if (start) {
            i++;
            if (++open > most)
                most = open;
        } else {
            j++;
            open--;
        }
    }
    uint64_t active = 0;
    for (size_t c = 1; c <= most; c++)
        active += at[c];
    double *out = active ? malloc(most * sizeof *out) : NULL;
    if (active && !out) {
        free(at);
        return -1;
    }
    uint64_t at_least = active;
    for (size_t k = 1; active && k <= most; k++) {
        out[k - 1] = (double)at_least / (double)active;
        at_least -= at[k];
    }
    free(at);
    *share = out;
    return active ? (long)most : 0;
}
