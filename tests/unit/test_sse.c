#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include "rng.h"
#include "sse.h"

typedef struct recorded_event {
    char *event;
    size_t event_len;
    char *data;
    size_t data_len;
    char *id;
    size_t id_len;
} recorded_event_t;

typedef struct recorder {
    recorded_event_t *events;
    size_t count;
    size_t cap;
    size_t stop_at; /* stop (return stop_value) on this 1-based event; 0 = never */
    int stop_value;
} recorder_t;

static char *copy_bytes(const char *p, size_t n) {
    char *c = malloc(n + 1);
    assert_non_null(c);
    memcpy(c, p, n);
    c[n] = '\0';
    return c;
}

static int record_event(void *arg, const sse_event_t *event) {
    recorder_t *r = arg;
    if (r->count == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->events = realloc(r->events, r->cap * sizeof *r->events);
        assert_non_null(r->events);
    }
    assert_non_null(event->event);
    assert_non_null(event->data);
    assert_non_null(event->id);
    recorded_event_t *e = &r->events[r->count++];
    e->event = copy_bytes(event->event, event->event_len);
    e->event_len = event->event_len;
    e->data = copy_bytes(event->data, event->data_len);
    e->data_len = event->data_len;
    e->id = copy_bytes(event->id, event->id_len);
    e->id_len = event->id_len;
    return r->stop_at && r->count == r->stop_at ? r->stop_value : 0;
}

static int count_event(void *arg, const sse_event_t *event) {
    (*(size_t *)arg)++;
    return 0;
}

static void recorder_clear(recorder_t *r) {
    for (size_t i = 0; i < r->count; i++) {
        free(r->events[i].event);
        free(r->events[i].data);
        free(r->events[i].id);
    }
    r->count = 0;
}

static void recorder_free(recorder_t *r) {
    recorder_clear(r);
    free(r->events);
    r->events = NULL;
    r->cap = 0;
}

static void assert_same_events(const recorder_t *expected, const recorder_t *actual,
                               const char *what) {
    if (expected->count != actual->count)
        fail_msg("%s: expected %zu events, got %zu", what, expected->count, actual->count);
    for (size_t i = 0; i < expected->count; i++) {
        const recorded_event_t *a = &expected->events[i];
        const recorded_event_t *b = &actual->events[i];
        if (a->data_len != b->data_len || memcmp(a->data, b->data, a->data_len) != 0)
            fail_msg("%s: event %zu data differs (expected %zu bytes, got %zu)", what, i,
                     a->data_len, b->data_len);
        if (a->event_len != b->event_len || memcmp(a->event, b->event, a->event_len) != 0)
            fail_msg("%s: event %zu type differs ('%s' vs '%s')", what, i, a->event, b->event);
        if (a->id_len != b->id_len || memcmp(a->id, b->id, a->id_len) != 0)
            fail_msg("%s: event %zu id differs ('%s' vs '%s')", what, i, a->id, b->id);
    }
}

static char *read_fixture(const char *name, size_t *len) {
    const char *dir = getenv("STAMPEDE_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/sse/%s", dir ? dir : "tests/data", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open fixture %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    buf[size] = '\0';
    *len = (size_t)size;
    return buf;
}

/* Feeds from a private copy that is scribbled over and freed right after, as curl reuses its
 * buffer: an event pointer kept past the feed would show as wrong data (or an ASan report). */
static int feed_copy(sse_parser_t *parser, const char *bytes, size_t n) {
    char *slice = malloc(n ? n : 1);
    assert_non_null(slice);
    memcpy(slice, bytes, n);
    int rc = sse_parser_feed(parser, slice, n);
    memset(slice, 0xA5, n);
    free(slice);
    return rc;
}

/* Feeds bytes cut at the given ascending offsets; returns the first non-zero feed result. */
static int feed_cuts(sse_parser_t *parser, const char *bytes, size_t len, const size_t *cuts,
                     size_t ncuts) {
    size_t from = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : len;
        int rc = feed_copy(parser, bytes + from, to - from);
        if (rc)
            return rc;
        from = to;
    }
    return 0;
}

static void parse_whole(const char *bytes, size_t len, recorder_t *out) {
    sse_parser_t *parser = sse_parser_new(record_event, out);
    assert_non_null(parser);
    assert_int_equal(feed_copy(parser, bytes, len), 0);
    assert_int_equal(sse_parser_finish(parser), 0);
    sse_parser_destroy(&parser);
    assert_null(parser);
}

static char *replace_lf(const char *in, size_t len, const char *with, size_t *out_len) {
    size_t wl = strlen(with);
    char *out = malloc(len * wl + 1);
    assert_non_null(out);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (in[i] == '\n') {
            memcpy(out + o, with, wl);
            o += wl;
        } else {
            out[o++] = in[i];
        }
    }
    *out_len = o;
    return out;
}

static void assert_every_split_matches(const char *bytes, size_t len, const recorder_t *expected,
                                       const char *what) {
    recorder_t got = {0};
    sse_parser_t *parser = sse_parser_new(record_event, &got);
    char label[128];
    for (size_t cut = 0; cut <= len; cut++) {
        sse_parser_reset(parser);
        recorder_clear(&got);
        assert_int_equal(feed_cuts(parser, bytes, len, &cut, 1), 0);
        assert_int_equal(sse_parser_finish(parser), 0);
        snprintf(label, sizeof label, "%s split at %zu", what, cut);
        assert_same_events(expected, &got, label);
    }
    sse_parser_reset(parser);
    recorder_clear(&got);
    for (size_t i = 0; i < len; i++)
        assert_int_equal(feed_copy(parser, bytes + i, 1), 0);
    assert_int_equal(sse_parser_finish(parser), 0);
    snprintf(label, sizeof label, "%s byte by byte", what);
    assert_same_events(expected, &got, label);
    sse_parser_destroy(&parser);
    recorder_free(&got);
}

static void test_sse_vllm_stream_gives_27_events_ending_in_done(void **state) {
    size_t len;
    char *stream = read_fixture("vllm_chat.sse", &len);
    recorder_t r = {0};
    parse_whole(stream, len, &r);
    assert_int_equal(r.count, 27); /* role, 23 tokens, finish, usage, [DONE] */
    for (size_t i = 0; i < r.count; i++) {
        assert_int_equal(r.events[i].event_len, 0);
        assert_int_equal(r.events[i].id_len, 0);
    }
    assert_memory_equal(r.events[0].data, "{\"id\":\"chatcmpl-", 16);
    assert_non_null(strstr(r.events[1].data, "\"delta\":{\"content\":\"Sure\"}"));
    assert_non_null(strstr(r.events[25].data, "\"prompt_tokens_details\":{\"cached_tokens\":16}"));
    assert_string_equal(r.events[26].data, "[DONE]");
    recorder_free(&r);
    free(stream);
}

/* The vLLM fixture with each LF written as `ending`, split at every point, gives the events of
 * the LF original. */
static void assert_line_ends_match_lf(const char *ending, const char *what) {
    size_t len, ended_len;
    char *stream = read_fixture("vllm_chat.sse", &len);
    char *ended = replace_lf(stream, len, ending, &ended_len);
    assert_int_equal(ended_len, len + 27 * 2 * (strlen(ending) - 1)); /* 27 events, 2 LF each */
    recorder_t expected = {0};
    parse_whole(stream, len, &expected);
    assert_every_split_matches(ended, ended_len, &expected, what);
    recorder_free(&expected);
    free(ended);
    free(stream);
}

static void test_sse_vllm_stream_every_split_point_gives_identical_events(void **state) {
    assert_line_ends_match_lf("\n", "LF");
}

static void test_sse_crlf_stream_every_split_point_matches_lf(void **state) {
    assert_line_ends_match_lf("\r\n", "CRLF");
}

static void test_sse_cr_only_stream_every_split_point_matches_lf(void **state) {
    assert_line_ends_match_lf("\r", "CR");
}

/* Every feature in one short stream, so every pair of split points is affordable. */
static const char kitchen_sink[] = "\xEF\xBB\xBF: hello\r\n"
                                   "id: 41\r\n"
                                   "event: delta\r\n"
                                   "data: first\r\n"
                                   "data:second\r\n"
                                   "retry: 3000\r\n"
                                   "\r\n"
                                   ":\n"
                                   "data\r"
                                   "\r"
                                   "event: error\n"
                                   "data: {\"error\":{\"code\":500}}\n"
                                   "\n";

static void test_sse_kitchen_sink_every_pair_of_split_points_gives_identical_events(void **st) {
    size_t len = sizeof kitchen_sink - 1;
    recorder_t expected = {0};
    parse_whole(kitchen_sink, len, &expected);
    assert_int_equal(expected.count, 3);
    assert_string_equal(expected.events[0].event, "delta");
    assert_string_equal(expected.events[0].data, "first\nsecond");
    assert_string_equal(expected.events[0].id, "41");
    assert_string_equal(expected.events[1].event, "");
    assert_int_equal(expected.events[1].data_len, 0);
    assert_string_equal(expected.events[1].id, "41");
    assert_string_equal(expected.events[2].event, "error");
    assert_string_equal(expected.events[2].data, "{\"error\":{\"code\":500}}");

    recorder_t got = {0};
    sse_parser_t *parser = sse_parser_new(record_event, &got);
    char label[64];
    for (size_t a = 0; a <= len; a++) {
        for (size_t b = a; b <= len; b++) {
            size_t cuts[2] = {a, b};
            sse_parser_reset(parser);
            recorder_clear(&got);
            assert_int_equal(feed_cuts(parser, kitchen_sink, len, cuts, 2), 0);
            assert_int_equal(sse_parser_finish(parser), 0);
            snprintf(label, sizeof label, "cuts at %zu and %zu", a, b);
            assert_same_events(&expected, &got, label);
        }
    }
    sse_parser_destroy(&parser);
    recorder_free(&got);
    recorder_free(&expected);
}

/* At every split of the kitchen sink (and of it with LF line ends), where sse_parser_room says
 * the parser is at an event's boundary, feeding one more "data: X" event there gives exactly that
 * event and changes nothing else: the events of the rest are the ones a parser without it gives,
 * and the room is the same after it. Where a line, an event's fields, a CR's LF or the BOM are
 * pending, the room is 0. What stream.c's shaped events rely on to dispatch such events
 * without the parser. */
static void test_sse_room_is_given_only_at_event_boundaries(void **state) {
    static const char extra[] = "data: {\"x\":1}\n\n";
    size_t lf_len;
    char *lf = replace_lf(kitchen_sink, sizeof kitchen_sink - 1, "\n", &lf_len);
    const char *streams[] = {kitchen_sink, lf,
                             "\xEF\xBB\xBF"
                             "data: a\r\rid: 7\ndata: b\n\n:c\n\n"};
    size_t lens[] = {sizeof kitchen_sink - 1, lf_len, strlen(streams[2])};
    size_t open = 0, at_boundary = 0;
    recorder_t with = {0}, without = {0};
    sse_parser_t *a = sse_parser_new(record_event, &with);
    sse_parser_t *b = sse_parser_new(record_event, &without);
    assert_int_equal(sse_parser_room(a), 0); /* not begun: a BOM may come */
    char label[64];
    for (int k = 0; k < 3; k++) {
        for (size_t cut = 0; cut <= lens[k]; cut++) {
            sse_parser_reset(a);
            sse_parser_reset(b);
            recorder_clear(&with);
            recorder_clear(&without);
            assert_int_equal(feed_copy(a, streams[k], cut), 0);
            assert_int_equal(feed_copy(b, streams[k], cut), 0);
            size_t room = sse_parser_room(a);
            if (!room) {
                open++;
                continue;
            }
            at_boundary++;
            assert_int_equal(room, (size_t)64 << 20); /* the limit */
            size_t before = with.count;
            assert_int_equal(feed_copy(a, extra, sizeof extra - 1), 0);
            assert_int_equal(with.count, before + 1);
            assert_string_equal(with.events[before].event, "");
            assert_string_equal(with.events[before].data, "{\"x\":1}");
            assert_int_equal(sse_parser_room(a), room);
            /* the inserted event removed, the two agree from here on */
            free(with.events[before].event);
            free(with.events[before].data);
            free(with.events[before].id);
            with.count--;
            assert_int_equal(feed_copy(a, streams[k] + cut, lens[k] - cut), 0);
            assert_int_equal(feed_copy(b, streams[k] + cut, lens[k] - cut), 0);
            assert_int_equal(sse_parser_finish(a), sse_parser_finish(b));
            snprintf(label, sizeof label, "stream %d cut at %zu", k, cut);
            assert_same_events(&without, &with, label);
        }
    }
    /* both kinds of place are met, in the CRLF, CR and BOM forms */
    assert_true(at_boundary >= 4);
    assert_true(open >= 40);
    /* a CR that ends a slice may be a CRLF's first half; a failure is no boundary */
    sse_parser_reset(a);
    assert_int_equal(feed_copy(a, "data: x\r\r", 9), 0);
    assert_int_equal(sse_parser_room(a), 0);
    assert_int_equal(feed_copy(a, "\n", 1), 0);
    assert_int_equal(sse_parser_room(a), (size_t)64 << 20);
    sse_parser_set_limit(a, 4);
    assert_int_equal(sse_parser_room(a), 4);
    assert_int_equal(feed_copy(a, "data: x\n", 8), -EMSGSIZE);
    assert_int_equal(sse_parser_room(a), 0);
    sse_parser_destroy(&a);
    sse_parser_destroy(&b);
    recorder_free(&with);
    recorder_free(&without);
    free(lf);
}

static void test_sse_comment_lines_are_ignored(void **state) {
    static const char stream[] = ":ok\n: ping\n\ndata: x\n:between the lines\ndata: y\n\n:\n";
    recorder_t r = {0};
    parse_whole(stream, sizeof stream - 1, &r);
    assert_int_equal(r.count, 1);
    assert_string_equal(r.events[0].data, "x\ny");
    recorder_free(&r);
}

static void test_sse_multi_line_data_joins_with_lf(void **state) {
    static const struct {
        const char *stream;
        const char *data;
    } cases[] = {
        {"data: a\ndata: b\ndata: c\n\n", "a\nb\nc"},
        {"data\n\n", ""},
        {"data:\ndata:\n\n", "\n"},
        {"data: a\ndata\ndata: b\n\n", "a\n\nb"},
        {"data: {\"x\":\ndata: 1}\n\n", "{\"x\":\n1}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recorder_t r = {0};
        parse_whole(cases[i].stream, strlen(cases[i].stream), &r);
        assert_int_equal(r.count, 1);
        assert_string_equal(r.events[0].data, cases[i].data);
        assert_int_equal(r.events[0].data_len, strlen(cases[i].data));
        recorder_free(&r);
    }
}

static void test_sse_event_error_is_reported_with_its_type(void **state) {
    size_t len;
    char *stream = read_fixture("error_event.sse", &len);
    recorder_t r = {0};
    parse_whole(stream, len, &r);
    assert_int_equal(r.count, 4);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(r.events[i].event_len, 0);
    assert_string_equal(r.events[3].event, "error");
    assert_string_equal(r.events[3].data,
                        "{\"error\":{\"message\":\"upstream connection reset by peer\",\"type\":"
                        "\"InternalServerError\",\"param\":null,\"code\":502}}");
    recorder_free(&r);
    free(stream);
}

static void test_sse_field_without_space_after_colon(void **state) {
    static const char stream[] = "event:error\ndata:x\n\ndata:  two spaces\n\ndata:\tTAB\n\n";
    recorder_t r = {0};
    parse_whole(stream, sizeof stream - 1, &r);
    assert_int_equal(r.count, 3);
    assert_string_equal(r.events[0].event, "error");
    assert_string_equal(r.events[0].data, "x");
    assert_string_equal(r.events[1].data, " two spaces");
    assert_string_equal(r.events[2].data, "\tTAB");
    recorder_free(&r);
}

static void test_sse_id_persists_until_changed_and_nul_ids_are_ignored(void **state) {
    static const char stream[] =
        "id: 7\ndata: a\n\ndata: b\n\nid: 8\0x\ndata: c\n\nid\ndata: d\n\n";
    recorder_t r = {0};
    parse_whole(stream, sizeof stream - 1, &r);
    assert_int_equal(r.count, 4);
    assert_string_equal(r.events[0].id, "7");
    assert_string_equal(r.events[1].id, "7");
    assert_string_equal(r.events[2].id, "7");
    assert_int_equal(r.events[3].id_len, 0);
    recorder_free(&r);
}

static void test_sse_reset_forgets_the_last_id_and_pending_event(void **state) {
    recorder_t r = {0};
    sse_parser_t *parser = sse_parser_new(record_event, &r);
    static const char first[] = "id: 5\ndata: a\n\nevent: e\ndata: half";
    assert_int_equal(feed_copy(parser, first, sizeof first - 1), 0);
    sse_parser_reset(parser);
    assert_int_equal(feed_copy(parser, "data: b\n\n", 9), 0);
    assert_int_equal(r.count, 2);
    assert_string_equal(r.events[0].id, "5");
    assert_string_equal(r.events[1].data, "b");
    assert_int_equal(r.events[1].id_len, 0);
    assert_int_equal(r.events[1].event_len, 0);
    sse_parser_destroy(&parser);
    recorder_free(&r);
}

static void test_sse_event_without_data_is_not_dispatched_and_type_resets(void **state) {
    static const char stream[] = "event: ping\n\ndata: x\n\nevent: only\nid: 3\n\ndata: y\n\n";
    recorder_t r = {0};
    parse_whole(stream, sizeof stream - 1, &r);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.events[0].event_len, 0);
    assert_string_equal(r.events[0].data, "x");
    assert_int_equal(r.events[1].event_len, 0);
    assert_string_equal(r.events[1].id, "3");
    recorder_free(&r);
}

static void test_sse_bom_at_stream_start_is_skipped_at_every_split(void **state) {
    static const char stream[] = "\xEF\xBB\xBF"
                                 "data: x\n\n";
    recorder_t expected = {0};
    parse_whole(stream, sizeof stream - 1, &expected);
    assert_int_equal(expected.count, 1);
    assert_string_equal(expected.events[0].data, "x");
    assert_every_split_matches(stream, sizeof stream - 1, &expected, "BOM");
    recorder_free(&expected);
}

static void test_sse_only_one_leading_bom_is_skipped(void **state) {
    /* A second BOM, or a partial one, is part of the field name, which is then unknown. */
    static const char *streams[] = {"\xEF\xBB\xBF\xEF\xBB\xBF"
                                    "data: x\n\n",
                                    "\xEF\xBB"
                                    "data: x\n\n",
                                    "data: a\n\n\xEF\xBB\xBF"
                                    "data: x\n\n"};
    static const size_t expected_events[] = {0, 0, 1};
    for (size_t i = 0; i < 3; i++) {
        recorder_t r = {0};
        parse_whole(streams[i], strlen(streams[i]), &r);
        assert_int_equal(r.count, expected_events[i]);
        recorder_free(&r);
    }
}

static void test_sse_1_mib_data_line_survives_any_split(void **state) {
    const size_t payload = (size_t)1 << 20;
    size_t len = 6 + payload + 11;
    char *stream = malloc(len);
    assert_non_null(stream);
    memcpy(stream, "data: ", 6);
    for (size_t i = 0; i < payload; i++)
        stream[6 + i] = (char)('a' + (i * 7 + i / 26) % 26);
    memcpy(stream + 6 + payload, "\n\ndata: z\n\n", 11);

    const size_t cut_sets[][4] = {
        {1, 7, 4096, 65536},
        {65535, 65536, 65537, 524288},
        {524288, len - 13, len - 12, len - 11},
        {len - 10, len - 9, len - 2, len - 1},
    };
    recorder_t r = {0};
    sse_parser_t *parser = sse_parser_new(record_event, &r);
    for (size_t s = 0; s < sizeof cut_sets / sizeof cut_sets[0]; s++) {
        sse_parser_reset(parser);
        recorder_clear(&r);
        assert_int_equal(feed_cuts(parser, stream, len, cut_sets[s], 4), 0);
        assert_int_equal(sse_parser_finish(parser), 0);
        assert_int_equal(r.count, 2);
        assert_int_equal(r.events[0].data_len, payload);
        assert_memory_equal(r.events[0].data, stream + 6, payload);
        assert_string_equal(r.events[1].data, "z");
    }
    sse_parser_destroy(&parser);
    recorder_free(&r);
    free(stream);
}

static void test_sse_buffers_grow_geometrically_for_a_1_mib_line_in_16_kib_slices(void **st) {
    const size_t payload = (size_t)1 << 20, slice = 16384;
    size_t len = 6 + payload + 2;
    char *stream = malloc(len);
    assert_non_null(stream);
    memcpy(stream, "data: ", 6);
    memset(stream + 6, 'q', payload);
    memcpy(stream + 6 + payload, "\n\n", 2);
    size_t events = 0;
    sse_parser_t *parser = sse_parser_new(count_event, &events);
    for (size_t from = 0; from < len; from += slice)
        assert_int_equal(
            sse_parser_feed(parser, stream + from, len - from < slice ? len - from : slice), 0);
    assert_int_equal(events, 1);
    /* Doubling from 256 bytes to 1 MiB takes 13 allocations; growing by the slice would take 65. */
    assert_in_range(sse_parser_alloc_count(parser), 1, 20);
    sse_parser_destroy(&parser);
    free(stream);
}

static void test_sse_finish_reports_truncated_streams(void **state) {
    static const struct {
        const char *stream;
        size_t len;
        int truncated;
        size_t events;
    } cases[] = {
        {"data: x", 7, 1, 0},
        {"data: x\n", 8, 1, 0},
        {"data: x\r", 8, 1, 0},
        {"event: e\n", 9, 1, 0},
        {"data: x\n\n: ping", 15, 1, 1},
        {"\xEF", 1, 1, 0},
        {"data: x\n\n", 9, 0, 1},
        {"data: x\r\n\r", 10, 0, 1},
        {": just a comment\n", 17, 0, 0},
        {"", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recorder_t r = {0};
        sse_parser_t *parser = sse_parser_new(record_event, &r);
        assert_int_equal(feed_copy(parser, cases[i].stream, cases[i].len), 0);
        if (sse_parser_finish(parser) != cases[i].truncated)
            fail_msg("case %zu: finish should be %d", i, cases[i].truncated);
        assert_int_equal(r.count, cases[i].events);
        sse_parser_reset(parser);
        assert_int_equal(sse_parser_finish(parser), 0);
        sse_parser_destroy(&parser);
        recorder_free(&r);
    }
}

/* Offsets just after each blank line: the slices curl hands over when events are written whole. */
static size_t event_ends(const char *stream, size_t len, size_t *ends, size_t max) {
    size_t n = 0;
    for (size_t i = 1; i < len && n < max; i++)
        if (stream[i] == '\n' && stream[i - 1] == '\n')
            ends[n++] = i + 1;
    return n;
}

static void test_sse_whole_event_slices_copy_nothing_and_never_allocate(void **state) {
    size_t len, ends[64];
    char *stream = read_fixture("vllm_chat.sse", &len);
    size_t n = event_ends(stream, len, ends, 64);
    assert_int_equal(n, 27);
    size_t events = 0;
    sse_parser_t *parser = sse_parser_new(count_event, &events);
    for (int round = 0; round < 100; round++) {
        size_t from = 0;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(sse_parser_feed(parser, stream + from, ends[i] - from), 0);
            from = ends[i];
        }
        for (size_t i = 0; i + 3 <= n; i += 3) /* three events per slice */
            assert_int_equal(sse_parser_feed(parser, stream + (i ? ends[i - 1] : 0),
                                             ends[i + 2] - (i ? ends[i - 1] : 0)),
                             0);
        assert_int_equal(sse_parser_finish(parser), 0);
        sse_parser_reset(parser);
    }
    assert_int_equal(events, 100 * 54);
    assert_int_equal(sse_parser_copied_bytes(parser), 0);
    assert_int_equal(sse_parser_alloc_count(parser), 0);
    sse_parser_destroy(&parser);
    free(stream);
}

static void test_sse_straddling_slices_stop_allocating_after_warm_up(void **state) {
    size_t len;
    char *stream = read_fixture("vllm_chat.sse", &len);
    size_t events = 0;
    sse_parser_t *parser = sse_parser_new(count_event, &events);
    const size_t slice_sizes[] = {1460, 100, 7, 333};
    uint64_t warm = 0;
    for (int round = 0; round < 50; round++) {
        for (size_t s = 0; s < 4; s++) {
            for (size_t from = 0; from < len; from += slice_sizes[s]) {
                size_t n = len - from < slice_sizes[s] ? len - from : slice_sizes[s];
                assert_int_equal(feed_copy(parser, stream + from, n), 0);
            }
            assert_int_equal(sse_parser_finish(parser), 0);
            sse_parser_reset(parser);
        }
        if (round == 0)
            warm = sse_parser_alloc_count(parser);
    }
    assert_int_equal(events, 50 * 4 * 27);
    assert_true(warm > 0);
    assert_true(warm <= 8); /* geometric growth: a handful of buffers, a few doublings */
    assert_int_equal(sse_parser_alloc_count(parser), warm);
    sse_parser_destroy(&parser);
    free(stream);
}

/* One huge event split across feeds grows the buffers; reset gives them back, so the next
 * straddling event allocates again, while buffers of ordinary size are kept (test above). */
static void test_sse_reset_frees_a_buffer_a_huge_event_grew(void **state) {
    const size_t big = (size_t)1 << 20;
    char *event = malloc(big + 8);
    assert_non_null(event);
    memcpy(event, "data: ", 6);
    memset(event + 6, 'x', big - 6);
    memcpy(event + big, "\n\n", 2);
    size_t events = 0;
    sse_parser_t *parser = sse_parser_new(count_event, &events);
    assert_int_equal(feed_copy(parser, event, big / 2), 0);
    assert_int_equal(feed_copy(parser, event + big / 2, big + 2 - big / 2), 0);
    assert_int_equal(events, 1);
    sse_parser_reset(parser);
    uint64_t after_huge = sse_parser_alloc_count(parser);
    assert_true(after_huge > 0);
    const char small[] = "data: {\"a\":1}\n\n";
    assert_int_equal(feed_copy(parser, small, 8), 0); /* straddles: needs a buffer again */
    assert_int_equal(feed_copy(parser, small + 8, sizeof small - 1 - 8), 0);
    assert_int_equal(events, 2);
    assert_true(sse_parser_alloc_count(parser) > after_huge);
    sse_parser_destroy(&parser);
    free(event);
}

static void test_sse_callback_stop_value_is_returned_and_rest_dropped(void **state) {
    size_t len;
    char *stream = read_fixture("vllm_chat.sse", &len);
    recorder_t r = {.stop_at = 3, .stop_value = 42};
    sse_parser_t *parser = sse_parser_new(record_event, &r);
    assert_int_equal(feed_copy(parser, stream, len), 42);
    assert_int_equal(r.count, 3);
    sse_parser_reset(parser);
    r.stop_at = 0;
    recorder_clear(&r);
    assert_int_equal(feed_copy(parser, stream, len), 0);
    assert_int_equal(r.count, 27);
    sse_parser_destroy(&parser);
    recorder_free(&r);
    free(stream);
}

static void test_sse_line_over_limit_is_an_error_until_reset(void **state) {
    char line[160];
    memset(line, 'x', sizeof line);
    memcpy(line, "data: ", 6);
    line[sizeof line - 2] = '\n';
    line[sizeof line - 1] = '\n';
    recorder_t r = {0};
    sse_parser_t *parser = sse_parser_new(record_event, &r);
    sse_parser_set_limit(parser, 100);

    assert_int_equal(feed_copy(parser, line, sizeof line), -EMSGSIZE);
    assert_non_null(strstr(sse_parser_error(parser), "exceeds the limit of 100"));
    assert_int_equal(feed_copy(parser, "data: ok\n\n", 10), -EMSGSIZE);
    assert_int_equal(sse_parser_finish(parser), 1);

    sse_parser_reset(parser);
    assert_string_equal(sse_parser_error(parser), "");
    for (size_t i = 0; i < 120; i += 40) /* the same line arriving in pieces */
        if (feed_copy(parser, line + i, 40) != 0)
            break;
    assert_int_equal(feed_copy(parser, line, 1), -EMSGSIZE);

    sse_parser_reset(parser);
    static const char joined[] = "data: 0123456789012345678901234567890123456789\n"
                                 "data: 0123456789012345678901234567890123456789\n"
                                 "data: 0123456789012345678901234567890123456789\n\n";
    assert_int_equal(feed_copy(parser, joined, sizeof joined - 1), -EMSGSIZE);
    assert_non_null(strstr(sse_parser_error(parser), "event data of 122 bytes"));
    assert_int_equal(r.count, 0);

    sse_parser_reset(parser);
    assert_int_equal(feed_copy(parser, "data: ok\n\n", 10), 0);
    assert_int_equal(r.count, 1);
    sse_parser_destroy(&parser);
    recorder_free(&r);
}

static rng_t fuzz_rng; /* the fuzz test's draws (common/rng, on the test stream) */

static uint64_t next_random(void) {
    return rng_next_u64(&fuzz_rng);
}

static size_t mutate(char *buf, size_t len, size_t cap) {
    static const char inserts[] = "\r\n:\xEF\xBB\xBF d\0";
    int ops = 1 + (int)(next_random() % 6);
    for (int k = 0; k < ops && len > 0; k++) {
        size_t at = next_random() % len;
        switch (next_random() % 4) {
        case 0:
            buf[at] = (char)next_random();
            break;
        case 1:
            if (len < cap) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = inserts[next_random() % (sizeof inserts - 1)];
                len++;
            }
            break;
        case 2: {
            size_t n = next_random() % 16;
            n = n > len - at ? len - at : n;
            memmove(buf + at, buf + at + n, len - at - n);
            len -= n;
            break;
        }
        default:
            buf[at] = inserts[next_random() % (sizeof inserts - 1)];
            break;
        }
    }
    return len;
}

static void test_sse_fuzzed_streams_never_crash_and_ignore_how_they_are_split(void **state) {
    static const char *fixtures[] = {"vllm_chat.sse",        "sglang_chat.sse",
                                     "vllm_reasoning.sse",   "vllm_tool_calls.sse",
                                     "vllm_completions.sse", "error_event.sse"};
    rng_init(&fuzz_rng, 0x9E3779B97F4A7C15ull, RNG_STREAM_TEST, 0, 0, 0);
    recorder_t whole = {0}, split = {0};
    sse_parser_t *a = sse_parser_new(record_event, &whole);
    sse_parser_t *b = sse_parser_new(record_event, &split);
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        size_t len;
        char *stream = read_fixture(fixtures[f], &len);
        size_t cap = len + 512;
        char *buf = malloc(cap);
        for (int iter = 0; iter < 400; iter++) {
            size_t n;
            if (iter % 10 == 9) { /* pure noise */
                n = next_random() % 512;
                for (size_t i = 0; i < n; i++)
                    buf[i] = (char)next_random();
            } else {
                memcpy(buf, stream, len);
                n = mutate(buf, len, cap);
            }
            sse_parser_reset(a);
            sse_parser_reset(b);
            recorder_clear(&whole);
            recorder_clear(&split);
            assert_int_equal(feed_copy(a, buf, n), 0);
            size_t cuts[8];
            size_t ncuts = n ? next_random() % 8 : 0;
            for (size_t i = 0; i < ncuts; i++)
                cuts[i] = next_random() % (n + 1);
            for (size_t i = 1; i < ncuts; i++) /* insertion sort: offsets must ascend */
                for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
                    size_t t = cuts[j];
                    cuts[j] = cuts[j - 1];
                    cuts[j - 1] = t;
                }
            assert_int_equal(feed_cuts(b, buf, n, cuts, ncuts), 0);
            assert_int_equal(sse_parser_finish(a), sse_parser_finish(b));
            assert_same_events(&whole, &split, fixtures[f]);
        }
        free(buf);
        free(stream);
    }
    sse_parser_destroy(&a);
    sse_parser_destroy(&b);
    recorder_free(&whole);
    recorder_free(&split);
}

static void test_sse_destroy_null_is_harmless(void **state) {
    sse_parser_t *parser = NULL;
    sse_parser_destroy(&parser);
    assert_null(parser);
}

UNIT_MAIN(cmocka_unit_test(test_sse_vllm_stream_gives_27_events_ending_in_done),
          cmocka_unit_test(test_sse_reset_frees_a_buffer_a_huge_event_grew),
          cmocka_unit_test(test_sse_vllm_stream_every_split_point_gives_identical_events),
          cmocka_unit_test(test_sse_crlf_stream_every_split_point_matches_lf),
          cmocka_unit_test(test_sse_cr_only_stream_every_split_point_matches_lf),
          cmocka_unit_test(test_sse_kitchen_sink_every_pair_of_split_points_gives_identical_events),
          cmocka_unit_test(test_sse_room_is_given_only_at_event_boundaries),
          cmocka_unit_test(test_sse_comment_lines_are_ignored),
          cmocka_unit_test(test_sse_multi_line_data_joins_with_lf),
          cmocka_unit_test(test_sse_event_error_is_reported_with_its_type),
          cmocka_unit_test(test_sse_field_without_space_after_colon),
          cmocka_unit_test(test_sse_id_persists_until_changed_and_nul_ids_are_ignored),
          cmocka_unit_test(test_sse_reset_forgets_the_last_id_and_pending_event),
          cmocka_unit_test(test_sse_event_without_data_is_not_dispatched_and_type_resets),
          cmocka_unit_test(test_sse_bom_at_stream_start_is_skipped_at_every_split),
          cmocka_unit_test(test_sse_only_one_leading_bom_is_skipped),
          cmocka_unit_test(test_sse_1_mib_data_line_survives_any_split),
          cmocka_unit_test(test_sse_buffers_grow_geometrically_for_a_1_mib_line_in_16_kib_slices),
          cmocka_unit_test(test_sse_finish_reports_truncated_streams),
          cmocka_unit_test(test_sse_whole_event_slices_copy_nothing_and_never_allocate),
          cmocka_unit_test(test_sse_straddling_slices_stop_allocating_after_warm_up),
          cmocka_unit_test(test_sse_callback_stop_value_is_returned_and_rest_dropped),
          cmocka_unit_test(test_sse_line_over_limit_is_an_error_until_reset),
          cmocka_unit_test(test_sse_fuzzed_streams_never_crash_and_ignore_how_they_are_split),
          cmocka_unit_test(test_sse_destroy_null_is_harmless))
