/* A token chunk of one word, for the tests that hold the mock's chunks to vLLM's bytes
 * (test_mock_chunk); the mock writes several tokens between open and close. */
#include "support.h"

#include <string.h>

char *mock_chunk_token(char *p, const mock_chunk_head_t *head, const char *word, size_t word_len,
                       bool reasoning, const char *finish, const mock_chunk_usage_t *usage,
                       int64_t sent_ns) {
    p = mock_chunk_token_open(p, head, reasoning);
    memcpy(p, word, word_len);
    return mock_chunk_token_close(p + word_len, head, finish, usage, sent_ns);
}
