/* A workload that replays a file (a trace or a dataset) loaded for a test: the file written, the
 * workload around it loaded, the file read, and a refusal's message made independent of the
 * temporary file's name. Header-only (a static function) because each tests/unit/test_*.c is a
 * program of its own; include after cmocka.h. */
#ifndef STAMPEDE_TEST_REPLAY_FILE_H
#define STAMPEDE_TEST_REPLAY_FILE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buffer.h"
#include "config.h"
#include "plan.h"
#include "temp_file.h"
#include "trace.h"
#include "trace_wire.h"

/* Writes text to path, loads yaml (a workload that names path) as w.yaml, and reads the file
 * with read (config_trace_load or config_dataset_load); returns read's result. When refused,
 * msg gets the formatted error with path shown as shown_name, and cfg is freed. */
static inline int replay_file_load(config_t *cfg, const char *path, const char *text,
                                   const char *yaml, int (*read)(config_t *, config_error_t *),
                                   const char *shown_name, char *msg, size_t len) {
    temp_file_write_at(path, text);
    config_error_t err;
    if (config_load_string(cfg, yaml, strlen(yaml), "w.yaml", &err) != 0) {
        config_error_format(&err, msg, len);
        fail_msg("the workload should load: %s", msg);
    }
    int rc = read(cfg, &err);
    unlink(path);
    if (rc != 0) {
        char full[900];
        config_error_format(&err, full, sizeof full);
        const char *name = strstr(full, path);
        snprintf(msg, len, "%s%s", shown_name, name ? name + strlen(path) : full);
        config_free(cfg); /* refused: nothing for the caller to free */
    }
    return rc;
}

/* The part of cfg's replay that worker w of workers is sent, decoded as that worker decodes it
 * (NULL when refused); share gets the worker's share and, unless NULL, bytes (initialised by the
 * caller, who clears it) the part as sent. The caller trace_unref()s the part. */
static inline trace_t *replay_file_worker_part(const config_t *cfg, uint32_t workers, uint32_t w,
                                               plan_share_t *share, buffer_t *bytes) {
    buffer_t own;
    buffer_init(&own);
    buffer_t *part = bytes ? bytes : &own;
    assert_int_equal(plan_share_for(cfg, workers, w, share), 0);
    assert_int_equal(trace_wire_encode(cfg, share, part), 0);
    trace_t *t = trace_wire_decode((const uint8_t *)part->data, part->len);
    buffer_clear(&own);
    return t;
}

#endif
