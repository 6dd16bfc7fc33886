#include "sse.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define SSE_DEFAULT_LIMIT ((size_t)64 << 20)
#define SSE_MIN_CAPACITY ((size_t)256)
/* A buffer one huge event grew past this is given back at reset: a stream slot's parser is reused
 * for every request, so it would otherwise keep the largest event it ever saw for good. */
#define SSE_RETAIN_CAPACITY ((size_t)64 << 10)

/* Lengths are 32-bit: nothing the parser holds exceeds its limit, which is at most UINT32_MAX
 * (sse_parser_set_limit), and a parser per stream is 64 bytes smaller for it. */
typedef struct sse_buffer {
    char *bytes;
    uint32_t len;
    uint32_t cap;
} sse_buffer_t;

/* A field value: where its bytes are now (the caller's slice, the line buffer, or its own
 * buffer), and whether they already live in its own buffer and so survive the feed. */
typedef struct sse_field {
    const char *ptr;
    uint32_t len;
    bool set;
    bool owned;
} sse_field_t;

typedef enum sse_failure {
    SSE_FAILED_NOT,
    SSE_FAILED_NO_MEMORY, /* a buffer could not grow */
    SSE_FAILED_LINE,      /* a line beyond the limit */
    SSE_FAILED_DATA,      /* an event's joined data beyond the limit */
} sse_failure_t;

/* What every feed reads or updates comes first, in 128 bytes: with thousands of streams, a
 * stream's parser is out of the cache by its next token, and each line touched is a memory read. */
struct sse_parser {
    sse_event_fn fn;
    void *arg;
    sse_field_t data;
    sse_field_t event;
    sse_field_t id;
    sse_buffer_t line; /* the partial line that straddles feeds */
    size_t limit;
    int error;
    bool event_open; /* a field line arrived since the last blank line */
    bool at_start;   /* no byte of the stream consumed yet, apart from a BOM prefix */
    bool skip_lf;    /* the last line ended in CR at the end of a slice: a leading LF is its */
    /* The rest: bytes that outlive a feed, and the last error. */
    sse_buffer_t data_bytes; /* data pinned across feeds or joined from several lines */
    sse_buffer_t event_bytes;
    sse_buffer_t id_bytes;
    int bom_matched; /* bytes of the UTF-8 BOM matched at stream start */
    /* The last error's message, formatted when asked for (sse_parser_error): its kind and
     * figures, not 160 bytes of text in every stream's parser. */
    sse_failure_t failure;
    const char *failure_what; /* the buffer that could not grow */
    size_t failure_sizes[2];
    uint64_t allocs;
    uint64_t copied;
};

static const unsigned char sse_bom[3] = {0xEF, 0xBB, 0xBF};

static int parser_fail(sse_parser_t *self, int code, sse_failure_t failure, const char *what,
                       size_t first, size_t second) {
    self->failure = failure;
    self->failure_what = what;
    self->failure_sizes[0] = first;
    self->failure_sizes[1] = second;
    self->error = code;
    return code;
}

static int parser_reserve(sse_parser_t *self, sse_buffer_t *buffer, size_t need, const char *what) {
    if (need <= buffer->cap)
        return 0;
    size_t cap = buffer->cap;
    if (buffer_grow_array(&buffer->bytes, &cap, need < SSE_MIN_CAPACITY ? SSE_MIN_CAPACITY : need,
                          1) < 0)
        return parser_fail(self, -ENOMEM, SSE_FAILED_NO_MEMORY, what, need, 0);
    buffer->cap = cap < UINT32_MAX ? (uint32_t)cap : UINT32_MAX; /* need <= limit: enough */
    self->allocs++;
    return 0;
}

static int parser_line_too_long(sse_parser_t *self, size_t len) {
    return parser_fail(self, -EMSGSIZE, SSE_FAILED_LINE, NULL, len, self->limit);
}

static void field_point(sse_field_t *field, const char *ptr, size_t len) {
    field->ptr = ptr;
    field->len = (uint32_t)len; /* a line's part: <= the limit */
    field->set = true;
    field->owned = false;
}

/* Copies a field that still points into a slice or the line buffer into its own buffer, so it
 * survives the end of the feed. */
static int parser_pin(sse_parser_t *self, sse_field_t *field, sse_buffer_t *buffer,
                      const char *what) {
    if (!field->set || field->owned)
        return 0;
    int rc = parser_reserve(self, buffer, field->len, what);
    if (rc)
        return rc;
    if (field->len)
        memcpy(buffer->bytes, field->ptr, field->len);
    buffer->len = field->len;
    field->ptr = buffer->bytes;
    field->owned = true;
    self->copied += field->len;
    return 0;
}

static int parser_pin_all(sse_parser_t *self) {
    int rc = parser_pin(self, &self->data, &self->data_bytes, "data");
    if (!rc)
        rc = parser_pin(self, &self->event, &self->event_bytes, "event");
    if (!rc)
        rc = parser_pin(self, &self->id, &self->id_bytes, "id");
    return rc;
}

/* A second data: line: the spec joins the lines with LF, which needs one contiguous copy. */
static int parser_data_append(sse_parser_t *self, const char *value, size_t len) {
    sse_field_t *data = &self->data;
    if (!data->set) {
        field_point(data, value, len);
        return 0;
    }
    size_t joined = data->len + 1 + len;
    if (joined > self->limit)
        return parser_fail(self, -EMSGSIZE, SSE_FAILED_DATA, NULL, joined, self->limit);
    int rc = data->owned ? 0 : parser_pin(self, data, &self->data_bytes, "data");
    if (!rc)
        rc = parser_reserve(self, &self->data_bytes, joined, "data");
    if (rc)
        return rc;
    char *bytes = self->data_bytes.bytes;
    bytes[data->len] = '\n';
    if (len)
        memcpy(bytes + data->len + 1, value, len);
    self->copied += len + 1;
    self->data_bytes.len = (uint32_t)joined; /* <= the limit */
    data->ptr = bytes;
    data->len = (uint32_t)joined;
    return 0;
}

static const char *field_bytes(const sse_field_t *field) {
    return field->set && field->ptr ? field->ptr : "";
}

static int parser_dispatch(sse_parser_t *self) {
    self->event_open = false;
    if (!self->data.set) {
        self->event.set = false;
        return 0;
    }
    sse_event_t event = {
        .event = self->event.set ? field_bytes(&self->event) : "",
        .event_len = self->event.set ? self->event.len : 0,
        .data = field_bytes(&self->data),
        .data_len = self->data.len,
        .id = self->id.set ? field_bytes(&self->id) : "",
        .id_len = self->id.set ? self->id.len : 0,
    };
    self->data.set = false;
    self->event.set = false;
    return self->fn(self->arg, &event);
}

static bool name_is(const char *name, size_t len, const char *literal, size_t literal_len) {
    return len == literal_len && memcmp(name, literal, len) == 0;
}

/* One complete line without its terminator. Returns 0, <0 error, or >0 the callback's stop. */
static int parser_line(sse_parser_t *self, const char *line, size_t len) {
    if (len > self->limit)
        return parser_line_too_long(self, len);
    if (len == 0)
        return parser_dispatch(self);
    if (line[0] == ':')
        return 0;
    self->event_open = true;
    const char *colon = memchr(line, ':', len);
    size_t name_len = colon ? (size_t)(colon - line) : len;
    const char *value = colon ? colon + 1 : line + len;
    size_t value_len = colon ? len - name_len - 1 : 0;
    if (value_len && value[0] == ' ') {
        value++;
        value_len--;
    }
    if (name_is(line, name_len, "data", 4))
        return parser_data_append(self, value, value_len);
    if (name_is(line, name_len, "event", 5))
        field_point(&self->event, value, value_len);
    else if (name_is(line, name_len, "id", 2) && !memchr(value, '\0', value_len))
        field_point(&self->id, value, value_len);
    return 0;
}

/* After a callback's stop the rest of the slice is dropped; only the last ID outlives it. */
static int parser_stop(sse_parser_t *self, int rc) {
    if (rc < 0)
        return rc;
    int pin = parser_pin(self, &self->id, &self->id_bytes, "id");
    return pin ? pin : rc;
}

/* Consumes a UTF-8 BOM at the start of the stream, even one split across feeds. */
static const char *parser_skip_bom(sse_parser_t *self, const char *p, const char *end) {
    while (p < end && self->bom_matched < 3) {
        if ((unsigned char)*p != sse_bom[self->bom_matched]) {
            size_t held = (size_t)self->bom_matched;
            self->at_start = false;
            if (held && !parser_reserve(self, &self->line, held, "line")) {
                memcpy(self->line.bytes, sse_bom, held);
                self->line.len = (uint32_t)held;
                self->copied += held;
            }
            return p;
        }
        self->bom_matched++;
        p++;
    }
    if (self->bom_matched == 3)
        self->at_start = false;
    return p;
}

/* Steps over the terminator at eol; a CR that ends the slice may be the first half of a CRLF. */
static const char *parser_after_eol(sse_parser_t *self, const char *eol, const char *end) {
    const char *p = eol + 1;
    if (*eol == '\r') {
        if (p < end) {
            if (*p == '\n')
                p++;
        } else {
            self->skip_lf = true;
        }
    }
    return p;
}

static const char *find_eol(const char *p, const char *end) {
    const char *lf = memchr(p, '\n', (size_t)(end - p));
    const char *cr = memchr(p, '\r', (size_t)((lf ? lf : end) - p));
    return cr ? cr : lf;
}

/* Completes the line held from earlier feeds with the head of this slice. */
static int parser_finish_held_line(sse_parser_t *self, const char **pp, const char *end) {
    const char *p = *pp;
    const char *eol = find_eol(p, end);
    size_t add = (size_t)((eol ? eol : end) - p);
    size_t total = self->line.len + add;
    if (total > self->limit)
        return parser_line_too_long(self, total);
    int rc = parser_reserve(self, &self->line, total, "line");
    if (rc)
        return rc;
    if (add)
        memcpy(self->line.bytes + self->line.len, p, add);
    self->line.len = (uint32_t)total; /* <= the limit */
    self->copied += add;
    if (!eol) {
        *pp = end;
        return 0;
    }
    self->line.len = 0;
    *pp = parser_after_eol(self, eol, end);
    return parser_line(self, self->line.bytes, total);
}

int sse_parser_feed(sse_parser_t *self, const char *buf, size_t len) {
    assert(self);
    if (self->error)
        return self->error;
    if (len == 0)
        return 0;
    const char *p = buf;
    const char *end = buf + len;
    if (self->at_start) {
        p = parser_skip_bom(self, p, end);
        if (self->error)
            return self->error;
    }
    if (self->skip_lf && p < end) {
        if (*p == '\n')
            p++;
        self->skip_lf = false;
    }
    if (self->line.len > 0 && p < end) {
        int rc = parser_finish_held_line(self, &p, end);
        if (rc)
            return parser_stop(self, rc);
        if (self->line.len > 0)
            return 0; /* still no line end: every field was pinned by the previous feed */
    }
    if (p < end) {
        /* The next LF is remembered so a CR-only stream does not rescan to the end per line. */
        const char *lf = memchr(p, '\n', (size_t)(end - p));
        if (!lf)
            lf = end;
        while (p < end) {
            if (lf < p) {
                lf = memchr(p, '\n', (size_t)(end - p));
                if (!lf)
                    lf = end;
            }
            const char *cr = memchr(p, '\r', (size_t)(lf - p));
            const char *eol = cr ? cr : lf;
            if (eol == end)
                break;
            const char *line = p;
            p = parser_after_eol(self, eol, end);
            int rc = parser_line(self, line, (size_t)(eol - line));
            if (rc)
                return parser_stop(self, rc);
        }
    }
    int rc = parser_pin_all(self);
    if (rc)
        return rc;
    size_t tail = (size_t)(end - p);
    if (tail) {
        if (tail > self->limit)
            return parser_line_too_long(self, tail);
        rc = parser_reserve(self, &self->line, tail, "line");
        if (rc)
            return rc;
        memcpy(self->line.bytes, p, tail);
        self->line.len = (uint32_t)tail; /* <= the limit */
        self->copied += tail;
    }
    return 0;
}

int sse_parser_finish(sse_parser_t *self) {
    assert(self);
    bool partial_bom = self->at_start && self->bom_matched > 0;
    return self->error || partial_bom || self->line.len > 0 || self->event_open || self->data.set ||
                   self->event.set
               ? 1
               : 0;
}

/* Empties a buffer, and frees it when it grew beyond SSE_RETAIN_CAPACITY. */
static void parser_buffer_clear(sse_buffer_t *buffer) {
    buffer->len = 0;
    if (buffer->cap > SSE_RETAIN_CAPACITY) {
        free(buffer->bytes);
        buffer->bytes = NULL;
        buffer->cap = 0;
    }
}

void sse_parser_reset(sse_parser_t *self) {
    assert(self);
    parser_buffer_clear(&self->line);
    parser_buffer_clear(&self->data_bytes);
    parser_buffer_clear(&self->event_bytes);
    parser_buffer_clear(&self->id_bytes);
    self->data.set = false;
    self->event.set = false;
    self->id.set = false;
    self->event_open = false;
    self->at_start = true;
    self->bom_matched = 0;
    self->skip_lf = false;
    self->error = 0;
    self->failure = SSE_FAILED_NOT;
}

sse_parser_t *sse_parser_new(sse_event_fn fn, void *arg) {
    assert(fn);
    sse_parser_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->fn = fn;
    self->arg = arg;
    self->limit = SSE_DEFAULT_LIMIT;
    sse_parser_reset(self);
    return self;
}

void sse_parser_destroy(sse_parser_t **self_p) {
    assert(self_p);
    sse_parser_t *self = *self_p;
    if (!self)
        return;
    free(self->line.bytes);
    free(self->data_bytes.bytes);
    free(self->event_bytes.bytes);
    free(self->id_bytes.bytes);
    free(self);
    *self_p = NULL;
}

const char *sse_parser_error(const sse_parser_t *self) {
    assert(self);
    static _Thread_local char text[160];
    const size_t *n = self->failure_sizes;
    switch (self->failure) {
    case SSE_FAILED_NOT:
        return "";
    case SSE_FAILED_NO_MEMORY:
        snprintf(text, sizeof text, "out of memory growing the SSE %s buffer to %zu bytes",
                 self->failure_what, n[0]);
        break;
    case SSE_FAILED_LINE:
        snprintf(text, sizeof text, "SSE line of at least %zu bytes exceeds the limit of %zu", n[0],
                 n[1]);
        break;
    case SSE_FAILED_DATA:
        snprintf(text, sizeof text, "SSE event data of %zu bytes exceeds the limit of %zu bytes",
                 n[0], n[1]);
        break;
    }
    return text;
}

void sse_parser_set_limit(sse_parser_t *self, size_t max_bytes) {
    assert(self && max_bytes > 0);
    self->limit = max_bytes < UINT32_MAX ? max_bytes : UINT32_MAX; /* lengths are 32-bit */
}

uint32_t sse_parser_room(const sse_parser_t *self) {
    assert(self);
    /* pending: a line held from a feed, an event's fields (event_open: a field line sets it
     * before it sets data or event, and only a dispatch or reset clears them), a CR's LF, a BOM
     * not yet ruled out; the last ID is pinned by every feed, so an event dispatched now leaves
     * it as it is */
    if (self->error || self->at_start || self->skip_lf || self->line.len || self->event_open)
        return 0;
    return (uint32_t)self->limit; /* at most UINT32_MAX (sse_parser_set_limit) */
}

uint64_t sse_parser_alloc_count(const sse_parser_t *self) {
    assert(self);
    return self->allocs;
}

uint64_t sse_parser_copied_bytes(const sse_parser_t *self) {
    assert(self);
    return self->copied;
}
