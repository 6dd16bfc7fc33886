/* CPU cost of writing one request body around a long prompt (argv[1] words, default 10000), per
 * request: worker/body's own escaper against jansson through common/escape, which would replace
 * it. The body is built on the worker's loop, so its cost delays every other stream's receive
 * stamps. Prints numbers; never passes or fails. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_cpu.h"
#include "body.h"
#include "buffer.h"
#include "escape.h"
#include "prompt.h"
#include "rng.h"

#define ROUNDS 5 /* the best of a few runs: the machine is shared and noisy */
#define ITERATIONS 200

int main(int argc, char **argv) {
    uint32_t words = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
    size_t cap = prompt_max_bytes(words);
    char *text = malloc(cap);
    rng_t rng;
    rng_init(&rng, 1, 0, 0, 0, 0);
    long len = text ? prompt_append_words(&rng, words, text, cap) : -1;
    if (len < 0) {
        fprintf(stderr, "bench_body: cannot make a %u-word prompt\n", words);
        free(text);
        return 1;
    }
    body_t body;
    body_init(&body);
    body_options_t options = {
        .api = API_COMPLETIONS, .model = "m", .max_tokens = 16, .stream = true};
    buffer_t escaped;
    buffer_init(&escaped);
    double best_body = 1e30, best_jansson = 1e30;
    uint64_t bytes = 0; /* consumed so the compiler cannot drop the work */
    int failures = 0;
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = bench_cpu_thread_ns();
        for (int i = 0; i < ITERATIONS; i++) {
            body_begin(&body, &options);
            body_add(&body, "user", text, (size_t)len);
            failures += body_end(&body) < 0;
            bytes += body.len;
        }
        double t1 = bench_cpu_thread_ns();
        for (int i = 0; i < ITERATIONS; i++) {
            buffer_reset(&escaped);
            failures += escape_json_append(&escaped, text, (size_t)len) < 0;
            bytes += escaped.len;
        }
        double t2 = bench_cpu_thread_ns();
        if ((t1 - t0) / ITERATIONS < best_body)
            best_body = (t1 - t0) / ITERATIONS;
        if ((t2 - t1) / ITERATIONS < best_jansson)
            best_jansson = (t2 - t1) / ITERATIONS;
    }
    printf("bench_body: %u-word prompt (%ld bytes), best of %d x %d, %d failures, %llu bytes\n",
           words, len, ROUNDS, ITERATIONS, failures, (unsigned long long)bytes);
    printf("body (own escaper, whole body): %.1f us/request (%.2f ns/byte)\n", best_body / 1e3,
           best_body / (double)len);
    printf("escape_json_append (jansson, prompt only): %.1f us/request (%.2f ns/byte), %.1fx\n",
           best_jansson / 1e3, best_jansson / (double)len, best_jansson / best_body);
    body_free(&body);
    buffer_clear(&escaped);
    free(text);
    return failures ? 1 : 0;
}
