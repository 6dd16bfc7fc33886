/* `stampede tokenize FILE.json [--ids] [--hex] [--pieces N] [TEXT_FILE]`: counts (or lists) the
 * tokens of a text in a target's tokenizer, as a run would. */
#include "tokenize_cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

typedef struct {
    const char *tokenizer_path;
    const char *text_path;
    bool ids;
    bool hex;
    size_t pieces; /* feed the counter this many bytes at a time (0: encode at once) */
} options_t;

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: stampede tokenize TOKENIZER.json [--ids] [--hex] [--pieces N] [TEXT_FILE]\n"
        "  Prints the token count of TEXT_FILE (or stdin) in the tokenizer, as a run counts\n"
        "  prompts and replies (docs/workloads.md).\n"
        "  --ids       print the token ids, space-separated\n"
        "  --hex       each input line is one text, written as hex bytes; one output line each\n"
        "  --pieces N  count through the streaming counter, fed N bytes at a time\n");
}

static int parse(int argc, char **argv, options_t *o) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ids"))
            o->ids = true;
        else if (!strcmp(argv[i], "--hex"))
            o->hex = true;
        else if (!strcmp(argv[i], "--pieces") && i + 1 < argc) {
            char *end;
            o->pieces = strtoul(argv[++i], &end, 10);
            if (*end || o->pieces == 0) {
                fprintf(stderr, "stampede tokenize: --pieces takes a positive integer\n");
                return -1;
            }
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            exit(0);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "stampede tokenize: unknown option '%s'\n", argv[i]);
            return -1;
        } else if (!o->tokenizer_path)
            o->tokenizer_path = argv[i];
        else if (!o->text_path)
            o->text_path = argv[i];
        else
            return -1;
    }
    return o->tokenizer_path ? 0 : -1;
}

static int read_all(FILE *in, buffer_t *out) {
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0)
        if (buffer_append(out, chunk, n) < 0)
            return -1;
    return ferror(in) ? -1 : 0;
}

static int hex_value(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Tokenises one text and prints its count or ids on one line. */
static int one_text(const tokenizer_t *tok, tokenizer_scratch_t *scratch,
                    tokenizer_counter_t *counter, const options_t *o, const char *text,
                    size_t len) {
    if (o->pieces) {
        tokenizer_counter_reset(counter);
        long added;
        for (size_t at = 0; at < len; at += o->pieces) {
            size_t n = len - at < o->pieces ? len - at : o->pieces;
            if (tokenizer_counter_feed(counter, text + at, n, &added) < 0)
                return -1;
        }
        if (tokenizer_counter_finish(counter, &added) < 0)
            return -1;
        printf("%llu\n", (unsigned long long)tokenizer_counter_total(counter));
        return 0;
    }
    long n = tokenizer_encode(tok, scratch, text, len, NULL, 0);
    if (n < 0)
        return -1;
    if (!o->ids) {
        printf("%ld\n", n);
        return 0;
    }
    uint32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
    if (!ids || tokenizer_encode(tok, scratch, text, len, ids, (size_t)n) != n) {
        free(ids);
        return -1;
    }
    for (long i = 0; i < n; i++)
        printf(i ? " %u" : "%u", ids[i]);
    printf("\n");
    free(ids);
    return 0;
}

/* Each line of hex digits is a text. */
static int hex_lines(const tokenizer_t *tok, tokenizer_scratch_t *scratch,
                     tokenizer_counter_t *counter, const options_t *o, const buffer_t *in) {
    buffer_t text;
    buffer_init(&text);
    int rc = 0;
    for (size_t at = 0, line = 1; at < in->len && rc == 0; line++) {
        const char *nl = memchr(in->data + at, '\n', in->len - at);
        size_t end = nl ? (size_t)(nl - in->data) : in->len;
        buffer_reset(&text);
        for (size_t i = at; i + 1 < end + 1 && rc == 0; i += 2) {
            int hi = hex_value(in->data[i]), lo = i + 1 < end ? hex_value(in->data[i + 1]) : -1;
            char byte = (char)(hi << 4 | lo);
            if (hi < 0 || lo < 0) {
                fprintf(stderr, "stampede tokenize: line %zu is not hex\n", line);
                rc = -1;
            } else if (buffer_append(&text, &byte, 1) < 0)
                rc = -1;
        }
        if (rc == 0)
            rc = one_text(tok, scratch, counter, o, text.data ? text.data : "", text.len);
        at = end + 1;
    }
    buffer_clear(&text);
    return rc;
}

int tokenize_main(int argc, char **argv) {
    options_t o = {0};
    if (parse(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    char err[512];
    tokenizer_t *tok;
    if (tokenizer_load(o.tokenizer_path, &tok, err, sizeof err) < 0) {
        fprintf(stderr, "stampede tokenize: %s\n", err);
        return 1;
    }
    FILE *in = o.text_path ? fopen(o.text_path, "rb") : stdin;
    if (!in) {
        fprintf(stderr, "stampede tokenize: %s: %s\n", o.text_path, strerror(errno));
        tokenizer_destroy(&tok);
        return 1;
    }
    buffer_t text;
    buffer_init(&text);
    tokenizer_scratch_t *scratch = tokenizer_scratch_new();
    tokenizer_counter_t *counter = tokenizer_counter_new(tok);
    int rc = scratch && counter && read_all(in, &text) == 0 ? 0 : -1;
    if (rc == 0)
        rc = o.hex ? hex_lines(tok, scratch, counter, &o, &text)
                   : one_text(tok, scratch, counter, &o, text.data ? text.data : "", text.len);
    if (rc < 0)
        fprintf(stderr, "stampede tokenize: cannot read or tokenise the text\n");
    if (in != stdin)
        fclose(in);
    buffer_clear(&text);
    tokenizer_counter_destroy(&counter);
    tokenizer_scratch_destroy(&scratch);
    tokenizer_destroy(&tok);
    return rc < 0 ? 1 : 0;
}
