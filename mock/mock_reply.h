/* What the simulated model answers a parsed request, before any timing: vLLM's context-length
 * refusal, or the reply's length, finish reason, reasoning tokens and words (named by a key drawn
 * from the prompt), and the token ids and block hashes the engine sees. One place for the server
 * (mock_stream.c) and the virtual server (mock_virtual.c), so both answer a body alike. */
#ifndef STAMPEDE_MOCK_REPLY_H
#define STAMPEDE_MOCK_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "mock_api.h"
#include "mock_metrics.h"
#include "mock_options.h"
#include "mock_vocab.h"

typedef struct mock_reply {
    uint64_t key;              /* XXH3 of the prompt's ids seeded with --seed: the reply's words */
    uint32_t output_tokens;    /* >= 1 */
    mock_finish_t finish;      /* stop (the drawn natural length) or length (the cap) */
    uint32_t reasoning_tokens; /* the first ones (chat with --reasoning-tokens), <= output_tokens */
} mock_reply_t;

/* The reply to api (prompt non-empty) under o: 0 with *out filled, or 400 with vLLM's
 * context-length message in err when prompt + max_tokens (or the prompt alone, without
 * max_tokens) passes --max-model-len. */
int mock_reply_plan(const mock_options_t *o, const mock_api_request_t *api, mock_reply_t *out,
                    char *err, size_t errlen);
/* vLLM's message for a prompt plus completion beyond the limit. */
void mock_reply_context_error(char *err, size_t errlen, uint32_t limit, uint32_t prompt,
                              uint64_t completion);
/* The draw in [0, 1) of field for key under o's seed (the mock's own randomness). */
double mock_reply_draw(const mock_options_t *o, uint64_t key, uint32_t field);
/* The request's whole token sequence into ids (prompt[0..n_prompt), then the reply's
 * output_tokens words of key) and its chained block hashes into hashes (room for
 * (n_prompt + output_tokens) / 16 + 1); returns the number of full blocks. */
uint32_t mock_reply_sequence(const mock_vocab_t *vocab, const uint64_t *prompt, uint32_t n_prompt,
                             uint64_t key, uint32_t output_tokens, uint64_t *ids, uint64_t *hashes);

#endif
