#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unit_main.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_prompt_vocabulary_has_1000_unique_lowercase_words(void **state) {
    uint32_t n = prompt_vocabulary_size();
    assert_true(n >= 1000);
    const char **sorted = malloc(n * sizeof *sorted);
    assert_non_null(sorted);
    size_t longest = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *w = prompt_word(i);
        assert_non_null(w);
        assert_true(w[0] != '\0');
        for (const char *c = w; *c; c++) {
            if (!(*c >= 'a' && *c <= 'z'))
                fail_msg("word %u '%s' has a character outside a-z", i, w);
        }
        longest = strlen(w) > longest ? strlen(w) : longest;
        sorted[i] = w;
    }
    qsort(sorted, n, sizeof *sorted, compare_strings);
    for (uint32_t i = 1; i < n; i++) {
        if (strcmp(sorted[i], sorted[i - 1]) == 0)
            fail_msg("'%s' appears twice", sorted[i]);
    }
    free(sorted);
    assert_int_equal(prompt_max_word_length(), longest);
    assert_null(prompt_word(n));
}

/* Counts maximal runs of non-space characters, the way the simulated server counts tokens. */
static uint32_t count_words(const char *text) {
    uint32_t n = 0;
    for (const char *c = text; *c; c++) {
        if (!isspace((unsigned char)*c) && (c == text || isspace((unsigned char)c[-1])))
            n++;
    }
    return n;
}

static void test_prompt_n_words_are_exactly_n_vocabulary_words(void **state) {
    static const uint32_t sizes[] = {0, 1, 2, 7, 100, 4096, 50000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t n = sizes[s];
        size_t cap = prompt_max_bytes(n);
        char *buf = malloc(cap);
        assert_non_null(buf);
        rng_t rng;
        rng_init(&rng, 1, RNG_STREAM_PROMPT, s, 0, RNG_FIELD_TEXT);
        long len = prompt_append_words(&rng, n, buf, cap);
        assert_true(len >= 0);
        assert_int_equal((size_t)len, strlen(buf));
        assert_int_equal(count_words(buf), n);
        if (n > 0) { /* single spaces, none leading or trailing */
            assert_true(buf[0] != ' ' && buf[len - 1] != ' ');
            assert_null(strstr(buf, "  "));
        }
        free(buf);
    }
}

/* prompt_append_words of `n` words into buf from a fresh prompt stream at (seed, entity, sub). */
static long fresh_words(uint64_t seed, uint64_t entity, uint64_t sub, uint32_t n, char *buf,
                        size_t cap) {
    rng_t rng;
    rng_init(&rng, seed, RNG_STREAM_PROMPT, entity, sub, RNG_FIELD_TEXT);
    return prompt_append_words(&rng, n, buf, cap);
}

static void test_prompt_text_is_reproducible_from_its_coordinates(void **state) {
    char a[8192], b[8192], c[8192];
    assert_true(fresh_words(42, 17, 3, 500, a, sizeof a) > 0);
    assert_true(fresh_words(42, 17, 3, 500, b, sizeof b) > 0);
    assert_string_equal(a, b);
    assert_true(fresh_words(43, 17, 3, 500, c, sizeof c) > 0);
    assert_true(strcmp(a, c) != 0);
}

static void test_prompt_refuses_what_does_not_fit_and_accepts_an_exact_fit(void **state) {
    char buf[4096];
    long len = fresh_words(5, 0, 0, 300, buf, sizeof buf);
    assert_true(len > 0);
    assert_int_equal(fresh_words(5, 0, 0, 300, buf, (size_t)len + 1), len);
    assert_int_equal(fresh_words(5, 0, 0, 300, buf, (size_t)len), -1);
    assert_string_equal(buf, "");
    rng_t rng;
    rng_init(&rng, 5, RNG_STREAM_PROMPT, 0, 0, RNG_FIELD_TEXT);
    assert_int_equal(prompt_append_words(&rng, 0, buf, 0), -1);
    assert_int_equal(prompt_append_words(&rng, 0, buf, 1), 0);
    assert_string_equal(buf, "");
}

static void test_prompt_appending_at_the_end_extends_the_text(void **state) {
    char buf[2048];
    rng_t rng;
    rng_init(&rng, 6, RNG_STREAM_PROMPT, 0, 0, RNG_FIELD_TEXT);
    long first = prompt_append_words(&rng, 10, buf, sizeof buf);
    assert_true(first > 0);
    buf[first] = ' ';
    long second = prompt_append_words(&rng, 20, buf + first + 1, sizeof buf - (size_t)first - 1);
    assert_true(second > 0);
    assert_int_equal(strlen(buf), (size_t)(first + 1 + second));
    assert_int_equal(count_words(buf), 30);
}

static void test_prompt_words_are_drawn_uniformly(void **state) {
    /* 1,200 draws per word on average; Pearson's statistic within 6 sd of its mean (k - 1). */
    uint32_t n = prompt_vocabulary_size();
    uint32_t per_word = 1200, total = n * per_word;
    uint32_t *counts = calloc(n, sizeof *counts);
    size_t cap = prompt_max_bytes(total);
    char *buf = malloc(cap);
    assert_non_null(counts);
    assert_non_null(buf);
    rng_t rng;
    rng_init(&rng, 3, RNG_STREAM_PROMPT, 0, 0, RNG_FIELD_TEXT);
    assert_true(prompt_append_words(&rng, total, buf, cap) > 0);
    /* Map each word back to its index through a sorted copy of the vocabulary. */
    const char **sorted = malloc(n * sizeof *sorted);
    assert_non_null(sorted);
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = prompt_word(i);
    qsort(sorted, n, sizeof *sorted, compare_strings);
    char *save = NULL;
    uint32_t seen = 0;
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        const char **hit = bsearch(&w, sorted, n, sizeof *sorted, compare_strings);
        if (hit == NULL)
            fail_msg("'%s' is not in the vocabulary", w);
        counts[hit - sorted]++;
        seen++;
    }
    assert_int_equal(seen, total);
    double chi = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        double d = counts[i] - (double)per_word;
        chi += d * d / per_word;
    }
    double dof = n - 1.0;
    assert_true(fabs(chi - dof) < 6.0 * sqrt(2.0 * dof));
    free(sorted);
    free(buf);
    free(counts);
}

UNIT_MAIN(cmocka_unit_test(test_prompt_vocabulary_has_1000_unique_lowercase_words),
          cmocka_unit_test(test_prompt_n_words_are_exactly_n_vocabulary_words),
          cmocka_unit_test(test_prompt_text_is_reproducible_from_its_coordinates),
          cmocka_unit_test(test_prompt_refuses_what_does_not_fit_and_accepts_an_exact_fit),
          cmocka_unit_test(test_prompt_appending_at_the_end_extends_the_text),
          cmocka_unit_test(test_prompt_words_are_drawn_uniformly))
