/* Batches are built directly in wire form: each record is packed by protobuf-c as a field-3
 * entry of EventBatch, and sealing writes the Envelope and EventBatch headers into space reserved
 * in front of the records. The result is exactly what protobuf-c would emit for the same Envelope
 * (fields in order, lengths as varints), so the controller unpacks it with the generated code. */
#include "events.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "stampede.pb-c.h"
#include "varint.h"

#define EVENTS_HEADER_RESERVE 64
#define EVENTS_SPARE_BUFFERS 8
#define EVENTS_OPEN_BYTES ((size_t)64 * 1024) /* first size of an open batch's buffer */

typedef struct events_batch {
    uint64_t seq;
    uint8_t *buf;
    size_t cap;
    size_t off; /* the envelope starts at buf + off */
    size_t len;
    uint32_t n_records;
} events_batch_t;

struct events {
    events_options_t options;
    uint64_t run_id;
    uint32_t worker_index;

    uint8_t *open;   /* records of the open batch from EVENTS_HEADER_RESERVE on */
    size_t open_len; /* bytes used, reserve included */
    size_t open_cap;
    uint32_t open_records;

    events_batch_t *ring; /* options.ring_batches slots */
    size_t head;          /* oldest unacknowledged */
    size_t count;         /* unacknowledged */
    size_t sent;          /* of those, already sent since the last rewind (from head) */
    size_t ring_bytes;    /* bytes held by unacknowledged batches */

    uint8_t *spare[EVENTS_SPARE_BUFFERS];
    size_t spare_cap[EVENTS_SPARE_BUFFERS];
    size_t n_spare;

    uint64_t last_seq;
    uint64_t acked_seq;
    uint64_t records;
    uint64_t dropped;

    uint64_t *gaps;   /* scratch for one record's chunk gaps */
    uint32_t *tokens; /* scratch for one record's chunk token counts */
    size_t scratch_cap;
};

/* The rounding rule of the chunk-gap encoding, shared with the decoder: a timestamp `rel_ns` after
 * the base travels as round(rel_ns / 1000) microseconds (negative values as 0). */
static uint64_t events_round_us(int64_t rel_ns) {
    return rel_ns <= 0 ? 0 : (uint64_t)(rel_ns + 500) / 1000;
}

static Stampede__ErrorClass error_to_wire(error_class_t cls) {
    switch (cls) {
    case ERROR_CONNECT:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_CONNECT;
    case ERROR_TIMEOUT:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_TIMEOUT;
    case ERROR_HTTP_4XX:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_4XX;
    case ERROR_HTTP_5XX:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_5XX;
    case ERROR_INCOMPLETE:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_INCOMPLETE;
    case ERROR_PROTOCOL:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_PROTOCOL;
    case ERROR_CANCELLED:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_CANCELLED;
    case ERROR_HTTP_429:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_429;
    case ERROR_CONTEXT_LENGTH:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_CONTEXT_LENGTH;
    case ERROR_SERVER_ERROR_EVENT:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_SERVER_ERROR_EVENT;
    case ERROR_NOT_SSE:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_NOT_SSE;
    case ERROR_NO_DONE:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_NO_DONE;
    case ERROR_REFUSED:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_REFUSED;
    case ERROR_RESET_BEFORE_HEADERS:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_RESET_BEFORE_HEADERS;
    case ERROR_RESET_MID_STREAM:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_RESET_MID_STREAM;
    case ERROR_TRUNCATED_JSON:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_TRUNCATED_JSON;
    case ERROR_MALFORMED_SSE:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_MALFORMED_SSE;
    case ERROR_HTTP_500:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_500;
    case ERROR_HTTP_503:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_503;
    case ERROR_CLIENT_FD_LIMIT:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_CLIENT_FD_LIMIT;
    case ERROR_HTTP_529:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_HTTP_529;
    default:
        return STAMPEDE__ERROR_CLASS__ERROR_CLASS_NONE;
    }
}

events_t *events_new(const events_options_t *options) {
    events_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    if (options)
        self->options = *options;
    assert(self->options.proto_version > 0);
    if (!self->options.batch_records)
        self->options.batch_records = 512;
    if (!self->options.batch_bytes)
        self->options.batch_bytes = 256 * 1024;
    if (!self->options.ring_batches)
        self->options.ring_batches = 4096;
    if (!self->options.ring_bytes)
        self->options.ring_bytes = 256u * 1024 * 1024;
    self->ring = calloc(self->options.ring_batches, sizeof *self->ring);
    self->open_cap = EVENTS_OPEN_BYTES;
    self->open = malloc(self->open_cap);
    if (!self->ring || !self->open) {
        events_destroy(&self);
        return NULL;
    }
    self->open_len = EVENTS_HEADER_RESERVE;
    return self;
}

void events_destroy(events_t **self_p) {
    events_t *self = *self_p;
    if (!self)
        return;
    if (self->ring)
        for (size_t i = 0; i < self->options.ring_batches; i++)
            free(self->ring[i].buf);
    for (size_t i = 0; i < self->n_spare; i++)
        free(self->spare[i]);
    free(self->ring);
    free(self->open);
    free(self->gaps);
    free(self->tokens);
    free(self);
    *self_p = NULL;
}

static events_batch_t *slot_at(events_t *self, size_t i) {
    return &self->ring[(self->head + i) % self->options.ring_batches];
}

/* Keeps a freed batch buffer for the next open batch (a few only; the rest go back to malloc). */
static void spare_put(events_t *self, uint8_t *buf, size_t cap) {
    if (!buf)
        return;
    if (self->n_spare < EVENTS_SPARE_BUFFERS) {
        self->spare[self->n_spare] = buf;
        self->spare_cap[self->n_spare] = cap;
        self->n_spare++;
    } else {
        free(buf);
    }
}

static void release_head(events_t *self) {
    events_batch_t *b = slot_at(self, 0);
    self->ring_bytes -= b->len;
    spare_put(self, b->buf, b->cap);
    memset(b, 0, sizeof *b);
    self->head = (self->head + 1) % self->options.ring_batches;
    self->count--;
    if (self->sent)
        self->sent--;
}

void events_begin_run(events_t *self, uint64_t run_id, uint32_t worker_index) {
    while (self->count)
        release_head(self);
    self->head = 0;
    self->sent = 0;
    self->ring_bytes = 0;
    self->open_len = EVENTS_HEADER_RESERVE;
    self->open_records = 0;
    self->run_id = run_id;
    self->worker_index = worker_index;
    self->last_seq = 0;
    self->acked_seq = 0;
    self->records = 0;
    self->dropped = 0;
}

static int open_reserve(events_t *self, size_t more) {
    size_t need = self->open_len + more;
    return buffer_grow_array(&self->open, &self->open_cap,
                             need < EVENTS_OPEN_BYTES ? EVENTS_OPEN_BYTES : need, 1);
}

static int scratch_reserve(events_t *self, size_t n) {
    if (n <= self->scratch_cap)
        return 0;
    return buffer_grow_pair(&self->gaps, sizeof(*self->gaps), &self->tokens, sizeof(*self->tokens),
                            &self->scratch_cap, n < 256 ? 256 : n);
}

/* One optional timestamp as a delta from the base, both on the shifted clock. */
#define EVENTS_SET_DELTA(m, field, caseval, stamp, shift, base)                                    \
    do {                                                                                           \
        if ((stamp) != 0) {                                                                        \
            (m).field##_delta_ns = (stamp) + (shift) - (base);                                     \
            (m)._##field##_case = caseval;                                                         \
        }                                                                                          \
    } while (0)

static int pack_record(events_t *self, const request_record_t *rec) {
    const int64_t shift = self->options.clock_shift_ns;
    /* Deltas are from send_ns; a request that was never sent carries absolute timestamps. */
    const int64_t base = rec->send_ns ? rec->send_ns + shift : 0;
    Stampede__Record m = STAMPEDE__RECORD__INIT;
    m.session = rec->session;
    m.node = rec->node;
    m.role = rec->role;
    m.endpoint = rec->endpoint;
    m.request_id = rec->request_id;
    m.send_ns = base;
    EVENTS_SET_DELTA(m, intended, STAMPEDE__RECORD___INTENDED_INTENDED_DELTA_NS, rec->intended_ns,
                     shift, base);
    EVENTS_SET_DELTA(m, headers, STAMPEDE__RECORD___HEADERS_HEADERS_DELTA_NS, rec->headers_ns,
                     shift, base);
    EVENTS_SET_DELTA(m, first_token, STAMPEDE__RECORD___FIRST_TOKEN_FIRST_TOKEN_DELTA_NS,
                     rec->first_token_ns, shift, base);
    EVENTS_SET_DELTA(m, first_content, STAMPEDE__RECORD___FIRST_CONTENT_FIRST_CONTENT_DELTA_NS,
                     rec->first_content_ns, shift, base);
    EVENTS_SET_DELTA(m, end, STAMPEDE__RECORD___END_END_DELTA_NS, rec->end_ns, shift, base);
    m.http_status = rec->http_status;
    m.error = error_to_wire(rec->error);
    m.error_message = (char *)rec->error_message;
    m.has_usage = rec->has_usage;
    m.has_tokenizer_count = rec->has_tokenizer_count;
    m.tokenizer_tokens = rec->tokenizer_tokens;
    m.prompt_tokens = rec->prompt_tokens;
    m.completion_tokens = rec->completion_tokens;
    m.cached_tokens = rec->cached_tokens;
    m.requested_input_tokens = rec->requested_input_tokens;
    m.requested_output_tokens = rec->requested_output_tokens;
    m.reasoning_chunks = rec->reasoning_chunks;
    m.content_chunks = rec->content_chunks;
    m.content_bytes = rec->content_bytes;
    m.finish_reason = rec->finish_reason;
    m.refusal = rec->refusal;
    m.workload_hash = rec->workload_hash;
    m.warmup = rec->warmup;
    m.session_end = rec->session_end;
    uint64_t phases[RECORD_PHASE__COUNT];
    if (rec->has_phases) {
        for (int i = 0; i < RECORD_PHASE__COUNT; i++)
            phases[i] = rec->phase_ns[i] > 0 ? (uint64_t)rec->phase_ns[i] : 0;
        m.n_http_phase_ns = RECORD_PHASE__COUNT;
        m.http_phase_ns = phases;
    }
    m.connection_reused = rec->connection_reused;
    m.tls_version = rec->tls_version;
    m.tls_resumed = rec->tls_resumed;
    m.replica = rec->replica;
    m.body_hash = rec->body_hash;
    m.retries = rec->retries;
    m.retry_wait_ns = rec->retry_wait_ns;
    m.resends = rec->resends;

    if (rec->n_chunks) {
        if (scratch_reserve(self, rec->n_chunks) < 0)
            return -1;
        /* Each chunk is rounded against the base, not against the previous chunk, so rounding
         * never accumulates along a long stream. */
        uint64_t prev_us = 0;
        int all_one = 1;
        for (uint32_t i = 0; i < rec->n_chunks; i++) {
            uint64_t us = events_round_us(rec->chunk_ns[i] + shift - base);
            if (us < prev_us)
                us = prev_us;
            self->gaps[i] = us - prev_us;
            prev_us = us;
            uint32_t tokens = rec->chunk_tokens ? rec->chunk_tokens[i] : 1;
            self->tokens[i] = tokens;
            if (tokens != 1)
                all_one = 0;
        }
        m.n_chunk_gap_us = rec->n_chunks;
        m.chunk_gap_us = self->gaps;
        if (!all_one) {
            m.n_chunk_tokens = rec->n_chunks;
            m.chunk_tokens = self->tokens;
        }
    }

    size_t size = stampede__record__get_packed_size(&m);
    if (open_reserve(self, 1 + varint_size(size) + size) < 0)
        return -1;
    uint8_t *p = self->open + self->open_len;
    *p++ = (3 << 3) | 2; /* EventBatch.records, length-delimited */
    p += varint_put(p, size);
    p += stampede__record__pack(&m, p);
    self->open_len = (size_t)(p - self->open);
    self->open_records++;
    return 0;
}

static int ring_has_room(const events_t *self) {
    return self->count < self->options.ring_batches &&
           self->ring_bytes + self->open_len <= self->options.ring_bytes;
}

static int open_is_full(const events_t *self) {
    return self->open_records >= self->options.batch_records ||
           self->open_len - EVENTS_HEADER_RESERVE >= self->options.batch_bytes;
}

int events_add(events_t *self, const request_record_t *rec) {
    if (open_is_full(self) && events_seal(self) < 0) {
        self->dropped++;
        return -1;
    }
    if (pack_record(self, rec) < 0) {
        self->dropped++;
        return -1;
    }
    if (open_is_full(self))
        return events_seal(self) == 1 ? 1 : 0;
    return 0;
}

int events_seal(events_t *self) {
    if (!self->open_records)
        return 0;
    if (!ring_has_room(self))
        return -1;
    uint64_t seq = self->last_seq + 1;
    size_t records_len = self->open_len - EVENTS_HEADER_RESERVE;

    uint8_t inner[32];
    size_t n_inner = 0;
    inner[n_inner++] = (1 << 3) | 0; /* EventBatch.seq */
    n_inner += varint_put(inner + n_inner, seq);
    inner[n_inner++] = (2 << 3) | 0; /* EventBatch.worker_index */
    n_inner += varint_put(inner + n_inner, self->worker_index);

    uint8_t head[EVENTS_HEADER_RESERVE];
    size_t n = 0;
    head[n++] = (1 << 3) | 0; /* Envelope.proto_version */
    n += varint_put(head + n, self->options.proto_version);
    head[n++] = (2 << 3) | 1; /* Envelope.run_id, fixed64 little-endian */
    for (int i = 0; i < 8; i++)
        head[n++] = (uint8_t)(self->run_id >> (8 * i));
    head[n++] = (3 << 3) | 0; /* Envelope.seq */
    n += varint_put(head + n, seq);
    n += varint_put(head + n, (STAMPEDE__ENVELOPE__BODY_BATCH << 3) | 2);
    n += varint_put(head + n, n_inner + records_len);
    memcpy(head + n, inner, n_inner);
    n += n_inner;
    assert(n <= EVENTS_HEADER_RESERVE);

    events_batch_t *b = slot_at(self, self->count);
    b->seq = seq;
    b->buf = self->open;
    b->cap = self->open_cap;
    b->off = EVENTS_HEADER_RESERVE - n;
    b->len = n + records_len;
    b->n_records = self->open_records;
    memcpy(b->buf + b->off, head, n);
    self->count++;
    self->ring_bytes += b->len;
    self->records += self->open_records;
    self->last_seq = seq;

    if (self->n_spare) {
        self->n_spare--;
        self->open = self->spare[self->n_spare];
        self->open_cap = self->spare_cap[self->n_spare];
    } else {
        self->open_cap = EVENTS_OPEN_BYTES;
        self->open = malloc(self->open_cap);
        if (!self->open)
            self->open_cap = 0;
    }
    /* Without a buffer (malloc failed) open_reserve tries again at the next record. */
    self->open_len = EVENTS_HEADER_RESERVE;
    self->open_records = 0;
    return 1;
}

size_t events_flush(events_t *self, events_send_fn send, void *arg) {
    size_t n = 0;
    while (self->sent < self->count) {
        events_batch_t *b = slot_at(self, self->sent);
        if (send(arg, b->buf + b->off, b->len) != 0)
            break;
        self->sent++;
        n++;
    }
    return n;
}

size_t events_foreach_unacked(const events_t *self, events_send_fn fn, void *arg) {
    for (size_t i = 0; i < self->count; i++) {
        const events_batch_t *b = slot_at((events_t *)self, i);
        if (fn(arg, b->buf + b->off, b->len) != 0)
            return i;
    }
    return self->count;
}

void events_ack(events_t *self, uint64_t up_to_seq) {
    if (up_to_seq <= self->acked_seq)
        return;
    if (up_to_seq > self->last_seq)
        up_to_seq = self->last_seq;
    while (self->count && slot_at(self, 0)->seq <= up_to_seq)
        release_head(self);
    self->acked_seq = up_to_seq;
}

void events_rewind(events_t *self) {
    self->sent = 0;
}

uint64_t events_last_seq(const events_t *self) {
    return self->last_seq;
}

uint64_t events_acked_seq(const events_t *self) {
    return self->acked_seq;
}

size_t events_unacked(const events_t *self) {
    return self->count;
}

uint32_t events_open_records(const events_t *self) {
    return self->open_records;
}

uint64_t events_records(const events_t *self) {
    return self->records;
}

uint64_t events_dropped(const events_t *self) {
    return self->dropped;
}
