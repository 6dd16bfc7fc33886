/* What the targets of file loaders share (fuzz_dataset, fuzz_trace_load): the input written to a
 * file the loader opens by path and the checks on a refusal, what a single worker is sent of what
 * was loaded, and the first sessions generated from it. Header-only (static functions) because each
 * target is a program of its own; the including file defines _GNU_SOURCE first (memfd_create). */
#ifndef STAMPEDE_FUZZ_FILE_H
#define STAMPEDE_FUZZ_FILE_H

#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buffer.h"
#include "config.h"
#include "fuzz.h"
#include "plan.h"
#include "trace.h"
#include "trace_wire.h"
#include "workload.h"

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

/* Loads the input as a file: its first byte is the mode, the rest the file's bytes. configure
 * fills cfg (initialised here) for the mode and the file at path; load reads the file. True with
 * cfg loaded (the caller frees it); false when the input is empty or refused: a refusal names the
 * file, a line of it (0: the whole file) and a reason, and cfg is freed. */
static inline bool fuzz_file_load(config_t *cfg, const uint8_t *data, size_t size,
                                  void (*configure)(config_t *cfg, uint8_t mode, const char *path),
                                  int (*load)(config_t *cfg, config_error_t *err)) {
    if (size < 1)
        return false;
    const char *path = fuzz_file_write(data + 1, size - 1);
    config_init(cfg);
    configure(cfg, data[0], path);
    config_error_t err;
    if (load(cfg, &err) == 0)
        return true;
    size_t lines = 1;
    for (size_t i = 1; i < size; i++)
        lines += data[i] == '\n';
    FUZZ_CHECK(strcmp(err.file, path) == 0);
    FUZZ_CHECK(err.line >= 0 && (size_t)err.line <= lines);
    FUZZ_CHECK(err.message[0] != '\0');
    config_free(cfg);
    return false;
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

/* Every one of the first four sessions generates, with as many nodes as the trace gives it;
 * check (optional) looks further at each. */
static inline void fuzz_file_generate(const config_t *cfg,
                                      void (*check)(const config_t *cfg, uint64_t index,
                                                    const workload_session_t *s)) {
    const trace_t *t = cfg->workload.replay;
    for (uint64_t i = 0; i < t->n_sessions && i < 4; i++) {
        workload_session_t s = {0};
        FUZZ_CHECK(workload_session_generate(cfg, i, &s) == 0);
        FUZZ_CHECK(s.n_nodes == t->sessions[i].n_nodes);
        if (check)
            check(cfg, i, &s);
        workload_session_free(&s);
    }
}

#endif
