#include "config_scan.h"

#include <stdbool.h>
#include <stdio.h>

/* Where the event scan is in one open container: a mapping's current key, a sequence's index. */
typedef struct config_scan_frame {
    bool mapping;
    bool at_key; /* mapping: the next node is a key */
    char key[48];
    size_t index; /* sequence: the next item's index */
} config_scan_frame_t;

/* The dotted path of the node the scan is at ("workload.roles[2]"), for messages. */
static void config_scan_path(const config_scan_frame_t *frames, int depth, char *out, size_t len) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < depth && used < len; i++) {
        const config_scan_frame_t *f = &frames[i];
        int n = f->mapping ? snprintf(out + used, len - used, "%s%s", used ? "." : "", f->key)
                           : snprintf(out + used, len - used, "[%zu]", f->index);
        used += n > 0 ? (size_t)n : 0;
    }
}

/* A node event inside the current container: a mapping alternates key and value, a sequence
 * counts its items. */
static void config_scan_node(config_scan_frame_t *frames, int depth, const yaml_event_t *event) {
    if (depth == 0)
        return;
    config_scan_frame_t *f = &frames[depth - 1];
    if (f->mapping && f->at_key)
        snprintf(f->key, sizeof f->key, "%s",
                 event->type == YAML_SCALAR_EVENT ? (const char *)event->data.scalar.value : "?");
    if (f->mapping)
        f->at_key = !f->at_key;
}

/* After a node: a sequence moves to its next item. */
static void config_scan_node_done(config_scan_frame_t *frames, int depth) {
    if (depth > 0 && !frames[depth - 1].mapping)
        frames[depth - 1].index++;
}

int config_scan_check(config_yaml_t *r) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return config_yaml_fail(r, NULL, "", "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)r->text, r->text_len);
    config_scan_frame_t frames[CONFIG_SCAN_MAX_DEPTH];
    int depth = 0, rc = 0;
    char key[CONFIG_YAML_KEY_MAX];
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event))
            break;
        const yaml_mark_t *at = &event.start_mark;
        switch (event.type) {
        case YAML_ALIAS_EVENT:
            config_scan_node(frames, depth, &event);
            config_scan_path(frames, depth, key, sizeof key);
            rc = config_yaml_fail(r, NULL, key,
                                  "YAML aliases (*%s) are not accepted: write the value out in "
                                  "full (an alias can make a small file expand without bound)",
                                  (const char *)event.data.alias.anchor);
            r->err->line = (int)at->line + 1;
            r->err->column = (int)at->column + 1;
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            config_scan_node(frames, depth, &event);
            if (depth == CONFIG_SCAN_MAX_DEPTH) {
                config_scan_path(frames, depth, key, sizeof key);
                rc = config_yaml_fail(r, NULL, key, "nested deeper than %d levels",
                                      CONFIG_SCAN_MAX_DEPTH);
                r->err->line = (int)at->line + 1;
                r->err->column = (int)at->column + 1;
                break;
            }
            frames[depth++] = (config_scan_frame_t){
                .mapping = event.type == YAML_MAPPING_START_EVENT, .at_key = true};
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth -= depth > 0;
            config_scan_node_done(frames, depth);
            break;
        case YAML_SCALAR_EVENT:
            config_scan_node(frames, depth, &event);
            config_scan_node_done(frames, depth);
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return rc;
}
