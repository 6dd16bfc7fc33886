/* Decode overlap: the duration-weighted share of decode-active time (first token -> end of a
 * request) spent with at least k requests decoding at once, over the merged timelines of every
 * worker. Records arrive per worker in batches, not in global time order, so a streaming sweep
 * would be wrong: each request keeps its interval as two int64 (16 bytes per request, in two
 * growable arrays) and one sweep over the sorted endpoints runs at the end (O(n log n)). */
#ifndef STAMPEDE_OVERLAP_H
#define STAMPEDE_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct overlap overlap_t;

/* A new empty timeline; NULL on allocation failure. The caller destroys it. */
overlap_t *overlap_new(void);
/* Frees *self_p and sets it to NULL (NULL is fine). */
void overlap_destroy(overlap_t **self_p);
/* Counts one decode interval [start_ns, end_ns); an empty or reversed one is ignored. 0 ok, -1 on
 * allocation failure (the interval is then left out). */
int overlap_add(overlap_t *self, int64_t start_ns, int64_t end_ns);
/* Adds every interval of src to dst (src may have been swept: only the two event streams count,
 * not which start went with which end). Timelines that never overlap in time (a sweep level's
 * repetitions, run one after another) pool exactly: each one's stretches keep their level. 0 ok,
 * -1 on allocation failure (dst unchanged). */
int overlap_pool(overlap_t *dst, const overlap_t *src);
/* Sweeps the intervals: share[k - 1] = (time with >= k intervals open) / (time with >= 1 open),
 * for k = 1 .. the most open at once, which it returns (0 when no time was decode-active). *share
 * is malloc'd (the caller frees it; NULL when 0 is returned). -1 on allocation failure. */
long overlap_shares(overlap_t *self, double **share);

#endif
