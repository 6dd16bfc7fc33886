#include "report_requests.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buffer.h"

/* Offers one point: kept when it falls on the stride; a full set drops every other point and
 * doubles the stride. -1 when memory is short. */
static int report_points_add(report_points_t *self, double x, double y) {
    if (!isfinite(x) || !isfinite(y))
        return 0;
    if (self->stride == 0)
        self->stride = 1;
    if (self->seen++ % self->stride != 0)
        return 0;
    if (self->n == REPORT_REQUESTS_MAX_POINTS) {
        for (size_t i = 0; i < self->n / 2; i++) {
            self->x[i] = self->x[2 * i];
            self->y[i] = self->y[2 * i];
        }
        self->n /= 2;
        self->stride *= 2;
        if ((self->seen - 1) % self->stride != 0)
            return 0;
    }
    if (buffer_grow_pair(&self->x, sizeof *self->x, &self->y, sizeof *self->y, &self->cap,
                         self->n + 1) != 0)
        return -1;
    self->x[self->n] = x;
    self->y[self->n++] = y;
    return 0;
}

static void report_points_clear(report_points_t *self) {
    free(self->x);
    free(self->y);
    *self = (report_points_t){0};
}

void report_requests_clear(report_requests_t *self) {
    report_points_clear(&self->ttft);
    report_points_clear(&self->itl);
    report_points_clear(&self->e2e);
    report_points_clear(&self->ttft_prompt);
    report_points_clear(&self->itl_position);
    free(self->busy_s);
    self->busy_s = NULL;
    self->n_bins = self->bins_cap = 0;
    self->requests = 0;
}

static double report_requests_number(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The ITL points of one request: the gap before each chunk after the first, per token of that
 * chunk (chunk_tokens, else one each), at the position of the chunk's last token. */
static int report_requests_gaps(report_requests_t *self, const json_t *o) {
    const json_t *chunks = json_object_get(o, "chunks_us");
    const json_t *tokens = json_object_get(o, "chunk_tokens");
    bool counted = json_array_size(tokens) == json_array_size(chunks);
    double position = 0, prev = NAN;
    for (size_t i = 0; i < json_array_size(chunks); i++) {
        double at = json_number_value(json_array_get(chunks, i));
        double k = counted ? json_number_value(json_array_get(tokens, i)) : 1;
        if (!(k >= 1))
            k = 1;
        position += k;
        if (i > 0) {
            double ms = (at - prev) / 1e3 / k;
            if (report_points_add(&self->itl, at / 1e6, ms) != 0 ||
                report_points_add(&self->itl_position, position, ms) != 0)
                return -1;
        }
        prev = at;
    }
    return 0;
}

/* Adds the request in flight over [send_s, end_s) to the bins it overlaps. -1 when memory is
 * short. */
static int report_requests_in_flight(report_requests_t *self, double send_s, double end_s) {
    if (!isfinite(send_s) || !isfinite(end_s) || send_s < 0 || end_s <= send_s)
        return 0;
    size_t first = (size_t)(send_s / REPORT_REQUESTS_BIN_S);
    size_t last = (size_t)(end_s / REPORT_REQUESTS_BIN_S);
    if (buffer_grow_array(&self->busy_s, &self->bins_cap, last + 1, sizeof *self->busy_s) != 0)
        return -1;
    for (size_t b = first; b <= last; b++) {
        double lo = fmax(send_s, (double)b * REPORT_REQUESTS_BIN_S);
        double hi = fmin(end_s, (double)(b + 1) * REPORT_REQUESTS_BIN_S);
        self->busy_s[b] += fmax(hi - lo, 0);
    }
    if (last + 1 > self->n_bins)
        self->n_bins = last + 1;
    return 0;
}

/* One trace line's points; 0 (also when the request does not count), -1 when memory is short. */
static int report_requests_line(report_requests_t *self, const json_t *o) {
    if (report_requests_in_flight(self, report_requests_number(o, "send_us") / 1e6,
                                  report_requests_number(o, "end_us") / 1e6) != 0)
        return -1;
    const char *error = json_string_value(json_object_get(o, "error"));
    if (json_is_true(json_object_get(o, "warmup")) || !error || strcmp(error, "none") != 0)
        return 0;
    double first_us = report_requests_number(o, "first_token_us");
    double end_us = report_requests_number(o, "end_us");
    double ttft = report_requests_number(o, "ttft_ms"), e2e = report_requests_number(o, "e2e_ms");
    double prompt = report_requests_number(json_object_get(o, "usage"), "prompt_tokens");
    if (!isfinite(prompt))
        prompt = report_requests_number(o, "requested_input_tokens");
    self->requests++;
    if (report_points_add(&self->ttft, first_us / 1e6, ttft) != 0 ||
        report_points_add(&self->e2e, end_us / 1e6, e2e) != 0 ||
        report_points_add(&self->ttft_prompt, prompt, ttft) != 0)
        return -1;
    return report_requests_gaps(self, o);
}

int report_requests_load(report_requests_t *self, const char *dir, char *err, size_t err_len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    /* Only a regular file: opening a FIFO (--trace into a pipe) would wait for a writer. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, line_no = 0;
    int rc = 1;
    while (rc == 1 && getline(&line, &cap, f) > 0) {
        line_no++;
        json_error_t jerr;
        json_t *o = json_loads(line, 0, &jerr);
        if (!json_is_object(o)) {
            snprintf(err, err_len, "%s:%zu:%d: not a JSON object%s%s", path, line_no, jerr.column,
                     o ? "" : ": ", o ? "" : jerr.text);
            rc = -1;
        } else if (report_requests_line(self, o) != 0) {
            snprintf(err, err_len, "%s:%zu: out of memory", path, line_no);
            rc = -1;
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    return rc;
}

static int report_requests_by_x(const void *a, const void *b) {
    const double *pa = a, *pb = b;
    return (pa[0] > pb[0]) - (pa[0] < pb[0]);
}

static int report_requests_by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int report_requests_rolling(report_points_t *points, double window_s, const double *qs, size_t n_q,
                            size_t n_at, double *at_x, double *at_y) {
    size_t n = points->n;
    double *pairs = malloc((n ? n : 1) * 2 * sizeof *pairs);
    double *window = malloc((n ? n : 1) * sizeof *window);
    if (!pairs || !window) {
        free(pairs);
        free(window);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = points->x[i];
        pairs[2 * i + 1] = points->y[i];
    }
    qsort(pairs, n, 2 * sizeof *pairs, report_requests_by_x);
    for (size_t i = 0; i < n; i++) {
        points->x[i] = pairs[2 * i];
        points->y[i] = pairs[2 * i + 1];
    }
    free(pairs);
    double lo = n ? points->x[0] : 0, hi = n ? points->x[n - 1] : 0;
    size_t first = 0, last = 0; /* the window is points [first, last) */
    for (size_t i = 0; i < n_at; i++) {
        double t = n_at > 1 ? lo + (hi - lo) * (double)i / (double)(n_at - 1) : hi;
        while (last < n && points->x[last] <= t)
            last++;
        while (first < last && points->x[first] <= t - window_s)
            first++;
        size_t m = last - first;
        memcpy(window, points->y + first, m * sizeof *window);
        qsort(window, m, sizeof *window, report_requests_by_value);
        at_x[i] = t;
        for (size_t k = 0; k < n_q; k++) {
            /* nearest rank, as the histogram's percentiles */
            size_t rank = m ? (size_t)ceil(qs[k] * (double)m) : 0;
            at_y[k * n_at + i] = m ? window[rank ? rank - 1 : 0] : NAN;
        }
    }
    free(window);
    return 0;
}
