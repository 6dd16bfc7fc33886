#include "definitions.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

/* Samples of one metric, kept whole: this runs once, offline, over a trace. */
typedef struct {
    double *v;
    size_t n, cap;
} definitions_samples_t;

struct definitions {
    definitions_tool_t tool;
    definitions_samples_t ttft, ttfo, tpot, itl;
    uint64_t output_tokens;
    double first_send_us, last_end_us;
};

static const char *const definitions_names[DEFINITIONS__COUNT] = {"vllm", "aiperf", "guidellm",
                                                                  "sglang"};

int definitions_tool(const char *name) {
    for (int t = 0; t < DEFINITIONS__COUNT; t++)
        if (!strcmp(name, definitions_names[t]))
            return t;
    return -1;
}

definitions_t *definitions_new(definitions_tool_t tool) {
    definitions_t *self = calloc(1, sizeof *self);
    if (self) {
        self->tool = tool;
        self->first_send_us = INFINITY;
        self->last_end_us = -INFINITY;
    }
    return self;
}

void definitions_destroy(definitions_t **self_p) {
    definitions_t *self = *self_p;
    if (!self)
        return;
    free(self->ttft.v);
    free(self->ttfo.v);
    free(self->tpot.v);
    free(self->itl.v);
    free(self);
    *self_p = NULL;
}

static int definitions_push(definitions_samples_t *s, double value_ms) {
    if (buffer_grow_array(&s->v, &s->cap, s->n + 1, sizeof *s->v) != 0)
        return -1;
    s->v[s->n++] = value_ms;
    return 0;
}

static uint32_t definitions_tokens(const definitions_request_t *r, size_t i) {
    return r->chunk_tokens ? r->chunk_tokens[i] : 1;
}

int definitions_add(definitions_t *self, const definitions_request_t *r) {
    self->output_tokens += r->output_tokens;
    self->first_send_us = fmin(self->first_send_us, r->send_us);
    self->last_end_us = fmax(self->last_end_us, r->end_us);
    if (r->n_chunks == 0)
        return 0; /* no token: no tool measures a latency */
    const double *c = r->chunks_us;
    size_t n = r->n_chunks;
    double ttft = (c[0] - r->send_us) / 1000, last = c[n - 1];
    /* every tool's output count includes reasoning tokens (usage.completion_tokens, OSL) */
    double decode_tokens = (double)r->output_tokens - 1;
    int rc = definitions_push(&self->ttft, ttft);
    switch (self->tool) {
    case DEFINITIONS_VLLM: /* one ITL sample per chunk gap; latency ends at the last chunk */
        for (size_t i = 1; i < n && rc == 0; i++)
            rc = definitions_push(&self->itl, (c[i] - c[i - 1]) / 1000);
        if (decode_tokens > 0 && rc == 0)
            rc = definitions_push(&self->tpot, (last - c[0]) / 1000 / decode_tokens);
        break;
    case DEFINITIONS_SGLANG: /* a gap of k tokens is k samples of gap / k; latency to the end */
        for (size_t i = 1; i < n && rc == 0; i++) {
            uint32_t k = definitions_tokens(r, i);
            for (uint32_t j = 0; j < k && rc == 0; j++)
                rc = definitions_push(&self->itl, (c[i] - c[i - 1]) / 1000 / k);
        }
        if (decode_tokens > 0 && rc == 0)
            rc = definitions_push(&self->tpot, (r->end_us - c[0]) / 1000 / decode_tokens);
        break;
    case DEFINITIONS_AIPERF: /* ITL: (request latency − TTFT) / (OSL − 1), one per request; its
                                request latency ends at the last content response */
        if (isfinite(r->first_content_us) && rc == 0)
            rc = definitions_push(&self->ttfo, (r->first_content_us - r->send_us) / 1000);
        if (decode_tokens > 0 && rc == 0)
            rc = definitions_push(&self->itl, (last - c[0]) / 1000 / decode_tokens);
        break;
    case DEFINITIONS_GUIDELLM: /* TPOT includes the first token; ITL (last − first)/(n − 1) */
        if (r->output_tokens > 0 && rc == 0)
            rc = definitions_push(&self->tpot,
                                  (last - r->send_us) / 1000 / (double)r->output_tokens);
        if (decode_tokens > 0 && rc == 0)
            rc = definitions_push(&self->itl, (last - c[0]) / 1000 / decode_tokens);
        break;
    default:
        break;
    }
    return rc;
}

static int definitions_compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's default percentile: linear between the order statistics around q·(n − 1). */
static double definitions_percentile(const double *sorted, size_t n, double q) {
    double rank = q * (double)(n - 1);
    size_t lo = (size_t)rank, hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (rank - (double)lo) * (sorted[hi] - sorted[lo]);
}

static definitions_stat_t definitions_stat(definitions_samples_t *s) {
    definitions_stat_t st = {s->n, NAN, NAN, NAN, NAN};
    if (s->n == 0)
        return st;
    qsort(s->v, s->n, sizeof *s->v, definitions_compare);
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->v[i];
    st.mean = sum / (double)s->n;
    st.p50 = definitions_percentile(s->v, s->n, 0.50);
    st.p90 = definitions_percentile(s->v, s->n, 0.90);
    st.p99 = definitions_percentile(s->v, s->n, 0.99);
    return st;
}

void definitions_summary(definitions_t *self, definitions_summary_t *out) {
    out->ttft_ms = definitions_stat(&self->ttft);
    out->ttfo_ms = definitions_stat(&self->ttfo);
    out->tpot_ms = definitions_stat(&self->tpot);
    out->itl_ms = definitions_stat(&self->itl);
    double span_s = (self->last_end_us - self->first_send_us) / 1e6;
    out->output_tokens_per_s = span_s > 0 ? (double)self->output_tokens / span_s : NAN;
}

/* What each tool's ITL and TPOT columns mean, printed under the table. */
static const char *const definitions_notes[DEFINITIONS__COUNT] = {
    "vllm: TTFT first chunk (reasoning counts); ITL one sample per chunk gap, a chunk of k tokens "
    "is one gap; TPOT (last chunk - first chunk) / (tokens - 1)",
    "aiperf: TTFT first chunk (reasoning counts), TTFO first non-reasoning chunk; ITL one value "
    "per request, (last chunk - first chunk) / (tokens - 1); no TPOT",
    "guidellm: TTFT first chunk; TPOT (last chunk - send) / tokens, TTFT included; ITL one value "
    "per request, (last chunk - first chunk) / (tokens - 1)",
    "sglang: TTFT first chunk; ITL a gap of k tokens is k samples of gap / k (native /generate); "
    "TPOT (end - first chunk) / (tokens - 1)",
};

/* The numbers of key in line o as doubles into *values (grown); -1 with err when not numbers. */
static int definitions_numbers(const json_t *o, const char *key, double **values, size_t *cap,
                               size_t *n, const char *where, char *err, size_t err_len) {
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a)) {
        snprintf(err, err_len, "%s: key \"%s\": not an array", where, key);
        return -1;
    }
    *n = json_array_size(a);
    if (buffer_grow_array(values, cap, *n ? *n : 1, sizeof **values) != 0) {
        snprintf(err, err_len, "%s: out of memory", where);
        return -1;
    }
    for (size_t i = 0; i < *n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_number(v)) {
            snprintf(err, err_len, "%s: key \"%s\"[%zu]: not a number", where, key, i);
            return -1;
        }
        (*values)[i] = json_number_value(v);
    }
    return 0;
}

/* Reads one trace line into r (arrays in the scratch buffers). 1 when the request counts (ok,
 * not warm-up), 0 when it is skipped, -1 with err. */
static int definitions_parse(const json_t *o, definitions_request_t *r, double **chunks,
                             size_t *chunks_cap, uint32_t **tokens, size_t *tokens_cap,
                             double **scratch, size_t *scratch_cap, const char *where, char *err,
                             size_t err_len) {
    const char *error = json_string_value(json_object_get(o, "error"));
    if (json_is_true(json_object_get(o, "warmup")) || !error || strcmp(error, "none") != 0)
        return 0;
    static const char *const instants[] = {"send_us", "end_us"};
    double at[2];
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(o, instants[i]);
        if (!json_is_number(v)) {
            snprintf(err, err_len, "%s: key \"%s\": not a number", where, instants[i]);
            return -1;
        }
        at[i] = json_number_value(v);
    }
    size_t n = 0, n_tokens = 0;
    if (definitions_numbers(o, "chunks_us", chunks, chunks_cap, &n, where, err, err_len) != 0)
        return -1;
    *r = (definitions_request_t){.send_us = at[0],
                                 .end_us = at[1],
                                 .chunks_us = *chunks,
                                 .n_chunks = n,
                                 .first_content_us = NAN};
    const json_t *content = json_object_get(o, "first_content_us");
    if (json_is_number(content))
        r->first_content_us = json_number_value(content);
    const json_t *out = json_object_get(o, "output_tokens");
    r->output_tokens =
        json_is_integer(out) && json_integer_value(out) > 0 ? (uint64_t)json_integer_value(out) : 0;
    if (json_object_get(o, "chunk_tokens")) {
        if (definitions_numbers(o, "chunk_tokens", scratch, scratch_cap, &n_tokens, where, err,
                                err_len) != 0)
            return -1;
        if (n_tokens != n) {
            snprintf(err, err_len, "%s: key \"chunk_tokens\": %zu entries for %zu chunks", where,
                     n_tokens, n);
            return -1;
        }
        if (buffer_grow_array(tokens, tokens_cap, n ? n : 1, sizeof **tokens) != 0) {
            snprintf(err, err_len, "%s: out of memory", where);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            (*tokens)[i] = (*scratch)[i] >= 1 ? (uint32_t)(*scratch)[i] : 1;
        r->chunk_tokens = *tokens;
    }
    return 1;
}

static void definitions_cell(FILE *out, double v) {
    if (isfinite(v))
        fprintf(out, " %9.3f", v);
    else
        fprintf(out, " %9s", "-");
}

static void definitions_print(FILE *out, definitions_t *const *acc, const int *tools,
                              size_t n_tools) {
    fprintf(out, "%-9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %11s\n", "tool", "TTFT p50", "TTFT p99",
            "TTFO p50", "TPOT p50", "TPOT p99", "ITL mean", "ITL p50", "ITL p99", "ITL n",
            "out tok/s");
    for (size_t t = 0; t < n_tools; t++) {
        definitions_summary_t s;
        definitions_summary(acc[t], &s);
        fprintf(out, "%-9s", definitions_names[tools[t]]);
        definitions_cell(out, s.ttft_ms.p50);
        definitions_cell(out, s.ttft_ms.p99);
        definitions_cell(out, s.ttfo_ms.p50);
        definitions_cell(out, s.tpot_ms.p50);
        definitions_cell(out, s.tpot_ms.p99);
        definitions_cell(out, s.itl_ms.mean);
        definitions_cell(out, s.itl_ms.p50);
        definitions_cell(out, s.itl_ms.p99);
        fprintf(out, " %9zu %11.1f\n", s.itl_ms.count, s.output_tokens_per_s);
    }
    fprintf(out, "\n(milliseconds; docs/metrics.md section 15)\n");
    for (size_t t = 0; t < n_tools; t++)
        fprintf(out, "  %s\n", definitions_notes[tools[t]]);
}

/* The tools of a comma-separated list into tools[]; -1 with err naming one not known. */
static int definitions_parse_tools(const char *list, int *tools, size_t *n_tools, char *err,
                                   size_t err_len) {
    *n_tools = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        int tool = definitions_tool(name);
        if (tool < 0 || *n_tools >= DEFINITIONS__COUNT) {
            snprintf(err, err_len,
                     "--definitions: '%s' is not a tool (vllm, aiperf, guidellm, sglang; each "
                     "once)",
                     name);
            return -1;
        }
        tools[(*n_tools)++] = tool;
        p += len + (p[len] == ',');
    }
    if (*n_tools == 0) {
        snprintf(err, err_len, "--definitions: no tool named (vllm, aiperf, guidellm, sglang)");
        return -1;
    }
    return 0;
}

int definitions_check(const char *list, char *err, size_t err_len) {
    int tools[DEFINITIONS__COUNT];
    size_t n_tools;
    return definitions_parse_tools(list, tools, &n_tools, err, err_len);
}

int definitions_report(const char *dir, const char *list, FILE *out, char *err, size_t err_len) {
    int tools[DEFINITIONS__COUNT];
    size_t n_tools;
    if (definitions_parse_tools(list, tools, &n_tools, err, err_len) != 0)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len,
                 "%s: %s: --definitions recomputes each tool's figures from the per-chunk times "
                 "of the trace; run with --trace to record it",
                 path, strerror(errno));
        return -1;
    }
    definitions_t *acc[DEFINITIONS__COUNT] = {0};
    double *chunks = NULL, *scratch = NULL;
    uint32_t *tokens = NULL;
    size_t chunks_cap = 0, scratch_cap = 0, tokens_cap = 0, line_no = 0, counted = 0, chunks_n = 0,
           multi = 0;
    char *line = NULL;
    size_t line_cap = 0;
    int rc = 0;
    for (size_t t = 0; t < n_tools && rc == 0; t++)
        if (!(acc[t] = definitions_new((definitions_tool_t)tools[t]))) {
            snprintf(err, err_len, "%s: out of memory", path);
            rc = -1;
        }
    while (rc == 0 && getline(&line, &line_cap, f) > 0) {
        line_no++;
        char where[4200];
        snprintf(where, sizeof where, "%s:%zu", path, line_no);
        json_error_t jerr;
        json_t *o = json_loads(line, 0, &jerr);
        if (!json_is_object(o)) {
            snprintf(err, err_len, "%s:%d: not a JSON object: %s", where, jerr.column,
                     o ? "" : jerr.text);
            json_decref(o);
            rc = -1;
            break;
        }
        definitions_request_t r;
        int use = definitions_parse(o, &r, &chunks, &chunks_cap, &tokens, &tokens_cap, &scratch,
                                    &scratch_cap, where, err, err_len);
        if (use < 0)
            rc = -1;
        for (size_t t = 0; use > 0 && t < n_tools && rc == 0; t++)
            if (definitions_add(acc[t], &r) != 0) {
                snprintf(err, err_len, "%s: out of memory", where);
                rc = -1;
            }
        counted += use > 0;
        chunks_n += use > 0 ? r.n_chunks : 0;
        multi += use > 0 && r.chunk_tokens;
        json_decref(o);
    }
    fclose(f);
    if (rc == 0 && counted == 0) {
        snprintf(err, err_len, "%s: no ok, measured request in the trace (%zu lines)", path,
                 line_no);
        rc = -1;
    }
    if (rc == 0) {
        fprintf(out,
                "%s: %zu ok requests (warm-up left out), %zu chunks, %zu requests with chunks "
                "of several tokens%s\n\n",
                path, counted, chunks_n, multi,
                multi ? "" : " (tokens per chunk are known with target.continuous_usage_stats)");
        definitions_print(out, acc, tools, n_tools);
    }
    for (size_t t = 0; t < n_tools; t++)
        definitions_destroy(&acc[t]);
    free(line);
    free(chunks);
    free(scratch);
    free(tokens);
    return rc;
}
