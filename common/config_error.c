#include "config_error.h"

#include <stdio.h>

void config_error_format(const config_error_t *err, char *buf, size_t len) {
    int n;
    if (err->line > 0 && err->column > 0)
        n = snprintf(buf, len, "%s:%d:%d: ", err->file, err->line, err->column);
    else if (err->line > 0) /* a line of a JSONL trace: no column */
        n = snprintf(buf, len, "%s:%d: ", err->file, err->line);
    else
        n = snprintf(buf, len, "%s: ", err->file);
    size_t used = n < 0 ? 0 : ((size_t)n < len ? (size_t)n : len);
    if (err->key[0] != '\0' && used < len) {
        n = snprintf(buf + used, len - used, "%s: ", err->key);
        used += n < 0 ? 0 : ((size_t)n < len - used ? (size_t)n : len - used);
    }
    if (used < len)
        snprintf(buf + used, len - used, "%s", err->message);
}

int config_error_setv(config_error_t *err, const char *file, int line, int column, const char *key,
                      const char *fmt, va_list ap) {
    snprintf(err->file, sizeof err->file, "%s", file);
    err->line = line;
    err->column = column;
    snprintf(err->key, sizeof err->key, "%s", key ? key : "");
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    return -1;
}
