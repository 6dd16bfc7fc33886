#include "config_documents.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config_scan.h"
#include "config_veeksha.h"

/* The runs of the one document in f (rewound). */
static int config_documents_veeksha_runs(FILE *f) {
    yaml_parser_t parser;
    yaml_document_t doc;
    int runs = 1;
    rewind(f);
    if (!yaml_parser_initialize(&parser))
        return 1;
    yaml_parser_set_input_file(&parser, f);
    if (yaml_parser_load(&parser, &doc)) {
        runs = config_veeksha_runs(&doc);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    return runs;
}

int config_file_documents(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return -1;
    }
    yaml_parser_set_input_file(&parser, f);
    /* Empty documents at the end (a stray `---` closing the file) are no runs; an empty one
     * between two others stays counted, so that FILE#k keeps naming the k-th document. */
    int documents = 0, empty_tail = 0, depth = 0;
    yaml_event_type_t previous = YAML_NO_EVENT;
    bool empty = false;
    for (bool done = false; !done;) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            documents = -1;
            break;
        }
        if (event.type == YAML_DOCUMENT_START_EVENT)
            documents++;
        if (previous == YAML_DOCUMENT_START_EVENT) /* the document's root: an empty scalar? */
            empty = event.type == YAML_SCALAR_EVENT && event.data.scalar.length == 0 &&
                    event.data.scalar.plain_implicit;
        if (event.type == YAML_DOCUMENT_END_EVENT)
            empty_tail = empty ? empty_tail + 1 : 0;
        previous = event.type;
        depth += event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT;
        depth -= event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT;
        /* Too deep: loading refuses the file at this point (config_scan.h). Parsing on would cost
         * the square of the depth (libyaml's scanner walks every open flow level per token). */
        done = event.type == YAML_STREAM_END_EVENT || depth > CONFIG_SCAN_MAX_DEPTH;
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    if (documents > 0)
        documents -= empty_tail;
    /* One document: a Veeksha file's !expand lists may make it several runs (not read when too
     * deep: loading refuses that file, and reading it whole would cost the square) */
    if (documents >= 0 && documents <= 1 && depth <= CONFIG_SCAN_MAX_DEPTH)
        documents = config_documents_veeksha_runs(f);
    fclose(f);
    return documents < 0 ? -1 : documents < 1 ? 1 : documents;
}

void config_documents_free(char **list) {
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

char **config_expand_documents(char *const *paths, size_t n, size_t *n_out) {
    size_t total = 0, at = 0;
    int *counts = calloc(n + 1, sizeof *counts);
    if (!counts)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        counts[i] = config_file_documents(paths[i]);
        total += counts[i] > 1 ? (size_t)counts[i] : 1;
    }
    char **list = calloc(total + 1, sizeof *list);
    for (size_t i = 0; list && i < n; i++) {
        if (counts[i] <= 1) {
            if (!(list[at++] = strdup(paths[i])))
                goto oom;
            continue;
        }
        for (int k = 1; k <= counts[i]; k++) {
            size_t len = strlen(paths[i]) + 16;
            if (!(list[at] = malloc(len)))
                goto oom;
            snprintf(list[at++], len, "%s#%d", paths[i], k);
        }
    }
    free(counts);
    if (list)
        *n_out = total;
    return list;
oom:
    free(counts);
    config_documents_free(list);
    return NULL;
}
