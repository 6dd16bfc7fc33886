/* The command-line spec of a distribution ("lognormal:mean=200,sigma=0.5"): parsing and writing. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dist_internal.h"

/* A list of numbers separated by ';' into a malloc'd array. */
static int dist_parse_list(const char *s, const char *end, double **out, size_t *n_out,
                           const char *what, char *err, size_t errlen) {
    dist_builder_t b = {0};
    while (s <= end) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        const char *stop = semi ? semi : end;
        double v;
        if (!dist_parse_number(s, stop, &v)) {
            dist_error(err, errlen, "empirical %s: expected a number, got '%.*s'", what,
                       (int)(stop - s), s);
            dist_builder_free(&b);
            return -1;
        }
        if (dist_builder_push(&b, v, false, 0.0) != 0) {
            dist_error(err, errlen, "out of memory for empirical %s", what);
            dist_builder_free(&b);
            return -1;
        }
        s = stop + 1;
    }
    free(*out);
    *out = b.values;
    *n_out = b.n;
    return 0;
}

/* Trims blanks from both ends of [s, *end): returns the new start and moves *end back. */
static const char *dist_trim(const char **end, const char *s) {
    while (s < *end && isspace((unsigned char)*s))
        s++;
    while (*end > s && isspace((unsigned char)(*end)[-1]))
        (*end)--;
    return s;
}

/* Whether [s, end) is exactly word. */
static bool dist_token_is(const char *s, const char *end, const char *word) {
    size_t n = strlen(word);
    return (size_t)(end - s) == n && memcmp(s, word, n) == 0;
}

/* The parts of an empirical spec, gathered before they are applied (weights may come first). */
typedef struct dist_spec_lists {
    double *values, *weights;
    size_t n_values, n_weights;
    char *file;
} dist_spec_lists_t;

/* An empirical part, "values=LIST", "weights=LIST" or "file=PATH", kept in lists for later. */
static int dist_parse_empirical_param(dist_spec_lists_t *lists, const char *name, const char *value,
                                      const char *end, char *err, size_t errlen) {
    if (name[0] == 'v')
        return dist_parse_list(value, end, &lists->values, &lists->n_values, "values", err, errlen);
    if (name[0] == 'w')
        return dist_parse_list(value, end, &lists->weights, &lists->n_weights, "weights", err,
                               errlen);
    const char *path_end = end, *path = dist_trim(&path_end, value);
    free(lists->file);
    lists->file = strndup(path, (size_t)(path_end - path));
    if (lists->file == NULL || lists->file[0] == '\0') {
        dist_error(err, errlen, "empirical: file needs a path");
        return -1;
    }
    return 0;
}

/* One "name=value" of [s, end): a parameter set on out, or an empirical part kept in lists. */
static int dist_parse_param(dist_t *out, const char *s, const char *end, dist_spec_lists_t *lists,
                            char *err, size_t errlen) {
    const char *kind = dist_kind_name(out->kind);
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (eq == NULL) {
        const char *e = end, *t = dist_trim(&e, s);
        dist_error(err, errlen, "%s: expected name=value, got '%.*s'", kind, (int)(e - t), t);
        return -1;
    }
    const char *name_end = eq, *name = dist_trim(&name_end, s);
    bool list = dist_token_is(name, name_end, "values") || dist_token_is(name, name_end, "weights");
    if (list || dist_token_is(name, name_end, "file")) {
        if (out->kind != DIST_EMPIRICAL) {
            dist_error(err, errlen, "%s does not take %.*s (it takes %s)", kind,
                       (int)(name_end - name), name, dist_kind_params(out->kind));
            return -1;
        }
        return dist_parse_empirical_param(lists, name, eq + 1, end, err, errlen);
    }
    char pname[32];
    snprintf(pname, sizeof pname, "%.*s", (int)(name_end - name), name);
    dist_param_t param;
    if ((size_t)(name_end - name) >= sizeof pname || dist_param_from_name(pname, &param) != 0) {
        dist_error(err, errlen, "%s has no parameter '%.*s' (it takes %s)", kind,
                   (int)(name_end - name), name, dist_kind_params(out->kind));
        return -1;
    }
    if (out->given & DIST_BIT(param)) {
        dist_error(err, errlen, "%s: %s given twice", kind, pname);
        return -1;
    }
    double value;
    if (!dist_parse_number(eq + 1, end, &value)) {
        const char *e = end, *t = dist_trim(&e, eq + 1);
        dist_error(err, errlen, "%s: %s needs a number, got '%.*s'", kind, pname, (int)(e - t), t);
        return -1;
    }
    return dist_set(out, param, value, err, errlen);
}

/* Applies the gathered empirical parts: values (and weights), or a file. */
static int dist_apply_lists(dist_t *out, dist_spec_lists_t *lists, char *err, size_t errlen) {
    if (lists->file && (lists->values || lists->weights)) {
        dist_error(err, errlen, "empirical takes values or file, not both");
        return -1;
    }
    if (lists->file)
        return dist_load_file(out, lists->file, err, errlen);
    if (lists->weights && !lists->values) {
        dist_error(err, errlen, "empirical weights need values");
        return -1;
    }
    if (dist_set_values(out, lists->values, NULL, lists->n_values, err, errlen) != 0)
        return -1;
    if (lists->weights)
        return dist_set_weights(out, lists->weights, lists->n_weights, err, errlen);
    return 0;
}

/* The comma-separated parameters after "kind:", then the empirical parts they named. */
static int dist_parse_params(dist_t *out, const char *s, const char *end, char *err,
                             size_t errlen) {
    dist_spec_lists_t lists = {0};
    int rc = 0;
    while (rc == 0 && s < end) {
        const char *e = end, *t = dist_trim(&e, s);
        bool is_file =
            (size_t)(e - t) > 4 && strncmp(t, "file", 4) == 0 && *dist_trim(&e, t + 4) == '=';
        /* A path may hold commas, so file= takes the rest of the spec. */
        const char *comma = is_file ? NULL : memchr(s, ',', (size_t)(end - s));
        const char *stop = comma ? comma : end;
        rc = dist_parse_param(out, s, stop, &lists, err, errlen);
        s = stop + 1;
    }
    if (rc == 0 && out->kind == DIST_EMPIRICAL)
        rc = dist_apply_lists(out, &lists, err, errlen);
    free(lists.values);
    free(lists.weights);
    free(lists.file);
    return rc;
}

/* Every kind name, space-separated, for the message about an unknown one. */
static void dist_known_kinds(char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < DIST__COUNT && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? " " : "",
                                 dist_kind_name((dist_kind_t)k));
}

int dist_parse_spec(const char *spec, dist_t *out, char *err, size_t errlen) {
    dist_init(out);
    const char *end = spec + strlen(spec), *s = dist_trim(&end, spec);
    if (s == end) {
        dist_error(err, errlen, "empty distribution (expected a number or kind:name=value,...)");
        return -1;
    }
    const char *colon = memchr(s, ':', (size_t)(end - s));
    const char *kind_end = colon ? colon : end;
    double value;
    if (!colon && dist_parse_number(s, end, &value)) {
        dist_fixed(out, value);
        return 0;
    }
    const char *kind_start = dist_trim(&kind_end, s);
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(kind_end - kind_start), kind_start);
    dist_kind_t kind;
    if ((size_t)(kind_end - kind_start) >= sizeof name || dist_kind_from_name(name, &kind) != 0) {
        char known[160];
        dist_known_kinds(known, sizeof known);
        dist_error(err, errlen, "'%.*s' is neither a number nor a distribution (known: %s)",
                   (int)(kind_end - kind_start), kind_start, known);
        return -1;
    }
    out->kind = kind;
    if ((colon && dist_parse_params(out, colon + 1, end, err, errlen) != 0) ||
        dist_prepare(out, err, errlen) != 0) {
        dist_clear(out);
        return -1;
    }
    return 0;
}
