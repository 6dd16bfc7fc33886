/* JSON string escaping through jansson, for text escaped once (a served model name, a
 * vocabulary built at start-up, names in reports). Text escaped per token on a hot path keeps
 * its own allocation-free writer next to where it is used, with a comment saying so. */
#ifndef STAMPEDE_ESCAPE_H
#define STAMPEDE_ESCAPE_H

#include <stddef.h>

#include "buffer.h"

/* Appends s[0..len) to out as the body of a JSON string (escaped, without the quotes) and keeps
 * data + len NUL-terminated. 0 ok; -1 when s is not valid UTF-8 or memory is short (out then
 * holds what it held before). */
int escape_json_append(buffer_t *out, const char *s, size_t len);

#endif
