/* Writing the --trace file off the controller's loop: the loop formats each line and hands it to
 * a bounded queue; one thread opens the file and writes. A slow disk, a full pipe or a FIFO that
 * nobody reads stalls only that thread: a line that does not fit the queue is dropped and
 * counted, so heartbeats and ingest never wait for the disk. */
#ifndef STAMPEDE_TRACE_WRITER_H
#define STAMPEDE_TRACE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct trace_writer trace_writer_t;

/* What became of the lines handed to a writer. */
typedef struct trace_writer_stats {
    uint64_t lines_written;
    uint64_t lines_dropped; /* the queue was full, or still held them when the writer gave up */
    int error;              /* errno of the first open or write failure, 0 none */
} trace_writer_stats_t;

/* Starts the thread that opens (truncates) path and writes what is pushed; queue_bytes bounds
 * the lines waiting. NULL with errno set when the thread cannot start. */
trace_writer_t *trace_writer_new(const char *path, size_t queue_bytes);
/* Queues a copy of line (len bytes, newline included) without ever waiting for the disk. False
 * when it was dropped (queue full, no memory, or the writer failed). */
bool trace_writer_push(trace_writer_t *self, const char *line, size_t len);
/* Lines dropped so far. */
uint64_t trace_writer_dropped(trace_writer_t *self);
/* errno of the first open or write failure so far, 0 none. */
int trace_writer_error(trace_writer_t *self);
/* Lets the thread write what is queued while it makes progress, gives up after stall_ms without
 * any (the lines left count as dropped), stops it and frees. Fills stats when not NULL, sets
 * *self_p to NULL (NULL is fine). 0 when every line was written, -1 otherwise. */
int trace_writer_close(trace_writer_t **self_p, long stall_ms, trace_writer_stats_t *stats);

#endif
