/* CPU cost per streamed event of SSE framing (common/sse) and chunk field extraction
 * (common/chunk), on the recorded vLLM chat stream replayed as many streams as it takes to reach
 * the event count (argv[1] or BENCH_SSE_EVENTS, default 1e6). One parser is reset between
 * streams, as a worker reuses it between requests. `chunk shaped` is chunk_parse_shaped, the way
 * a worker reads chat chunks (each compared to the last one's shape). Prints numbers; never
 * passes or fails. */
#define _GNU_SOURCE
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cpu.h"
#include "chunk.h"
#include "sse.h"

#define ROUNDS 3 /* the best of a few runs: the machine is shared and noisy */

typedef struct sink {
    uint64_t events;
    uint64_t bytes; /* consumed so the compiler cannot drop the work */
    bool parse_chunks;
    uint64_t failures;
} sink_t;

typedef struct stream {
    char *bytes;
    size_t len;
    size_t ends[256]; /* offset after each event's blank line */
    size_t events;
} stream_t;

static int on_event(void *arg, const sse_event_t *event) {
    sink_t *sink = arg;
    sink->events++;
    if (sink->parse_chunks) {
        chunk_info_t info;
        if (chunk_parse(event->data, event->data_len, &info) != 0)
            sink->failures++;
        sink->bytes += info.content_len + info.completion_tokens + info.done;
    } else {
        sink->bytes += event->data_len;
    }
    return 0;
}

static int load_stream(const char *path, stream_t *s) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    s->len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    s->bytes = malloc(s->len);
    if (!s->bytes || fread(s->bytes, 1, s->len, f) != s->len) {
        fclose(f);
        return -1;
    }
    fclose(f);
    s->events = 0;
    for (size_t i = 1; i < s->len && s->events < 256; i++)
        if (s->bytes[i] == '\n' && s->bytes[i - 1] == '\n')
            s->ends[s->events++] = i + 1;
    return s->events ? 0 : -1;
}

/* Loads tests/data/sse/NAME from $STAMPEDE_DATA, the working directory or beside this source;
 * path receives the file read. */
static int open_fixture(const char *name, stream_t *s, char *path, size_t path_size) {
    const char *data_dir = getenv("STAMPEDE_DATA");
    snprintf(path, path_size, "%s/sse/%s", data_dir ? data_dir : "tests/data", name);
    if (load_stream(path, s) == 0)
        return 0;
    char source[4096];
    snprintf(source, sizeof source, "%s", __FILE__);
    snprintf(path, path_size, "%s/../tests/data/sse/%s", dirname(source), name);
    return load_stream(path, s);
}

/* Slice plan for one stream: events_per_slice > 0 cuts at event ends, else at fixed sizes. */
static size_t plan_slices(const stream_t *s, size_t events_per_slice, size_t bytes_per_slice,
                          size_t *cuts, size_t max) {
    size_t n = 0;
    if (events_per_slice) {
        for (size_t i = events_per_slice - 1; i < s->events && n < max; i += events_per_slice)
            cuts[n++] = s->ends[i];
        if (n == 0 || cuts[n - 1] != s->len)
            cuts[n++] = s->len;
    } else {
        for (size_t at = bytes_per_slice; n < max; at += bytes_per_slice) {
            cuts[n++] = at < s->len ? at : s->len;
            if (at >= s->len)
                break;
        }
    }
    return n;
}

static double bench_sse(const stream_t *s, sse_parser_t *parser, sink_t *sink, const size_t *cuts,
                        size_t ncuts, uint64_t target_events) {
    double best = 0;
    for (int round = 0; round < ROUNDS; round++) {
        sink->events = 0;
        double start = bench_cpu_thread_ns();
        while (sink->events < target_events) {
            size_t from = 0;
            for (size_t i = 0; i < ncuts; i++) {
                sse_parser_feed(parser, s->bytes + from, cuts[i] - from);
                from = cuts[i];
            }
            sse_parser_finish(parser);
            sse_parser_reset(parser);
        }
        double per_event = (bench_cpu_thread_ns() - start) / (double)sink->events;
        if (round == 0 || per_event < best)
            best = per_event;
    }
    return best;
}

/* chunk_parse over the stream's events, or chunk_parse_shaped through shape when it is not NULL
 * (as a worker's engine reads chat chunks: each event compared to the last one's shape). */
static double bench_chunk(const stream_t *s, uint64_t target_events, sink_t *sink,
                          chunk_shape_t *shape) {
    const char *data[256];
    size_t len[256];
    size_t from = 0;
    for (size_t i = 0; i < s->events; i++) { /* each event is "data: PAYLOAD\n\n" */
        data[i] = s->bytes + from + 6;
        len[i] = s->ends[i] - from - 8;
        from = s->ends[i];
    }
    double best = 0;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t events = 0;
        double start = bench_cpu_thread_ns();
        while (events < target_events) {
            for (size_t i = 0; i < s->events; i++) {
                chunk_info_t info;
                int rc = shape ? chunk_parse_shaped(shape, data[i], len[i], &info)
                               : chunk_parse(data[i], len[i], &info);
                if (rc != 0)
                    sink->failures++;
                sink->bytes += info.content_len + info.done;
            }
            events += s->events;
        }
        double per_event = (bench_cpu_thread_ns() - start) / (double)events;
        if (round == 0 || per_event < best)
            best = per_event;
    }
    return best;
}

/* bench_chunk through a shape, with the share of events read from it. */
static void print_shaped(const char *name, const stream_t *s, uint64_t target, sink_t *sink) {
    chunk_shape_t *shape = chunk_shape_new();
    double ns = bench_chunk(s, target, sink, shape);
    uint64_t hits = chunk_shape_hits(shape), all = hits + chunk_shape_misses(shape);
    printf("chunk shaped (%s): %.1f ns/event, %.1f %% of events read from the shape\n", name, ns,
           all ? 100.0 * (double)hits / (double)all : 0.0);
    chunk_shape_destroy(&shape);
}

int main(int argc, char **argv) {
    uint64_t target = 1000000;
    const char *env = getenv("BENCH_SSE_EVENTS");
    if (argc > 1)
        target = strtoull(argv[1], NULL, 10);
    else if (env)
        target = strtoull(env, NULL, 10);

    char path[4096];
    stream_t s;
    if (open_fixture("vllm_chat.sse", &s, path, sizeof path) != 0) {
        fprintf(stderr, "bench_sse: cannot read vllm_chat.sse (set STAMPEDE_DATA)\n");
        return 1;
    }
    printf("bench_sse: %s, %zu events (%zu bytes) per stream, %llu events per run, best of %d, "
           "CPU time\n",
           path, s.events, s.len, (unsigned long long)target, ROUNDS);

    sink_t sink = {0};
    sse_parser_t *parser = sse_parser_new(on_event, &sink);
    size_t cuts[4096];
    static const struct {
        const char *label;
        size_t events_per_slice;
        size_t bytes_per_slice;
    } plans[] = {
        {"1 event/slice", 1, 0},
        {"3 events/slice", 3, 0},
        {"1460-byte slices", 0, 1460},
        {"16 KiB slices", 0, 16384},
    };
    for (int with_chunk = 0; with_chunk < 2; with_chunk++) {
        sink.parse_chunks = with_chunk;
        for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
            size_t ncuts = plan_slices(&s, plans[p].events_per_slice, plans[p].bytes_per_slice,
                                       cuts, sizeof cuts / sizeof cuts[0]);
            double ns = bench_sse(&s, parser, &sink, cuts, ncuts, target);
            printf("%s (%s): %.1f ns/event\n", with_chunk ? "sse+chunk" : "sse", plans[p].label,
                   ns);
        }
        if (!with_chunk) {
            printf("chunk: %.1f ns/event\n", bench_chunk(&s, target, &sink, NULL));
            print_shaped("vllm_chat.sse", &s, target, &sink);
        }
    }
    /* The other servers' shapes: SGLang's nulls, reasoning, tool calls, /v1/completions. */
    static const char *const others[] = {"sglang_chat.sse", "vllm_reasoning.sse",
                                         "vllm_tool_calls.sse", "vllm_completions.sse"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        stream_t other;
        char other_path[4096];
        if (open_fixture(others[i], &other, other_path, sizeof other_path) != 0) {
            fprintf(stderr, "bench_sse: cannot read %s\n", other_path);
            return 1;
        }
        printf("chunk (%s): %.1f ns/event\n", others[i],
               bench_chunk(&other, target / 4, &sink, NULL));
        print_shaped(others[i], &other, target / 4, &sink);
        free(other.bytes);
    }

    uint64_t allocs = sse_parser_alloc_count(parser);
    size_t ncuts = plan_slices(&s, 0, 7, cuts, sizeof cuts / sizeof cuts[0]);
    bench_sse(&s, parser, &sink, cuts, ncuts, 10000);
    printf("parser allocations: %llu in all runs, %llu more over 10k events in 7-byte slices\n",
           (unsigned long long)allocs,
           (unsigned long long)(sse_parser_alloc_count(parser) - allocs));
    if (sink.failures)
        printf("chunk_parse failures: %llu (expected 0)\n", (unsigned long long)sink.failures);
    printf("(checksum %llu)\n", (unsigned long long)sink.bytes);
    sse_parser_destroy(&parser);
    free(s.bytes);
    return 0;
}
