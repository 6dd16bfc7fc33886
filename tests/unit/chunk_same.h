/* Whether two chunk_info_t say the same, field by field (pointers compared as pointers, so both
 * must come from the same buffer): chunk_parse_shaped against chunk_parse in test_chunk and in
 * the chunk fuzz target. Header-only, without cmocka, so both can include it. */
#ifndef STAMPEDE_TEST_CHUNK_SAME_H
#define STAMPEDE_TEST_CHUNK_SAME_H

#include <stdbool.h>

#include "chunk.h"

static inline bool chunk_info_same(const chunk_info_t *a, const chunk_info_t *b) {
    return a->done == b->done && a->content == b->content && a->content_len == b->content_len &&
           a->has_content == b->has_content && a->reasoning == b->reasoning &&
           a->reasoning_len == b->reasoning_len && a->has_reasoning == b->has_reasoning &&
           a->refusal == b->refusal && a->refusal_len == b->refusal_len &&
           a->has_refusal == b->has_refusal && a->has_tool_calls == b->has_tool_calls &&
           a->finish_reason == b->finish_reason && a->finish_reason_len == b->finish_reason_len &&
           a->has_usage == b->has_usage && a->usage_fields == b->usage_fields &&
           a->prompt_tokens == b->prompt_tokens && a->completion_tokens == b->completion_tokens &&
           a->cached_tokens == b->cached_tokens && a->has_error == b->has_error &&
           a->error_message == b->error_message && a->error_message_len == b->error_message_len &&
           a->error_code == b->error_code && a->response_id == b->response_id &&
           a->response_id_len == b->response_id_len && a->has_sent_ns == b->has_sent_ns &&
           a->sent_ns == b->sent_ns;
}

#endif
