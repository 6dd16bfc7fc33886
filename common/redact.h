/* Secrets (API keys, secret header values) kept out of what stampede prints and writes: a server
 * that echoes the key it was sent in an error body must not put it in results, traces or logs. */
#ifndef STAMPEDE_REDACT_H
#define STAMPEDE_REDACT_H

#include <stddef.h>

#define REDACT_MARK "<redacted>"
/* Secrets shorter than this are not searched for (they would redact ordinary words). */
#define REDACT_MIN_LEN 4

/* Replaces every occurrence of secret in the NUL-terminated text (its buffer holds cap bytes)
 * with REDACT_MARK, truncating at cap. Returns how many were replaced. */
size_t redact_text(char *text, size_t cap, const char *secret);

#endif
