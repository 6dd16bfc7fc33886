/* `stampede mock --faults SPEC`: which misbehaviour a request (or, for refused, a connection)
 * gets, by probability or by schedule. SPEC is a comma-separated list of KIND[:P] (each request
 * has probability P, default 1), KIND@N (every Nth request) and an optional /MS delay for the
 * kinds that wait (stall, slow-headers). Schedules win over probabilities; the probabilities
 * share one draw, so they must add up to at most 1. */
#ifndef STAMPEDE_MOCK_FAULTS_H
#define STAMPEDE_MOCK_FAULTS_H

#include <stddef.h>
#include <stdint.h>

typedef enum mock_fault_kind {
    MOCK_FAULT_NONE,
    MOCK_FAULT_500,
    MOCK_FAULT_503,
    MOCK_FAULT_429,            /* with Retry-After */
    MOCK_FAULT_CONTEXT_LENGTH, /* HTTP 400 with vLLM's context-length error body */
    MOCK_FAULT_REFUSED,        /* the connection is reset at accept, before reading */
    MOCK_FAULT_RESET_HEADERS,  /* closed (FIN) after the request is read, before the status line */
    MOCK_FAULT_RESET_MID,      /* RST halfway through the stream */
    MOCK_FAULT_STALL,          /* the stream stops for MS after its first token */
    MOCK_FAULT_MALFORMED,      /* one SSE event's JSON is broken, the stream goes on */
    MOCK_FAULT_TRUNCATED,      /* an event's JSON is cut mid-object, then the connection closes */
    MOCK_FAULT_NO_DONE,        /* the stream ends cleanly halfway: no finish_reason, no [DONE] */
    MOCK_FAULT_SLOW_HEADERS,   /* MS before the status line */
    MOCK_FAULT_EVENT_ERROR,    /* an SSE `event: error` with a JSON error mid-stream */
    MOCK_FAULT_NOT_SSE,        /* 200 with an HTML page (a proxy's), Content-Type text/html */
    MOCK_FAULT__COUNT
} mock_fault_kind_t;

#define MOCK_FAULTS_MAX_RULES 32

typedef struct mock_fault_rule {
    mock_fault_kind_t kind;
    double probability; /* per request, when every == 0 */
    uint64_t every;     /* every Nth request (connection for refused); 0 = by probability */
    double delay_ms;    /* stall and slow-headers */
} mock_fault_rule_t;

typedef struct mock_faults {
    mock_fault_rule_t rules[MOCK_FAULTS_MAX_RULES];
    size_t n_rules;
} mock_faults_t;

/* The SPEC name of kind: "500", "context-length", "reset-mid", ...; "none" for MOCK_FAULT_NONE. */
const char *mock_fault_name(mock_fault_kind_t kind);
/* Parses SPEC into self (replacing what it held). Returns 0, or -1 with a message naming the
 * entry and the problem in err. */
int mock_faults_parse(mock_faults_t *self, const char *spec, char *err, size_t errlen);
/* The rule hitting request (or, with connection set, accepted connection) number (1-based),
 * given a uniform draw u in [0, 1) for the probabilities; NULL when none does. */
const mock_fault_rule_t *mock_faults_pick(const mock_faults_t *self, uint64_t number, double u,
                                          int connection);

#endif
