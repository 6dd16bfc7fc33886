/* Where and why a workload file (or a file it names) was refused, as every config reader fills it:
 * file, line, column, key and what was expected. */
#ifndef STAMPEDE_CONFIG_ERROR_H
#define STAMPEDE_CONFIG_ERROR_H

#include <stdarg.h>
#include <stddef.h>

typedef struct config_error {
    char file[256];
    int line;          /* 1-based; 0 when not tied to a position */
    int column;        /* 1-based */
    char key[128];     /* dotted path, e.g. "workload.input_tokens.sigma" */
    char message[512]; /* what was expected, with a did-you-mean where one fits */
} config_error_t;

/* "file:line:column: key: message" into buf (no position when line is 0, no key when it is
 * empty: a missing file, a YAML syntax error). */
void config_error_format(const config_error_t *err, char *buf, size_t len);

/* Fills err with where (file; line and column 0 when not tied to a position; key NULL for none)
 * and the vprintf-formatted message; returns -1, so a reader can return it as its refusal. */
int config_error_setv(config_error_t *err, const char *file, int line, int column, const char *key,
                      const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

#endif
