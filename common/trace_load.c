#include "trace_load.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "buffer.h"
#include "text_lines.h"
#include "trace_load_internal.h"
#include "workload.h"

/* Mooncake: a one-request session per line, arriving at `timestamp` ms. */
static int load_mooncake_line(loader_t *l, int line, json_t *o) {
    load_line_t *rec = trace_lines_new_line(l, line);
    if (!rec)
        return -1;
    int64_t output = 0;
    json_t *ts = json_object_get(o, "timestamp");
    if (!ts)
        return trace_lines_fail(l, line, "timestamp", "missing key 'timestamp'");
    double ms = json_is_number(ts) ? json_number_value(ts) : NAN;
    if (!(ms >= 0.0) || !isfinite(ms))
        return trace_lines_fail(l, line, "timestamp", "expected milliseconds >= 0");
    if (trace_lines_count(l, line, o, "input_length", true, 1, &rec->new_input_length) != 0 ||
        trace_lines_count(l, line, o, "output_length", true, 1, &output) != 0 ||
        trace_lines_hashes(l, line, o, rec) != 0)
        return -1;
    rec->output_length = (uint32_t)output;
    rec->input_length = rec->new_input_length;
    rec->id = trace_lines_intern(l, "0", 1);
    if (rec->id == UINT32_MAX ||
        trace_lines_new_session(l, rec, rec->id, (int64_t)l->n_lines, true) != 0)
        return trace_lines_fail(l, line, NULL, "out of memory");
    l->sessions[rec->session].arrival_ns = workload_seconds_to_ns(ms / 1e3);
    l->n_lines++;
    return 0;
}

/* Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian; Hinnant's algorithm). */
static int64_t load_days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* n digits at *p into *out; false when one is not a digit. */
static bool load_digits(const char **p, const char *end, int n, int64_t *out) {
    *out = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (*p >= end || **p < '0' || **p > '9')
            return false;
        *out = *out * 10 + (**p - '0');
    }
    return true;
}

/* "2023-11-16 18:17:03.9799600" (a 'T' may separate date and time; up to nine fractional digits;
 * an optional Z or +HH:MM / -HH:MM) into nanoseconds since the epoch, UTC; false for text that is
 * not such a time, or one outside 1970..2262 (nanoseconds since the epoch in 63 bits). */
static bool load_wall_clock(const char *p, const char *end, int64_t *out) {
    int64_t y, mo, d, h, mi, s, frac = 0, oh = 0, om = 0;
    if (!load_digits(&p, end, 4, &y) || p >= end || *p++ != '-' || !load_digits(&p, end, 2, &mo) ||
        p >= end || *p++ != '-' || !load_digits(&p, end, 2, &d) || p >= end ||
        (*p != ' ' && *p != 'T'))
        return false;
    p++;
    if (!load_digits(&p, end, 2, &h) || p >= end || *p++ != ':' || !load_digits(&p, end, 2, &mi) ||
        p >= end || *p++ != ':' || !load_digits(&p, end, 2, &s))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return false;
    if (p < end && *p == '.') {
        int digits = 0;
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 9)
                frac = frac * 10 + (*p - '0');
        if (digits == 0)
            return false;
        for (; digits < 9; digits++)
            frac *= 10;
    }
    int sign = 0;
    if (p < end && *p == 'Z')
        p++;
    else if (p < end && (*p == '+' || *p == '-')) {
        sign = *p++ == '+' ? 1 : -1;
        if (!load_digits(&p, end, 2, &oh) || p >= end || *p++ != ':' ||
            !load_digits(&p, end, 2, &om) || oh > 23 || om > 59)
            return false;
    }
    if (p != end)
        return false;
    int64_t seconds = load_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s -
                      sign * (oh * 3600 + om * 60);
    if (seconds < 0 || seconds >= INT64_MAX / 1000000000) /* 1970 to 2262: nanoseconds fit */
        return false;
    *out = seconds * 1000000000 + frac;
    return true;
}

/* The columns of an Azure trace's header, in the order the file gives them. */
enum { AZURE_TIMESTAMP, AZURE_CONTEXT, AZURE_GENERATED, AZURE__COLUMNS };
static const char *const azure_columns[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};

/* The header line: each of the three columns once, in any order (others are refused). */
static int load_azure_header(loader_t *l, int line, const char *text, size_t n) {
    const char *p = text, *end = text + n;
    int seen = 0;
    for (int column = 0; p <= end; column++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        int which = -1;
        for (int k = 0; k < AZURE__COLUMNS; k++)
            if ((size_t)(stop - p) == strlen(azure_columns[k]) &&
                memcmp(p, azure_columns[k], (size_t)(stop - p)) == 0)
                which = k;
        if (which < 0 || column >= AZURE__COLUMNS || (seen & (1 << which)))
            return trace_lines_fail(l, line, NULL,
                                    "expected the Azure header TIMESTAMP,ContextTokens,"
                                    "GeneratedTokens, got '%.*s'",
                                    (int)(n > 120 ? 120 : n), text);
        seen |= 1 << which;
        l->azure_order[column] = which;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (seen != (1 << AZURE__COLUMNS) - 1)
        return trace_lines_fail(
            l, line, NULL,
            "expected the Azure header TIMESTAMP,ContextTokens,GeneratedTokens, "
            "got '%.*s'",
            (int)(n > 120 ? 120 : n), text);
    l->azure_header = true;
    return 0;
}

/* A token count of an Azure row: a whole number; 0 generated tokens (a request the service cut
 * at once) is sent asking for 1, the least a request can ask. */
static int load_azure_count(loader_t *l, int line, const char *key, const char *p, const char *end,
                            int64_t min, int64_t *out) {
    int64_t x = 0;
    bool ok = p < end && end - p <= 9;
    for (const char *c = p; ok && c < end; c++) {
        ok = *c >= '0' && *c <= '9';
        x = x * 10 + (*c - '0');
    }
    if (!ok || x > (int64_t)WORKLOAD_MAX_TOKENS)
        return trace_lines_fail(l, line, key, "expected a whole number from 0 to %u, got '%.*s'",
                                WORKLOAD_MAX_TOKENS, (int)(end - p > 40 ? 40 : end - p), p);
    *out = x < min ? min : x;
    return 0;
}

/* Azure LLM inference traces: TIMESTAMP,ContextTokens,GeneratedTokens, a one-request session per
 * row, arriving at its wall-clock time (the first row's is the run's start). */
static int load_azure_line(void *arg, int line, const char *text, size_t n) {
    loader_t *l = arg;
    if (!l->azure_header)
        return load_azure_header(l, line, text, n);
    load_line_t *rec = trace_lines_new_line(l, line);
    if (!rec)
        return -1;
    const char *field[AZURE__COLUMNS], *stop[AZURE__COLUMNS], *p = text, *end = text + n;
    for (int column = 0; column < AZURE__COLUMNS; column++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if ((column < AZURE__COLUMNS - 1) != (comma != NULL))
            return trace_lines_fail(l, line, NULL,
                                    "expected 3 comma-separated fields, as the "
                                    "header TIMESTAMP,ContextTokens,GeneratedTokens");
        field[l->azure_order[column]] = p;
        stop[l->azure_order[column]] = comma ? comma : end;
        p = comma ? comma + 1 : end;
    }
    int64_t arrival_ns, output = 0;
    if (!load_wall_clock(field[AZURE_TIMESTAMP], stop[AZURE_TIMESTAMP], &arrival_ns))
        return trace_lines_fail(l, line, "TIMESTAMP",
                                "expected a time such as 2023-11-16 18:17:03.9799600, got '%.*s'",
                                (int)(stop[AZURE_TIMESTAMP] - field[AZURE_TIMESTAMP] > 40
                                          ? 40
                                          : stop[AZURE_TIMESTAMP] - field[AZURE_TIMESTAMP]),
                                field[AZURE_TIMESTAMP]);
    if (load_azure_count(l, line, "ContextTokens", field[AZURE_CONTEXT], stop[AZURE_CONTEXT], 1,
                         &rec->new_input_length) != 0 ||
        load_azure_count(l, line, "GeneratedTokens", field[AZURE_GENERATED], stop[AZURE_GENERATED],
                         1, &output) != 0)
        return -1;
    rec->output_length = (uint32_t)output;
    rec->input_length = rec->new_input_length;
    rec->hashes_at = (uint32_t)l->n_hashes;
    rec->id = trace_lines_intern(l, "0", 1);
    if (rec->id == UINT32_MAX ||
        trace_lines_new_session(l, rec, rec->id, (int64_t)l->n_lines, true) != 0)
        return trace_lines_fail(l, line, NULL, "out of memory");
    l->sessions[rec->session].arrival_ns = arrival_ns;
    l->n_lines++;
    return 0;
}

/* One line of a JSONL trace: a request, in the file's format. */
static int load_json_line(void *arg, int line, const char *text, size_t n) {
    loader_t *l = arg;
    config_trace_format_t format = l->cfg->workload.trace.format;
    json_error_t jerr;
    json_t *o = json_loadb(text, n, 0, &jerr);
    int rc;
    if (!o)
        rc = trace_lines_fail(l, line, NULL, "not JSON: %s (column %d)", jerr.text, jerr.column);
    else if (!json_is_object(o))
        rc = trace_lines_fail(l, line, NULL, "expected a JSON object per line");
    else if (json_is_true(json_object_get(o, "compaction")))
        rc = 0; /* a recorded summarise request: the replay's compaction sends its own */
    else if (format == TRACE_FORMAT_MOONCAKE)
        rc = load_mooncake_line(l, line, o);
    else if (format == TRACE_FORMAT_VEEKSHA)
        rc = trace_veeksha_line(l, line, o);
    else
        rc = trace_lines_session(l, line, o);
    json_decref(o);
    return rc;
}

/* Reads every line of the file. */
static int load_lines(loader_t *l, FILE *f, config_trace_format_t format) {
    int rc = text_lines_each(f, format == TRACE_FORMAT_AZURE ? load_azure_line : load_json_line, l);
    if (rc == 0 && ferror(f))
        rc = trace_lines_fail(l, 0, NULL, "cannot read the file: %s", strerror(errno));
    if (rc == 0 && l->n_lines == 0)
        rc = trace_lines_fail(l, 0, NULL,
                              format == TRACE_FORMAT_AZURE
                                  ? "the trace is empty: give the header and at least one row"
                                  : "the trace is empty: give at least one request line");
    return rc;
}

static void loader_free(loader_t *l) {
    buffer_clear(&l->arena);
    free(l->slots);
    free(l->lines);
    free(l->sessions);
    free(l->refs);
    free(l->hashes);
    free(l->order);
}

int trace_load(config_t *cfg, trace_t **out, config_error_t *err) {
    const config_trace_t *t = &cfg->workload.trace;
    loader_t l = {.cfg = cfg, .err = err, .file = t->path ? t->path : ""};
    buffer_init(&l.arena);
    *out = NULL;
    FILE *f = t->path ? fopen(t->path, "r") : NULL;
    if (!f)
        return trace_lines_fail(&l, 0, NULL, "cannot read the trace: %s",
                                t->path ? strerror(errno) : "no workload.trace.path");
    bool timed = cfg->scheduler.kind == SCHEDULER_RATE;
    trace_t *trace = trace_new();
    int rc = trace ? load_lines(&l, f, t->format) : trace_lines_fail(&l, 0, NULL, "out of memory");
    fclose(f);
    if (rc == 0 && timed && t->format == TRACE_FORMAT_VEEKSHA)
        trace_veeksha_arrivals(&l);
    if (rc == 0)
        rc = trace_order_arrivals(&l, timed);
    if (rc == 0)
        rc = trace_order_group(&l);
    if (rc == 0)
        rc = trace_order_build(&l, trace, timed);
    loader_free(&l);
    if (rc != 0) {
        trace_unref(&trace);
        return -1;
    }
    trace_finish(trace);
    *out = trace;
    return 0;
}
