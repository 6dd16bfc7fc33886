#include "read_metrics.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_parse.h"
#include "scrape.h"
#include "telemetry_read.h"

/* The whole file, NUL-terminated, at most SCRAPE_MAX_PAGE bytes; NULL with errno set. */
static char *read_metrics_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = malloc(SCRAPE_MAX_PAGE + 1);
    size_t n = text ? fread(text, 1, SCRAPE_MAX_PAGE + 1, f) : 0;
    int failed = ferror(f);
    fclose(f);
    if (!text || failed || n > SCRAPE_MAX_PAGE) {
        free(text);
        errno = !text ? ENOMEM : failed ? EIO : EFBIG;
        return NULL;
    }
    text[n] = 0;
    *len = n;
    return text;
}

static json_t *read_metrics_number(double v) {
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

/* {key: {"metric", "value"}} of the quantities a page has, counters then gauges. */
static json_t *read_metrics_scalars(const telemetry_reading_t *r, bool gauges) {
    json_t *o = json_object();
    size_t n = gauges ? TELEMETRY_G__COUNT : TELEMETRY_C__COUNT;
    for (size_t i = 0; i < n; i++) {
        size_t q = TELEMETRY_H__COUNT + (gauges ? TELEMETRY_C__COUNT : 0) + i;
        const char *name = telemetry_read_name(r, q);
        double v = gauges ? r->gauge[i] : r->counter[i];
        if (!name || isnan(v))
            continue;
        const char *key = gauges ? telemetry_read_gauge_key((telemetry_gauge_t)i)
                                 : telemetry_read_counter_key((telemetry_counter_t)i);
        json_object_set_new(
            o, key, json_pack("{s:s, s:o}", "metric", name, "value", read_metrics_number(v)));
    }
    return o;
}

static json_t *read_metrics_histograms(const telemetry_reading_t *r) {
    json_t *o = json_object();
    for (size_t h = 0; h < TELEMETRY_H__COUNT; h++) {
        const telemetry_buckets_t *b = &r->histogram[h];
        if (!b->present)
            continue;
        json_object_set_new(
            o, telemetry_read_histogram_key((telemetry_histogram_t)h),
            json_pack("{s:s, s:o, s:o, s:o, s:I, s:b}", "metric", telemetry_read_name(r, h),
                      "count", read_metrics_number(b->count), "sum_s", read_metrics_number(b->sum),
                      "mean_ms", read_metrics_number(b->count > 0 ? b->sum / b->count * 1000 : NAN),
                      "buckets", (json_int_t)b->n, "layout_mismatch", b->layout_mismatch));
    }
    return o;
}

static json_t *read_metrics_json(const char *path, const prom_page_t *page,
                                 const telemetry_reading_t *r) {
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(path));
    json_object_set_new(o, "dialect", r->dialect ? json_string(r->dialect) : json_null());
    json_object_set_new(o, "samples", json_integer((json_int_t)page->n_samples));
    json_object_set_new(o, "lines_skipped", json_integer((json_int_t)page->lines_skipped));
    json_object_set_new(o, "first_error",
                        page->lines_skipped ? json_sprintf("line %zu: %s", page->first_error_line,
                                                           page->first_error)
                                            : json_null());
    json_object_set_new(o, "counters", read_metrics_scalars(r, false));
    json_object_set_new(o, "gauges", read_metrics_scalars(r, true));
    json_object_set_new(o, "histograms", read_metrics_histograms(r));
    return o;
}

/* The human form: one line per figure under the file's line. */
static void read_metrics_print(FILE *out, const json_t *o) {
    const json_t *dialect = json_object_get(o, "dialect");
    fprintf(out, "%s: %s, %lld samples", json_string_value(json_object_get(o, "file")),
            json_is_string(dialect) ? json_string_value(dialect) : "no recognised names",
            (long long)json_integer_value(json_object_get(o, "samples")));
    if (json_is_string(json_object_get(o, "first_error")))
        fprintf(out, ", %lld lines skipped (%s)",
                (long long)json_integer_value(json_object_get(o, "lines_skipped")),
                json_string_value(json_object_get(o, "first_error")));
    fputc('\n', out);
    static const char *const groups[] = {"counters", "gauges"};
    for (size_t g = 0; g < 2; g++) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)json_object_get(o, groups[g]), key, v) fprintf(
            out, "  %-18s %-16.6g %s\n", key, json_number_value(json_object_get(v, "value")),
            json_string_value(json_object_get(v, "metric")));
    }
    const char *key;
    const json_t *h;
    json_object_foreach((json_t *)json_object_get(o, "histograms"), key, h) {
        fprintf(out, "  %-18s count %.0f, mean %.3f ms%s  %s\n", key,
                json_number_value(json_object_get(h, "count")),
                json_number_value(json_object_get(h, "mean_ms")),
                json_is_true(json_object_get(h, "layout_mismatch")) ? " (bucket layouts differ)"
                                                                    : "",
                json_string_value(json_object_get(h, "metric")));
    }
}

int read_metrics_file(const char *path, bool as_json) {
    size_t len = 0;
    char *text = read_metrics_slurp(path, &len);
    if (!text) {
        fprintf(stderr, "stampede read-metrics: %s: %s\n", path,
                errno == EFBIG ? "larger than a /metrics page may be (32 MiB)" : strerror(errno));
        return -1;
    }
    prom_page_t *page = prom_page_parse(text, len);
    free(text);
    telemetry_reading_t *r = malloc(sizeof *r);
    if (!page || !r) {
        fprintf(stderr, "stampede read-metrics: %s: out of memory\n", path);
        prom_page_destroy(&page);
        free(r);
        return -1;
    }
    telemetry_read_page(page, r);
    json_t *o = read_metrics_json(path, page, r);
    if (as_json) {
        char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
        printf("%s\n", line ? line : "{}");
        free(line);
    } else {
        read_metrics_print(stdout, o);
    }
    json_decref(o);
    prom_page_destroy(&page);
    free(r);
    return 0;
}
