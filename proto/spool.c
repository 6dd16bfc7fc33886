#include "spool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "buffer.h"
#include "outfile.h"

#define SPOOL_WRITE_BUFFER ((size_t)1 << 20)

struct spool_writer {
    FILE *f;
    uint64_t bytes;
    bool failed;
    uint8_t *scratch; /* packing buffer of the Spool* messages */
    size_t scratch_cap;
};

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t checksum(spool_frame_type_t type, const uint8_t *data, size_t len) {
    return XXH32(data, len, (uint32_t)type);
}

spool_writer_t *spool_writer_open(const char *path, char *err, size_t errlen) {
    spool_writer_t *self = calloc(1, sizeof *self);
    if (!self) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    self->f = outfile_fopen(path);
    if (!self->f) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        free(self);
        return NULL;
    }
    setvbuf(self->f, NULL, _IOFBF, SPOOL_WRITE_BUFFER);
    if (fwrite(SPOOL_MAGIC, 1, SPOOL_MAGIC_LEN, self->f) != SPOOL_MAGIC_LEN) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        fclose(self->f);
        free(self);
        return NULL;
    }
    self->bytes = SPOOL_MAGIC_LEN;
    return self;
}

int spool_write_frame(spool_writer_t *self, spool_frame_type_t type, const uint8_t *data,
                      size_t len) {
    if (self->failed || len > SPOOL_MAX_FRAME) {
        errno = self->failed ? EIO : EMSGSIZE;
        return -1;
    }
    uint8_t head[SPOOL_FRAME_HEADER];
    put_u32(head, (uint32_t)len);
    put_u32(head + 4, checksum(type, data, len));
    head[8] = (uint8_t)type;
    if (fwrite(head, 1, sizeof head, self->f) != sizeof head ||
        (len && fwrite(data, 1, len, self->f) != len)) {
        self->failed = true;
        return -1;
    }
    self->bytes += sizeof head + len;
    return 0;
}

/* Packs msg (any Spool* message) into the scratch buffer and writes it as a frame of type. */
static int write_message(spool_writer_t *self, spool_frame_type_t type,
                         const ProtobufCMessage *msg) {
    size_t len = protobuf_c_message_get_packed_size(msg);
    if (buffer_grow_array(&self->scratch, &self->scratch_cap, len ? len : 1, 1) < 0) {
        errno = ENOMEM;
        return -1;
    }
    protobuf_c_message_pack(msg, self->scratch);
    return spool_write_frame(self, type, self->scratch, len);
}

int spool_write_run(spool_writer_t *self, const Stampede__SpoolRun *run) {
    return write_message(self, SPOOL_FRAME_RUN, &run->base);
}

int spool_write_worker(spool_writer_t *self, const Stampede__SpoolWorker *worker) {
    return write_message(self, SPOOL_FRAME_WORKER, &worker->base);
}

int spool_write_end(spool_writer_t *self, const Stampede__SpoolEnd *end) {
    return write_message(self, SPOOL_FRAME_END, &end->base);
}

int spool_writer_flush(spool_writer_t *self) {
    if (self->failed) {
        errno = EIO;
        return -1;
    }
    if (fflush(self->f) != 0) {
        self->failed = true;
        return -1;
    }
    return 0;
}

uint64_t spool_writer_bytes(const spool_writer_t *self) {
    return self->bytes;
}

int spool_writer_close(spool_writer_t **self_p) {
    spool_writer_t *self = *self_p;
    if (!self)
        return 0;
    int rc = self->failed ? -1 : 0;
    int saved = EIO;
    if (fflush(self->f) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (fclose(self->f) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    free(self->scratch);
    free(self);
    *self_p = NULL;
    if (rc)
        errno = saved;
    return rc;
}

struct spool_reader {
    FILE *f;
    char *path;
    uint64_t offset;
    uint8_t *buf;
    size_t cap;
};

spool_reader_t *spool_reader_open(const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char magic[SPOOL_MAGIC_LEN];
    if (fread(magic, 1, sizeof magic, f) != sizeof magic ||
        memcmp(magic, SPOOL_MAGIC, SPOOL_MAGIC_LEN) != 0) {
        snprintf(err, errlen, "%s: offset 0: not a stampede spool or journal (no %s header)", path,
                 SPOOL_MAGIC);
        fclose(f);
        return NULL;
    }
    spool_reader_t *self = calloc(1, sizeof *self);
    if (!self || !(self->path = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        free(self);
        fclose(f);
        return NULL;
    }
    self->f = f;
    self->offset = SPOOL_MAGIC_LEN;
    return self;
}

int spool_reader_next(spool_reader_t *self, spool_frame_t *out, bool *truncated, char *err,
                      size_t errlen) {
    *truncated = false;
    uint8_t head[SPOOL_FRAME_HEADER];
    size_t got = fread(head, 1, sizeof head, self->f);
    if (got == 0 && feof(self->f))
        return 0;
    if (got != sizeof head) {
        *truncated = true;
        snprintf(err, errlen,
                 "%s: offset %" PRIu64 ": the file ends inside a frame header (%zu of %d bytes)",
                 self->path, self->offset, got, SPOOL_FRAME_HEADER);
        return -1;
    }
    uint32_t len = get_u32(head), sum = get_u32(head + 4);
    spool_frame_type_t type = (spool_frame_type_t)head[8];
    if (type != SPOOL_FRAME_RUN && type != SPOOL_FRAME_WORKER && type != SPOOL_FRAME_BATCH &&
        type != SPOOL_FRAME_END) {
        snprintf(err, errlen, "%s: offset %" PRIu64 ": corrupt: unknown frame type 0x%02x",
                 self->path, self->offset, head[8]);
        return -1;
    }
    if (len > SPOOL_MAX_FRAME) {
        snprintf(err, errlen, "%s: offset %" PRIu64 ": corrupt: a frame of %" PRIu32 " bytes",
                 self->path, self->offset, len);
        return -1;
    }
    if (buffer_grow_array(&self->buf, &self->cap, len ? len : 1, 1) < 0) {
        snprintf(err, errlen,
                 "%s: offset %" PRIu64 ": out of memory for a frame of %" PRIu32 " bytes",
                 self->path, self->offset, len);
        return -1;
    }
    got = len ? fread(self->buf, 1, len, self->f) : 0;
    if (got != len) {
        *truncated = true;
        snprintf(err, errlen,
                 "%s: offset %" PRIu64
                 ": truncated: the file ends %zu bytes into a frame of %" PRIu32,
                 self->path, self->offset, got, len);
        return -1;
    }
    if (checksum(type, self->buf, len) != sum) {
        snprintf(err, errlen,
                 "%s: offset %" PRIu64 ": corrupt: the frame's checksum does not match", self->path,
                 self->offset);
        return -1;
    }
    *out = (spool_frame_t){.type = type, .data = self->buf, .len = len, .offset = self->offset};
    self->offset += sizeof head + len;
    return 1;
}

void spool_reader_close(spool_reader_t **self_p) {
    spool_reader_t *self = *self_p;
    if (!self)
        return;
    fclose(self->f);
    free(self->path);
    free(self->buf);
    free(self);
    *self_p = NULL;
}
