/* Prompt text: words drawn from a fixed vocabulary of common English words that are one token
 * each for the Llama-3 and Qwen2 tokenizers, so a prompt of N words is about N tokens (and exactly
 * N whitespace-separated words, which is what the simulated server counts). */
#ifndef STAMPEDE_PROMPT_H
#define STAMPEDE_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* Number of words in the vocabulary (at least 1,000). */
uint32_t prompt_vocabulary_size(void);
/* Word i of the vocabulary (i < prompt_vocabulary_size()): a static lowercase string. */
const char *prompt_word(uint32_t i);
/* Length in bytes of the longest vocabulary word. */
size_t prompt_max_word_length(void);
/* Buffer size that always holds n_words appended words and the terminating NUL. */
size_t prompt_max_bytes(uint32_t n_words);
/* Writes n_words words drawn uniformly with rng at buf, separated by single spaces (no leading or
 * trailing space), NUL-terminated. The caller appends by passing the end of its text as buf and
 * the room left there as cap. Returns the bytes written (without the NUL), or -1 if they would
 * not fit in cap, leaving buf[0] = '\0'. */
long prompt_append_words(rng_t *rng, uint32_t n_words, char *buf, size_t cap);

#endif
