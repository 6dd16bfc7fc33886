/* The text exposition format 0.0.4, as Prometheus' own expfmt text parser reads it: comment
 * lines (only "# TYPE" is kept; "# HELP" and any other comment is skipped), and sample lines
 * `name[{label="value",...}] value [timestamp_ms]` with blanks (spaces, tabs) between tokens.
 * Label values unescape \\, \" and \n. Every string of the page is unescaped into one block
 * sized up front (2 × the text: output never outgrows its input plus a NUL per string), so the
 * pointers handed out never move. */
#include "prom_parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

/* The longest number token read (a float's text is far shorter; longer is an error). */
#define PROM_PARSE_NUMBER_MAX 64

/* A cursor over one line [p, end). */
typedef struct prom_line {
    const char *p;
    const char *end;
    const char *why; /* set on the first error */
} prom_line_t;

static bool prom_parse_is_name_start(char c, bool metric) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':');
}

static bool prom_parse_is_name_char(char c, bool metric) {
    return prom_parse_is_name_start(c, metric) || (c >= '0' && c <= '9');
}

static void prom_parse_skip_blanks(prom_line_t *l) {
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
        l->p++;
}

/* Appends bytes as one NUL-terminated string to the page's block; never reallocates (the block
 * was sized for the whole text). */
static const char *prom_parse_store(prom_page_t *self, const char *s, size_t n) {
    char *out = self->strings + self->strings_len;
    memcpy(out, s, n);
    out[n] = '\0';
    self->strings_len += n + 1;
    return out;
}

/* A metric or label name at the cursor, stored; NULL with why set when there is none. */
static const char *prom_parse_name(prom_page_t *self, prom_line_t *l, bool metric) {
    const char *start = l->p;
    if (l->p >= l->end || !prom_parse_is_name_start(*l->p, metric)) {
        l->why = metric ? "expected a metric name" : "expected a label name";
        return NULL;
    }
    while (l->p < l->end && prom_parse_is_name_char(*l->p, metric))
        l->p++;
    return prom_parse_store(self, start, (size_t)(l->p - start));
}

/* A quoted label value at the cursor (after the opening quote), unescaped and stored. */
static const char *prom_parse_label_value(prom_page_t *self, prom_line_t *l) {
    char *out = self->strings + self->strings_len, *w = out;
    while (l->p < l->end && *l->p != '"') {
        char c = *l->p++;
        if (c == '\\') {
            if (l->p >= l->end)
                break;
            c = *l->p++;
            if (c == 'n')
                c = '\n';
            else if (c != '\\' && c != '"') {
                l->why = "invalid escape in a label value (only \\\\, \\\" and \\n)";
                return NULL;
            }
        }
        *w++ = c;
    }
    if (l->p >= l->end) {
        l->why = "unterminated label value";
        return NULL;
    }
    l->p++; /* the closing quote */
    *w = '\0';
    self->strings_len += (size_t)(w - out) + 1;
    return out;
}

static int prom_parse_add_label(prom_page_t *self, const char *name, const char *value) {
    if (buffer_grow_array(&self->labels, &self->labels_cap, self->n_labels + 1,
                          sizeof *self->labels) < 0)
        return -1;
    self->labels[self->n_labels++] = (prom_label_t){name, value};
    return 0;
}

/* The {...} part: labels appended to the page's label table. 0 ok, -1 with why set (or out of
 * memory with why NULL). */
static int prom_parse_labels(prom_page_t *self, prom_line_t *l, size_t *n_labels) {
    l->p++; /* '{' */
    for (;;) {
        prom_parse_skip_blanks(l);
        if (l->p < l->end && *l->p == '}') {
            l->p++;
            return 0;
        }
        if (*n_labels == PROM_PARSE_MAX_LABELS) {
            l->why = "too many labels";
            return -1;
        }
        const char *name = prom_parse_name(self, l, false);
        if (!name)
            return -1;
        prom_parse_skip_blanks(l);
        if (l->p >= l->end || *l->p != '=') {
            l->why = "expected '=' after a label name";
            return -1;
        }
        l->p++;
        prom_parse_skip_blanks(l);
        if (l->p >= l->end || *l->p != '"') {
            l->why = "expected a quoted label value";
            return -1;
        }
        l->p++;
        const char *value = prom_parse_label_value(self, l);
        if (!value)
            return -1;
        if (prom_parse_add_label(self, name, value) < 0)
            return -1;
        ++*n_labels;
        prom_parse_skip_blanks(l);
        if (l->p < l->end && *l->p == ',') {
            l->p++;
            continue;
        }
        if (l->p < l->end && *l->p == '}') {
            l->p++;
            return 0;
        }
        l->why = "expected ',' or '}' after a label";
        return -1;
    }
}

/* The next blank-separated token as a NUL-terminated copy in buf; false when there is none or
 * it is too long. */
static bool prom_parse_token(prom_line_t *l, char *buf, size_t cap) {
    prom_parse_skip_blanks(l);
    const char *start = l->p;
    while (l->p < l->end && *l->p != ' ' && *l->p != '\t')
        l->p++;
    size_t n = (size_t)(l->p - start);
    if (n == 0 || n >= cap)
        return false;
    memcpy(buf, start, n);
    buf[n] = '\0';
    return true;
}

/* A sample value as Go's strconv.ParseFloat reads it: decimal or exponent forms, and NaN, +Inf,
 * -Inf, Inf in any case. */
static bool prom_parse_float(const char *text, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0')
        return false;
    /* strtod also reads "infinity" and "nan(...)": the format's own spellings are enough. */
    const char *t = text + (*text == '+' || *text == '-');
    if ((t[0] == 'i' || t[0] == 'I') && strlen(t) != 3)
        return false;
    if ((t[0] == 'n' || t[0] == 'N') && strlen(t) != 3)
        return false;
    *out = v;
    return true;
}

static bool prom_parse_timestamp(const char *text, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

static int prom_parse_add_sample(prom_page_t *self, const prom_parsed_sample_t *s) {
    if (buffer_grow_array(&self->samples, &self->samples_cap, self->n_samples + 1,
                          sizeof *self->samples) < 0)
        return -1;
    self->samples[self->n_samples++] = *s;
    return 0;
}

/* One sample line. 0 ok or skipped (why set), -1 out of memory. */
static int prom_parse_sample_line(prom_page_t *self, prom_line_t *l) {
    size_t strings_mark = self->strings_len, labels_mark = self->n_labels;
    prom_parsed_sample_t s = {0};
    char token[PROM_PARSE_NUMBER_MAX];
    if (!(s.name = prom_parse_name(self, l, true)))
        goto skip;
    prom_parse_skip_blanks(l);
    /* The labels are kept as an index into the page's table until the end (it may grow). */
    s.labels = (const prom_label_t *)(uintptr_t)self->n_labels;
    if (l->p < l->end && *l->p == '{' && prom_parse_labels(self, l, &s.n_labels) < 0) {
        if (!l->why)
            return -1;
        goto skip;
    }
    if (!prom_parse_token(l, token, sizeof token) || !prom_parse_float(token, &s.value)) {
        l->why = "expected a number as the value";
        goto skip;
    }
    if (prom_parse_token(l, token, sizeof token)) {
        if (!prom_parse_timestamp(token, &s.timestamp_ms)) {
            l->why = "expected an integer timestamp (ms) after the value";
            goto skip;
        }
        s.has_timestamp = true;
    }
    prom_parse_skip_blanks(l);
    if (l->p < l->end) {
        l->why = "unexpected text after the value";
        goto skip;
    }
    return prom_parse_add_sample(self, &s);
skip:
    self->strings_len = strings_mark;
    self->n_labels = labels_mark;
    return 0;
}

/* "# TYPE name type": remembered; other comments are skipped. 0, or -1 out of memory. */
static int prom_parse_comment(prom_page_t *self, prom_line_t *l) {
    l->p++; /* '#' */
    prom_parse_skip_blanks(l);
    if (l->end - l->p < 4 || memcmp(l->p, "TYPE", 4) != 0)
        return 0;
    l->p += 4;
    if (l->p >= l->end || (*l->p != ' ' && *l->p != '\t'))
        return 0; /* "# TYPEx": a plain comment */
    prom_parse_skip_blanks(l);
    size_t mark = self->strings_len;
    const char *name = prom_parse_name(self, l, true);
    char type[16];
    if (!name || !prom_parse_token(l, type, sizeof type)) {
        self->strings_len = mark;
        l->why = "a TYPE line needs a metric name and a type";
        return 0;
    }
    if (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "histogram") &&
        strcmp(type, "summary") && strcmp(type, "untyped")) {
        self->strings_len = mark;
        l->why = "unknown metric type in a TYPE line";
        return 0;
    }
    if (buffer_grow_pair(&self->type_names, sizeof(char *), &self->type_values, sizeof(char *),
                         &self->types_cap, self->n_types + 1) < 0)
        return -1;
    self->type_names[self->n_types] = (char *)name;
    self->type_values[self->n_types++] = (char *)prom_parse_store(self, type, strlen(type));
    return 0;
}

static void prom_parse_note_skip(prom_page_t *self, size_t line_no, const char *why) {
    if (self->lines_skipped++ == 0) {
        self->first_error_line = line_no;
        snprintf(self->first_error, sizeof self->first_error, "%s", why);
    }
}

prom_page_t *prom_page_parse(const char *text, size_t len) {
    prom_page_t *self = calloc(1, sizeof *self);
    if (!self || !(self->strings = malloc(2 * len + 1))) {
        free(self);
        return NULL;
    }
    self->strings_cap = 2 * len + 1;
    const char *p = text, *end = text + len;
    for (size_t line_no = 1; p < end; line_no++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        prom_line_t l = {p, line_end, NULL};
        if (l.end > l.p && l.end[-1] == '\r')
            l.end--;
        p = nl ? nl + 1 : end;
        if (memchr(l.p, '\0', (size_t)(l.end - l.p))) {
            prom_parse_note_skip(self, line_no, "a NUL byte in the line");
            continue;
        }
        prom_parse_skip_blanks(&l);
        if (l.p == l.end)
            continue;
        int rc = *l.p == '#' ? prom_parse_comment(self, &l) : prom_parse_sample_line(self, &l);
        if (rc < 0) {
            prom_page_destroy(&self);
            return NULL;
        }
        if (l.why)
            prom_parse_note_skip(self, line_no, l.why);
    }
    for (size_t i = 0; i < self->n_samples; i++) {
        prom_parsed_sample_t *s = &self->samples[i];
        size_t first = (size_t)(uintptr_t)s->labels;
        s->labels = s->n_labels ? &self->labels[first] : NULL;
    }
    return self;
}

void prom_page_destroy(prom_page_t **self_p) {
    prom_page_t *self = *self_p;
    if (!self)
        return;
    free(self->strings);
    free(self->samples);
    free(self->labels);
    free(self->type_names);
    free(self->type_values);
    free(self);
    *self_p = NULL;
}

const char *prom_sample_label(const prom_parsed_sample_t *s, const char *name) {
    for (size_t i = 0; i < s->n_labels; i++)
        if (strcmp(s->labels[i].name, name) == 0)
            return s->labels[i].value;
    return NULL;
}
