/* The scaffold every request of a session opens with: the system prompt, the same bytes for every
 * session (a pure function of the seed), so a server's prefix cache sees real reuse across
 * sessions. */
#ifndef STAMPEDE_SESSION_SCAFFOLD_H
#define STAMPEDE_SESSION_SCAFFOLD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

typedef struct session_scaffold {
    char *system_text; /* owned; system_len bytes (0: no system message) */
    size_t system_len;
    uint32_t system_words; /* words the system text counts as */
    uint64_t hash;         /* XXH3 of everything the scaffold sends */
} session_scaffold_t;

/* The scaffold of cfg's workload; NULL when memory is short. */
session_scaffold_t *session_scaffold_new(const config_t *cfg);
/* Frees it; *self_p becomes NULL. */
void session_scaffold_destroy(session_scaffold_t **self_p);

#endif
