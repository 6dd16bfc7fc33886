#include "ingest.h"

#include <stdlib.h>
#include <string.h>

struct ingest {
    int64_t *chunk_ns;
    uint16_t *chunk_tokens;
    size_t cap;
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

error_class_t ingest_error_class(Stampede__ErrorClass wire) {
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
    default:
        return ERROR_PROTOCOL;
    }
}

static int reserve(ingest_t *self, size_t n) {
    if (n <= self->cap)
        return 0;
    size_t cap = self->cap ? self->cap : 256;
    while (cap < n)
        cap *= 2;
    int64_t *ns = realloc(self->chunk_ns, cap * sizeof *ns);
    if (!ns)
        return -1;
    self->chunk_ns = ns;
    uint16_t *tok = realloc(self->chunk_tokens, cap * sizeof *tok);
    if (!tok)
        return -1;
    self->chunk_tokens = tok;
    self->cap = cap;
    return 0;
}

/* An optional wire delta back to an absolute controller-clock timestamp (0 = did not happen). */
static int64_t stamp(int present, int64_t delta, int64_t base, int64_t offset_ns) {
    return present ? base + delta - offset_ns : 0;
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
    out->send_ns = base ? base - offset_ns : 0;
    out->intended_ns = stamp(msg->_intended_case != STAMPEDE__RECORD___INTENDED__NOT_SET,
                             msg->intended_delta_ns, base, offset_ns);
    out->headers_ns = stamp(msg->_headers_case != STAMPEDE__RECORD___HEADERS__NOT_SET,
                            msg->headers_delta_ns, base, offset_ns);
    out->first_token_ns = stamp(msg->_first_token_case != STAMPEDE__RECORD___FIRST_TOKEN__NOT_SET,
                                msg->first_token_delta_ns, base, offset_ns);
    out->first_content_ns =
        stamp(msg->_first_content_case != STAMPEDE__RECORD___FIRST_CONTENT__NOT_SET,
              msg->first_content_delta_ns, base, offset_ns);
    out->end_ns = stamp(msg->_end_case != STAMPEDE__RECORD___END__NOT_SET, msg->end_delta_ns, base,
                        offset_ns);
    out->http_status = msg->http_status;
    out->error = ingest_error_class(msg->error);
    if (msg->error_message) {
        strncpy(out->error_message, msg->error_message, sizeof out->error_message - 1);
        out->error_message[sizeof out->error_message - 1] = '\0';
    }
    out->has_usage = msg->has_usage;
    out->prompt_tokens = msg->prompt_tokens;
    out->completion_tokens = msg->completion_tokens;
    out->cached_tokens = msg->cached_tokens;
    out->requested_input_tokens = msg->requested_input_tokens;
    out->requested_output_tokens = msg->requested_output_tokens;
    out->reasoning_chunks = msg->reasoning_chunks;
    out->content_chunks = msg->content_chunks;
    out->content_bytes = msg->content_bytes;
    out->workload_hash = msg->workload_hash;
    out->warmup = msg->warmup;
    out->session_end = msg->session_end;

    size_t n = msg->n_chunk_gap_us;
    if (n) {
        if (reserve(self, n) < 0)
            return -1;
        uint64_t us = 0;
        for (size_t i = 0; i < n; i++) {
            us += msg->chunk_gap_us[i];
            self->chunk_ns[i] = base + (int64_t)us * 1000 - offset_ns;
        }
        out->n_chunks = (uint32_t)n;
        out->chunk_ns = self->chunk_ns;
        if (msg->n_chunk_tokens == n) {
            for (size_t i = 0; i < n; i++)
                self->chunk_tokens[i] =
                    msg->chunk_tokens[i] > UINT16_MAX ? UINT16_MAX : (uint16_t)msg->chunk_tokens[i];
            out->chunk_tokens = self->chunk_tokens;
        }
    }
    return 0;
}

long ingest_batch(ingest_t *self, const Stampede__EventBatch *batch, int64_t offset_ns,
                  uint32_t worker, ingest_record_fn fn, void *arg) {
    long n = 0;
    for (size_t i = 0; i < batch->n_records; i++) {
        request_record_t rec;
        if (ingest_record(self, batch->records[i], offset_ns, worker, &rec) < 0)
            return -1;
        fn(arg, &rec);
        n++;
    }
    return n;
}
