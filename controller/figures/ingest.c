#include "ingest.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

struct ingest {
    int64_t *chunk_ns;
    uint16_t *chunk_tokens;
    size_t cap;
    char error[200];
};

ingest_t *ingest_new(void) {
    return calloc(1, sizeof(ingest_t));
}

void ingest_destroy(ingest_t **self_p) {
    ingest_t *self = *self_p;
    if (!self)
        return;
    free(self->chunk_ns);
    free(self->chunk_tokens);
    free(self);
    *self_p = NULL;
}

/* The record.h error class of a wire error class (unknown values map to ERROR_PROTOCOL). */
static error_class_t ingest_error_class(Stampede__ErrorClass wire) {
    switch (wire) {
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_NONE:
        return ERROR_NONE;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_CONNECT:
        return ERROR_CONNECT;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_TIMEOUT:
        return ERROR_TIMEOUT;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_4XX:
        return ERROR_HTTP_4XX;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_5XX:
        return ERROR_HTTP_5XX;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_INCOMPLETE:
        return ERROR_INCOMPLETE;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_PROTOCOL:
        return ERROR_PROTOCOL;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_CANCELLED:
        return ERROR_CANCELLED;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_429:
        return ERROR_HTTP_429;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_CONTEXT_LENGTH:
        return ERROR_CONTEXT_LENGTH;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_SERVER_ERROR_EVENT:
        return ERROR_SERVER_ERROR_EVENT;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_NOT_SSE:
        return ERROR_NOT_SSE;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_NO_DONE:
        return ERROR_NO_DONE;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_REFUSED:
        return ERROR_REFUSED;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_RESET_BEFORE_HEADERS:
        return ERROR_RESET_BEFORE_HEADERS;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_RESET_MID_STREAM:
        return ERROR_RESET_MID_STREAM;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_TRUNCATED_JSON:
        return ERROR_TRUNCATED_JSON;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_MALFORMED_SSE:
        return ERROR_MALFORMED_SSE;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_500:
        return ERROR_HTTP_500;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_503:
        return ERROR_HTTP_503;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_CLIENT_FD_LIMIT:
        return ERROR_CLIENT_FD_LIMIT;
    case STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_529:
        return ERROR_HTTP_529;
    default:
        return ERROR_PROTOCOL;
    }
}

static int refuse(ingest_t *self, const Stampede__Record *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(ingest_t *self, const Stampede__Record *msg, const char *fmt, ...) {
    int n = snprintf(self->error, sizeof self->error, "request %" PRIu64 ": ", msg->request_id);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(self->error + n, sizeof self->error - (size_t)n, fmt, ap);
    va_end(ap);
    return INGEST_REFUSED;
}

/* base + delta - offset_ns, a wire timestamp on the controller's clock; false when it does not fit
 * in 64 bits (no honest worker is within centuries of that). */
static bool shift(int64_t base, int64_t delta, int64_t offset_ns, int64_t *out) {
    int64_t sum;
    return !__builtin_add_overflow(base, delta, &sum) &&
           !__builtin_sub_overflow(sum, offset_ns, out);
}

/* An optional wire delta back to an absolute controller-clock timestamp (0 = did not happen). */
static bool stamp(int present, int64_t delta, int64_t base, int64_t offset_ns, int64_t *out) {
    *out = 0;
    return !present || shift(base, delta, offset_ns, out);
}

/* Chunk receive times: running sums of microsecond gaps from send_ns. */
static int decode_chunks(ingest_t *self, const Stampede__Record *msg, int64_t base,
                         int64_t offset_ns, request_record_t *out) {
    size_t n = msg->n_chunk_gap_us;
    if (n > UINT32_MAX)
        return refuse(self, msg, "%zu chunks", n);
    if (msg->n_chunk_tokens && msg->n_chunk_tokens != n)
        return refuse(self, msg, "%zu chunk token counts for %zu chunks", msg->n_chunk_tokens, n);
    if (n == 0)
        return 0;
    if (buffer_grow_pair(&self->chunk_ns, sizeof *self->chunk_ns, &self->chunk_tokens,
                         sizeof *self->chunk_tokens, &self->cap, n) < 0)
        return INGEST_NO_MEMORY;
    uint64_t us = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t rel_ns;
        if (__builtin_add_overflow(us, msg->chunk_gap_us[i], &us) ||
            __builtin_mul_overflow(us, (uint64_t)1000, &rel_ns) ||
            !shift(base, rel_ns, offset_ns, &self->chunk_ns[i]))
            return refuse(self, msg, "chunk %zu of %zu time out of range", i + 1, n);
    }
    out->n_chunks = (uint32_t)n;
    out->chunk_ns = self->chunk_ns;
    if (msg->n_chunk_tokens) {
        for (size_t i = 0; i < n; i++)
            self->chunk_tokens[i] =
                msg->chunk_tokens[i] > UINT16_MAX ? UINT16_MAX : (uint16_t)msg->chunk_tokens[i];
        out->chunk_tokens = self->chunk_tokens;
    }
    return 0;
}

int ingest_record(ingest_t *self, const Stampede__Record *msg, int64_t offset_ns, uint32_t worker,
                  request_record_t *out) {
    memset(out, 0, sizeof *out);
    out->session = msg->session;
    out->node = msg->node;
    out->role = msg->role;
    out->endpoint = msg->endpoint;
    out->worker = worker;
    out->request_id = msg->request_id;
    const int64_t base = msg->send_ns;
    if (base && !shift(base, 0, offset_ns, &out->send_ns))
        return refuse(self, msg, "send time out of range");
    if (!stamp(msg->_intended_case != STAMPEDE__RECORD___INTENDED__NOT_SET, msg->intended_delta_ns,
               base, offset_ns, &out->intended_ns))
        return refuse(self, msg, "intended start out of range");
    if (!stamp(msg->_headers_case != STAMPEDE__RECORD___HEADERS__NOT_SET, msg->headers_delta_ns,
               base, offset_ns, &out->headers_ns))
        return refuse(self, msg, "headers time out of range");
    if (!stamp(msg->_first_token_case != STAMPEDE__RECORD___FIRST_TOKEN__NOT_SET,
               msg->first_token_delta_ns, base, offset_ns, &out->first_token_ns))
        return refuse(self, msg, "first token time out of range");
    if (!stamp(msg->_first_content_case != STAMPEDE__RECORD___FIRST_CONTENT__NOT_SET,
               msg->first_content_delta_ns, base, offset_ns, &out->first_content_ns))
        return refuse(self, msg, "first content time out of range");
    if (!stamp(msg->_end_case != STAMPEDE__RECORD___END__NOT_SET, msg->end_delta_ns, base,
               offset_ns, &out->end_ns))
        return refuse(self, msg, "end time out of range");
    out->http_status = msg->http_status;
    out->error = ingest_error_class(msg->error);
    if (msg->error_message) {
        strncpy(out->error_message, msg->error_message, sizeof out->error_message - 1);
        out->error_message[sizeof out->error_message - 1] = '\0';
    }
    out->has_usage = msg->has_usage;
    out->has_tokenizer_count = msg->has_tokenizer_count;
    out->tokenizer_tokens = msg->tokenizer_tokens;
    out->prompt_tokens = msg->prompt_tokens;
    out->completion_tokens = msg->completion_tokens;
    out->cached_tokens = msg->cached_tokens;
    out->requested_input_tokens = msg->requested_input_tokens;
    out->requested_output_tokens = msg->requested_output_tokens;
    out->reasoning_chunks = msg->reasoning_chunks;
    out->content_chunks = msg->content_chunks;
    out->content_bytes = msg->content_bytes;
    out->finish_reason =
        msg->finish_reason < FINISH__COUNT ? (finish_reason_t)msg->finish_reason : FINISH_OTHER;
    out->refusal = msg->refusal;
    out->workload_hash = msg->workload_hash;
    out->body_hash = msg->body_hash;
    out->warmup = msg->warmup;
    out->session_end = msg->session_end;
    if (msg->n_http_phase_ns != 0 && msg->n_http_phase_ns != RECORD_PHASE__COUNT)
        return refuse(self, msg, "%zu HTTP phases, expected %d", msg->n_http_phase_ns,
                      RECORD_PHASE__COUNT);
    out->has_phases = msg->n_http_phase_ns == RECORD_PHASE__COUNT;
    for (size_t i = 0; out->has_phases && i < RECORD_PHASE__COUNT; i++)
        out->phase_ns[i] =
            msg->http_phase_ns[i] > INT64_MAX ? INT64_MAX : (int64_t)msg->http_phase_ns[i];
    out->connection_reused = msg->connection_reused;
    out->tls_version = msg->tls_version <= 13 ? (uint8_t)msg->tls_version : 0;
    out->tls_resumed = msg->tls_resumed;
    out->replica = msg->replica;
    out->retries = msg->retries;
    if (msg->retry_wait_ns < 0)
        return refuse(self, msg, "negative retry wait");
    out->retry_wait_ns = msg->retry_wait_ns;
    out->resends = msg->resends;
    return decode_chunks(self, msg, base, offset_ns, out);
}

/* Puts "record I of N, " in front of the reason a record was refused, cutting its end if need be.
 */
static void name_record(ingest_t *self, size_t index, size_t n_records) {
    char prefix[64];
    size_t n = (size_t)snprintf(prefix, sizeof prefix, "record %zu of %zu, ", index + 1, n_records);
    size_t keep = strlen(self->error);
    if (n + keep >= sizeof self->error)
        keep = sizeof self->error - 1 - n;
    memmove(self->error + n, self->error, keep);
    memcpy(self->error, prefix, n);
    self->error[n + keep] = '\0';
}

/* Two passes over the same bytes: the first finds any record that does not decode (and grows the
 * chunk storage to the longest record), so the second, which hands records on, cannot fail. */
long ingest_batch(ingest_t *self, const Stampede__EventBatch *batch, int64_t offset_ns,
                  uint32_t worker, ingest_record_fn fn, void *arg) {
    request_record_t rec;
    if (batch->n_records > INGEST_MAX_RECORDS) {
        snprintf(self->error, sizeof self->error,
                 "%zu records in one batch, more than the %d a worker ever sends", batch->n_records,
                 INGEST_MAX_RECORDS);
        return INGEST_REFUSED;
    }
    for (size_t i = 0; i < batch->n_records; i++) {
        int rc = ingest_record(self, batch->records[i], offset_ns, worker, &rec);
        if (rc == INGEST_REFUSED)
            name_record(self, i, batch->n_records);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < batch->n_records; i++) {
        ingest_record(self, batch->records[i], offset_ns, worker, &rec);
        fn(arg, &rec);
    }
    return (long)batch->n_records;
}

const char *ingest_error(const ingest_t *self) {
    return self->error;
}
