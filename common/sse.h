#ifndef STAMPEDE_SSE_H
#define STAMPEDE_SSE_H

/* Incremental Server-Sent Events parser (WHATWG HTML "event stream interpretation").
 * Fed arbitrary byte slices; calls back once per dispatched event. An event that lies
 * wholly inside one fed slice is passed as pointers into that slice (no copy); only bytes
 * that straddle feeds, and multi-line data that must be joined, go through internal buffers
 * that grow geometrically and are kept across events and streams. */

#include <stddef.h>
#include <stdint.h>

typedef struct sse_event {
    const char *event; /* "" (len 0) when no event: field -> "message" semantics */
    size_t event_len;
    const char *data; /* multi-line data joined with '\n' per the SSE spec */
    size_t data_len;
    const char *id; /* the last event ID seen on this stream ("" when none) */
    size_t id_len;
} sse_event_t;

/* Called for each event; the pointers are valid only during the call. Return 0 to go on,
 * a positive value to stop (sse_parser_feed returns it). */
typedef int (*sse_event_fn)(void *arg, const sse_event_t *event);

typedef struct sse_parser sse_parser_t;

/* Creates a parser that calls fn(arg, event) per event; NULL on allocation failure.
 * The caller owns it and frees it with sse_parser_destroy. */
sse_parser_t *sse_parser_new(sse_event_fn fn, void *arg);

/* Frees the parser and its buffers, and sets *self_p to NULL. */
void sse_parser_destroy(sse_parser_t **self_p);

/* Forgets the current stream (pending line, event, last ID, error) to parse the next one;
 * keeps the internal buffers so a reused parser does not allocate again, but frees one that a
 * huge event grew beyond 64 KiB (a parser reused for every request would keep its peak). */
void sse_parser_reset(sse_parser_t *self);

/* Parses len bytes (split anywhere, even inside CRLF or a UTF-8 sequence). Returns 0 when all
 * were consumed; <0 on error (-EMSGSIZE: a line or event beyond the limit, -ENOMEM), sticky
 * until reset; >0 the callback's stop value, the rest of buf being dropped. */
int sse_parser_feed(sse_parser_t *self, const char *buf, size_t len);

/* Ends the stream: returns 1 if a partial line or an undispatched event was pending (a
 * truncated stream) or the stream failed, else 0. A pending event is not dispatched (as the
 * spec says); the state is left as is, reset starts the next stream. */
int sse_parser_finish(sse_parser_t *self);

/* The human reason for the last negative return of sse_parser_feed ("" when none), formatted
 * now into a buffer of the calling thread's: valid until its next call in that thread. */
const char *sse_parser_error(const sse_parser_t *self);

/* Caps the bytes of one line and of one event's joined data (default 64 MiB, at most
 * UINT32_MAX: a larger value is taken as that), so a server
 * that never ends a line cannot exhaust memory. A test seam: the product keeps the default; tests
 * and the fuzz target lower it to reach the cap without 64 MiB of input. */
void sse_parser_set_limit(sse_parser_t *self, size_t max_bytes);

/* The longest line L for which feeding "L\n\n" now, L being "data: " and bytes with no CR or
 * LF, would dispatch one event whose data is L after "data: ", and leave the parser as it is: its
 * limit when it is at an event's boundary, else 0 (a partial line or an event's fields pending, a
 * stream not yet begun, a failure). A reader may then dispatch such an event itself, without
 * the parser (stream.c's shaped events). */
uint32_t sse_parser_room(const sse_parser_t *self);
/* How many times the internal buffers were (re)allocated since sse_parser_new; constant in
 * the steady state. A test seam: tests and bench_sse prove the per-token path allocates nothing. */
uint64_t sse_parser_alloc_count(const sse_parser_t *self);

/* How many bytes were copied into internal buffers since sse_parser_new (straddling bytes
 * and joined multi-line data); 0 when every event lies inside one fed slice. A test seam: tests
 * prove the zero-copy path. */
uint64_t sse_parser_copied_bytes(const sse_parser_t *self);

#endif
