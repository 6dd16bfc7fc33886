/* Loading a dataset (workload.dataset): a ShareGPT array of N conversations (3 user turns and 3
 * replies each, about 260 words), and the same rows as JSONL, for N = 10,000 and 80,000, each
 * loaded as `stampede run` does on the controller (config_load_file: read, count, filter, build),
 * then encoded into one worker's part of four. The time per conversation should not grow with N
 * (the load is linear in the file). Prints numbers; never passes or fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_load.h"
#include "trace.h"

/* Words of row i's message m: varied lengths, some punctuation and a newline. */
static void put_text(FILE *f, int i, int m, int words) {
    for (int w = 0; w < words; w++)
        fprintf(f, "%sword%d%s", w ? (w % 17 ? " " : "\\n") : "", (i * 7 + m * 3 + w) % 1000,
                w % 11 == 10 ? "," : "");
}

static void write_rows(const char *path, int n, int jsonl) {
    FILE *f = fopen(path, "w");
    fputs(jsonl ? "" : "[\n", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "{\"id\": \"c%d\", \"conversations\": [", i);
        for (int m = 0; m < 6; m++) {
            fprintf(f, "%s{\"from\": \"%s\", \"value\": \"", m ? ", " : "",
                    m % 2 ? "gpt" : "human");
            put_text(f, i, m, m % 2 ? 60 + i % 40 : 20 + i % 30);
            fputs("\"}", f);
        }
        fputs(jsonl ? "]}\n" : (i + 1 < n ? "]},\n" : "]}\n"), f);
    }
    fputs(jsonl ? "" : "]\n", f);
    fclose(f);
}

static int bench(const char *dir, int n, int jsonl) {
    char data[600], path[600], yaml[1400];
    snprintf(data, sizeof data, "%s/d%d.%s", dir, n, jsonl ? "jsonl" : "json");
    snprintf(path, sizeof path, "%s/w%d%d.yaml", dir, n, jsonl);
    write_rows(data, n, jsonl);
    snprintf(yaml, sizeof yaml,
             "workload: {kind: chat, dataset: {path: %s, format: %s, max_input_tokens: 45}}\n"
             "scheduler: {kind: concurrent, concurrency: 64}\n",
             data, jsonl ? "jsonl" : "sharegpt");
    bench_load_t run;
    if (bench_load_run(&run, NULL, path, yaml) != 0)
        return -1;
    printf("RESULT name=dataset_load format=%s conversations=%d sessions=%zu requests=%zu "
           "load_s=%.3f us_per_conversation=%.1f worker_part_bytes=%zu encode_ms=%.1f\n",
           jsonl ? "jsonl" : "sharegpt", n, run.cfg.workload.replay->n_sessions,
           run.cfg.workload.replay->n_nodes, run.load_s, run.load_s * 1e6 / n, run.part.len,
           run.encode_s * 1e3);
    bench_load_free(&run);
    unlink(data);
    unlink(path);
    return 0;
}

int main(void) {
    char dir[] = "/tmp/stampede-bench-dataset.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int rc = 0;
    for (int jsonl = 0; jsonl < 2; jsonl++)
        rc |= bench(dir, 10000, jsonl) | bench(dir, 80000, jsonl);
    rmdir(dir);
    return rc ? 1 : 0;
}
