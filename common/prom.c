#include "prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int prom_histogram_init(prom_histogram_t *self, const double *bounds, uint32_t n) {
    self->bounds = bounds;
    self->n_bounds = n;
    self->count = 0;
    self->sum = 0;
    self->counts = calloc(n + 1, sizeof(*self->counts));
    return self->counts ? 0 : -1;
}

void prom_histogram_clear(prom_histogram_t *self) {
    free(self->counts);
    self->counts = NULL;
}

void prom_histogram_observe(prom_histogram_t *self, double value) {
    uint32_t lo = 0, hi = self->n_bounds; /* first bound >= value, or n_bounds for +Inf */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (self->bounds[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    self->counts[lo]++;
    self->count++;
    self->sum += value;
}

void prom_number(char *buf, size_t cap, double v) {
    if (isnan(v)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.1f", v);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

prom_writer_t prom_writer(buffer_t *out) {
    return (prom_writer_t){.out = out, .rc = 0};
}

static void prom_put(prom_writer_t *w, const char *s, size_t n) {
    if (buffer_append(w->out, s, n) < 0)
        w->rc = -1;
}

static void prom_puts(prom_writer_t *w, const char *s) {
    prom_put(w, s, strlen(s));
}

/* Backslash and newline are escaped in help text; label values also escape the quote. */
static void prom_put_escaped(prom_writer_t *w, const char *s, int quote) {
    for (const char *run = s;; s++) {
        char c = *s;
        if (c && c != '\\' && c != '\n' && !(quote && c == '"'))
            continue;
        prom_put(w, run, (size_t)(s - run));
        if (!c)
            return;
        prom_puts(w, c == '\n' ? "\\n" : c == '\\' ? "\\\\" : "\\\"");
        run = s + 1;
    }
}

void prom_family(prom_writer_t *w, const char *name, const char *type, const char *help) {
    prom_puts(w, "# HELP ");
    prom_puts(w, name);
    prom_puts(w, " ");
    prom_put_escaped(w, help, 0);
    prom_puts(w, "\n# TYPE ");
    prom_puts(w, name);
    prom_puts(w, " ");
    prom_puts(w, type);
    prom_puts(w, "\n");
}

static void prom_put_label(prom_writer_t *w, const char *name, const char *value, int first) {
    if (!first)
        prom_puts(w, ",");
    prom_puts(w, name);
    prom_puts(w, "=\"");
    prom_put_escaped(w, value, 1);
    prom_puts(w, "\"");
}

/* name{labels[, le]} value: le (when not NULL) goes before the first label named after it. */
static void prom_line(prom_writer_t *w, const char *name, const char *suffix,
                      const prom_label_t *labels, size_t n, const char *le, double value) {
    prom_puts(w, name);
    prom_puts(w, suffix);
    if (n || le) {
        prom_puts(w, "{");
        int first = 1;
        for (size_t i = 0; i < n; i++) {
            if (le && strcmp(labels[i].name, "le") > 0) {
                prom_put_label(w, "le", le, first);
                first = 0;
                le = NULL;
            }
            prom_put_label(w, labels[i].name, labels[i].value, first);
            first = 0;
        }
        if (le)
            prom_put_label(w, "le", le, first);
        prom_puts(w, "}");
    }
    char num[48];
    prom_number(num, sizeof(num), value);
    prom_puts(w, " ");
    prom_puts(w, num);
    prom_puts(w, "\n");
}

void prom_sample(prom_writer_t *w, const char *name, const prom_label_t *labels, size_t n_labels,
                 double value) {
    prom_line(w, name, "", labels, n_labels, NULL, value);
}

void prom_histogram(prom_writer_t *w, const char *name, const char *help,
                    const prom_label_t *labels, size_t n_labels, const prom_histogram_t *h) {
    prom_family(w, name, "histogram", help);
    uint64_t cumulative = 0;
    char le[48];
    for (uint32_t i = 0; i <= h->n_bounds; i++) {
        cumulative += h->counts[i];
        prom_number(le, sizeof(le), i < h->n_bounds ? h->bounds[i] : INFINITY);
        prom_line(w, name, "_bucket", labels, n_labels, le, (double)cumulative);
    }
    prom_line(w, name, "_count", labels, n_labels, NULL, (double)h->count);
    prom_line(w, name, "_sum", labels, n_labels, NULL, h->sum);
}
