/* The Prometheus text parser (common/prom_parse.c) on arbitrary pages: what a server we do not
 * control may answer on /metrics. Every sample has a non-empty name no longer than the page, at
 * most PROM_PARSE_MAX_LABELS labels, each with a name and a value; samples plus skipped lines
 * never exceed the page's lines; a second parse of the same bytes gives the same samples (the
 * parser keeps no state between pages); the page's type table answers for every sample name. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "prom_parse.h"

/* Lines of the page as the parser counts them: LF-terminated, plus a last unterminated one. */
static size_t fuzz_prom_lines(const char *text, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    return n + (len > 0 && text[len - 1] != '\n');
}

static void fuzz_prom_same(const prom_page_t *a, const prom_page_t *b) {
    FUZZ_CHECK(a->n_samples == b->n_samples);
    FUZZ_CHECK(a->lines_skipped == b->lines_skipped);
    FUZZ_CHECK(a->first_error_line == b->first_error_line);
    for (size_t i = 0; i < a->n_samples; i++) {
        const prom_parsed_sample_t *x = &a->samples[i], *y = &b->samples[i];
        FUZZ_CHECK(strcmp(x->name, y->name) == 0);
        FUZZ_CHECK(x->n_labels == y->n_labels);
        FUZZ_CHECK((isnan(x->value) && isnan(y->value)) || x->value == y->value);
        for (size_t l = 0; l < x->n_labels; l++) {
            FUZZ_CHECK(strcmp(x->labels[l].name, y->labels[l].name) == 0);
            FUZZ_CHECK(strcmp(x->labels[l].value, y->labels[l].value) == 0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    prom_page_t *page = prom_page_parse(text, size);
    if (!page)
        return 0; /* out of memory */
    FUZZ_CHECK(page->n_samples + page->lines_skipped <= fuzz_prom_lines(text, size));
    FUZZ_CHECK((page->lines_skipped == 0) == (page->first_error_line == 0));
    for (size_t i = 0; i < page->n_samples; i++) {
        const prom_parsed_sample_t *s = &page->samples[i];
        FUZZ_CHECK(s->name && s->name[0] && strlen(s->name) <= size);
        FUZZ_CHECK(s->n_labels <= PROM_PARSE_MAX_LABELS);
        FUZZ_CHECK(s->n_labels == 0 || s->labels);
        for (size_t l = 0; l < s->n_labels; l++) {
            FUZZ_CHECK(s->labels[l].name && s->labels[l].name[0] && s->labels[l].value);
            FUZZ_CHECK(prom_sample_label(s, s->labels[l].name) != NULL);
        }
    }
    for (size_t i = 0; i < page->n_types; i++)
        FUZZ_CHECK(page->type_names[i] && page->type_names[i][0] && page->type_values[i]);
    prom_page_t *again = prom_page_parse(text, size);
    if (again)
        fuzz_prom_same(page, again);
    prom_page_destroy(&again);
    prom_page_destroy(&page);
    FUZZ_CHECK(page == NULL);
    return 0;
}
