/* What the targets of file loaders share (fuzz_dataset, fuzz_trace_load): the input written to a
 * file the loader opens by path, the checks on a refusal, and what a single worker is sent of
 * what was loaded. Header-only (static functions) because each target is a program of its own;
 * the including file defines _GNU_SOURCE first (memfd_create). */
#ifndef STAMPEDE_FUZZ_FILE_H
#define STAMPEDE_FUZZ_FILE_H

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buffer.h"
#include "config.h"
#include "fuzz.h"
#include "plan.h"
#include "trace.h"
#include "trace_wire.h"

/* Writes the input to one memfd reused by every input; its /proc path. */
static inline const char *fuzz_file_write(const uint8_t *data, size_t size) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz_file", 0);
        FUZZ_CHECK(fd >= 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0);
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
    return path;
}

/* A refusal of the file of size bytes at path names the file, a line of it (0: the whole file)
 * and a reason. */
static inline void fuzz_file_check_refusal(const config_error_t *err, const char *path,
                                           const uint8_t *data, size_t size) {
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    FUZZ_CHECK(strcmp(err->file, path) == 0);
    FUZZ_CHECK(err->line >= 0 && (size_t)err->line <= lines);
    FUZZ_CHECK(err->message[0] != '\0');
}

/* What the controller sends a single worker of cfg's replay, decoded (the caller unrefs it); NULL
 * when the plan gives that worker nothing. */
static inline trace_t *fuzz_file_worker_part(const config_t *cfg) {
    plan_share_t share;
    if (plan_share_for(cfg, 1, 0, &share) != 0)
        return NULL;
    buffer_t part;
    buffer_init(&part);
    FUZZ_CHECK(trace_wire_encode(cfg, &share, &part) == 0);
    trace_t *back = trace_wire_decode((const uint8_t *)part.data, part.len);
    buffer_clear(&part);
    FUZZ_CHECK(back != NULL);
    return back;
}

#endif
