/* CPU cost per token event of the event parsers of each API (common/chunk.c chunk_parse,
 * chunk_messages.c, chunk_responses.c), on one text-delta event of each in the shape the embedded
 * mock sends (the same word, the same sent_ns), parsed argv[1] (default 1e6) times; the best of
 * a few rounds, the machine being shared. Prints numbers; never passes or fails. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cpu.h"
#include "chunk.h"

#define ROUNDS 3

typedef int (*parse_fn)(const char *, size_t, chunk_info_t *);

static const struct {
    const char *api;
    parse_fn parse;
    const char *event;
} events[] = {
    {"chat", chunk_parse,
     "{\"id\":\"chatcmpl-2fbc593564db792e14dd762f8f1c5dc8\",\"object\":\"chat.completion.chunk\","
     "\"created\":1795937515,\"model\":\"mock-llama\",\"choices\":[{\"index\":0,\"delta\":"
     "{\"content\":\" price\"},\"logprobs\":null,\"finish_reason\":null}],\"sent_ns\":"
     "10834197120815}"},
    {"messages", chunk_messages_parse,
     "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":"
     "\" price\"},\"sent_ns\":10834197120815}"},
    {"responses", chunk_responses_parse,
     "{\"type\":\"response.output_text.delta\",\"sequence_number\":11,\"item_id\":"
     "\"msg_2086c65c91eee243e7ad86cb7eddc238\",\"output_index\":1,\"content_index\":0,"
     "\"delta\":\" price\",\"logprobs\":[],\"sent_ns\":10834218705111}"},
};

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint64_t sink = 0;
    printf("%-10s %8s %12s\n", "api", "bytes", "ns/event");
    for (size_t k = 0; k < sizeof events / sizeof events[0]; k++) {
        size_t len = strlen(events[k].event);
        double best = 0;
        for (int round = 0; round < ROUNDS; round++) {
            double start = bench_cpu_thread_ns();
            for (uint64_t i = 0; i < n; i++) {
                chunk_info_t info;
                if (events[k].parse(events[k].event, len, &info) != 0 || !info.has_content)
                    return fprintf(stderr, "%s: the event did not parse\n", events[k].api), 1;
                sink += info.content_len;
            }
            double per = (bench_cpu_thread_ns() - start) / (double)n;
            best = round == 0 || per < best ? per : best;
        }
        printf("%-10s %8zu %12.1f\n", events[k].api, len, best);
    }
    return sink == 0;
}
