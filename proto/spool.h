/* Spool and journal files: what a worker could not deliver while its controller was unreachable
 * (a spool), and every batch a controller acknowledged (its journal, written before the ack), so
 * that `stampede merge` can rebuild a run whose controller died. Both are one format: an 8-byte
 * magic, then frames of [u32 length][u32 XXH32 of the payload, seeded with the type][u8 type]
 * [payload], little-endian. The payload of a batch frame is the EventBatch envelope exactly as it
 * travelled; the others are the Spool* messages of proto/stampede.proto. Files are created 0640
 * (common/outfile.h); nothing secret goes in (the config is the redacted one). */
#ifndef STAMPEDE_SPOOL_H
#define STAMPEDE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stampede.pb-c.h"

#define SPOOL_MAGIC "STSPOOL1"
#define SPOOL_MAGIC_LEN 8
#define SPOOL_FRAME_HEADER 9
#define SPOOL_MAX_FRAME ((size_t)64 << 20) /* a longer frame is corruption */

typedef enum {
    SPOOL_FRAME_RUN = 'R',    /* Stampede__SpoolRun */
    SPOOL_FRAME_WORKER = 'W', /* Stampede__SpoolWorker */
    SPOOL_FRAME_BATCH = 'B',  /* an EventBatch Envelope */
    SPOOL_FRAME_END = 'E'     /* Stampede__SpoolEnd */
} spool_frame_type_t;

typedef struct spool_writer spool_writer_t;

/* Creates (truncates) path, 0640, and writes the magic; writes are buffered until
 * spool_writer_flush. NULL with the reason in err. */
spool_writer_t *spool_writer_open(const char *path, char *err, size_t errlen);
/* Appends one frame (buffered). 0, or -1 with errno set (the writer is then failed for good). */
int spool_write_frame(spool_writer_t *self, spool_frame_type_t type, const uint8_t *data,
                      size_t len);
int spool_write_run(spool_writer_t *self, const Stampede__SpoolRun *run);
int spool_write_worker(spool_writer_t *self, const Stampede__SpoolWorker *worker);
int spool_write_end(spool_writer_t *self, const Stampede__SpoolEnd *end);
/* Hands the buffered frames to the kernel (one write): they survive this process's death. 0, or
 * -1 with errno set. */
int spool_writer_flush(spool_writer_t *self);
/* Bytes written to the file so far (flushed or not). */
uint64_t spool_writer_bytes(const spool_writer_t *self);
/* Flushes and closes; -1 (errno set) when any write failed. NULL-safe. */
int spool_writer_close(spool_writer_t **self_p);

/* One frame read back; data is valid until the next spool_reader_next. */
typedef struct spool_frame {
    spool_frame_type_t type;
    const uint8_t *data;
    size_t len;
    uint64_t offset; /* of the frame's header in the file */
} spool_frame_t;

typedef struct spool_reader spool_reader_t;

/* Opens path and checks its magic. NULL with "PATH: reason" in err. */
spool_reader_t *spool_reader_open(const char *path, char *err, size_t errlen);
/* The next frame: 1, 0 at the end of the file, -1 with "PATH: offset N: reason" in err (a
 * checksum that does not match, an unknown type, a frame cut short). A frame cut short at the
 * very end is reported with *truncated set, so a journal whose writer was killed mid-write can be
 * read up to it. */
int spool_reader_next(spool_reader_t *self, spool_frame_t *out, bool *truncated, char *err,
                      size_t errlen);
void spool_reader_close(spool_reader_t **self_p);

#endif
