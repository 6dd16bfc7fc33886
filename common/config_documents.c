#include "config_documents.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

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
    int documents = 0;
    for (bool done = false; !done;) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            documents = -1;
            break;
        }
        documents += event.type == YAML_DOCUMENT_START_EVENT;
        done = event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    if (documents == 0 ||
        documents == 1) /* one document: a Veeksha file's !expand lists may make it several runs */
        documents = config_documents_veeksha_runs(f);
    fclose(f);
    return documents == 0 ? 1 : documents;
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
