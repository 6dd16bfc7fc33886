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
/* Whitespace-separated words of text[0..len) (space, tab, newline, CR, FF, VT separate): what
 * stampede counts as a text's tokens without a tokenizer, as the simulated server does. */
size_t prompt_count_words(const char *text, size_t len);
/* Writes n_words words drawn uniformly with rng at buf, separated by single spaces (no leading or
 * trailing space), NUL-terminated. The caller appends by passing the end of its text as buf and
 * the room left there as cap. Returns the bytes written (without the NUL), or -1 if they would
 * not fit in cap, leaving buf[0] = '\0'. */
long prompt_append_words(rng_t *rng, uint32_t n_words, char *buf, size_t cap);

/* The words of the vocabulary that a target's tokenizer reads as exactly one token, both at the
 * start of a text and after a space, so that n words of them are n tokens in it. */
typedef struct prompt_words prompt_words_t;
struct tokenizer;
struct tokenizer_scratch;
/* Builds the list for a tokenizer; NULL with err filled when fewer than 100 words qualify or
 * memory is exhausted. */
prompt_words_t *prompt_words_new(const struct tokenizer *tokenizer,
                                 struct tokenizer_scratch *scratch, char *err, size_t err_len);
void prompt_words_destroy(prompt_words_t **self_p);
/* Makes prompt_append_words on the calling thread draw from words (NULL: the whole vocabulary,
 * the default). A worker thread sets it when a run with target.tokenizer starts; the list must
 * outlive the thread's use of it. With every word qualifying (the Llama-3 and Qwen tokenizers)
 * the text is the same as without it. */
void prompt_use_words(const prompt_words_t *words);

#endif
