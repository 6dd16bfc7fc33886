/* A refusal as text in the caller's buffer, for functions that report why they failed through a
 * (char *err, size_t errlen) pair rather than a config_error_t. */
#ifndef STAMPEDE_ERROR_TEXT_H
#define STAMPEDE_ERROR_TEXT_H

#include <stddef.h>

/* printf-formats the reason into err (errlen bytes; nothing when err is NULL or errlen 0) and
 * returns -1, so a function can return it as its failure. */
int error_text_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
