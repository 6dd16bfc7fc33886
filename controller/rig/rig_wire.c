#include "rig_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

int rig_wire_send(void *sock, const json_t *msg, bool more) {
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return -1;
    int rc = zmq_send(sock, text, strlen(text), ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0));
    free(text);
    return rc < 0 ? -1 : 0;
}

json_t *rig_wire_parse(const void *data, size_t len, char *err, size_t errlen) {
    json_error_t jerr;
    json_t *msg = json_loadb(data, len, 0, &jerr);
    if (!msg) {
        snprintf(err, errlen, "not JSON: %s at byte %d", jerr.text, jerr.position);
        return NULL;
    }
    if (!json_is_object(msg)) {
        snprintf(err, errlen, "not a JSON object");
        json_decref(msg);
        return NULL;
    }
    return msg;
}

json_t *rig_wire_error(const char *fmt, ...) {
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return json_pack("{s:b, s:s}", "ok", 0, "error", text);
}
