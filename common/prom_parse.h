/* Reads the Prometheus text exposition format (0.0.4) into samples: name, labels, value. The
 * reverse of common/prom. Built to read pages from servers we do not control: it takes a length
 * (a NUL byte is an error, never an end), loops over lines without recursion, keeps at most
 * PROM_PARSE_MAX_LABELS labels per sample, and skips a malformed line (counted, the first one's
 * number and reason kept) rather than losing the page. */
#ifndef STAMPEDE_PROM_PARSE_H
#define STAMPEDE_PROM_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prom.h"

#define PROM_PARSE_MAX_LABELS 32

/* One sample line: name{labels} value [timestamp]. Strings are unescaped and NUL-terminated, and
 * owned by the page. */
typedef struct prom_parsed_sample {
    const char *name;
    const prom_label_t *labels;
    size_t n_labels;
    double value; /* NaN, +Inf and -Inf as the format spells them */
    bool has_timestamp;
    int64_t timestamp_ms;
} prom_parsed_sample_t;

/* The samples of one page in page order, and what was skipped. */
typedef struct prom_page {
    prom_parsed_sample_t *samples;
    size_t n_samples;
    size_t lines_skipped;    /* malformed lines */
    size_t first_error_line; /* 1-based; 0 when none was skipped */
    char first_error[160];   /* why that line was skipped */
    /* private: the storage the samples point into */
    char *strings;
    size_t strings_len, strings_cap;
    size_t samples_cap;
    prom_label_t *labels;
    size_t n_labels, labels_cap;
    char **type_names; /* # TYPE lines: family name -> type */
    char **type_values;
    size_t n_types, types_cap;
} prom_page_t;

/* Parses text[0..len) into a new page the caller destroys; NULL only when out of memory. A line
 * may end in LF, CRLF or the end of the text. */
prom_page_t *prom_page_parse(const char *text, size_t len);
/* Frees the page and sets *self_p to NULL (NULL is fine). */
void prom_page_destroy(prom_page_t **self_p);
/* The value of label name in sample s, or NULL when s has no such label. */
const char *prom_sample_label(const prom_parsed_sample_t *s, const char *name);

#endif
