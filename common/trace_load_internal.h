/* Internal to the trace loader: common/trace_lines.c (the loader's arena, ids and one
 * session-trace line), under common/trace_load.c (reading a file's lines in each format),
 * common/trace_veeksha.c (Veeksha's rows) and common/trace_order.c (putting each session's nodes
 * in order and checking its graph): the loader they all work on. */
#ifndef STAMPEDE_TRACE_LOAD_INTERNAL_H
#define STAMPEDE_TRACE_LOAD_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "config.h"
#include "trace.h"

/* One line of the file, before its session is put in order. Ids are offsets into the arena. */
typedef struct load_line {
    int line;
    uint32_t session;  /* index of its session in first-appearance order */
    uint32_t id;       /* node id */
    int64_t id_number; /* the id as an integer, when it is one */
    bool id_is_number;
    uint32_t refs_at; /* parent ids in loader.refs */
    uint32_t n_parents;
    uint32_t history_parent;  /* an id, or UINT32_MAX: none */
    int64_t input_length;     /* -1: not given */
    int64_t new_input_length; /* -1: not given */
    uint32_t output_length;
    uint32_t role;
    int64_t wait_ns;
    double history;
    bool append;
    uint32_t hashes_at;
    uint32_t n_hashes;
    uint32_t position; /* its index in the session once ordered */
} load_line_t;

typedef struct load_session {
    uint32_t id;
    int64_t id_number;
    bool id_is_number;
    uint32_t first_line; /* index into lines */
    int64_t arrival_ns;  /* -1: none given */
    uint32_t n_lines;
    uint32_t lines_at; /* its lines (indices) in loader.order */
    uint32_t rows;     /* Veeksha traces: its rows read so far */
} load_session_t;

typedef struct id_slot {
    uint32_t key;   /* arena offset + 1; 0 = empty */
    uint32_t scope; /* session index for node ids, UINT32_MAX for session ids */
    uint32_t value;
} id_slot_t;

typedef struct loader {
    config_t *cfg;
    config_error_t *err;
    const char *file;
    buffer_t arena;
    id_slot_t *slots;
    size_t n_slots, cap_slots; /* cap is a power of two */
    load_line_t *lines;
    size_t n_lines, cap_lines;
    load_session_t *sessions;
    size_t n_sessions, cap_sessions;
    uint32_t *refs;
    size_t n_refs, cap_refs;
    uint64_t *hashes;
    size_t n_hashes, cap_hashes;
    uint32_t *order;    /* lines grouped by session */
    bool azure_header;  /* an Azure trace's header line was read */
    int azure_order[3]; /* column i of an Azure row holds field azure_order[i] */
} loader_t;

/* Fills l->err (file, line: 0 for the whole file, key) and returns -1. */
int trace_lines_fail(loader_t *l, int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The interned text at an arena offset. */
const char *trace_lines_text(const loader_t *l, uint32_t offset);
/* The line index of node id (an arena offset) in session s, or UINT32_MAX. */
uint32_t trace_lines_find(loader_t *l, uint32_t s, uint32_t id);

/* Interns text in the arena; its offset, or UINT32_MAX on no memory. */
uint32_t trace_lines_intern(loader_t *l, const char *text, size_t len);
/* A whole number >= min under key, or -1 with the error set (absent: *out untouched, 0). */
int trace_lines_count(loader_t *l, int line, json_t *o, const char *key, bool required, int64_t min,
                      int64_t *out);
/* The line's hash_ids (Mooncake's prefix blocks), when it has them, into rec. 0 or -1. */
int trace_lines_hashes(loader_t *l, int line, json_t *o, load_line_t *rec);
/* A new line record for file line `line`, or NULL with the error set. */
load_line_t *trace_lines_new_line(loader_t *l, int line);
/* A new session (first appearance order) for rec. */
int trace_lines_new_session(loader_t *l, load_line_t *rec, uint32_t id, int64_t number,
                            bool is_number);
/* Reads one session-trace line (a JSON object of stampede's keys). 0 or -1. */
int trace_lines_session(loader_t *l, int line, json_t *o);
/* The index of the session with that id, or UINT32_MAX when none was read yet. */
uint32_t trace_lines_session_index(loader_t *l, const char *id);
/* Veeksha's timed_synthetic_session row (trace_veeksha.c), read as a session-trace line. */
int trace_veeksha_line(loader_t *l, int line, json_t *o);
/* Sessions without an arrival get the scheduler's (rate, poisson/gamma/constant, seed), in file
 * order: a Veeksha trace's sessions arrive as Veeksha's traffic scheduler sends them. */
void trace_veeksha_arrivals(loader_t *l);

/* Arrivals from the first session's; a timed replay needs one on every session. 0 or -1. */
int trace_order_arrivals(loader_t *l, bool timed);
/* Groups the lines by session (l->order), each session's in node order. 0 or -1. */
int trace_order_group(loader_t *l);
/* Puts the sessions in order, resolves and checks each one's parents and history parents, sorts
 * its nodes parents first and fills out. 0 or -1 with the error set. */
int trace_order_build(loader_t *l, trace_t *out, bool timed);

#endif
