#include "mock_reply.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "mock_prefix_cache.h"
#include "rng.h"

/* Fields of the reply's draws (RNG_STREAM_MOCK); mock_stream.c numbers its own after these. */
enum { MOCK_REPLY_DRAW_OUTPUT_LEN = 1, MOCK_REPLY_DRAW_REASONING = 2 };

double mock_reply_draw(const mock_options_t *o, uint64_t key, uint32_t field) {
    rng_t rng;
    rng_init(&rng, o->seed, RNG_STREAM_MOCK, key, 0, field);
    return rng_next_double(&rng);
}

static uint32_t mock_reply_sample_count(const mock_options_t *o, const dist_t *dist, uint64_t key,
                                        uint32_t field) {
    rng_t rng;
    rng_init(&rng, o->seed, RNG_STREAM_MOCK, key, 0, field);
    double v = dist_sample(dist, &rng);
    if (!(v > 0))
        return 0;
    return v >= UINT32_MAX ? UINT32_MAX : (uint32_t)llround(v);
}

void mock_reply_context_error(char *err, size_t errlen, uint32_t limit, uint32_t prompt,
                              uint64_t completion) {
    snprintf(err, errlen,
             "This model's maximum context length is %u tokens. However, you requested %llu "
             "tokens (%u in the messages, %llu in the completion). Please reduce the length "
             "of the messages or completion.",
             limit, (unsigned long long)prompt + completion, prompt,
             (unsigned long long)completion);
}

/* Output length and finish reason: max_tokens (or what max_model_len leaves) unless the
 * simulated model stops earlier at a length drawn from --output-len. */
static uint32_t mock_reply_length(const mock_options_t *o, const mock_api_request_t *api,
                                  uint32_t cap, uint64_t key, mock_finish_t *finish) {
    bool eos = !api->ignore_eos && (!api->has_max_tokens || o->early_eos);
    uint32_t natural = UINT32_MAX;
    if (eos) {
        natural = mock_reply_sample_count(o, &o->output_len, key, MOCK_REPLY_DRAW_OUTPUT_LEN);
        if (natural == 0)
            natural = 1;
    }
    if (natural < api->min_tokens)
        natural = api->min_tokens;
    *finish = natural >= cap ? MOCK_FINISH_LENGTH : MOCK_FINISH_STOP;
    return natural >= cap ? cap : natural;
}

int mock_reply_plan(const mock_options_t *o, const mock_api_request_t *api, mock_reply_t *out,
                    char *err, size_t errlen) {
    uint32_t prompt = api->prompt.len, limit = o->max_model_len;
    if (api->has_max_tokens && (uint64_t)prompt + api->max_tokens > limit) {
        mock_reply_context_error(err, errlen, limit, prompt, api->max_tokens);
        return 400;
    }
    if (!api->has_max_tokens && prompt >= limit) {
        snprintf(err, errlen,
                 "This model's maximum context length is %u tokens. However, you requested %u "
                 "tokens in the messages, Please reduce the length of the messages.",
                 limit, prompt);
        return 400;
    }
    uint32_t cap = api->has_max_tokens ? api->max_tokens : limit - prompt;
    memset(out, 0, sizeof(*out));
    out->key = XXH3_64bits_withSeed(api->prompt.ids, (size_t)prompt * sizeof(uint64_t), o->seed);
    out->output_tokens = mock_reply_length(o, api, cap, out->key, &out->finish);
    if (api->kind != MOCK_API_COMPLETIONS && o->reasoning_set) { /* chat, messages, responses */
        uint32_t r = mock_reply_sample_count(o, &o->reasoning, out->key, MOCK_REPLY_DRAW_REASONING);
        out->reasoning_tokens = r < out->output_tokens ? r : out->output_tokens;
    }
    return 0;
}

uint32_t mock_reply_sequence(const mock_vocab_t *vocab, const uint64_t *prompt, uint32_t n_prompt,
                             uint64_t key, uint32_t output_tokens, uint64_t *ids,
                             uint64_t *hashes) {
    memcpy(ids, prompt, (size_t)n_prompt * sizeof(*ids));
    for (uint32_t i = 0; i < output_tokens; i++)
        ids[n_prompt + i] = mock_vocab_token(vocab, mock_vocab_reply_word(vocab, key, i));
    return mock_prefix_cache_hash_blocks(ids, n_prompt + output_tokens, hashes);
}
