/* The SSE parser (common/sse.c) on arbitrary streams. The first byte picks a slice length; the
 * rest is the stream, parsed once in a single feed and once in slices of that length, which must
 * give the same events, the same error and the same end. The bytes of the events' names and data
 * never exceed the stream's (the joining newlines stand for line ends), and a small limit drives
 * the too-long-line and too-long-event paths. One parser serves both parses, so reset is
 * exercised too. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "sse.h"

#define FUZZ_SSE_LIMIT 1024

/* What one parse saw: a running hash of every event (name, data, last ID) and the totals. */
typedef struct fuzz_sse_seen {
    uint64_t hash;
    size_t events;
    size_t name_and_data_bytes;
} fuzz_sse_seen_t;

static uint64_t fuzz_sse_mix(uint64_t hash, const void *bytes, size_t len) {
    const uint8_t *p = bytes;
    for (size_t i = 0; i < len; i++)
        hash = (hash ^ p[i]) * 0x100000001b3ULL;
    return hash;
}

/* arg: where the parse under way counts (one parser serves both parses, reset between them). */
static int fuzz_sse_event(void *arg, const sse_event_t *event) {
    fuzz_sse_seen_t *seen = *(fuzz_sse_seen_t **)arg;
    FUZZ_CHECK(event->data_len <= FUZZ_SSE_LIMIT);
    FUZZ_CHECK(event->event_len == 0 || event->event != NULL);
    FUZZ_CHECK(event->data_len == 0 || event->data != NULL);
    uint64_t h = seen->hash;
    h = fuzz_sse_mix(h, &event->event_len, sizeof event->event_len);
    h = fuzz_sse_mix(h, event->event, event->event_len);
    h = fuzz_sse_mix(h, &event->data_len, sizeof event->data_len);
    h = fuzz_sse_mix(h, event->data, event->data_len);
    h = fuzz_sse_mix(h, &event->id_len, sizeof event->id_len);
    h = fuzz_sse_mix(h, event->id, event->id_len);
    seen->hash = h;
    seen->events++;
    seen->name_and_data_bytes += event->event_len + event->data_len;
    return 0;
}

/* Parses stream in slices of at most slice bytes (slice 0: one feed); returns the feed's result
 * and sets *finish to sse_parser_finish's. */
static int fuzz_sse_parse(sse_parser_t *parser, const char *stream, size_t len, size_t slice,
                          int *finish) {
    sse_parser_reset(parser);
    sse_parser_set_limit(parser, FUZZ_SSE_LIMIT);
    int rc = 0;
    if (slice == 0) {
        rc = sse_parser_feed(parser, stream, len);
    } else {
        for (size_t at = 0; at < len && rc == 0; at += slice) {
            size_t n = len - at < slice ? len - at : slice;
            rc = sse_parser_feed(parser, stream + at, n);
        }
    }
    if (rc < 0)
        FUZZ_CHECK(rc == -EMSGSIZE && sse_parser_error(parser)[0] != '\0');
    *finish = sse_parser_finish(parser);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    size_t slice = (size_t)data[0] % 17 + 1;
    const char *stream = (const char *)data + 1;
    size_t len = size - 1;
    fuzz_sse_seen_t whole = {.hash = 0xcbf29ce484222325ULL};
    fuzz_sse_seen_t sliced = whole;
    fuzz_sse_seen_t *current = &whole;
    sse_parser_t *parser = sse_parser_new(fuzz_sse_event, &current);
    FUZZ_CHECK(parser != NULL);
    int whole_finish, sliced_finish;
    int whole_rc = fuzz_sse_parse(parser, stream, len, 0, &whole_finish);
    current = &sliced;
    int sliced_rc = fuzz_sse_parse(parser, stream, len, slice, &sliced_finish);
    sse_parser_destroy(&parser);
    FUZZ_CHECK(parser == NULL);
    FUZZ_CHECK(whole.name_and_data_bytes <= len);
    FUZZ_CHECK(whole_rc == sliced_rc);
    FUZZ_CHECK(whole_finish == sliced_finish);
    FUZZ_CHECK(whole.events == sliced.events);
    FUZZ_CHECK(whole.hash == sliced.hash);
    return 0;
}
