/* Keeps a long-running process's resident set at what it has in use.
 *
 * glibc returns memory to the kernel only from the top of an arena: a free block in the middle
 * keeps every page it was ever written through, and the next block placed there inherits them. A
 * worker frees and allocates 64 KiB blocks all the time (libcurl 7.x allocates each transfer's
 * 64 KiB upload buffer at its start and frees it at its end; a batch buffer beyond
 * the spares) and writes only the first pages of most, but the whole of some (a batch that
 * grows). As requests end at uneven times (faults, retries),
 * each new buffer lands on pages some earlier one wrote through, so the resident set creeps up
 * towards the heap's whole size (hundreds of MiB at 2,000 streams) while the memory in use stays
 * flat. Giving such blocks their own mapping ends that: the kernel hands each one fresh pages
 * and takes them all back at free. */
#ifndef STAMPEDE_MEMTRIM_H
#define STAMPEDE_MEMTRIM_H

#include <stdbool.h>
#include <stddef.h>

/* Blocks of at least min_bytes get their own mapping from now on (glibc's M_MMAP_THRESHOLD, which
 * also stops glibc from raising that threshold by itself); true when set. Elsewhere a no-op
 * returning false. */
bool memtrim_map_large(size_t min_bytes);

/* malloc_trim(0) on glibc: the free pages inside every arena go back to the kernel; true when
 * some did. Elsewhere a no-op returning false. */
bool memtrim_release(void);

#endif
