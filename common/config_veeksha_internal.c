/* The helpers every reader of a Veeksha file shares (config_veeksha_internal.h): below
 * config_veeksha.c and the section readers it calls. */
#include "config_veeksha_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *veeksha_name(const yaml_node_t *node) {
    return node && node->type == YAML_SCALAR_NODE ? config_yaml_text(node) : "";
}

bool veeksha_is_expand(const yaml_node_t *node) {
    return node && node->tag && strcmp((const char *)node->tag, "!expand") == 0;
}

/* The index of node in the document's node table. */
int veeksha_index(config_yaml_t *r, const yaml_node_t *node) {
    return (int)(node - r->doc.nodes.start) + 1;
}

yaml_node_t *veeksha_get(veeksha_t *v, yaml_node_t *map, const char *key) {
    yaml_node_t *n =
        map && map->type == YAML_MAPPING_NODE ? config_yaml_get(v->r, map, key, NULL) : NULL;
    if (!veeksha_is_expand(n) || n == v->knob_expand || n->type != YAML_SEQUENCE_NODE)
        return n;
    /* run k picks item (k / the product of the later lists' sizes) mod this list's size */
    int at = veeksha_index(v->r, n), stride = 1;
    for (int i = v->n_expands - 1; i >= 0; i--) {
        yaml_node_t *e = config_yaml_node(v->r, v->expands[i]);
        int size = (int)(e->data.sequence.items.top - e->data.sequence.items.start);
        if (v->expands[i] == at)
            return config_yaml_node(v->r, e->data.sequence.items.start[(v->run / stride) % size]);
        stride *= size;
    }
    return n;
}

int veeksha_note(veeksha_t *v, const yaml_node_t *at, const char *key, const char *fmt, ...) {
    char line[768], message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    /* the runs of one file's !expand lists ("FILE#k") share their notes: name the file */
    const char *hash = v->r->veeksha_run > 0 ? strrchr(v->r->file, '#') : NULL;
    int len = hash ? (int)(hash - v->r->file) : (int)strlen(v->r->file);
    if (at)
        snprintf(line, sizeof line, "%.*s:%d:%d: %s: %s\n", len, v->r->file,
                 (int)at->start_mark.line + 1, (int)at->start_mark.column + 1, key, message);
    else
        snprintf(line, sizeof line, "%.*s: %s: %s\n", len, v->r->file, key, message);
    size_t had = v->c->notes ? strlen(v->c->notes) : 0;
    char *grown = realloc(v->c->notes, had + strlen(line) + 1);
    if (!grown)
        return config_yaml_fail(v->r, at, key, "out of memory");
    memcpy(grown + had, line, strlen(line) + 1);
    v->c->notes = grown;
    return 0;
}

int veeksha_audio(config_yaml_t *r, yaml_node_t *at, const char *key, const char *what) {
    return config_yaml_fail(r, at, key,
                            "%s: audio (speech-to-text and text-to-speech) is out of scope: "
                            "stampede drives text LLM endpoints (/v1/chat/completions, "
                            "/v1/completions)",
                            what);
}
