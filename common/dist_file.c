/* Empirical distributions read from a file: one value, or "value weight", per line. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dist_internal.h"

/* Where a file's reading stands: what was kept, and the first line with and without a weight. */
typedef struct dist_file_reader {
    const char *path;
    dist_builder_t values;
    int lineno;
    int weighted_line, unweighted_line;
} dist_file_reader_t;

/* Splits a line at blanks or commas, keeping at most max fields; returns the field count. */
static int dist_split_fields(char *line, char **fields, int max) {
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n,", &save); tok;
         tok = strtok_r(NULL, " \t\r\n,", &save)) {
        if (n < max)
            fields[n] = tok;
        n++;
    }
    return n;
}

/* Reads one line (comment and blanks allowed) into the reader; -1 with "path:line: why". */
static int dist_file_line(dist_file_reader_t *r, char *line, char *err, size_t errlen) {
    const char *path = r->path;
    int lineno = r->lineno;
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *fields[2];
    int n = dist_split_fields(line, fields, 2);
    double value, weight = 1.0;
    if (n == 0)
        return 0;
    if (n > 2) {
        dist_error(err, errlen, "%s:%d: expected \"value\" or \"value weight\", got %d fields",
                   path, lineno, n);
        return -1;
    }
    if (!dist_parse_number(fields[0], fields[0] + strlen(fields[0]), &value)) {
        dist_error(err, errlen, "%s:%d: expected a number, got '%s'", path, lineno, fields[0]);
        return -1;
    }
    if (n == 2 && !dist_parse_number(fields[1], fields[1] + strlen(fields[1]), &weight)) {
        dist_error(err, errlen, "%s:%d: expected a weight, got '%s'", path, lineno, fields[1]);
        return -1;
    }
    if (n == 2 && weight < 0) {
        dist_error(err, errlen, "%s:%d: weight must be >= 0, got %g", path, lineno, weight);
        return -1;
    }
    if ((n == 2 && r->unweighted_line) || (n == 1 && r->weighted_line)) {
        dist_error(err, errlen, "%s:%d: every line needs a weight once one has (line %d %s)", path,
                   lineno, n == 2 ? r->unweighted_line : r->weighted_line,
                   n == 2 ? "has none" : "has one");
        return -1;
    }
    if (dist_builder_push(&r->values, value, n == 2, weight) != 0) {
        dist_error(err, errlen, "%s:%d: out of memory", path, lineno);
        return -1;
    }
    if (n == 2 && !r->weighted_line)
        r->weighted_line = lineno;
    else if (n == 1 && !r->unweighted_line)
        r->unweighted_line = lineno;
    return 0;
}

/* Reads every line of f; -1 with a message at the first bad line or a read error. */
static int dist_file_read(dist_file_reader_t *r, FILE *f, char *err, size_t errlen) {
    char *line = NULL;
    size_t linecap = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &linecap, f) != -1) {
        r->lineno++;
        rc = dist_file_line(r, line, err, errlen);
    }
    if (rc == 0 && ferror(f)) {
        dist_error(err, errlen, "%s: read error: %s", r->path, strerror(errno));
        rc = -1;
    }
    free(line);
    return rc;
}

int dist_load_file(dist_t *self, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        dist_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    dist_file_reader_t r = {.path = path};
    int rc = dist_file_read(&r, f, err, errlen);
    fclose(f);
    if (rc == 0 && r.values.n == 0) {
        dist_error(err, errlen, "%s: empirical needs at least one value, the file has none", path);
        rc = -1;
    }
    char *file = rc == 0 ? strdup(path) : NULL;
    if (rc == 0 && file == NULL) {
        dist_error(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    if (rc != 0) {
        dist_builder_free(&r.values);
        return -1;
    }
    dist_clear(self);
    self->kind = DIST_EMPIRICAL;
    self->values = r.values.values;
    self->weights = r.values.weights;
    self->n_values = r.values.n;
    self->file = file;
    return 0;
}
